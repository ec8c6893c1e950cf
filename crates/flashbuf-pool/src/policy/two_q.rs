//! 2Q, full version (Johnson, Shasha, "2Q: A Low Overhead High Performance Buffer
//! Management Replacement Algorithm", VLDB 1994, §2.1 "Full Version" and its pseudocode
//! `reclaimfor`).
//!
//! A page seen for the first time enters `A1in`, a FIFO of resident pages; when it leaves
//! `A1in` its identifier enters `A1out`, a FIFO of ghosts. A page missed while in `A1out`
//! was re-referenced after a "correlated reference period": it enters `Am`, an LRU list.
//! Hits in `A1in` do nothing; hits in `Am` move the page to its MRU end. On a miss with no
//! free frame (`reclaimfor`): if `|A1in| > Kin`, the tail of `A1in` is paged out and its
//! identifier pushed onto `A1out` (whose tail is dropped when `|A1out| > Kout`); otherwise
//! the LRU page of `Am` is paged out (not remembered).
//!
//! # Readings of points the text leaves open
//! - `Kin` and `Kout` are fractions of the frames (options `kin`, default 0.25, and
//!   `kout`, default 0.5: the paper's recommended settings), rounded down:
//!   `Kin = ⌊kin × c⌋`, `Kout = ⌊kout × c⌋`.
//! - **Order on an `A1out` hit**: the paper tests "X in A1out" before `reclaimfor(X)`, so
//!   X enters `Am` even if `reclaimfor` dropped X's own identifier from the tail of
//!   `A1out`; X's identifier leaves `A1out` when X enters `Am` (a page is never both
//!   resident and a ghost).
//! - **Pinned pages**: the victim is the oldest evictable page of the list `reclaimfor`
//!   names; if that list has none, the oldest evictable page of the other (a page leaving
//!   `A1in` always goes to `A1out`, one leaving `Am` never does).
//! - **Dirty pages**: ignored (a clean-first-agnostic baseline).
//! - **Free frames**: the pool fills them without asking (`reclaimfor`'s first branch).
//!   A page removed without being chosen (a failed load) leaves no ghost.
//! - The victim depends on no property of the missed page, so the pool's order (victim
//!   first, page named in `on_insert`) reproduces the paper exactly; the ghost of the
//!   victim is pushed in `on_insert`, after X's membership of `A1out` is read.
//!
//! # Structure
//! `A1in`, `Am`: intrusive lists over the frames; `A1out`: [`Ghosts`] with `Kout`
//! slots. Per frame: links (9 bytes), the page identifier (8), and `kout` ghost slots
//! ([`Ghosts::bytes`]: 21 bytes each plus 2 to 4 hash-index entries of 4 bytes): 31 to 35
//! bytes at `kout = 0.5`. Every call is O(1)
//! expected, plus one step per pinned page passed; nothing allocates after construction.
//!
//! [`super::reference::NaiveTwoQ`] is the vector version; `tests/baselines_differential.rs`
//! checks that both make the same decisions.

use super::clustering::ClusteringSpec;
use super::ghost::{Departure, Ghosts};
use super::list::{Links, List};
use super::reference::NaiveTwoQ;
use super::registry::{PolicyContext, PolicyFactory};
use super::{Access, Policy, PolicyReport, Victim};
use flashbuf_core::config::{OptKind, OptionSpec, Options};
use flashbuf_core::{ConfigError, FrameId, PageId};

const A1IN: u8 = 0;
const AM: u8 = 1;
const A1OUT: u8 = 0;

/// `Kin` and `Kout` in frames for `frames_count` frames: `⌊kin × c⌋`, `⌊kout × c⌋`.
pub fn two_q_limits(frames_count: usize, kin: f64, kout: f64) -> (usize, usize) {
    let c = frames_count as f64;
    ((kin * c).floor() as usize, (kout * c).floor() as usize)
}

/// 2Q, full version.
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::{Access, Policy, TwoQ, Victim};
/// let mut p = TwoQ::new(4, 0.25, 0.5); // Kin = 1, Kout = 2
/// for f in 0..4 {
///     p.on_insert(FrameId(f), PageId(10 + u64::from(f)), Access::Read);
/// }
/// // |A1in| = 4 > Kin: the oldest page of A1in goes.
/// assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
/// ```
#[derive(Debug, Clone)]
pub struct TwoQ {
    links: Links,
    lists: [List; 2],
    page: Vec<u64>,
    a1out: Ghosts,
    kin: usize,
    kout: usize,
    victim: Departure,
}

impl TwoQ {
    /// 2Q for `frames_count` frames with `Kin`, `Kout` the fractions `kin`, `kout` of it.
    pub fn new(frames_count: usize, kin: f64, kout: f64) -> Self {
        let (kin, kout) = two_q_limits(frames_count, kin, kout);
        Self {
            links: Links::new(frames_count),
            lists: [List::new(A1IN), List::new(AM)],
            page: vec![0; frames_count],
            a1out: Ghosts::new(kout, 1),
            kin,
            kout,
            victim: Departure::default(),
        }
    }

    fn oldest_evictable(&self, l: u8, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        self.lists[usize::from(l)]
            .iter_from_tail(&self.links)
            .find(|&f| evictable(f))
    }
}

impl Policy for TwoQ {
    fn name(&self) -> &'static str {
        "2q"
    }

    fn frames_count(&self) -> usize {
        self.page.len()
    }

    fn on_insert(&mut self, frame: FrameId, pid: PageId, _access: Access) {
        let was_ghost = self.a1out.find(pid).is_some();
        if let Some((y, A1IN)) = self.victim.take() {
            self.a1out.push_capped(A1OUT, y, self.kout);
        }
        self.page[frame.index()] = pid.0;
        if was_ghost {
            self.a1out.remove(pid);
            self.lists[usize::from(AM)].push_head(&mut self.links, frame);
        } else {
            self.lists[usize::from(A1IN)].push_head(&mut self.links, frame);
        }
    }

    fn on_hit(&mut self, frame: FrameId, _access: Access) {
        if self.links.owner(frame) == Some(AM) {
            self.lists[usize::from(AM)].move_to_head(&mut self.links, frame);
        }
    }

    fn on_clean(&mut self, _frame: FrameId) {}

    fn on_remove(&mut self, frame: FrameId) {
        self.victim
            .remove_from(&mut self.lists, &mut self.links, &self.page, frame);
    }

    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let first = if self.lists[0].len() > self.kin {
            A1IN
        } else {
            AM
        };
        let f = self
            .oldest_evictable(first, evictable)
            .or_else(|| self.oldest_evictable(1 - first, evictable))?;
        self.victim.chose(f);
        Some(Victim::Evict(f))
    }

    fn bytes_per_frame(&self) -> usize {
        Links::BYTES_PER_FRAME + 8 + self.a1out.bytes() / self.page.len().max(1)
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.lists[0].check(&self.links)?;
        self.lists[1].check(&self.links)?;
        self.a1out.check()?;
        if self.a1out.len(A1OUT) > self.kout {
            return Err(format!(
                "A1out holds {} > Kout = {}",
                self.a1out.len(A1OUT),
                self.kout
            ));
        }
        Ok(())
    }

    fn report(&self) -> PolicyReport {
        PolicyReport::figures(vec![
            ("a1in", self.lists[0].len() as f64),
            ("am", self.lists[1].len() as f64),
            ("a1out", self.a1out.len(A1OUT) as f64),
            ("kin", self.kin as f64),
            ("kout", self.kout as f64),
        ])
    }
}

// ---- registration (`super::registry::POLICIES`) ----

/// `2q`'s own options (the clustering options are appended in the table).
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "kin",
        kind: OptKind::Float { min: 0.0, max: 1.0 },
        default: Some("0.25"),
        help: "Kin: A1in's threshold as a share of the frames (paper: 25%)",
    },
    OptionSpec {
        key: "kout",
        kind: OptKind::Float { min: 0.0, max: 4.0 },
        default: Some("0.5"),
        help: "Kout: A1out's size (ghosts) as a share of the frames (paper: 50%)",
    },
];

/// Parses `2q`'s options.
pub fn parse(o: &Options) -> Result<Box<dyn PolicyFactory>, ConfigError> {
    Ok(Box::new(TwoQFactory {
        kin: o.f64("kin").unwrap_or(0.25),
        kout: o.f64("kout").unwrap_or(0.5),
        clustering: ClusteringSpec::parse(o)?,
    }))
}

#[derive(Debug)]
struct TwoQFactory {
    kin: f64,
    kout: f64,
    clustering: ClusteringSpec,
}

impl PolicyFactory for TwoQFactory {
    fn build(&self, ctx: &PolicyContext<'_>) -> Result<Box<dyn Policy>, ConfigError> {
        self.clustering
            .wrap(TwoQ::new(ctx.frames, self.kin, self.kout), ctx)
    }

    fn build_reference(
        &self,
        ctx: &PolicyContext<'_>,
    ) -> Option<Result<Box<dyn Policy>, ConfigError>> {
        Some(
            self.clustering
                .wrap_reference(NaiveTwoQ::new(ctx.frames, self.kin, self.kout), ctx),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn miss(p: &mut TwoQ, f: u32, pid: u64) {
        if p.links.owner(FrameId(f)).is_some() {
            assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(f))));
            p.on_remove(FrameId(f));
        }
        p.on_insert(FrameId(f), PageId(pid), Access::Read);
        p.check_invariants().unwrap();
    }

    #[test]
    fn a_page_back_from_a1out_enters_am_and_am_pages_leave_no_ghost() {
        let mut p = TwoQ::new(4, 0.25, 0.5);
        for f in 0..4 {
            miss(&mut p, f, 10 + u64::from(f));
        }
        miss(&mut p, 0, 20); // 10 → A1out
        miss(&mut p, 1, 10); // 11 → A1out; 10 back: Am
        assert_eq!(p.links.owner(FrameId(1)), Some(AM));
        assert_eq!(p.report().get("a1out"), Some(1.0));
        // A1in = {12, 13, 20} > Kin = 1: A1in keeps losing its oldest.
        miss(&mut p, 2, 30);
        miss(&mut p, 3, 31);
        miss(&mut p, 0, 32);
        assert_eq!(p.report().get("a1out"), Some(2.0), "Kout = 2");
        assert_eq!(p.lists[1].len(), 1);
    }
}
