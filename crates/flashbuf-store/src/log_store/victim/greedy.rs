//! Greedy: the segment with the fewest live blocks (the least copying per segment freed).
//!
//! Rosenblum & Ousterhout, "The Design and Implementation of a Log-Structured File
//! System", TOCS 10(1) 1992, §3.5 (the greedy policy of the simulations, Fig. 4); F2FS uses
//! it for foreground cleaning (Lee et al., "F2FS", FAST 2015, §3.5).

use super::{top_n, CleanClock, SegmentView, VictimRule};
use crate::log_store::layout::SegmentId;

/// Fewest live blocks first.
#[derive(Debug, Clone, Copy, Default)]
pub struct Greedy;

impl VictimRule for Greedy {
    fn name(&self) -> &'static str {
        "greedy"
    }

    fn choose(&self, candidates: &[SegmentView], _clock: CleanClock, n: usize) -> Vec<SegmentId> {
        top_n(candidates, n, |s| -f64::from(s.live_blocks))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log_store::victim::tests::seg;

    #[test]
    fn fewest_live_blocks_first_whatever_their_age() {
        let c = [
            seg(0, 50, 0.0, 0),
            seg(1, 10, 1e9, 9),
            seg(2, 30, 5.0, 1),
            seg(3, 10, 0.0, 0),
        ];
        let clock = CleanClock {
            now_ticks: 2e9,
            user_writes: 100,
        };
        assert_eq!(
            Greedy.choose(&c, clock, 3),
            vec![SegmentId(1), SegmentId(3), SegmentId(2)]
        );
    }
}
