//! The kinetic tournament of [`ClusterSet`] (see the module documentation of [`super`]):
//! a binary tournament over cluster slots whose inner nodes hold the winner at the
//! current globaltime and the first globaltime at which that comparison flips, computed
//! exactly in integers.

use super::cluster_set::{ClusterSet, Slot, NEVER, NIL};
use std::cmp::Ordering;

impl ClusterSet {
    /// globaltime += 1, then recompute every comparison whose certificate expired.
    pub(super) fn tick(&mut self) {
        self.globaltime += 1;
        if self.exp[1] <= self.globaltime {
            self.refresh(1);
        }
    }

    fn refresh(&mut self, node: usize) {
        if self.exp[node] > self.globaltime || node >= self.leaves {
            return;
        }
        self.refresh(2 * node);
        self.refresh(2 * node + 1);
        self.kinetic_events += 1;
        self.recompute(node);
    }

    /// Slot `s` changed (created, removed, new key): recompute its path to the root. The
    /// walk stops early at a node whose winner and expiry did not change and whose winner
    /// is not `s`: `s` takes part in no comparison above it, so nothing above changes.
    pub(super) fn update(&mut self, s: u32) {
        let node = self.leaves + s as usize;
        self.win[node] = if self.slots[s as usize].live { s } else { NIL };
        self.exp[node] = NEVER;
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
            if self.win[parent] != s {
                self.walk_up(node, s);
                return;
            }
            self.exp[parent] = self.exp[2 * parent].min(self.exp[2 * parent + 1]);
            node = parent;
        }
    }

    /// Recomputes the ancestors of `node`, below which slot `s` changed.
    fn walk_up(&mut self, mut node: usize, s: u32) {
        while node > 1 {
            node /= 2;
            let before = (self.win[node], self.exp[node]);
            self.recompute(node);
            if (self.win[node], self.exp[node]) == before && before.0 != s {
                break;
            }
        }
    }

    #[inline]
    fn recompute(&mut self, node: usize) {
        let (l, r) = (2 * node, 2 * node + 1);
        let (a, b) = (self.win[l], self.win[r]);
        let (w, cert) = if a == NIL {
            (b, NEVER)
        } else if b == NIL {
            (a, NEVER)
        } else if self.less(a, b) {
            (a, self.flip_time(a, b))
        } else {
            (b, self.flip_time(b, a))
        };
        self.win[node] = w;
        self.exp[node] = cert.min(self.exp[l]).min(self.exp[r]);
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

    /// Whether cluster `a` comes before `b` at the current globaltime.
    #[inline]
    pub(super) fn less(&self, a: u32, b: u32) -> bool {
        let (x, y) = (&self.slots[a as usize], &self.slots[b as usize]);
        let tie = (x.stamp, x.cluster) < (y.stamp, y.cluster);
        match (x.draining, y.draining) {
            (true, true) => tie,
            (true, false) => true,
            (false, true) => false,
            (false, false) => {
                let g = self.globaltime;
                // P(x) < P(y)  ⇔  d_x · n_y² · (g − T_y) < d_y · n_x² · (g − T_x)
                let lhs = u128::from(weight(x, y)) * u128::from(g - y.stamp);
                let rhs = u128::from(weight(y, x)) * u128::from(g - x.stamp);
                lhs < rhs || (lhs == rhs && tie)
            }
        }
    }

    /// The first globaltime after now at which loser `l` comes before winner `w`.
    fn flip_time(&self, w: u32, l: u32) -> u64 {
        let (ws, ls) = (&self.slots[w as usize], &self.slots[l as usize]);
        if ws.draining || ls.draining {
            // Draining vs draining: a fixed order; draining vs not: 0 < P always.
            return NEVER;
        }
        // l first at g  ⇔  f(g) = α(g − T_w) − β(g − T_l) < 0 (or = 0 and l wins ties),
        // α = d_l·n_w², β = d_w·n_l². f is linear in g with slope α − β.
        let (alpha, beta) = (weight(ls, ws), weight(ws, ls));
        if alpha >= beta {
            return NEVER;
        }
        let g = self.globaltime;
        let f = i128::from(alpha) * i128::from(g - ws.stamp)
            - i128::from(beta) * i128::from(g - ls.stamp);
        let slope = beta - alpha;
        let l_wins_ties = (ls.stamp, ls.cluster) < (ws.stamp, ws.cluster);
        debug_assert!(f > 0 || (f == 0 && !l_wins_ties), "loser already wins");
        // Steps k ≥ 1 until f − slope·k < 0 (≤ 0 if l wins ties). In 64 bits when f fits
        // (always, in practice): a 128-bit division costs several times more.
        let k = match u64::try_from(f) {
            Ok(f) if l_wins_ties => f.div_ceil(slope),
            Ok(f) => f / slope + 1,
            Err(_) => {
                let (f, slope) = (f.unsigned_abs(), u128::from(slope));
                let k = if l_wins_ties {
                    f.div_ceil(slope)
                } else {
                    f / slope + 1
                };
                u64::try_from(k).unwrap_or(NEVER)
            }
        };
        g.checked_add(k).unwrap_or(NEVER)
    }
}

/// `dividend(x) · n(y)²`: below 2⁶⁰ (dividend < n·cluster_size ≤ 2³⁰, n² ≤ 2³⁰).
#[inline]
fn weight(x: &Slot, y: &Slot) -> u64 {
    x.div * y.n2
}
