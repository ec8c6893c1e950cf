//! The lowest-priority cluster of a [`ClusterSet`] at the current globaltime (see the
//! module documentation of [`super`]): the oldest draining cluster if one drains, else
//! the exact minimum of Formula 1, found by the block scan of [`super::scan`] (the
//! largest inverse priority in floating point, then the clusters within a relative
//! `10⁻⁹` of it compared exactly in integers).

use super::cluster_set::{dividend, ClusterSet, NIL};
use super::scan::{lower_priority, to_f64};
use std::cmp::Ordering;

impl ClusterSet {
    /// The lowest-priority live slot at the current globaltime (`NIL` if none).
    pub(super) fn lowest(&mut self) -> u32 {
        // Draining clusters come first, among themselves by timestamp (unique).
        let slots = &self.slots;
        if let Some(d) = self
            .draining
            .iter()
            .min_by_key(|&&d| slots[d as usize].stamp)
        {
            return *d;
        }
        if self.active.is_empty() {
            return NIL;
        }
        self.scans += 1;
        let g = to_f64(self.globaltime);
        // Every live cluster that does not drain has `(g − t) · r > 0`: the top is positive.
        let top = self.blocks.scan(self.active.len(), g);
        let floor = top * (1.0 - 1e-9);
        let mut best = NIL;
        self.blocks.for_each_at_least(g, floor, |i| {
            let s = self.active[i];
            if best == NIL || self.less(s, best) {
                best = s;
            }
        });
        debug_assert!(best != NIL, "live clusters but no candidate");
        best
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

    /// Whether cluster `a` comes before `b` (another live cluster) at the current
    /// globaltime: draining first (by timestamp), then by Formula 1, exactly, ties by
    /// timestamp.
    pub(super) fn less(&self, a: u32, b: u32) -> bool {
        let (x, y) = (&self.slots[a as usize], &self.slots[b as usize]);
        if x.draining | y.draining {
            return if x.draining == y.draining {
                x.stamp < y.stamp
            } else {
                x.draining
            };
        }
        let inputs = |c: &super::cluster_set::Slot| (dividend(c), c.n, c.stamp);
        lower_priority(inputs(x), inputs(y), self.globaltime)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_core::rng::SplitMix64;
    use flashbuf_core::{FrameId, PageId};

    /// The lowest cluster by brute force: every pair compared exactly.
    fn brute_lowest(s: &ClusterSet) -> u32 {
        let mut all: Vec<u32> = s.by_cluster.values().copied().collect();
        all.sort_unstable_by(|&a, &b| s.cmp_slots(a, b));
        all.first().copied().unwrap_or(NIL)
    }

    /// Hundreds of clusters (several blocks of the scan), pages coming and going at
    /// random, clusters drained now and then: the choice is the brute-force minimum at
    /// every step, and the checks (scan entries, draining list) hold.
    #[test]
    fn the_scan_chooses_the_exact_minimum() {
        let frames = 600;
        let mut s = ClusterSet::new(frames, 8).unwrap();
        let mut rng = SplitMix64::new(42);
        let mut page_of: Vec<Option<u64>> = vec![None; frames];
        let mut scans = 0;
        for step in 0..20_000 {
            let f = rng.below(frames as u64) as usize;
            match page_of[f] {
                Some(_) if rng.below(3) == 0 => {
                    s.remove(FrameId(f as u32));
                    page_of[f] = None;
                }
                Some(_) => {}
                None => {
                    // Distinct pages: frame f holds page 8·k + (f mod 8) for a random k.
                    let pid = rng.below(400) * 8 + (f as u64 % 8);
                    if !page_of.contains(&Some(pid)) {
                        s.push(FrameId(f as u32), PageId(pid));
                        page_of[f] = Some(pid);
                    }
                }
            }
            let want = brute_lowest(&s);
            let draining_before = !s.draining.is_empty();
            assert_eq!(s.lowest(), want, "step {step}");
            scans += usize::from(want != NIL && !draining_before);
            if want != NIL && rng.below(50) == 0 {
                let first = s.slots[want as usize].head;
                s.drain_cluster_of(FrameId(first));
            }
            if step % 97 == 0 {
                s.check().unwrap_or_else(|e| panic!("step {step}: {e}"));
            }
        }
        assert!(
            s.by_cluster.len() > 64,
            "several blocks: {}",
            s.by_cluster.len()
        );
        assert_eq!(s.scans() as usize, scans);
        s.check().unwrap();
    }

    /// `check` sees a scan entry whose float no longer matches its cluster, a cluster
    /// missing from the draining list, and a stray value past the entries.
    #[test]
    fn check_catches_a_stale_scan() {
        let build = || {
            let mut s = ClusterSet::new(16, 64).unwrap();
            for (f, p) in [(0u32, 1u64), (1, 3), (2, 70), (3, 200)] {
                s.push(FrameId(f), PageId(p));
            }
            s.check().unwrap();
            s
        };
        let mut s = build();
        s.blocks.set_r(1, 0.5);
        assert!(s.check().unwrap_err().contains("stale inputs"));
        let mut s = build();
        s.slots[s.active[0] as usize].draining = true;
        assert!(s.check().is_err());
        let mut s = build();
        s.blocks.push(5, 9);
        assert!(s.check().unwrap_err().contains("not zero"));
    }
}
