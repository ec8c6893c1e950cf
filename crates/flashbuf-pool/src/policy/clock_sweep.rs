//! Clock sweep: PostgreSQL's buffer replacement (`src/backend/storage/buffer/freelist.c`,
//! `StrategyGetBuffer` and `ClockSweepTick`; `bufmgr.c`, `PinBuffer` and `BufferAlloc`;
//! the algorithm is described in `src/backend/storage/buffer/README`, "Buffer Ring
//! Replacement Strategy" and "Normal Buffer Replacement Strategy").
//!
//! Every buffer has a `usage_count` in `0..=BM_MAX_USAGE_COUNT` (5). A page loaded into a
//! buffer starts at 1 (`BufferAlloc` sets `BUF_USAGECOUNT_ONE`); every further pin (a hit)
//! increments it up to 5 (`PinBuffer`). The hand (`nextVictimBuffer`) sweeps the buffers
//! in index order: an unpinned buffer with a nonzero count has it decremented and is
//! passed; the first unpinned buffer with count 0 is the victim, and the hand stays one
//! past it. A pinned buffer is passed untouched; `StrategyGetBuffer` errors ("no unpinned
//! buffers available") when `trycounter` — reset to `NBuffers` at every decrement —
//! reaches 0, i.e. after a whole turn without a decrement.
//!
//! # Readings of points the text leaves open
//! - **The free list**: PostgreSQL takes a buffer from its free list before sweeping; here
//!   the pool does that (its own free frames), so the policy only sweeps.
//! - **Frames not holding a page** (the pool's free frames, met when a load failed) are
//!   passed like pinned buffers.
//! - **Hits** are counted per fix, as `PinBuffer` without a buffer access strategy (no ring
//!   buffers for bulk reads or vacuum: the pool has none).
//! - **Dirty pages**: ignored (PostgreSQL's sweep does not look at `BM_DIRTY`; the backend
//!   writes the victim back itself). A clean-first-agnostic baseline.
//! - **No give-up error**: a whole turn without a decrement returns `None`; the hand is then
//!   back where it started.
//! - `max_usage` (default 5) is an option, to study other caps (1 gives CLOCK with the
//!   bit set on load and the hand over frame indices).
//!
//! # Structure
//! One byte per frame (the usage count; `u8::MAX` = no page) and the hand: `on_insert`,
//! `on_hit`, `on_remove` are O(1); `choose_victim` at most `max_usage + 1` turns of the
//! frames (O(1) amortised: each step past a page undoes one increment), no allocation.
//!
//! [`super::reference::NaiveClockSweep`] is the plain version;
//! `tests/baselines_differential.rs` checks that both make the same decisions.

use super::clustering::ClusteringSpec;
use super::reference::NaiveClockSweep;
use super::registry::{PolicyContext, PolicyFactory};
use super::{Access, Policy, PolicyReport, Victim};
use flashbuf_core::config::{OptKind, OptionSpec, Options};
use flashbuf_core::{ConfigError, FrameId, PageId};

/// `BM_MAX_USAGE_COUNT` of PostgreSQL (`buf_internals.h`).
pub const BM_MAX_USAGE_COUNT: u8 = 5;

/// Usage count of a frame that holds no page.
const ABSENT: u8 = u8::MAX;

/// PostgreSQL's clock sweep.
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::{Access, ClockSweep, Policy, Victim};
/// let mut p = ClockSweep::new(2, 5);
/// p.on_insert(FrameId(0), PageId(10), Access::Read); // usage 1
/// p.on_insert(FrameId(1), PageId(11), Access::Read); // usage 1
/// p.on_hit(FrameId(0), Access::Read); // usage 2
/// // 0: 2→1, 1: 1→0, 0: 1→0, 1: victim.
/// assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
/// ```
#[derive(Debug, Clone)]
pub struct ClockSweep {
    usage: Vec<u8>,
    hand: usize,
    max_usage: u8,
    /// Decrements by the hand so far (a report figure).
    decrements: u64,
}

impl ClockSweep {
    /// A clock sweep over `frames_count` frames, usage counts capped at `max_usage`
    /// (PostgreSQL: [`BM_MAX_USAGE_COUNT`]; clamped to `1..=100`).
    pub fn new(frames_count: usize, max_usage: u8) -> Self {
        Self {
            usage: vec![ABSENT; frames_count],
            hand: 0,
            max_usage: max_usage.clamp(1, 100),
            decrements: 0,
        }
    }
}

impl Policy for ClockSweep {
    fn name(&self) -> &'static str {
        "clock-sweep"
    }

    fn frames_count(&self) -> usize {
        self.usage.len()
    }

    fn on_insert(&mut self, frame: FrameId, _pid: PageId, _access: Access) {
        self.usage[frame.index()] = 1;
    }

    fn on_hit(&mut self, frame: FrameId, _access: Access) {
        let u = &mut self.usage[frame.index()];
        if *u != ABSENT && *u < self.max_usage {
            *u += 1;
        }
    }

    fn on_clean(&mut self, _frame: FrameId) {}

    fn on_remove(&mut self, frame: FrameId) {
        self.usage[frame.index()] = ABSENT;
    }

    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let n = self.usage.len();
        // `trycounter`: steps left before a whole turn without a decrement.
        let mut try_counter = n;
        while try_counter > 0 {
            let i = self.hand;
            self.hand = if i + 1 == n { 0 } else { i + 1 };
            let f = FrameId(i as u32);
            let u = self.usage[i];
            if u != ABSENT && evictable(f) {
                if u == 0 {
                    return Some(Victim::Evict(f));
                }
                self.usage[i] = u - 1;
                self.decrements += 1;
                try_counter = n;
            } else {
                try_counter -= 1;
            }
        }
        None
    }

    fn bytes_per_frame(&self) -> usize {
        std::mem::size_of::<u8>()
    }

    fn check_invariants(&self) -> Result<(), String> {
        if self.hand >= self.usage.len().max(1) {
            return Err(format!(
                "hand {} beyond {} frames",
                self.hand,
                self.usage.len()
            ));
        }
        match self
            .usage
            .iter()
            .position(|&u| u != ABSENT && u > self.max_usage)
        {
            Some(i) => Err(format!("frame {i}: usage count above {}", self.max_usage)),
            None => Ok(()),
        }
    }

    fn report(&self) -> PolicyReport {
        PolicyReport::figures(vec![
            ("hand", self.hand as f64),
            ("decrements", self.decrements as f64),
        ])
    }
}

// ---- registration (`super::registry::POLICIES`) ----

/// `clock-sweep`'s own options (the clustering options are appended in the table).
pub const OPTIONS: &[OptionSpec] = &[OptionSpec {
    key: "max_usage",
    kind: OptKind::UInt { min: 1, max: 100 },
    default: Some("5"),
    help: "cap of the usage count (PostgreSQL's BM_MAX_USAGE_COUNT = 5)",
}];

/// Parses `clock-sweep`'s options.
pub fn parse(o: &Options) -> Result<Box<dyn PolicyFactory>, ConfigError> {
    let max_usage = o.u64("max_usage").unwrap_or(u64::from(BM_MAX_USAGE_COUNT));
    Ok(Box::new(ClockSweepFactory {
        max_usage: u8::try_from(max_usage).map_err(|_| o.invalid("max_usage above 100"))?,
        clustering: ClusteringSpec::parse(o)?,
    }))
}

#[derive(Debug)]
struct ClockSweepFactory {
    max_usage: u8,
    clustering: ClusteringSpec,
}

impl PolicyFactory for ClockSweepFactory {
    fn build(&self, ctx: &PolicyContext<'_>) -> Result<Box<dyn Policy>, ConfigError> {
        self.clustering
            .wrap(ClockSweep::new(ctx.frames, self.max_usage), ctx)
    }

    fn build_reference(
        &self,
        ctx: &PolicyContext<'_>,
    ) -> Option<Result<Box<dyn Policy>, ConfigError>> {
        Some(self.clustering.wrap_reference(
            NaiveClockSweep::new(ctx.frames, self.max_usage.clamp(1, 100)),
            ctx,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_saturate_at_five_and_the_hand_decrements_them() {
        let mut p = ClockSweep::new(3, BM_MAX_USAGE_COUNT);
        for f in 0..3 {
            p.on_insert(FrameId(f), PageId(u64::from(f)), Access::Read);
        }
        for _ in 0..10 {
            p.on_hit(FrameId(0), Access::Read);
        }
        assert_eq!(p.usage[0], 5);
        // 1 and 2 reach 0 on the first turn; 1 is the victim on the second.
        assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
        assert_eq!(p.usage, vec![3, 0, 0]);
        assert_eq!(p.hand, 2);
        p.check_invariants().unwrap();
    }

    #[test]
    fn pinned_buffers_are_passed_untouched_and_all_pinned_is_none() {
        let mut p = ClockSweep::new(3, BM_MAX_USAGE_COUNT);
        for f in 0..3 {
            p.on_insert(FrameId(f), PageId(u64::from(f)), Access::Read);
        }
        assert_eq!(
            p.choose_victim(&|f| f == FrameId(2)),
            Some(Victim::Evict(FrameId(2)))
        );
        assert_eq!(p.usage, vec![1, 1, 0]);
        assert_eq!(p.choose_victim(&|_| false), None);
        assert_eq!(p.hand, 0, "a fruitless turn ends where it began");
        assert_eq!(p.report().get("decrements"), Some(1.0));
    }
}
