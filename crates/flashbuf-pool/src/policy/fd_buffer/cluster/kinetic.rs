//! The victim cluster's choice as a kinetic tournament over cluster slots (the idea of
//! CFDC's, `clustering::kinetic`, written again for FD-Buffer's clusters): inner nodes
//! hold the winner of their subtree — the cluster of lowest priority, ties to the older —
//! and the first globaltime at which some comparison below them flips, computed exactly
//! in integers. The draining cluster is not in the tournament (the choice leaves it out).
//!
//! Lazy in three ways, each exact:
//! - The tournament exists from the first victim cluster chosen by priority on (with
//!   `victim=order` it never does): it is then built from all live clusters.
//! - A cluster whose pages come or go is only *touched* (a flag and a list); the
//!   tournament catches up when the next victim cluster is chosen, level by level, each
//!   ancestor once however many touched clusters lie below it. A node is recomputed when a
//!   child changed or when its winner is touched (its key is new); otherwise nothing above
//!   it can change.
//! - A node whose certificate expired is recomputed only at a choice (the expired
//!   subtrees, children first), not at every tick of globaltime. A node's expiry is never
//!   later than its children's, so every stale node has stale ancestors up to the root.
//!
//! Every node keeps the two slots of its last comparison and that comparison's own
//! certificate: when its children's winners are still those two, neither touched, and the
//! certificate has not expired, the outcome is known without comparing (the certificate is
//! an absolute globaltime). Most recomputations, the expired ancestors above a failed
//! certificate and the walks above a changed cluster, are of that kind.

use super::priority::Key;
use super::{Clusters, NIL};
use std::cmp::Ordering;

/// Expiry of a comparison that never flips.
const NEVER: u64 = u64::MAX;

/// A tournament node: the winning slot below it (`NIL`: no cluster in the tournament), the
/// slot it beat (`NIL` if none), that comparison's certificate, and the earliest
/// globaltime at which some certificate in its subtree fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Node {
    exp: u64,
    cert: u64,
    win: u32,
    lose: u32,
}

const EMPTY: Node = Node {
    exp: NEVER,
    cert: NEVER,
    win: NIL,
    lose: NIL,
};

/// The tournament's storage: node `k` (1 is the root, the leaf of slot `s` is
/// `leaves + s`) has children `2k` and `2k + 1`.
#[derive(Debug, Clone, Default)]
pub(super) struct Tree {
    nodes: Vec<Node>,
    /// Leaves (a power of two, at least 2), 0 before the tournament is built.
    leaves: usize,
    /// Per slot: touched since the last choice.
    touched: Vec<bool>,
    /// The touched slots.
    dirty: Vec<u32>,
}

impl Tree {
    /// Bytes of the tournament.
    pub(super) fn bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.touched.capacity()
            + self.dirty.capacity() * 4
    }
}

impl Clusters {
    /// Slot `s` came, went, or changed its key: the tournament (if built) catches up at
    /// the next choice.
    #[inline]
    pub(super) fn touch(&mut self, s: u32) {
        let t = &mut self.tree;
        if t.leaves == 0 {
            return;
        }
        let i = s as usize;
        if i >= t.touched.len() {
            t.touched.resize(i + 1, false);
        }
        if !t.touched[i] {
            t.touched[i] = true;
            t.dirty.push(s);
        }
    }

    /// The cluster of lowest priority at the current globaltime among those in the
    /// tournament (every live cluster but the draining one); `None` if there is none.
    pub(super) fn root_winner(&mut self) -> Option<u32> {
        if self.tree.leaves == 0 || self.slots.len() > self.tree.leaves {
            self.build();
        } else if !self.tree.dirty.is_empty() {
            self.catch_up();
        }
        if self.tree.nodes[1].exp <= self.globaltime {
            let leaves = self.tree.leaves;
            self.run().refresh(1, leaves);
        }
        let w = self.tree.nodes[1].win;
        (w != NIL).then_some(w)
    }

    /// Whether slot `s` is in the tournament.
    #[inline]
    fn present(&self, s: u32) -> bool {
        self.slots[s as usize].n > 0 && s != self.draining
    }

    /// Builds the tournament from scratch, with room for every slot.
    #[cold]
    #[inline(never)]
    fn build(&mut self) {
        let leaves = self.slots.len().next_power_of_two().max(2);
        let mut nodes = std::mem::take(&mut self.tree.nodes);
        nodes.clear();
        nodes.resize(2 * leaves, EMPTY);
        for s in 0..self.slots.len() as u32 {
            if self.present(s) {
                nodes[leaves + s as usize].win = s;
            }
        }
        let t = &mut self.tree;
        (t.nodes, t.leaves) = (nodes, leaves);
        for &s in &t.dirty {
            t.touched[s as usize] = false;
        }
        t.dirty.clear();
        if t.touched.len() < leaves {
            t.touched.resize(leaves, false);
        }
        let mut run = self.run();
        for k in (1..leaves).rev() {
            run.recompute(k);
        }
    }

    /// The tournament's nodes with what a recomputation reads.
    #[inline(always)]
    fn run(&mut self) -> Run<'_> {
        Run {
            nodes: &mut self.tree.nodes,
            keys: &self.keys,
            touched: &self.tree.touched,
            g: self.globaltime,
        }
    }

    /// Recomputes the paths of the touched slots, one walk each, then clears the touches.
    /// A walk stops at a node whose value did not change and whose winner is untouched:
    /// nothing above it depends on the walk's slot, and what depends on another touched
    /// slot is that slot's walk's to redo.
    fn catch_up(&mut self) {
        let leaves = self.tree.leaves;
        let dirty = std::mem::take(&mut self.tree.dirty);
        for &s in &dirty {
            let win = if self.present(s) { s } else { NIL };
            let mut run = self.run();
            let mut k = leaves + s as usize;
            run.nodes[k] = Node { win, ..EMPTY };
            while k > 1 {
                k /= 2;
                let before = run.nodes[k];
                let after = run.recompute(k);
                if after == before && (after.win == NIL || !run.touched[after.win as usize]) {
                    break;
                }
            }
        }
        for &s in &dirty {
            self.tree.touched[s as usize] = false;
        }
        self.tree.dirty = dirty;
        self.tree.dirty.clear();
    }
}

/// The tournament's nodes, the keys and touches they are computed from, and globaltime.
struct Run<'a> {
    nodes: &'a mut [Node],
    keys: &'a [Key],
    touched: &'a [bool],
    g: u64,
}

impl Run<'_> {
    /// Recomputes the expired comparisons below inner node `node`, whose expiry has come,
    /// children first; only the children whose own expiry has come are visited.
    fn refresh(&mut self, node: usize, leaves: usize) {
        if 2 * node < leaves {
            if self.nodes[2 * node].exp <= self.g {
                self.refresh(2 * node, leaves);
            }
            if self.nodes[2 * node + 1].exp <= self.g {
                self.refresh(2 * node + 1, leaves);
            }
        }
        self.recompute(node);
    }

    /// Recomputes inner node `k` from its children and returns it; without comparing when
    /// the node's last comparison still holds (see the module documentation).
    #[inline(always)]
    fn recompute(&mut self, k: usize) -> Node {
        let (g, t) = (self.g, self.touched);
        let (r, l, old) = (self.nodes[2 * k + 1], self.nodes[2 * k], self.nodes[k]);
        let (win, lose, cert) = if l.win == NIL {
            (r.win, NIL, NEVER)
        } else if r.win == NIL {
            (l.win, NIL, NEVER)
        } else if old.cert > g
            && ((old.win == l.win && old.lose == r.win) || (old.win == r.win && old.lose == l.win))
            && !t[l.win as usize]
            && !t[r.win as usize]
        {
            (old.win, old.lose, old.cert)
        } else {
            let (w, c) = duel(self.keys, l.win, r.win, g);
            (w, if w == l.win { r.win } else { l.win }, c)
        };
        let n = Node {
            exp: cert.min(l.exp).min(r.exp),
            cert,
            win,
            lose,
        };
        self.nodes[k] = n;
        n
    }
}

/// The winner of clusters `a` and `b` (distinct, live) at globaltime `g`, and the
/// certificate: the first globaltime after `g` at which the loser comes first (`NEVER` if
/// it never does). `P(a) < P(b)` ⇔ `lhs = d_a·n_b²·(g − T_b) < rhs = d_b·n_a²·(g − T_a)`,
/// ties to the older (smaller `T`); the same products as the scan's comparison.
#[inline(always)]
fn duel(keys: &[Key], a: u32, b: u32, g: u64) -> (u32, u64) {
    let (x, y) = (&keys[a as usize], &keys[b as usize]);
    let (Some(wa), Some(wb)) = (x.div.checked_mul(y.n2), y.div.checked_mul(x.n2)) else {
        return wide_duel(keys, a, b, g);
    };
    let lhs = u128::from(wa) * u128::from(g - y.stamp);
    let rhs = u128::from(wb) * u128::from(g - x.stamp);
    let a_older = x.stamp < y.stamp;
    let a_wins = match lhs.cmp(&rhs) {
        Ordering::Less => true,
        Ordering::Greater => false,
        Ordering::Equal => a_older,
    };
    // `f(g') = rhs(g') − lhs(g')` has slope `wb − wa`: the loser can only catch up when
    // the slope runs against the winner.
    if a_wins {
        if wb >= wa {
            return (a, NEVER);
        }
        (a, flip_time(g, rhs - lhs, u128::from(wa - wb), !a_older))
    } else {
        if wa >= wb {
            return (b, NEVER);
        }
        (b, flip_time(g, lhs - rhs, u128::from(wb - wa), a_older))
    }
}

/// [`duel`] when a weight does not fit in 64 bits (never with erase blocks of practical
/// size): the same in 128 bits.
#[cold]
#[inline(never)]
fn wide_duel(keys: &[Key], a: u32, b: u32, g: u64) -> (u32, u64) {
    let (x, y) = (&keys[a as usize], &keys[b as usize]);
    let wa = u128::from(x.div) * u128::from(y.n2);
    let wb = u128::from(y.div) * u128::from(x.n2);
    let lhs = wa * u128::from(g - y.stamp);
    let rhs = wb * u128::from(g - x.stamp);
    let a_older = x.stamp < y.stamp;
    let a_wins = lhs < rhs || (lhs == rhs && a_older);
    if a_wins {
        if wb >= wa {
            return (a, NEVER);
        }
        (a, flip_time(g, rhs - lhs, wa - wb, !a_older))
    } else {
        if wa >= wb {
            return (b, NEVER);
        }
        (b, flip_time(g, lhs - rhs, wb - wa, a_older))
    }
}

/// The first globaltime after `g` at which a loser comes first: its lead `f_now ≥ 0`
/// (> 0 if the loser wins ties) shrinks by `slope > 0` per tick; the loser comes first
/// once it is negative (or zero, if the loser wins ties).
#[inline(always)]
fn flip_time(g: u64, f_now: u128, slope: u128, l_wins_ties: bool) -> u64 {
    debug_assert!(f_now > 0 || !l_wins_ties, "loser already wins");
    let k = match (u64::try_from(f_now), u64::try_from(slope)) {
        (Ok(f), Ok(s)) if l_wins_ties => f.div_ceil(s),
        (Ok(f), Ok(s)) => f / s + 1,
        _ => wide_steps(f_now, slope, l_wins_ties),
    };
    g.checked_add(k).unwrap_or(NEVER)
}

/// [`flip_time`]'s steps in 128 bits.
#[cold]
#[inline(never)]
fn wide_steps(f_now: u128, slope: u128, l_wins_ties: bool) -> u64 {
    let k = if l_wins_ties {
        f_now.div_ceil(slope)
    } else {
        f_now / slope + 1
    };
    u64::try_from(k).unwrap_or(NEVER)
}
