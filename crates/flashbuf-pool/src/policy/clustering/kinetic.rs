//! The kinetic tournament of [`ClusterSet`] (see the module documentation of [`super`]):
//! a binary tournament over cluster slots whose inner nodes hold the winner at the
//! current globaltime and the first globaltime at which that comparison flips, computed
//! exactly in integers.
//!
//! Layout: node `k` (1 is the root, the leaf of slot `s` is `leaves + s`) is
//! `tree[k / 2][k % 2]`, so the two children of node `k` are the pair `tree[k]`, one
//! 32-byte block: a comparison reads one pair and writes one node.
//!
//! Measured (cachegrind, the policy alone over the whole TPC-C trace, 5.1 M references at
//! 829 frames): 406 k pages enter the set, 1.48 M certificates fail (3.6 per globaltime
//! tick) and the walks of changed clusters redo 3.2 M comparisons. Two shortcuts, both
//! exact, took 3.8 M comparisons off: a draining cluster is ordered by timestamp and
//! number only, so its pages coming and going start no walk (2.0 M), and starting to drain
//! keeps the winner along the path and only lowers expiries (1.8 M nodes, no comparison).
//! A recomputed node, winner and certificate together (`duel`), costs about 100
//! instructions with its walk (303 M in `walk_up` for 3.2 M nodes, 155 M in `refresh` for
//! 1.5 M).

use super::cluster_set::{ClusterSet, Slot, NEVER, NIL};
use std::cmp::Ordering;

/// A tournament node: the winning slot below it (`NIL`: no live cluster) and the earliest
/// globaltime at which some certificate in its subtree fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, align(16))]
pub(super) struct Node {
    pub(super) exp: u64,
    pub(super) win: u32,
}

/// A node with no live cluster below.
pub(super) const EMPTY_NODE: Node = Node {
    exp: NEVER,
    win: NIL,
};

impl ClusterSet {
    /// Node `k` of the tournament.
    #[inline(always)]
    pub(super) fn node(&self, k: usize) -> Node {
        self.tree[k / 2][k & 1]
    }

    #[inline(always)]
    fn set_node(&mut self, k: usize, n: Node) {
        self.tree[k / 2][k & 1] = n;
    }

    /// The lowest-priority live slot (`NIL` if none).
    #[inline]
    pub(super) fn root(&self) -> u32 {
        self.node(1).win
    }

    /// globaltime += 1, then recompute every comparison whose certificate expired.
    pub(super) fn tick(&mut self) {
        self.globaltime += 1;
        if 1 < self.leaves && self.node(1).exp <= self.globaltime {
            self.refresh(1);
        }
    }

    /// Recomputes the expired comparisons below inner node `node`, whose expiry has come,
    /// children first; only the children whose own expiry has come are visited.
    fn refresh(&mut self, node: usize) {
        let [l, r] = self.tree[node];
        if 2 * node < self.leaves {
            if l.exp <= self.globaltime {
                self.refresh(2 * node);
            }
            if r.exp <= self.globaltime {
                self.refresh(2 * node + 1);
            }
        }
        self.kinetic_events += 1;
        self.recompute(node);
    }

    /// Slot `s` changed (created, removed, new key): recompute its path to the root. The
    /// walk stops early at a node whose winner and expiry did not change and whose winner
    /// is not `s`: `s` takes part in no comparison above it, so nothing above changes.
    pub(super) fn update(&mut self, s: u32) {
        let node = self.leaves + s as usize;
        let win = if self.slots[s as usize].live { s } else { NIL };
        self.set_node(node, Node { exp: NEVER, win });
        self.walk_up(node, s);
    }

    /// Slot `s` has just started draining. Where `s` was the winner it stays the winner
    /// (priority 0 beats every non-draining cluster, and a draining rival would have won
    /// before) and its certificate never fails, so the node keeps its winner and its
    /// expiry becomes its children's: no comparison to redo. From the first node that `s`
    /// lost (if any), the ordinary walk. For CFDC, whose victims come from the root, the
    /// whole path is of the first kind.
    pub(super) fn update_drained(&mut self, s: u32) {
        let mut node = self.leaves + s as usize;
        while node > 1 {
            let parent = node / 2;
            if self.node(parent).win != s {
                self.walk_up(node, s);
                return;
            }
            let [l, r] = self.tree[parent];
            self.set_node(
                parent,
                Node {
                    exp: l.exp.min(r.exp),
                    win: s,
                },
            );
            node = parent;
        }
    }

    /// Recomputes the ancestors of `node`, below which slot `s` changed. The pair that holds
    /// a node and its sibling is read once: it gives the node's old value, then, with the
    /// new value written in, the children of the next node up.
    ///
    /// Measured with the timestamp-only tie order (cachegrind, `bench --data none --policy
    /// cfdc`, TPC-C, 1,241 frames, first 2 M references, whole replay): 1,114.6 M ->
    /// 1,100.3 M instructions, mispredictions 8.74 M -> 8.63 M, D1 misses unchanged
    /// (12.31 M). Same hits, misses, page writes and cluster write runs (full trace, 1,241
    /// and 400 frames, `cfdc` and the `clustering=` decorators). Dropped: branch-free
    /// winner selection in `duel` and a loop instead of the recursion in `refresh` (with
    /// these two, 1,118.5 M and more mispredictions: `refresh` got inlined into `push`).
    fn walk_up(&mut self, mut node: usize, s: u32) {
        let mut children = self.tree[node / 2];
        while node > 1 {
            node /= 2;
            let after = self.combine(children);
            let pair = &mut self.tree[node / 2];
            let before = pair[node & 1];
            pair[node & 1] = after;
            if after == before && before.win != s {
                break;
            }
            children = *pair;
        }
    }

    /// Recomputes inner node `node` from its children.
    #[inline(always)]
    fn recompute(&mut self, node: usize) {
        let n = self.combine(self.tree[node]);
        self.set_node(node, n);
    }

    /// The node above children `l` and `r`: the winner and the earliest expiry.
    #[inline(always)]
    fn combine(&self, [l, r]: [Node; 2]) -> Node {
        let (win, cert) = if l.win == NIL {
            (r.win, NEVER)
        } else if r.win == NIL {
            (l.win, NEVER)
        } else {
            self.duel(l.win, r.win)
        };
        Node {
            exp: cert.min(l.exp).min(r.exp),
            win,
        }
    }

    pub(super) fn cmp_slots(&self, a: u32, b: u32) -> Ordering {
        if a == b {
            Ordering::Equal
        } else if self.less(a, b) {
            Ordering::Less
        } else {
            Ordering::Greater
        }
    }

    /// Whether cluster `a` comes before `b` (another cluster) at the current globaltime.
    pub(super) fn less(&self, a: u32, b: u32) -> bool {
        self.duel(a, b).0 == a
    }

    /// The winner of clusters `a` and `b` (distinct, live) at the current globaltime, and
    /// the certificate: the first globaltime after now at which the loser comes first
    /// (`NEVER` if it never does). One pass computes both: the two products that order
    /// the clusters are the two terms of the loser's distance to the crossing.
    #[inline(always)]
    fn duel(&self, a: u32, b: u32) -> (u32, u64) {
        let (x, y) = (&self.slots[a as usize], &self.slots[b as usize]);
        if x.draining | y.draining {
            return draining_duel(a, x, b, y);
        }
        // P(a) < P(b)  ⇔  lhs = d_a·n_b²·(g − T_b) < rhs = d_b·n_a²·(g − T_a).
        let g = self.globaltime;
        let (wa, wb) = (weight(x, y), weight(y, x));
        let lhs = u128::from(wa) * u128::from(g - y.stamp);
        let rhs = u128::from(wb) * u128::from(g - x.stamp);
        let a_wins = match lhs.cmp(&rhs) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => first_on_ties(x, y),
        };
        // The loser's certificate needs the tie order only when its line gains on the
        // winner's (`α < β`), about one comparison in two.
        if a_wins {
            if wb >= wa {
                return (a, NEVER);
            }
            (a, flip_time(g, rhs - lhs, wa - wb, !first_on_ties(x, y)))
        } else {
            if wa >= wb {
                return (b, NEVER);
            }
            (b, flip_time(g, lhs - rhs, wb - wa, first_on_ties(x, y)))
        }
    }
}

/// Whether cluster `x` comes before `y` among equal priorities: older timestamp, then
/// smaller number. Two clusters never share a timestamp (only `push` creates a cluster,
/// and it ticks globaltime after stamping), so the timestamps alone decide.
#[inline(always)]
fn first_on_ties(x: &Slot, y: &Slot) -> bool {
    debug_assert!(
        x.stamp != y.stamp || x.cluster == y.cluster,
        "two clusters share a stamp"
    );
    x.stamp < y.stamp
}

/// [`ClusterSet::duel`] when a cluster drains: draining vs draining is a fixed order,
/// draining vs not is `0 < P` always; either way the certificate never fails.
#[cold]
#[inline(never)]
fn draining_duel(a: u32, x: &Slot, b: u32, y: &Slot) -> (u32, u64) {
    let a_wins = if x.draining == y.draining {
        first_on_ties(x, y)
    } else {
        x.draining
    };
    (if a_wins { a } else { b }, NEVER)
}

/// The first globaltime after `g` at which a loser comes before its winner. With winner
/// `w` and loser `l`, `α = d_l·n_w²`, `β = d_w·n_l²`: the loser comes first at `g'` when
/// `f(g') = α(g' − T_w) − β(g' − T_l)` is negative (or zero if it wins ties). `f` is linear
/// in `g'` with slope `α − β`, here `−slope < 0`; `f_now = f(g) ≥ 0` (> 0 if the loser wins
/// ties).
#[inline(always)]
fn flip_time(g: u64, f_now: u128, slope: u64, l_wins_ties: bool) -> u64 {
    debug_assert!(f_now > 0 || !l_wins_ties, "loser already wins");
    // Steps k ≥ 1 until f − slope·k < 0 (≤ 0 if l wins ties). In 64 bits when f fits
    // (always, in practice): a 128-bit division costs several times more.
    let k = match u64::try_from(f_now) {
        Ok(f) if l_wins_ties => f.div_ceil(slope),
        Ok(f) => f / slope + 1,
        Err(_) => wide_steps(f_now, slope, l_wins_ties),
    };
    g.checked_add(k).unwrap_or(NEVER)
}

/// [`flip_time`]'s steps when `f_now` does not fit in 64 bits.
#[cold]
#[inline(never)]
fn wide_steps(f_now: u128, slope: u64, l_wins_ties: bool) -> u64 {
    let slope = u128::from(slope);
    let k = if l_wins_ties {
        f_now.div_ceil(slope)
    } else {
        f_now / slope + 1
    };
    u64::try_from(k).unwrap_or(NEVER)
}

/// `dividend(x) · n(y)²`: below 2⁶⁰ (dividend < n·cluster_size ≤ 2³⁰, n² ≤ 2³⁰).
#[inline]
fn weight(x: &Slot, y: &Slot) -> u64 {
    x.div * y.n2
}
