//! CFLRU, Clean-First LRU (Park, Jung, Kang, Kim, Lee, CASES 2006), as the CFDC paper
//! describes it (Ou, Härder, Jin, DaMoN 2009, `cfdc.txt` §2.4 and Fig. 1).
//!
//! The LRU list is split into the *working region* at the MRU end and the *clean-first
//! region* (the window) made of the `w` least recently used pages. The victim is the least
//! recently used **clean** page inside the window; only when the window holds no clean page
//! is the LRU page itself (then dirty) evicted.
//!
//! # Readings of points the text leaves open
//! - `w` is a fraction of the buffer (option `window`, default 0.5 as in the CFDC paper's
//!   experiments), rounded to the nearest frame: `w = round(window × frames)`. While fewer
//!   than `w` pages are resident, all of them are in the window.
//! - Dirtiness is the pool's: a page is dirty from a write fix until the pool writes it
//!   back (`on_clean`); a page cleaned by a flush keeps its place in the recency order.
//! - Pinned pages are skipped: the victim is the LRU-most *evictable* clean page of the
//!   window, else the LRU-most evictable page overall.
//!
//! # Structure: O(1) per operation, no list scans
//! The CFDC paper's §3.1 observation: split the window into a clean and a dirty queue.
//! Here three intrusive lists share one set of links: the working region (LRU order) and
//! the window's clean and dirty pages, each in window order. Every page entering the
//! window gets a sequence number; since pages only enter the window at its MRU end (from
//! the working region's tail, or as the newest page while the buffer is smaller than the
//! window) the sequence numbers follow the recency order. When a page leaves the window (a
//! hit or an eviction) the working region's tail moves in. A dirty page of the window that
//! the pool cleans (a flush) belongs in the middle of the clean queue; it is parked in a
//! small heap keyed by its sequence number instead ([`FrameHeap`]), and the clean victim
//! is the older of the clean queue's tail and the heap's minimum. Without pins, every
//! operation is O(1) (O(log k) for the k flushed-in-window pages). Pinned candidates fall
//! back to scans in the same preference order.
//!
//! [`super::reference::NaiveCflru`] is the scanning version; `tests/cflru_differential.rs`
//! checks that both make the same decisions.

use super::clustering::ClusteringSpec;
use super::heap::FrameHeap;
use super::list::{Links, List};
use super::reference::NaiveCflru;
use super::registry::{PolicyContext, PolicyFactory};
use super::{Access, Policy, PolicyReport, Victim};
use flashbuf_core::config::{OptKind, OptionSpec, Options};
use flashbuf_core::{ConfigError, FrameId, PageId};

/// Options of [`Cflru`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CflruConfig {
    /// Size of the clean-first window as a fraction of the buffer, in `0.0..=1.0`.
    pub window: f64,
}

impl Default for CflruConfig {
    fn default() -> Self {
        Self { window: 0.5 }
    }
}

/// Frames in a region that is `fraction` of `frames_count` frames: `round(fraction × n)`.
/// Errors if `fraction` is not in `0.0..=1.0`, naming `policy`'s option `window`.
pub fn region_frames(
    frames_count: usize,
    fraction: f64,
    policy: &str,
) -> Result<usize, ConfigError> {
    if !(0.0..=1.0).contains(&fraction) {
        return Err(ConfigError::BadValue {
            component: policy.to_string(),
            key: "window".into(),
            value: fraction.to_string(),
            expected: "a fraction in [0, 1]".into(),
        });
    }
    Ok(fraction_of(frames_count, fraction))
}

/// `round(fraction × frames_count)`, at most `frames_count` (no validation).
#[inline]
pub(crate) fn fraction_of(frames_count: usize, fraction: f64) -> usize {
    ((fraction * frames_count as f64).round() as usize).min(frames_count)
}

const WORK: u8 = 0;
const WIN_CLEAN: u8 = 1;
const WIN_DIRTY: u8 = 2;

/// Clean-first LRU. See the module documentation.
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::{Access, Cflru, CflruConfig, Policy, Victim};
/// // 4 frames, window of 2: the two least recently used pages.
/// let mut p = Cflru::with_config(4, CflruConfig { window: 0.5 }).unwrap();
/// p.on_insert(FrameId(0), PageId(10), Access::Write); // oldest, dirty
/// p.on_insert(FrameId(1), PageId(11), Access::Read); // clean, in the window
/// p.on_insert(FrameId(2), PageId(12), Access::Read);
/// p.on_insert(FrameId(3), PageId(13), Access::Read);
/// // The clean page in the window goes before the older dirty page.
/// assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
/// ```
#[derive(Debug, Clone)]
pub struct Cflru {
    links: Links,
    work: List,
    win_clean: List,
    win_dirty: List,
    /// Window pages cleaned by a write-back while in the window, keyed by `seq`.
    win_late: FrameHeap,
    /// Window-entry sequence number of each window page.
    seq: Vec<u64>,
    next_seq: u64,
    dirty: Vec<bool>,
    window_frames: usize,
    window: f64,
}

impl Cflru {
    /// CFLRU for `frames_count` frames with the default window (0.5).
    pub fn new(frames_count: usize) -> Self {
        let window = CflruConfig::default().window;
        Self::build(frames_count, window, fraction_of(frames_count, window))
    }

    /// CFLRU with explicit options; errors if the window is not a fraction.
    pub fn with_config(frames_count: usize, cfg: CflruConfig) -> Result<Self, ConfigError> {
        let w = region_frames(frames_count, cfg.window, "cflru")?;
        Ok(Self::build(frames_count, cfg.window, w))
    }

    fn build(frames_count: usize, window: f64, window_frames: usize) -> Self {
        Self {
            links: Links::new(frames_count),
            work: List::new(WORK),
            win_clean: List::new(WIN_CLEAN),
            win_dirty: List::new(WIN_DIRTY),
            win_late: FrameHeap::new(frames_count),
            seq: vec![0; frames_count],
            next_seq: 0,
            dirty: vec![false; frames_count],
            window_frames,
            window,
        }
    }

    /// The window size in frames.
    pub fn window_frames(&self) -> usize {
        self.window_frames
    }

    #[inline]
    fn window_len(&self) -> usize {
        self.win_clean.len() + self.win_dirty.len() + self.win_late.len()
    }

    #[inline]
    fn resident(&self) -> usize {
        self.work.len() + self.window_len()
    }

    /// Moves the working region's LRU pages into the window until it holds
    /// `min(w, resident)` pages.
    #[inline]
    fn rebalance(&mut self) {
        let target = self.window_frames.min(self.resident());
        debug_assert!(self.window_len() <= target, "window larger than its target");
        while self.window_len() < target {
            let Some(t) = self.work.tail() else {
                break;
            };
            self.work.remove(&mut self.links, t);
            self.enter_window(t);
        }
    }

    #[inline]
    fn enter_window(&mut self, f: FrameId) {
        self.seq[f.index()] = self.next_seq;
        self.next_seq += 1;
        if self.dirty[f.index()] {
            self.win_dirty.push_head(&mut self.links, f);
        } else {
            self.win_clean.push_head(&mut self.links, f);
        }
    }

    /// Takes `f` out of whatever structure holds it.
    #[inline]
    fn unlink(&mut self, f: FrameId) {
        match self.links.owner(f) {
            Some(WORK) => self.work.remove(&mut self.links, f),
            Some(WIN_CLEAN) => self.win_clean.remove(&mut self.links, f),
            Some(WIN_DIRTY) => self.win_dirty.remove(&mut self.links, f),
            _ => {
                let was = self.win_late.remove(f);
                debug_assert!(was.is_some(), "{f} is not a member");
            }
        }
    }

    /// The oldest clean page of the window (fast path: no pin check).
    #[inline]
    fn oldest_clean(&self) -> Option<FrameId> {
        self.older(self.win_clean.tail(), self.win_late.peek().map(|(f, _)| f))
    }

    /// The oldest evictable clean page of the window, by scanning.
    fn oldest_evictable_clean(&self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let a = self
            .win_clean
            .iter_from_tail(&self.links)
            .find(|&f| evictable(f));
        let b = self
            .win_late
            .iter()
            .filter(|&(f, _)| evictable(f))
            .min_by_key(|&(_, k)| k)
            .map(|(f, _)| f);
        self.older(a, b)
    }

    #[inline]
    fn older(&self, a: Option<FrameId>, b: Option<FrameId>) -> Option<FrameId> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if self.seq[a.index()] < self.seq[b.index()] {
                a
            } else {
                b
            }),
            (a, b) => a.or(b),
        }
    }

    /// Slow path when the preferred victim is pinned.
    fn choose_scanning(&self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        if let Some(c) = self.oldest_evictable_clean(evictable) {
            return Some(c);
        }
        // No evictable clean page in the window: the LRU-most evictable page. Window pages
        // are older than every working-region page, and its evictable clean pages are none.
        let d = self
            .win_dirty
            .iter_from_tail(&self.links)
            .find(|&f| evictable(f));
        d.or_else(|| {
            self.work
                .iter_from_tail(&self.links)
                .find(|&f| evictable(f))
        })
    }
}

impl Policy for Cflru {
    fn name(&self) -> &'static str {
        "cflru"
    }

    fn frames_count(&self) -> usize {
        self.links.owner_len()
    }

    fn on_insert(&mut self, frame: FrameId, _pid: PageId, access: Access) {
        self.dirty[frame.index()] = access.is_write();
        self.work.push_head(&mut self.links, frame);
        self.rebalance();
    }

    fn on_hit(&mut self, frame: FrameId, access: Access) {
        if access.is_write() {
            self.dirty[frame.index()] = true;
        }
        if self.work.contains(&self.links, frame) {
            self.work.move_to_head(&mut self.links, frame);
        } else {
            self.unlink(frame);
            self.work.push_head(&mut self.links, frame);
            self.rebalance();
        }
    }

    fn on_clean(&mut self, frame: FrameId) {
        let i = frame.index();
        if !self.dirty[i] {
            return;
        }
        self.dirty[i] = false;
        if self.win_dirty.contains(&self.links, frame) {
            self.win_dirty.remove(&mut self.links, frame);
            self.win_late.push(frame, self.seq[i]);
        }
    }

    fn on_remove(&mut self, frame: FrameId) {
        self.unlink(frame);
        self.dirty[frame.index()] = false;
        self.rebalance();
    }

    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let fast = match self.oldest_clean() {
            Some(c) => c,
            None => self.win_dirty.tail().or_else(|| self.work.tail())?,
        };
        if evictable(fast) {
            return Some(Victim::Evict(fast));
        }
        self.choose_scanning(evictable).map(Victim::Evict)
    }

    fn bytes_per_frame(&self) -> usize {
        Links::BYTES_PER_FRAME + FrameHeap::BYTES_PER_FRAME + 8 + 1
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.work.check(&self.links)?;
        self.win_clean.check(&self.links)?;
        self.win_dirty.check(&self.links)?;
        self.win_late.check()?;
        let target = self.window_frames.min(self.resident());
        if self.window_len() != target {
            return Err(format!(
                "cflru: window holds {} pages, should hold {target}",
                self.window_len()
            ));
        }
        for f in self.win_clean.iter_from_tail(&self.links) {
            if self.dirty[f.index()] {
                return Err(format!("cflru: {f} is dirty in the clean queue"));
            }
        }
        for f in self.win_dirty.iter_from_tail(&self.links) {
            if !self.dirty[f.index()] {
                return Err(format!("cflru: {f} is clean in the dirty queue"));
            }
        }
        for (f, k) in self.win_late.iter() {
            if self.dirty[f.index()] || self.seq[f.index()] != k {
                return Err(format!("cflru: parked {f} is dirty or has a stale key"));
            }
        }
        for l in [&self.win_clean, &self.win_dirty] {
            let mut last = None;
            for f in l.iter_from_tail(&self.links) {
                let s = self.seq[f.index()];
                if last.is_some_and(|l| l >= s) {
                    return Err(format!("cflru: window queue out of order at {f}"));
                }
                if s >= self.next_seq {
                    return Err(format!("cflru: {f} has a future sequence number"));
                }
                last = Some(s);
            }
        }
        Ok(())
    }

    fn report(&self) -> PolicyReport {
        let dirty_in_window = self.win_dirty.len();
        PolicyReport::figures(vec![
            ("window", self.window),
            ("window_frames", self.window_frames as f64),
            ("window_clean", (self.window_len() - dirty_in_window) as f64),
            ("window_dirty", dirty_in_window as f64),
        ])
    }
}

// ---- registration (`super::registry::POLICIES`; the clustering options are appended) ----

/// `cflru`'s own options.
pub const OPTIONS: &[OptionSpec] = &[OptionSpec {
    key: "window",
    kind: OptKind::Float { min: 0.0, max: 1.0 },
    default: Some("0.5"),
    help: "clean-first window: the share of the buffer at the LRU end searched for a clean \
           victim",
}];

/// Parses `cflru`'s options.
pub fn parse(o: &Options) -> Result<Box<dyn PolicyFactory>, ConfigError> {
    Ok(Box::new(CflruFactory {
        cfg: CflruConfig {
            window: o.f64("window").unwrap_or(CflruConfig::default().window),
        },
        clustering: ClusteringSpec::parse(o)?,
    }))
}

#[derive(Debug)]
struct CflruFactory {
    cfg: CflruConfig,
    clustering: ClusteringSpec,
}

impl PolicyFactory for CflruFactory {
    fn build(&self, ctx: &PolicyContext<'_>) -> Result<Box<dyn Policy>, ConfigError> {
        self.clustering
            .wrap(Cflru::with_config(ctx.frames, self.cfg)?, ctx)
    }

    fn build_reference(
        &self,
        ctx: &PolicyContext<'_>,
    ) -> Option<Result<Box<dyn Policy>, ConfigError>> {
        Some(
            NaiveCflru::new(ctx.frames, self.cfg)
                .and_then(|n| self.clustering.wrap_reference(n, ctx)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ins(p: &mut Cflru, f: u32, w: bool) {
        let a = if w { Access::Write } else { Access::Read };
        p.on_insert(FrameId(f), PageId(u64::from(f) + 100), a);
        p.check_invariants().unwrap();
    }

    #[test]
    fn clean_page_in_window_beats_older_dirty_page() {
        let mut p = Cflru::with_config(6, CflruConfig { window: 0.5 }).unwrap();
        // Recency (LRU first): 0w 1w 2r | 3r 4w 5r ; window = {0, 1, 2}.
        for (f, w) in [
            (0, true),
            (1, true),
            (2, false),
            (3, false),
            (4, true),
            (5, false),
        ] {
            ins(&mut p, f, w);
        }
        assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(2))));
        // Frame 2 pinned: no other clean page in the window -> the LRU page (dirty 0).
        assert_eq!(
            p.choose_victim(&|f| f != FrameId(2)),
            Some(Victim::Evict(FrameId(0)))
        );
        // Touch 2: it leaves the window, 3 (clean) enters; 3 is now the clean victim.
        p.on_hit(FrameId(2), Access::Read);
        p.check_invariants().unwrap();
        assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(3))));
        // Write 3: the window is {0, 1, 4}, all dirty -> the LRU page 0.
        p.on_hit(FrameId(3), Access::Write);
        p.check_invariants().unwrap();
        assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
        // A flush cleans 1 in the window: it becomes the victim although 0 is older.
        p.on_clean(FrameId(1));
        p.check_invariants().unwrap();
        assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
        p.on_clean(FrameId(0));
        assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
        p.on_remove(FrameId(0));
        p.check_invariants().unwrap();
        assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
    }

    #[test]
    fn window_zero_is_lru_and_window_one_is_whole_buffer() {
        let mut p = Cflru::with_config(3, CflruConfig { window: 0.0 }).unwrap();
        for (f, w) in [(0, true), (1, false), (2, false)] {
            ins(&mut p, f, w);
        }
        assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
        let mut p = Cflru::with_config(3, CflruConfig { window: 1.0 }).unwrap();
        for (f, w) in [(0, true), (1, true), (2, false)] {
            ins(&mut p, f, w);
        }
        assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(2))));
        assert!(Cflru::with_config(3, CflruConfig { window: 1.5 }).is_err());
    }
}
