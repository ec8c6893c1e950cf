//! Oldest first: the least recently modified segment, whatever its utilisation.
//!
//! NILFS2's only selection policy, `timestamp` ("reclaims segments in order from oldest to
//! newest", `nilfs_cleanerd.conf(5)`; the daemon sorts segments by their last-modified
//! time). The NIPU paper's Flash-NILFS2 ran with it (§4.1, §4.6). NILFS2 also skips
//! segments with fewer than `min_reclaimable_blocks`; here the cleaner offers only
//! segments with at least one reclaimable block.

use super::{top_n, CleanClock, SegmentView, VictimRule};
use crate::log_store::layout::SegmentId;

/// Least recently modified first.
#[derive(Debug, Clone, Copy, Default)]
pub struct Oldest;

impl VictimRule for Oldest {
    fn name(&self) -> &'static str {
        "oldest"
    }

    fn choose(&self, candidates: &[SegmentView], _clock: CleanClock, n: usize) -> Vec<SegmentId> {
        top_n(candidates, n, |s| -s.modified_ticks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log_store::victim::tests::seg;

    #[test]
    fn least_recently_modified_first_even_if_nearly_full() {
        let c = [
            seg(0, 5, 300.0, 0),
            seg(1, 99, 100.0, 0),
            seg(2, 50, 200.0, 0),
        ];
        let clock = CleanClock {
            now_ticks: 1000.0,
            user_writes: 0,
        };
        assert_eq!(
            Oldest.choose(&c, clock, 3),
            vec![SegmentId(1), SegmentId(2), SegmentId(0)]
        );
    }
}
