//! CLOCK, second chance (Corbató, "A paging experiment with the Multics system", MIT
//! Project MAC MAC-M-384, 1968; as described in Tanenbaum, *Modern Operating Systems*,
//! §3.4.5 "The Clock Page Replacement Algorithm"): the resident pages form a ring with a
//! hand; every page has one reference bit, set when the page is referenced again. On a
//! miss the hand looks at the page it points to: bit set → clear it and advance; bit
//! clear → that page is the victim. The new page takes the victim's place in the ring,
//! just behind the hand (it is the last one the hand will look at).
//!
//! # Readings of points the text leaves open
//! - **Bit of a new page**: clear (option `init_ref=false`, the default), as libCacheSim's
//!   `Clock` (`init_freq = 0`): a page earns its second chance by a hit after its load.
//!   `init_ref=true` sets it on load (the hardware reading: the load's reference sets R).
//! - **Pinned pages**: the hand passes a pinned page without clearing its bit (as
//!   PostgreSQL's clock sweep skips pinned buffers without touching their usage count);
//!   `None` only when a whole turn of the ring meets pinned pages only.
//! - **Dirty pages**: ignored. CLOCK is a clean-first-agnostic baseline: a dirty victim is
//!   written back by the pool; `on_clean` changes nothing.
//! - **Free frames** (the pool fills them first, without asking the policy): a page loaded
//!   into one is placed just behind the hand, like any new page.
//! - A page removed without being chosen (a failed load) simply leaves the ring.
//!
//! # Structure
//! The ring is an intrusive list ([`List`]): its tail is the page under the hand, its head
//! the page just behind it; advancing the hand past a page moves it from tail to head.
//! Per frame: 9 bytes of links and 1 byte for the reference bit (10 bytes). `on_insert`,
//! `on_hit`, `on_remove` are O(1); `choose_victim` is O(1) amortised (each advance clears
//! a bit that a hit set) plus one step per pinned page passed; nothing allocates after
//! construction.
//!
//! [`super::reference::NaiveClock`] is the vector version; `tests/baselines_differential.rs`
//! checks that both make the same decisions.

use super::clustering::ClusteringSpec;
use super::list::{Links, List};
use super::reference::NaiveClock;
use super::registry::{PolicyContext, PolicyFactory};
use super::{Access, Policy, PolicyReport, Victim};
use flashbuf_core::config::{OptKind, OptionSpec, Options};
use flashbuf_core::{ConfigError, FrameId, PageId};

/// CLOCK (second chance) replacement.
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::{Access, Clock, Policy, Victim};
/// let mut p = Clock::new(2, false);
/// p.on_insert(FrameId(0), PageId(10), Access::Read);
/// p.on_insert(FrameId(1), PageId(11), Access::Read);
/// p.on_hit(FrameId(0), Access::Read); // frame 0 gets a second chance
/// assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
/// ```
#[derive(Debug, Clone)]
pub struct Clock {
    links: Links,
    /// Tail = under the hand, head = just behind it.
    ring: List,
    referenced: Vec<bool>,
    init_ref: bool,
    /// Bits cleared by the hand so far (a report figure).
    second_chances: u64,
}

impl Clock {
    /// A CLOCK policy for `frames_count` frames; `init_ref` sets a new page's bit.
    pub fn new(frames_count: usize, init_ref: bool) -> Self {
        Self {
            links: Links::new(frames_count),
            ring: List::new(0),
            referenced: vec![false; frames_count],
            init_ref,
            second_chances: 0,
        }
    }
}

impl Policy for Clock {
    fn name(&self) -> &'static str {
        "clock"
    }

    fn frames_count(&self) -> usize {
        self.referenced.len()
    }

    fn on_insert(&mut self, frame: FrameId, _pid: PageId, _access: Access) {
        self.referenced[frame.index()] = self.init_ref;
        self.ring.push_head(&mut self.links, frame);
    }

    fn on_hit(&mut self, frame: FrameId, _access: Access) {
        self.referenced[frame.index()] = true;
    }

    fn on_clean(&mut self, _frame: FrameId) {}

    fn on_remove(&mut self, frame: FrameId) {
        self.ring.remove(&mut self.links, frame);
        self.referenced[frame.index()] = false;
    }

    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        // Pinned pages passed since the hand last cleared a bit: a whole turn of them
        // means nothing is evictable.
        let mut pinned_run = 0;
        while pinned_run < self.ring.len() {
            let f = self.ring.tail()?;
            if !evictable(f) {
                pinned_run += 1;
            } else if self.referenced[f.index()] {
                self.referenced[f.index()] = false;
                self.second_chances += 1;
                pinned_run = 0;
            } else {
                return Some(Victim::Evict(f));
            }
            self.ring.move_to_head(&mut self.links, f);
        }
        None
    }

    fn bytes_per_frame(&self) -> usize {
        Links::BYTES_PER_FRAME + std::mem::size_of::<bool>()
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.ring.check(&self.links)?;
        for (i, &r) in self.referenced.iter().enumerate() {
            let f = FrameId(i as u32);
            if r && !self.ring.contains(&self.links, f) {
                return Err(format!("{f} has its reference bit set but is not resident"));
            }
        }
        Ok(())
    }

    fn report(&self) -> PolicyReport {
        PolicyReport::figures(vec![("second_chances", self.second_chances as f64)])
    }
}

// ---- registration (`super::registry::POLICIES`) ----

/// `clock`'s own options (the clustering options are appended in the table).
pub const OPTIONS: &[OptionSpec] = &[OptionSpec {
    key: "init_ref",
    kind: OptKind::Bool,
    default: Some("false"),
    help: "set a new page's reference bit on load (default: clear, as libCacheSim's Clock)",
}];

/// Parses `clock`'s options.
pub fn parse(o: &Options) -> Result<Box<dyn PolicyFactory>, ConfigError> {
    Ok(Box::new(ClockFactory {
        init_ref: o.bool("init_ref").unwrap_or(false),
        clustering: ClusteringSpec::parse(o)?,
    }))
}

#[derive(Debug)]
struct ClockFactory {
    init_ref: bool,
    clustering: ClusteringSpec,
}

impl PolicyFactory for ClockFactory {
    fn build(&self, ctx: &PolicyContext<'_>) -> Result<Box<dyn Policy>, ConfigError> {
        self.clustering
            .wrap(Clock::new(ctx.frames, self.init_ref), ctx)
    }

    fn build_reference(
        &self,
        ctx: &PolicyContext<'_>,
    ) -> Option<Result<Box<dyn Policy>, ConfigError>> {
        Some(
            self.clustering
                .wrap_reference(NaiveClock::new(ctx.frames, self.init_ref), ctx),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(n: u32, init_ref: bool) -> Clock {
        let mut p = Clock::new(n as usize, init_ref);
        for f in 0..n {
            p.on_insert(FrameId(f), PageId(u64::from(f) + 100), Access::Read);
        }
        p
    }

    #[test]
    fn hand_clears_bits_then_evicts_the_first_unreferenced_page() {
        let mut p = filled(3, false);
        p.on_hit(FrameId(0), Access::Read);
        p.on_hit(FrameId(1), Access::Write);
        assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(2))));
        p.on_remove(FrameId(2));
        p.on_insert(FrameId(2), PageId(7), Access::Read);
        // Frames 0 and 1 lost their bits on the way: the hand is back at 0.
        assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
        assert_eq!(p.report().get("second_chances"), Some(2.0));
        p.check_invariants().unwrap();
    }

    #[test]
    fn all_referenced_is_fifo_after_one_turn_and_init_ref_gives_new_pages_a_chance() {
        let mut p = filled(3, true);
        assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
        let mut q = filled(3, false);
        assert_eq!(q.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
        assert_eq!(p.report().get("second_chances"), Some(3.0));
    }

    #[test]
    fn pinned_pages_keep_their_bit_and_all_pinned_is_none() {
        let mut p = filled(3, false);
        p.on_hit(FrameId(0), Access::Read);
        assert_eq!(
            p.choose_victim(&|f| f != FrameId(0) && f != FrameId(1)),
            Some(Victim::Evict(FrameId(2)))
        );
        assert!(p.referenced[0], "a pinned page's bit is not cleared");
        assert_eq!(p.choose_victim(&|_| false), None);
        p.check_invariants().unwrap();
    }
}
