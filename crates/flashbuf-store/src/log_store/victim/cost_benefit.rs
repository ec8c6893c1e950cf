//! Cost-benefit: the segment with the highest ratio of space freed times its age to the
//! cost of cleaning it, `(1 − u) · age / (1 + u)`.
//!
//! Rosenblum & Ousterhout, "The Design and Implementation of a Log-Structured File
//! System", TOCS 10(1) 1992, §3.6: cleaning a segment of utilisation `u` costs reading it
//! (1) and writing its live data back (`u`) and frees `1 − u`; weighting the benefit by
//! the age of the data prefers cold segments, whose free space stays free longer. `age` is
//! the age of the segment's youngest data (Sprite LFS: "the most recent modified time of
//! any block in the segment"), in the store's time base: for a segment of callers' pages
//! the time of its last write, for a segment of the cleaner's copies the youngest age of
//! the segments they came from (the copies keep their data's age; the cleaner writes
//! them to a log of their own, [`crate::log_store::placement::TwoLogs`]).

use super::{top_n, CleanClock, SegmentView, VictimRule};
use crate::log_store::layout::SegmentId;

/// Highest `(1 − u) · age / (1 + u)` first.
#[derive(Debug, Clone, Copy, Default)]
pub struct CostBenefit;

/// The score of `s` at `now_ticks`.
pub fn score(s: &SegmentView, now_ticks: f64) -> f64 {
    let u = s.utilization();
    let age = (now_ticks - s.modified_ticks).max(0.0);
    (1.0 - u) * age / (1.0 + u)
}

impl VictimRule for CostBenefit {
    fn name(&self) -> &'static str {
        "cost-benefit"
    }

    fn choose(&self, candidates: &[SegmentView], clock: CleanClock, n: usize) -> Vec<SegmentId> {
        top_n(candidates, n, |s| score(s, clock.now_ticks))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log_store::victim::tests::seg;

    #[test]
    fn an_old_fuller_segment_beats_a_young_emptier_one() {
        // u = 0.5, age 900: 0.5 * 900 / 1.5 = 300; u = 0.2, age 100: 0.8 * 100 / 1.2 = 66.7.
        let c = [
            seg(0, 20, 900.0, 0),
            seg(1, 50, 100.0, 0),
            seg(2, 100, 0.0, 0),
        ];
        let clock = CleanClock {
            now_ticks: 1000.0,
            user_writes: 0,
        };
        assert!((score(&c[1], 1000.0) - 300.0).abs() < 1e-9);
        assert!((score(&c[0], 1000.0) - 0.8 * 100.0 / 1.2).abs() < 1e-9);
        assert_eq!(score(&c[2], 1000.0), 0.0);
        assert_eq!(
            CostBenefit.choose(&c, clock, 2),
            vec![SegmentId(1), SegmentId(0)]
        );
        // At equal age it is greedy.
        let d = [seg(4, 60, 0.0, 0), seg(5, 40, 0.0, 0)];
        assert_eq!(CostBenefit.choose(&d, clock, 1), vec![SegmentId(5)]);
    }
}
