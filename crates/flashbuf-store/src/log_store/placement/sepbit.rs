//! SepBIT: place blocks by their inferred invalidation time.
//!
//! Wang, Li, Lee, Ouyang, Shi and Huang, "Separating Data via Block Invalidation Time
//! Inference for Write Amplification Reduction in Log-Structured Storage", FAST 2022, §4
//! (design) and §4.3 (implementation); read in the authors' simulator and prototype
//! (fallfish/sepbit: `trace_replay/.../placement/SepBIT.java`,
//! `prototype/src/placement/sepbit.cc`), not copied. Six classes:
//! - **User writes** (§4.1): a page whose previous copy lived less than `ℓ` caller writes
//!   (its *lifespan*: writes between its last two writes) is expected to die soon again:
//!   class 0; every other write (first writes included): class 1. The artifact also caps
//!   the comparison at the number of valid blocks (its FIFO holds at most that many
//!   entries); so do we.
//! - **Cleaner copies** (§4.2): blocks out of a class-0 segment go to class 2; others by
//!   their age (caller writes since the page's last caller write): class 3 below `4ℓ`,
//!   class 4 below `16ℓ`, class 5 beyond.
//! - **ℓ** (§4.1): the mean lifespan of the last 16 collected class-0 segments (a
//!   segment's lifespan: caller writes from its opening to its collection); infinite until
//!   16 were collected.
//!
//! Time is counted in caller page writes, as in the paper. Readings and deviations:
//! - The artifact keeps a FIFO of recent writes to bound memory; we keep each page's last
//!   caller-write time as 4 bytes (writes modulo 2³², exact below 4 G writes), the same
//!   decisions for any trace shorter than that.
//! - That state is soft: after a reopen every page's last write is unknown (its copies go
//!   to class 5 and its next write to class 1) and ℓ starts again at infinity.
//! - Selection is the artifact's cost-benefit variant ([`crate::log_store::victim::sepbit`]).

use super::Placement;
use crate::log_store::victim::SegmentView;

/// Classes (heads).
pub const CLASSES: usize = 6;
/// Classes the cleaner's copies go to (2..=5).
pub const GC_CLASSES: usize = 4;
/// Collected class-0 segments averaged into ℓ.
const LIFESPAN_WINDOW: u32 = 16;

/// SepBIT's placement state.
#[derive(Debug, Clone)]
pub struct SepBit {
    /// Per page: (last caller write + 1) modulo 2³², 0 = unknown.
    last_write: Vec<u32>,
    /// ℓ, in caller writes.
    threshold: f64,
    lifespan_sum: f64,
    lifespans: u32,
    /// Class of the segment being collected.
    collecting_class: u8,
    /// Blocks placed per class (user and cleaner).
    placed: [u64; CLASSES],
}

impl SepBit {
    /// The state for page ids `0..logical_pages`.
    pub fn new(logical_pages: u64) -> Self {
        Self {
            last_write: vec![0; logical_pages as usize],
            threshold: f64::INFINITY,
            lifespan_sum: 0.0,
            lifespans: 0,
            collecting_class: 1,
            placed: [0; CLASSES],
        }
    }

    /// ℓ now (infinite until 16 class-0 segments were collected).
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// Caller writes since `pid`'s last caller write, if known.
    fn since_last(&self, pid: u64, user_writes: u64) -> Option<f64> {
        match self.last_write.get(pid as usize).copied() {
            None | Some(0) => None,
            Some(stamp) => {
                let last = stamp.wrapping_sub(1);
                Some(f64::from((user_writes as u32).wrapping_sub(last)))
            }
        }
    }
}

impl Placement for SepBit {
    fn name(&self) -> &'static str {
        "sepbit"
    }

    fn heads(&self) -> usize {
        CLASSES
    }

    fn place_user(&mut self, pid: u64, user_writes: u64, live_blocks: u64) -> usize {
        let cap = self.threshold.min(live_blocks as f64);
        let class = match self.since_last(pid, user_writes) {
            Some(lifespan) if lifespan < cap => 0,
            _ => 1,
        };
        if let Some(s) = self.last_write.get_mut(pid as usize) {
            *s = (user_writes as u32).wrapping_add(1).max(1);
        }
        self.placed[class] += 1;
        class
    }

    fn place_gc(&mut self, pid: u64, _victim_class: u8, user_writes: u64) -> usize {
        let class = if self.collecting_class == 0 {
            2
        } else {
            match self.since_last(pid, user_writes) {
                Some(age) if age < 4.0 * self.threshold => 3,
                Some(age) if age < 16.0 * self.threshold => 4,
                _ => 5,
            }
        };
        self.placed[class] += 1;
        class
    }

    fn collected(&mut self, victim: &SegmentView, user_writes: u64) {
        self.collecting_class = victim.class;
        if victim.class == 0 {
            self.lifespan_sum += user_writes.saturating_sub(victim.created_writes) as f64;
            self.lifespans += 1;
            if self.lifespans == LIFESPAN_WINDOW {
                self.threshold = self.lifespan_sum / f64::from(LIFESPAN_WINDOW);
                self.lifespan_sum = 0.0;
                self.lifespans = 0;
            }
        }
    }

    fn memory_bytes(&self) -> usize {
        self.last_write.len() * std::mem::size_of::<u32>()
    }

    fn report(&self) -> Vec<(&'static str, f64)> {
        let names = [
            "sepbit_class0_blocks",
            "sepbit_class1_blocks",
            "sepbit_class2_blocks",
            "sepbit_class3_blocks",
            "sepbit_class4_blocks",
            "sepbit_class5_blocks",
        ];
        let mut r: Vec<(&'static str, f64)> = names
            .iter()
            .zip(self.placed)
            .map(|(n, v)| (*n, v as f64))
            .collect();
        r.push((
            "sepbit_threshold_writes",
            if self.threshold.is_finite() {
                self.threshold
            } else {
                -1.0
            },
        ));
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log_store::layout::SegmentId;

    fn victim(class: u8, created: u64) -> SegmentView {
        SegmentView {
            id: SegmentId(0),
            live_blocks: 1,
            capacity_blocks: 8,
            modified_ticks: 0.0,
            created_writes: created,
            class,
        }
    }

    #[test]
    fn short_lifespans_go_to_class_0_once_l_is_learnt() {
        let mut s = SepBit::new(100);
        // First writes: class 1. A rewrite while ℓ is infinite: lifespan < live blocks.
        assert_eq!(s.place_user(7, 0, 50), 1);
        assert_eq!(s.place_user(7, 10, 50), 0);
        assert_eq!(
            s.place_user(7, 100, 50),
            1,
            "lifespan 90 >= 50 valid blocks"
        );
        // Learn ℓ = 20 from 16 class-0 segments each collected 20 writes after opening.
        for i in 0..16 {
            s.collected(&victim(0, i * 10), i * 10 + 20);
        }
        assert_eq!(s.threshold(), 20.0);
        assert_eq!(s.place_user(7, 115, 50), 0, "lifespan 15 < 20");
        assert_eq!(s.place_user(7, 140, 50), 1, "lifespan 25 >= 20");
    }

    #[test]
    fn cleaner_copies_by_victim_class_and_age() {
        let mut s = SepBit::new(10);
        for i in 0..16 {
            s.collected(&victim(0, 0), 10 * (i % 2 + 1)); // lifespans 10 and 20: ℓ = 15
        }
        assert_eq!(s.threshold(), 15.0);
        s.place_user(1, 1000, 5);
        s.collected(&victim(0, 0), 1000);
        assert_eq!(s.place_gc(1, 0, 1010), 2);
        s.collected(&victim(1, 0), 1000);
        assert_eq!(s.place_gc(1, 1, 1059), 3, "age 59 < 4ℓ = 60");
        assert_eq!(s.place_gc(1, 1, 1060), 4, "age 60 < 16ℓ = 240");
        assert_eq!(s.place_gc(1, 1, 1240), 5);
        assert_eq!(s.place_gc(2, 1, 1240), 5, "never written: unknown age");
        assert_eq!(s.memory_bytes(), 40);
    }
}
