//! ARC, Adaptive Replacement Cache (Megiddo, Modha, "ARC: A Self-Tuning, Low Overhead
//! Replacement Cache", FAST 2003, §III–IV and Fig. 4).
//!
//! `T1` (pages seen once recently) and `T2` (seen at least twice) hold the `c` resident
//! pages, each in LRU order; the ghost lists `B1` and `B2` remember pages recently evicted
//! from `T1` and `T2`. The target size `p` of `T1` adapts: a miss on a page of `B1` raises
//! it by `δ1 = max(1, |B2|/|B1|)` (up to `c`), a miss on a page of `B2` lowers it by
//! `δ2 = max(1, |B1|/|B2|)` (down to 0). `REPLACE(x, p)` evicts the LRU page of `T1` into
//! `B1` if `|T1| ≥ 1` and (`x ∈ B2` and `|T1| = p`, or `|T1| > p`), else the LRU page of
//! `T2` into `B2`. Fig. 4's cases I–IV are followed line by line (`p` is a real number, as
//! in the paper).
//!
//! # Readings of points the text leaves open
//! - **Order of the calls.** The pool names the missed page `x` in `prepare_miss`, before
//!   it asks for a victim: there cases II and III adapt `p` (with `|B1|`, `|B2|` before the
//!   victim's ghost is added) and remember whether `x ∈ B2`, so `choose_victim` runs
//!   `REPLACE(x, p)` exactly as Fig. 4 (or, case IV(A) with `|T1| = c`, takes `T1`'s LRU
//!   page). `on_insert` does the rest in the paper's order: the ghost trimming of case IV
//!   (`|T1| + |B1| = c` → drop `B1`'s LRU; total `= 2c` → drop `B2`'s LRU), where the victim
//!   goes (`B1`/`B2` after the list it left, or nowhere in case IV(A) with `|T1| = c`) and
//!   where `x` goes. (Before the pool passed the page, `p` adapted one miss late and the
//!   misses differed from libCacheSim's ARC by up to 0.067%; now they are equal:
//!   `tests/peer_libcachesim_baselines.rs`.) A page inserted without `prepare_miss` (a
//!   caller outside the pool) is adapted for in `on_insert`; a load that fails after
//!   `prepare_miss` leaves `p` adapted and `x` in its ghost list.
//! - **Pinned pages**: the victim is the LRU-most *evictable* page of the chosen list; if
//!   that list has none, the LRU-most evictable page of the other list (its ghost goes to
//!   the list it left).
//! - **Dirty pages**: ignored (a clean-first-agnostic baseline; the pool writes a dirty
//!   victim back).
//! - **Free frames**: the pool fills them without asking; `on_insert` then runs case II,
//!   III or IV without a `REPLACE`. A page removed without being chosen (a failed load)
//!   leaves `T1`/`T2` and gets no ghost.
//!
//! # Structure
//! `T1`, `T2`: intrusive lists over the frames; `B1`, `B2`: [`Ghosts`] with `2c` slots (the
//! directory holds at most `2c` pages, `c` resident). Per frame: links (9 bytes), the page
//! identifier (8), and two ghost slots ([`Ghosts::bytes`]: 21 bytes each plus 2 to 4
//! hash-index entries of 4 bytes): 75 to 91 bytes. Every
//! call is O(1) expected (hash lookups), plus one step per pinned page passed; nothing
//! allocates after construction.
//!
//! [`super::reference::NaiveArc`] is the vector version; `tests/baselines_differential.rs` checks
//! that both make the same decisions.

use super::clustering::ClusteringSpec;
use super::ghost::{Departure, Ghosts};
use super::list::{Links, List};
use super::reference::NaiveArc;
use super::registry::{PolicyContext, PolicyFactory};
use super::{Access, Policy, PolicyReport, Victim};
use flashbuf_core::config::Options;
use flashbuf_core::{ConfigError, FrameId, PageId};

const T1: u8 = 0;
const T2: u8 = 1;
const B1: u8 = 0;
const B2: u8 = 1;

/// Adaptive replacement cache.
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::{Access, Arc, Policy, Victim};
/// let mut p = Arc::new(2);
/// p.on_insert(FrameId(0), PageId(10), Access::Read); // T1
/// p.on_insert(FrameId(1), PageId(11), Access::Read); // T1
/// p.on_hit(FrameId(0), Access::Read); // T2
/// assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
/// ```
#[derive(Debug, Clone)]
pub struct Arc {
    links: Links,
    t: [List; 2],
    page: Vec<u64>,
    ghosts: Ghosts,
    /// Target size of `T1`.
    p: f64,
    victim: Departure,
    /// The page `prepare_miss` announced and the ghost list it was found in (`p` already
    /// adapted for it).
    pending: Option<(u64, Option<u8>)>,
}

impl Arc {
    /// An ARC policy for `frames_count` frames (`c`).
    pub fn new(frames_count: usize) -> Self {
        Self {
            links: Links::new(frames_count),
            t: [List::new(T1), List::new(T2)],
            page: vec![0; frames_count],
            ghosts: Ghosts::new(2 * frames_count, 2),
            p: 0.0,
            victim: Departure::default(),
            pending: None,
        }
    }

    fn c(&self) -> usize {
        self.page.len()
    }

    /// The LRU-most evictable frame of list `l`.
    fn lru_evictable(&self, l: u8, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        self.t[usize::from(l)]
            .iter_from_tail(&self.links)
            .find(|&f| evictable(f))
    }

    /// Cases II and III's adaptation of `p` for a miss found in ghost list `g`.
    fn adapt(&mut self, g: Option<u8>) {
        let (b1, b2) = (self.ghosts.len(B1) as f64, self.ghosts.len(B2) as f64);
        match g {
            Some(B1) => {
                self.p = (self.p + if b1 >= b2 { 1.0 } else { b2 / b1 }).min(self.c() as f64)
            }
            Some(_) => self.p = (self.p - if b2 >= b1 { 1.0 } else { b1 / b2 }).max(0.0),
            None => {}
        }
    }

    /// Adds the evicted page (if any) to the ghost list after the list it left, unless
    /// `drop` (case IV(A) with `|T1| = c`).
    fn settle_victim(&mut self, evicted: Option<(PageId, u8)>, drop: bool) {
        if let Some((pid, from)) = evicted {
            if !drop {
                let pushed = self.ghosts.push(if from == T1 { B1 } else { B2 }, pid);
                debug_assert!(pushed, "ghost directory full");
            }
        }
    }
}

impl Policy for Arc {
    fn name(&self) -> &'static str {
        "arc"
    }

    fn frames_count(&self) -> usize {
        self.c()
    }

    fn prepare_miss(&mut self, pid: PageId, _access: Access) {
        let g = self.ghosts.find(pid);
        self.adapt(g);
        self.pending = Some((pid.0, g));
    }

    fn on_insert(&mut self, frame: FrameId, pid: PageId, _access: Access) {
        let evicted = self.victim.take();
        self.page[frame.index()] = pid.0;
        let g = self.ghosts.find(pid);
        if self.pending.take().map(|(p, _)| p) != Some(pid.0) {
            self.adapt(g);
        }
        match g {
            Some(B1) => {
                // Case II.
                self.settle_victim(evicted, false);
                self.ghosts.remove(pid);
                self.t[1].push_head(&mut self.links, frame);
            }
            Some(_) => {
                // Case III.
                self.settle_victim(evicted, false);
                self.ghosts.remove(pid);
                self.t[1].push_head(&mut self.links, frame);
            }
            None => {
                // Case IV, with the sizes before the eviction.
                let back = |l: u8| usize::from(matches!(evicted, Some((_, f)) if f == l));
                let t1 = self.t[0].len() + back(T1);
                let t2 = self.t[1].len() + back(T2);
                let c = self.c();
                let mut drop = false;
                if t1 + self.ghosts.len(B1) >= c {
                    if t1 < c {
                        self.ghosts.pop_oldest(B1);
                    } else {
                        drop = true;
                    }
                } else if t1 + t2 + self.ghosts.len(B1) + self.ghosts.len(B2) >= 2 * c {
                    self.ghosts.pop_oldest(B2);
                }
                self.settle_victim(evicted, drop);
                self.t[0].push_head(&mut self.links, frame);
            }
        }
    }

    fn on_hit(&mut self, frame: FrameId, _access: Access) {
        // Case I: to the MRU end of T2.
        match self.links.owner(frame) {
            Some(T1) => {
                self.t[0].remove(&mut self.links, frame);
                self.t[1].push_head(&mut self.links, frame);
            }
            Some(_) => self.t[1].move_to_head(&mut self.links, frame),
            None => {}
        }
    }

    fn on_clean(&mut self, _frame: FrameId) {}

    fn on_remove(&mut self, frame: FrameId) {
        self.victim
            .remove_from(&mut self.t, &mut self.links, &self.page, frame);
    }

    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let t1 = self.t[0].len();
        let x_in_b2 = matches!(self.pending, Some((_, Some(B2))));
        // Case IV(A) with |T1| = c evicts T1's LRU page; otherwise REPLACE(x, p).
        let first = if t1 >= 1
            && (t1 >= self.c() || t1 as f64 > self.p || (x_in_b2 && t1 as f64 == self.p))
        {
            T1
        } else {
            T2
        };
        let f = self
            .lru_evictable(first, evictable)
            .or_else(|| self.lru_evictable(1 - first, evictable))?;
        self.victim.chose(f);
        Some(Victim::Evict(f))
    }

    fn bytes_per_frame(&self) -> usize {
        Links::BYTES_PER_FRAME + 8 + self.ghosts.bytes() / self.c().max(1)
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.t[0].check(&self.links)?;
        self.t[1].check(&self.links)?;
        self.ghosts.check()?;
        let c = self.c();
        let (t1, t2) = (self.t[0].len(), self.t[1].len());
        let (b1, b2) = (self.ghosts.len(B1), self.ghosts.len(B2));
        if t1 + t2 > c || t1 + b1 > c || t1 + t2 + b1 + b2 > 2 * c {
            return Err(format!(
                "sizes T1 {t1} T2 {t2} B1 {b1} B2 {b2} break ARC's bounds for c = {c}"
            ));
        }
        if !(0.0..=c as f64).contains(&self.p) {
            return Err(format!("p = {} outside 0..={c}", self.p));
        }
        Ok(())
    }

    fn report(&self) -> PolicyReport {
        PolicyReport::figures(vec![
            ("p", self.p),
            ("t1", self.t[0].len() as f64),
            ("t2", self.t[1].len() as f64),
            ("b1", self.ghosts.len(B1) as f64),
            ("b2", self.ghosts.len(B2) as f64),
        ])
    }
}

// ---- registration (`super::registry::POLICIES`): only the clustering options ----

/// Parses `arc`'s options (the write-clustering options only).
pub fn parse(o: &Options) -> Result<Box<dyn PolicyFactory>, ConfigError> {
    Ok(Box::new(ArcFactory {
        clustering: ClusteringSpec::parse(o)?,
    }))
}

#[derive(Debug)]
struct ArcFactory {
    clustering: ClusteringSpec,
}

impl PolicyFactory for ArcFactory {
    fn build(&self, ctx: &PolicyContext<'_>) -> Result<Box<dyn Policy>, ConfigError> {
        self.clustering.wrap(Arc::new(ctx.frames), ctx)
    }

    fn build_reference(
        &self,
        ctx: &PolicyContext<'_>,
    ) -> Option<Result<Box<dyn Policy>, ConfigError>> {
        Some(
            self.clustering
                .wrap_reference(NaiveArc::new(ctx.frames), ctx),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn miss(p: &mut Arc, pid: u64) -> FrameId {
        let resident = p.t[0].len() + p.t[1].len();
        let f = if resident < p.c() {
            FrameId(resident as u32)
        } else {
            let v = p.choose_victim(&|_| true).unwrap().evicted();
            p.on_remove(v);
            v
        };
        p.on_insert(f, PageId(pid), Access::Read);
        p.check_invariants().unwrap();
        f
    }

    #[test]
    fn a_b1_hit_raises_p_and_enters_t2() {
        let mut p = Arc::new(2);
        miss(&mut p, 1);
        miss(&mut p, 2);
        p.on_hit(FrameId(0), Access::Read); // 1 in T2
        miss(&mut p, 3); // T1 = {2} > p = 0: 2 → B1
        assert_eq!(p.ghosts.find(PageId(2)), Some(B1));
        miss(&mut p, 2); // case II: p = 1, 2 into T2
        assert_eq!(p.p, 1.0);
        assert_eq!(p.report().get("t2"), Some(2.0));
    }

    #[test]
    fn t1_full_evicts_without_ghost() {
        let mut p = Arc::new(2);
        for pid in 1..=4 {
            miss(&mut p, pid);
        }
        // |T1| = c at each eviction: no ghosts.
        assert_eq!(p.ghosts.len(B1) + p.ghosts.len(B2), 0);
    }
}
