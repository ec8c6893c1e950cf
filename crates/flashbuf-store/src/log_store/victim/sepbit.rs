//! SepBIT's segment selection: the cost-benefit variant of the SepBIT artifact,
//! `gp / (1 − gp) · √age`, with `gp` the garbage proportion `1 − u` and `age` the caller
//! writes since the segment was opened.
//!
//! Wang, Li, Lee, Ouyang, Shi and Huang, "Separating Data via Block Invalidation Time
//! Inference for Write Amplification Reduction in Log-Structured Storage", FAST 2022:
//! SepBIT is a placement scheme (§4, [`crate::log_store::placement::sepbit`]) evaluated with
//! Cost-Benefit selection; its simulator (`trace_replay/.../selection/CostBenefit.java` in
//! fallfish/sepbit, read, not copied) scores `(1 − u) / u · √age`, age counted in user
//! writes since the segment's creation. A segment with no live block scores highest.
//! Differs from Sprite LFS's [`super::cost_benefit`] in the age (creation, not last
//! modification) and in the shape (`√age`, `(1 − u)/u`).

use super::{top_n, CleanClock, SegmentView, VictimRule};
use crate::log_store::layout::SegmentId;

/// Highest `gp / (1 − gp) · √age` first.
#[derive(Debug, Clone, Copy, Default)]
pub struct SepBitSelection;

/// The score of `s` after `user_writes` caller writes.
pub fn score(s: &SegmentView, user_writes: u64) -> f64 {
    let u = s.utilization();
    if u <= 0.0 {
        return f64::INFINITY;
    }
    let age = user_writes.saturating_sub(s.created_writes) as f64;
    (1.0 - u) / u * age.sqrt()
}

impl VictimRule for SepBitSelection {
    fn name(&self) -> &'static str {
        "sepbit"
    }

    fn choose(&self, candidates: &[SegmentView], clock: CleanClock, n: usize) -> Vec<SegmentId> {
        top_n(candidates, n, |s| score(s, clock.user_writes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log_store::victim::tests::seg;

    #[test]
    fn age_since_creation_in_writes_weighs_by_its_square_root() {
        // u = 0.5 created at 0: 1 * sqrt(10000) = 100; u = 0.2 created at 9900:
        // 4 * sqrt(100) = 40; u = 0.8 created at 0: 0.25 * 100 = 25.
        let c = [
            seg(0, 50, 0.0, 0),
            seg(1, 20, 0.0, 9_900),
            seg(2, 80, 0.0, 0),
        ];
        let clock = CleanClock {
            now_ticks: 0.0,
            user_writes: 10_000,
        };
        assert!((score(&c[0], 10_000) - 100.0).abs() < 1e-9);
        assert!((score(&c[1], 10_000) - 40.0).abs() < 1e-9);
        assert_eq!(
            SepBitSelection.choose(&c, clock, 3),
            vec![SegmentId(0), SegmentId(1), SegmentId(2)]
        );
        // Modification time plays no part.
        let d = [seg(3, 50, 1e12, 0), seg(4, 50, 0.0, 5_000)];
        assert_eq!(SepBitSelection.choose(&d, clock, 1), vec![SegmentId(3)]);
    }
}
