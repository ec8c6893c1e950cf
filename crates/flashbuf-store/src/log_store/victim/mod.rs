//! Victim rules: which segments the cleaner empties next.
//!
//! A rule only decides: it sees a [`SegmentView`] of every candidate (sealed segments with
//! reclaimable blocks, outside the protection period unless space ran out) and returns up
//! to `n` of them, best first. It never does I/O; the cleaner
//! (`super::cleaner`) copies the live blocks out and frees the segments. One file per
//! rule:
//! - [`greedy`]: fewest live blocks.
//! - [`cost_benefit`]: Sprite LFS's benefit-to-cost ratio (1−u)·age/(1+u).
//! - [`oldest`]: least recently modified first (NILFS2's `timestamp` policy).
//! - [`sepbit`]: the SepBIT artifact's cost-benefit variant, paired with SepBIT's
//!   placement ([`super::placement::sepbit`]).
//!
//! Ties go to the lowest segment id, so every choice is deterministic.

pub mod cost_benefit;
pub mod greedy;
pub mod oldest;
pub mod sepbit;

use super::layout::SegmentId;
use std::fmt::Debug;

/// What a rule sees of a candidate segment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SegmentView {
    /// The segment.
    pub id: SegmentId,
    /// Blocks the map still points to.
    pub live_blocks: u32,
    /// Blocks of the segment (`u = live_blocks / capacity_blocks`).
    pub capacity_blocks: u32,
    /// When the segment was last written (time base ticks).
    pub modified_ticks: f64,
    /// Caller page writes when the segment was opened.
    pub created_writes: u64,
    /// Head (placement class) that filled it.
    pub class: u8,
}

impl SegmentView {
    /// Utilisation `u`: the fraction of the segment still live.
    pub fn utilization(&self) -> f64 {
        f64::from(self.live_blocks) / f64::from(self.capacity_blocks.max(1))
    }
}

/// The time a choice is made at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CleanClock {
    /// Now, in time base ticks.
    pub now_ticks: f64,
    /// Caller page writes so far.
    pub user_writes: u64,
}

/// A victim rule.
///
/// # Contract
/// `choose` returns at most `n` distinct ids taken from `candidates`, best first; the same
/// inputs give the same answer. It must not assume anything about the order of
/// `candidates`.
pub trait VictimRule: Send + Sync + Debug {
    /// The rule's name (as in the lab's `cleaner=` option).
    fn name(&self) -> &'static str;
    /// Up to `n` victims among `candidates`, best first.
    fn choose(&self, candidates: &[SegmentView], clock: CleanClock, n: usize) -> Vec<SegmentId>;
}

/// The `n` candidates with the highest `score`, best first (ties: lowest id).
pub fn top_n(
    candidates: &[SegmentView],
    n: usize,
    score: impl Fn(&SegmentView) -> f64,
) -> Vec<SegmentId> {
    let mut scored: Vec<(f64, SegmentId)> = candidates.iter().map(|c| (score(c), c.id)).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(n).map(|(_, id)| id).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A hand-built candidate.
    pub(crate) fn seg(id: u32, live: u32, modified: f64, created: u64) -> SegmentView {
        SegmentView {
            id: SegmentId(id),
            live_blocks: live,
            capacity_blocks: 100,
            modified_ticks: modified,
            created_writes: created,
            class: 0,
        }
    }

    #[test]
    fn top_n_breaks_ties_by_id_and_caps_the_count() {
        let c = [seg(3, 10, 0.0, 0), seg(1, 10, 0.0, 0), seg(2, 5, 0.0, 0)];
        let ids = top_n(&c, 2, |s| -f64::from(s.live_blocks));
        assert_eq!(ids, vec![SegmentId(2), SegmentId(1)]);
        assert!(top_n(&c, 0, |_| 0.0).is_empty());
        assert!(top_n(&[], 3, |_| 0.0).is_empty());
    }
}
