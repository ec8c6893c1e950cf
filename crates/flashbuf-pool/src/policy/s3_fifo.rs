//! S3-FIFO (Yang, Zhang, Qiu, Yue, Vinayak, "FIFO queues are all you need for cache
//! eviction", SOSP 2023, §4 and Algorithm 1).
//!
//! Three FIFO queues: a small queue `S` (10% of the frames) that new pages enter, a main
//! queue `M` (the rest), and a ghost queue `G` of identifiers of pages evicted from `S`.
//! Every resident page has a 2-bit frequency, 0 on load, `min(freq + 1, 3)` on each hit.
//! A miss on a page of `G` loads it into `M`. Eviction from `S`: the page at its tail
//! moves to `M` if it was hit at least twice (`freq ≥ 2`, the paper's `freq > 1`), else it
//! is evicted and its identifier enters `G`; repeated until one page is evicted. Eviction
//! from `M` is CLOCK with the 2-bit counter: a tail page with `freq > 0` is reinserted at
//! the head with `freq − 1`, one with `freq = 0` is evicted.
//!
//! # Readings of points the text leaves open (libCacheSim's `S3FIFO.c`, by the authors,
//! where Algorithm 1 leaves a choice)
//! - **Sizes**: `|S|`'s target is `⌊small × c⌋` (at least 1; option `small`, default
//!   0.1), `M`'s is `c − |S|`'s target; `G` holds `⌊ghost × c⌋` identifiers (option
//!   `ghost`, default 0.9: the main queue's size up to rounding, as libCacheSim).
//! - **One victim per miss**: Algorithm 1's `evictS` may call `evictM` when a page moved
//!   to a full `M` and then still evict from `S` (two pages for one miss); a pool frees
//!   one frame per miss, so, as libCacheSim, `M` may exceed its target after a move and
//!   the next eviction is then from `M`: evict from `S` when `|S| ≥` its target (the cache
//!   being full, this is libCacheSim's `|M| ≤` its target) and `S` is not empty, else from
//!   `M`.
//! - **A page moved from `S` to `M`** enters `M` with frequency 0 (libCacheSim reinserts
//!   a fresh object). `threshold` (default 2) is the frequency that earns the move.
//! - **Before the first eviction** (option `fill_main`, default true, as libCacheSim's
//!   `S3FIFO.c`; false is the paper's and libCacheSim's `S3FIFOv0.c`): once `S` reached
//!   its target, further new pages enter `M` until the buffer is full.
//! - **The ghost hit** removes the identifier from `G` before the victim's identifier is
//!   pushed (a full `G` drops its oldest identifier).
//! - **Pinned pages**: in `S` a pinned page is passed and keeps its place and frequency
//!   (the next newer page of `S` is examined); in `M` the hand passes it like CLOCK
//!   (moved to the head, frequency untouched). If `S` yields no victim the search goes on
//!   in `M` (and from `M` back to `S`, then `M` again, for pages `S` just moved); `None`
//!   when a whole turn finds nothing evictable.
//! - **Dirty pages**: ignored (a clean-first-agnostic baseline).
//! - The victim depends on no property of the missed page, so the pool's order (victim
//!   first, page named in `on_insert`) loses nothing.
//!
//! # Structure
//! `S`, `M`: intrusive lists over the frames; `G`: [`Ghosts`] of `⌊ghost × c⌋` slots.
//! Per frame: links (9 bytes), frequency (1), page identifier (8), and `ghost` ghost slots
//! ([`Ghosts::bytes`]: 21 bytes each plus 2 to 4 hash-index entries of 4 bytes): 44 to 51
//! bytes at the defaults. Hits are O(1);
//! a victim costs O(1) amortised (each step undoes a hit or moves a page once), plus one
//! step per pinned page passed; nothing allocates after construction.
//!
//! [`super::reference::NaiveS3Fifo`] is the vector version;
//! `tests/baselines_differential.rs` checks that both make the same decisions.

use super::clustering::ClusteringSpec;
use super::ghost::{Departure, Ghosts};
use super::list::{Links, List};
use super::reference::NaiveS3Fifo;
use super::registry::{PolicyContext, PolicyFactory};
use super::{Access, Policy, PolicyReport, Victim};
use flashbuf_core::config::{OptKind, OptionSpec, Options};
use flashbuf_core::{ConfigError, FrameId, PageId};

const S: u8 = 0;
const M: u8 = 1;

/// S3-FIFO's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct S3FifoConfig {
    /// Target of the small queue, a share of the frames.
    pub small: f64,
    /// Size of the ghost queue, a share of the frames.
    pub ghost: f64,
    /// Frequency that moves a page from the small to the main queue.
    pub threshold: u8,
    /// New pages enter the main queue once the small one is full, until the first
    /// eviction.
    pub fill_main: bool,
}

impl Default for S3FifoConfig {
    fn default() -> Self {
        Self {
            small: 0.1,
            ghost: 0.9,
            threshold: 2,
            fill_main: true,
        }
    }
}

impl S3FifoConfig {
    /// `(small queue target, ghost slots)` in frames for `c` frames.
    pub fn sizes(&self, c: usize) -> (usize, usize) {
        let small = ((self.small * c as f64).floor() as usize).max(1);
        (small, (self.ghost * c as f64).floor() as usize)
    }
}

/// S3-FIFO.
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::{Access, Policy, S3Fifo, S3FifoConfig, Victim};
/// let mut p = S3Fifo::new(10, S3FifoConfig::default()); // S: 1 frame
/// p.on_insert(FrameId(0), PageId(1), Access::Read); // S
/// for f in 1..10 {
///     p.on_insert(FrameId(f), PageId(u64::from(f) + 1), Access::Read); // M (fill_main)
/// }
/// assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
/// ```
#[derive(Debug, Clone)]
pub struct S3Fifo {
    links: Links,
    queues: [List; 2],
    freq: Vec<u8>,
    page: Vec<u64>,
    ghosts: Ghosts,
    small_target: usize,
    ghost_capacity: usize,
    cfg: S3FifoConfig,
    has_evicted: bool,
    victim: Departure,
}

impl S3Fifo {
    /// S3-FIFO for `frames_count` frames.
    pub fn new(frames_count: usize, cfg: S3FifoConfig) -> Self {
        let (small_target, ghost_capacity) = cfg.sizes(frames_count);
        Self {
            links: Links::new(frames_count),
            queues: [List::new(S), List::new(M)],
            freq: vec![0; frames_count],
            page: vec![0; frames_count],
            ghosts: Ghosts::new(ghost_capacity, 1),
            small_target,
            ghost_capacity,
            cfg,
            has_evicted: false,
            victim: Departure::default(),
        }
    }

    /// `evictS`: the oldest evictable page of `S` hit fewer than `threshold` times; older
    /// evictable pages hit more often move to `M` on the way.
    fn evict_small(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let mut cur = self.queues[0].tail();
        while let Some(f) = cur {
            cur = self.queues[0].next_newer(&self.links, f);
            if !evictable(f) {
                continue;
            }
            if self.freq[f.index()] < self.cfg.threshold {
                return Some(f);
            }
            self.queues[0].remove(&mut self.links, f);
            self.freq[f.index()] = 0;
            self.queues[1].push_head(&mut self.links, f);
        }
        None
    }

    /// `evictM`: CLOCK over `M` with the 2-bit counter.
    fn evict_main(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let mut fruitless = 0;
        while fruitless < self.queues[1].len() {
            let f = self.queues[1].tail()?;
            if !evictable(f) {
                fruitless += 1;
            } else if self.freq[f.index()] > 0 {
                self.freq[f.index()] -= 1;
                fruitless = 0;
            } else {
                return Some(f);
            }
            self.queues[1].move_to_head(&mut self.links, f);
        }
        None
    }
}

impl Policy for S3Fifo {
    fn name(&self) -> &'static str {
        "s3-fifo"
    }

    fn frames_count(&self) -> usize {
        self.freq.len()
    }

    fn on_insert(&mut self, frame: FrameId, pid: PageId, _access: Access) {
        let ghost_hit = self.ghosts.remove(pid).is_some();
        if let Some((y, S)) = self.victim.take() {
            self.ghosts.push_capped(0, y, self.ghost_capacity);
        }
        self.page[frame.index()] = pid.0;
        self.freq[frame.index()] = 0;
        let small_full = self.queues[0].len() >= self.small_target;
        let q = if ghost_hit || (self.cfg.fill_main && !self.has_evicted && small_full) {
            M
        } else {
            S
        };
        self.queues[usize::from(q)].push_head(&mut self.links, frame);
    }

    fn on_hit(&mut self, frame: FrameId, _access: Access) {
        let f = &mut self.freq[frame.index()];
        *f = (*f + 1).min(3);
    }

    fn on_clean(&mut self, _frame: FrameId) {}

    fn on_remove(&mut self, frame: FrameId) {
        self.victim
            .remove_from(&mut self.queues, &mut self.links, &self.page, frame);
    }

    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        self.has_evicted = true;
        let small = self.queues[0].len();
        let f = if small >= self.small_target && small > 0 {
            self.evict_small(evictable)
                .or_else(|| self.evict_main(evictable))
        } else {
            self.evict_main(evictable)
                .or_else(|| self.evict_small(evictable))
                .or_else(|| self.evict_main(evictable))
        }?;
        self.victim.chose(f);
        Some(Victim::Evict(f))
    }

    fn bytes_per_frame(&self) -> usize {
        Links::BYTES_PER_FRAME + 1 + 8 + self.ghosts.bytes() / self.freq.len().max(1)
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.queues[0].check(&self.links)?;
        self.queues[1].check(&self.links)?;
        self.ghosts.check()?;
        if self.ghosts.len(0) > self.ghost_capacity {
            return Err(format!(
                "{} ghosts > {}",
                self.ghosts.len(0),
                self.ghost_capacity
            ));
        }
        match self.freq.iter().position(|&f| f > 3) {
            Some(i) => Err(format!("frame {i}: frequency above 3")),
            None => Ok(()),
        }
    }

    fn report(&self) -> PolicyReport {
        PolicyReport::figures(vec![
            ("small", self.queues[0].len() as f64),
            ("main", self.queues[1].len() as f64),
            ("ghost", self.ghosts.len(0) as f64),
        ])
    }
}

// ---- registration (`super::registry::POLICIES`) ----

/// `s3-fifo`'s own options (the clustering options are appended in the table).
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "small",
        kind: OptKind::Float { min: 0.0, max: 1.0 },
        default: Some("0.1"),
        help: "small queue's target as a share of the frames (paper: 10%)",
    },
    OptionSpec {
        key: "ghost",
        kind: OptKind::Float { min: 0.0, max: 4.0 },
        default: Some("0.9"),
        help: "ghost queue's size as a share of the frames (paper: as the main queue)",
    },
    OptionSpec {
        key: "threshold",
        kind: OptKind::UInt { min: 1, max: 3 },
        default: Some("2"),
        help: "hits in the small queue that move a page to the main queue",
    },
    OptionSpec {
        key: "fill_main",
        kind: OptKind::Bool,
        default: Some("true"),
        help: "before the first eviction, new pages beyond the small queue's target enter \
               the main queue (libCacheSim's S3FIFO.c; false: the paper, S3FIFOv0.c)",
    },
];

/// Parses `s3-fifo`'s options.
pub fn parse(o: &Options) -> Result<Box<dyn PolicyFactory>, ConfigError> {
    let d = S3FifoConfig::default();
    let threshold = o.u64("threshold").unwrap_or(u64::from(d.threshold));
    Ok(Box::new(S3FifoFactory {
        cfg: S3FifoConfig {
            small: o.f64("small").unwrap_or(d.small),
            ghost: o.f64("ghost").unwrap_or(d.ghost),
            threshold: u8::try_from(threshold).map_err(|_| o.invalid("threshold above 3"))?,
            fill_main: o.bool("fill_main").unwrap_or(d.fill_main),
        },
        clustering: ClusteringSpec::parse(o)?,
    }))
}

#[derive(Debug)]
struct S3FifoFactory {
    cfg: S3FifoConfig,
    clustering: ClusteringSpec,
}

impl PolicyFactory for S3FifoFactory {
    fn build(&self, ctx: &PolicyContext<'_>) -> Result<Box<dyn Policy>, ConfigError> {
        self.clustering.wrap(S3Fifo::new(ctx.frames, self.cfg), ctx)
    }

    fn build_reference(
        &self,
        ctx: &PolicyContext<'_>,
    ) -> Option<Result<Box<dyn Policy>, ConfigError>> {
        Some(
            self.clustering
                .wrap_reference(NaiveS3Fifo::new(ctx.frames, self.cfg), ctx),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twice_hit_small_pages_move_to_main_and_the_rest_become_ghosts() {
        let cfg = S3FifoConfig {
            fill_main: false,
            ..S3FifoConfig::default()
        };
        let mut p = S3Fifo::new(10, cfg);
        for f in 0..10 {
            p.on_insert(FrameId(f), PageId(u64::from(f)), Access::Read);
        }
        p.on_hit(FrameId(0), Access::Read);
        p.on_hit(FrameId(0), Access::Read);
        p.on_hit(FrameId(1), Access::Read);
        // All ten in S: 0 (two hits) moves to M, 1 (one hit) is the victim.
        assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
        p.on_remove(FrameId(1));
        p.on_insert(FrameId(1), PageId(50), Access::Read);
        assert_eq!(p.ghosts.find(PageId(1)), Some(0));
        assert_eq!(p.links.owner(FrameId(0)), Some(M));
        assert_eq!(p.freq[0], 0, "a moved page starts over in M");
        p.check_invariants().unwrap();
    }

    #[test]
    fn main_is_a_two_bit_clock_and_pinned_pages_are_passed() {
        let mut p = S3Fifo::new(10, S3FifoConfig::default());
        for f in 0..10 {
            p.on_insert(FrameId(f), PageId(u64::from(f)), Access::Read);
        }
        // fill_main: 0 in S, 1..9 in M. Evict from S (|S| = 1 ≥ 1) unless pinned.
        for _ in 0..5 {
            p.on_hit(FrameId(1), Access::Read);
        }
        assert_eq!(p.freq[1], 3);
        let v = p.choose_victim(&|f| f != FrameId(0));
        // S yields nothing; M: 1 has freq 3 → 2 and moves on; 2 is the victim.
        assert_eq!(v, Some(Victim::Evict(FrameId(2))));
        assert_eq!(p.freq[1], 2);
        assert_eq!(p.choose_victim(&|_| false), None);
        p.check_invariants().unwrap();
    }
}
