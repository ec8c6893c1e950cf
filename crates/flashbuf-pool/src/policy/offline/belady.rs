//! Belady's MIN and write-aware offline variants (L. A. Belady, "A Study of Replacement
//! Algorithms for a Virtual-Storage Computer", IBM Systems Journal 5(2), 1966).
//!
//! The trace is a slice of `(is_write, page)`. [`DenseTrace::new`] maps pages to dense
//! ids and computes every reference's next-use index in one backward pass; the
//! simulation keeps the cached pages in two max-heaps keyed by next use (clean pages and
//! dirty pages, stale entries dropped lazily), so each reference costs `O(log n)`.
//!
//! A *miss* is any reference to a page not cached, first references included (this is
//! libCacheSim's count, and the pool's). Every miss loads the page (no bypass: demand
//! paging, as the pool does). A *write-back* is the eviction of a dirty page; pages still
//! dirty at the end are reported separately (`final_dirty`), not written.
//!
//! Victim rules ([`OfflineRule`]):
//! - `Belady`: farthest next use; among pages never used again, clean ones first (ties
//!   do not change the miss count).
//! - `CleanBeyond { k }`: the clean page with the farthest next use if that use is more
//!   than `k` references away (or never), else as `Belady`.
//! - `CostAware`: the page with the smallest cost per reference of distance to its next
//!   use: `C_r / (n − t)` for a clean page, `(C_r + C_w) / (n − t)` for a dirty one
//!   (only the farthest clean and the farthest dirty page can win).

use crate::policy::{Access, Policy, Victim};
use flashbuf_core::{FrameId, PageId};
use hashbrown::HashMap;
use std::collections::BinaryHeap;

/// Next use of a page never referenced again.
pub const NEVER: u32 = u32::MAX;

/// A trace with dense page ids and next-use indices.
#[derive(Debug, Clone)]
pub struct DenseTrace {
    /// Dense id of each reference's page.
    pub ids: Vec<u32>,
    /// Whether each reference is a write.
    pub writes: Vec<bool>,
    /// Index of the next reference to the same page (`NEVER` if none).
    pub next: Vec<u32>,
    /// Page number of each dense id.
    pub pages: Vec<u64>,
}

impl DenseTrace {
    /// Prepares `trace` (one forward pass to map pages, one backward pass for next uses).
    ///
    /// # Panics
    /// If the trace has `u32::MAX` references or more.
    pub fn new(trace: &[(bool, u64)]) -> Self {
        assert!(
            trace.len() < NEVER as usize,
            "trace too long for 32-bit indices"
        );
        let mut map: HashMap<u64, u32> = HashMap::new();
        let mut pages = Vec::new();
        let mut ids = Vec::with_capacity(trace.len());
        let mut writes = Vec::with_capacity(trace.len());
        for &(w, p) in trace {
            let id = *map.entry(p).or_insert_with(|| {
                pages.push(p);
                (pages.len() - 1) as u32
            });
            ids.push(id);
            writes.push(w);
        }
        let mut last = vec![NEVER; pages.len()];
        let mut next = vec![NEVER; trace.len()];
        for t in (0..trace.len()).rev() {
            let id = ids[t] as usize;
            next[t] = last[id];
            last[id] = t as u32;
        }
        Self {
            ids,
            writes,
            next,
            pages,
        }
    }

    /// Number of references.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the trace is empty.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Number of distinct pages.
    pub fn distinct(&self) -> usize {
        self.pages.len()
    }
}

/// An offline victim rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OfflineRule {
    /// Belady's MIN.
    Belady,
    /// Prefer the farthest clean page if not reused within `k` references.
    CleanBeyond {
        /// Reuse horizon in references.
        k: u32,
    },
    /// Smallest cost per reference of distance, with read cost `read` and write cost
    /// `write`.
    CostAware {
        /// Cost of a read (a miss).
        read: f64,
        /// Cost of a write-back.
        write: f64,
    },
}

/// Counts of one offline run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OfflineResult {
    /// References.
    pub references: u64,
    /// Hits.
    pub hits: u64,
    /// Misses (first references included).
    pub misses: u64,
    /// Evictions of dirty pages.
    pub write_backs: u64,
    /// Pages still dirty at the end.
    pub final_dirty: u64,
}

/// Victim-choice state over keys (frames or dense page ids).
#[derive(Debug, Clone)]
struct Core {
    rule: OfflineRule,
    next: Vec<u32>,
    dirty: Vec<bool>,
    cached: Vec<bool>,
    clean_heap: BinaryHeap<(u32, u32)>,
    dirty_heap: BinaryHeap<(u32, u32)>,
    cached_count: usize,
}

impl Core {
    fn new(rule: OfflineRule, keys: usize) -> Self {
        Self {
            rule,
            next: vec![NEVER; keys],
            dirty: vec![false; keys],
            cached: vec![false; keys],
            clean_heap: BinaryHeap::new(),
            dirty_heap: BinaryHeap::new(),
            cached_count: 0,
        }
    }

    fn valid(&self, dirty_heap: bool, (n, k): (u32, u32)) -> bool {
        let k = k as usize;
        self.cached[k] && self.dirty[k] == dirty_heap && self.next[k] == n
    }

    #[inline]
    fn push(&mut self, k: u32) {
        let e = (self.next[k as usize], k);
        if self.dirty[k as usize] {
            self.dirty_heap.push(e);
        } else {
            self.clean_heap.push(e);
        }
        let limit = 2 * self.cached_count + 64;
        if self.clean_heap.len() + self.dirty_heap.len() > 2 * limit {
            self.rebuild();
        }
    }

    fn rebuild(&mut self) {
        let c: Vec<_> = std::mem::take(&mut self.clean_heap)
            .into_iter()
            .filter(|&e| self.valid(false, e))
            .collect();
        let d: Vec<_> = std::mem::take(&mut self.dirty_heap)
            .into_iter()
            .filter(|&e| self.valid(true, e))
            .collect();
        self.clean_heap = c.into();
        self.dirty_heap = d.into();
    }

    /// Key `k` referenced: next use `next`, dirty after the access if `dirty`.
    #[inline]
    fn reference(&mut self, k: u32, next: u32, dirty: bool) {
        let ki = k as usize;
        if !self.cached[ki] {
            self.cached[ki] = true;
            self.cached_count += 1;
        }
        self.next[ki] = next;
        self.dirty[ki] = dirty;
        self.push(k);
    }

    fn clean(&mut self, k: u32) {
        if self.cached[k as usize] && self.dirty[k as usize] {
            self.dirty[k as usize] = false;
            self.push(k);
        }
    }

    fn remove(&mut self, k: u32) {
        if self.cached[k as usize] {
            self.cached[k as usize] = false;
            self.cached_count -= 1;
        }
    }

    /// Top valid, evictable entry of one heap; non-evictable valid entries go to `held`.
    fn top(
        &mut self,
        dirty_heap: bool,
        evictable: &dyn Fn(u32) -> bool,
        held: &mut Vec<(u32, u32)>,
    ) -> Option<(u32, u32)> {
        loop {
            let h = if dirty_heap {
                &self.dirty_heap
            } else {
                &self.clean_heap
            };
            let &e = h.peek()?;
            if !self.valid(dirty_heap, e) {
                if dirty_heap {
                    self.dirty_heap.pop();
                } else {
                    self.clean_heap.pop();
                }
                continue;
            }
            if evictable(e.1) {
                return Some(e);
            }
            held.push(e);
            if dirty_heap {
                self.dirty_heap.pop();
            } else {
                self.clean_heap.pop();
            }
        }
    }

    /// The victim at reference index `t` (the reference being served).
    fn victim(&mut self, t: u32, evictable: &dyn Fn(u32) -> bool) -> Option<u32> {
        let mut held_c = Vec::new();
        let mut held_d = Vec::new();
        let c = self.top(false, evictable, &mut held_c);
        let d = self.top(true, evictable, &mut held_d);
        for e in held_c {
            self.clean_heap.push(e);
        }
        for e in held_d {
            self.dirty_heap.push(e);
        }
        let pick_clean = match (c, d) {
            (None, None) => return None,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((nc, _)), Some((nd, _))) => match self.rule {
                OfflineRule::Belady => nc >= nd,
                OfflineRule::CleanBeyond { k } => {
                    nc == NEVER || u64::from(nc) > u64::from(t) + u64::from(k) || nc >= nd
                }
                OfflineRule::CostAware { read, write } => {
                    if nc == NEVER {
                        true
                    } else if nd == NEVER {
                        false
                    } else {
                        let (dc, dd) = (f64::from(nc - t), f64::from(nd - t));
                        read * dd <= (read + write) * dc
                    }
                }
            },
        };
        let e = if pick_clean { c } else { d };
        e.map(|e| e.1)
    }
}

/// Runs `rule` over a prepared trace with `frames` frames (the fast direct function).
pub fn simulate(trace: &DenseTrace, frames: usize, rule: OfflineRule) -> OfflineResult {
    let mut core = Core::new(rule, trace.distinct());
    let mut r = OfflineResult {
        references: trace.len() as u64,
        ..OfflineResult::default()
    };
    if frames == 0 {
        r.misses = r.references;
        return r;
    }
    for t in 0..trace.len() {
        let id = trace.ids[t];
        let w = trace.writes[t];
        if core.cached[id as usize] {
            r.hits += 1;
            let dirty = core.dirty[id as usize] || w;
            core.reference(id, trace.next[t], dirty);
            continue;
        }
        r.misses += 1;
        if core.cached_count >= frames {
            let Some(v) = core.victim(t as u32, &|_| true) else {
                unreachable!("a full cache has a victim")
            };
            if core.dirty[v as usize] {
                r.write_backs += 1;
            }
            core.remove(v);
        }
        core.reference(id, trace.next[t], w);
    }
    r.final_dirty = (0..trace.distinct())
        .filter(|&k| core.cached[k] && core.dirty[k])
        .count() as u64;
    r
}

/// Belady's MIN on a raw trace: misses (first references included), write-backs.
pub fn belady_misses(trace: &[(bool, u64)], frames: usize) -> OfflineResult {
    simulate(&DenseTrace::new(trace), frames, OfflineRule::Belady)
}

/// An offline rule as a [`Policy`] for the pool.
///
/// The policy is built for one trace and must see **exactly that reference sequence**:
/// the pool's `n`-th `on_insert`/`on_hit` must be the trace's `n`-th reference (same page;
/// the access kind is taken from the trace). Any mismatch is recorded and reported by
/// `check_invariants` (decisions after a mismatch are still valid victims, but no longer
/// optimal). Flushes (`on_clean`) are fine.
///
/// ```
/// use flashbuf_pool::policy::offline::{OfflinePolicy, OfflineRule};
/// use flashbuf_pool::policy::Policy;
/// let trace = [(false, 1u64), (false, 2), (false, 3), (false, 1)];
/// let p = OfflinePolicy::new(&trace, 2, OfflineRule::Belady);
/// assert_eq!(p.name(), "belady");
/// ```
#[derive(Debug, Clone)]
pub struct OfflinePolicy {
    trace: DenseTrace,
    frames: usize,
    cursor: usize,
    frame_page: Vec<u32>,
    core: Core,
    mismatch: Option<String>,
}

impl OfflinePolicy {
    /// The policy for `trace` (copied and prepared) with `frames` frames.
    pub fn new(trace: &[(bool, u64)], frames: usize, rule: OfflineRule) -> Self {
        Self::from_dense(DenseTrace::new(trace), frames, rule)
    }

    /// The policy for an already prepared trace.
    pub fn from_dense(trace: DenseTrace, frames: usize, rule: OfflineRule) -> Self {
        Self {
            trace,
            frames,
            cursor: 0,
            frame_page: vec![NEVER; frames],
            core: Core::new(rule, frames),
            mismatch: None,
        }
    }

    /// References consumed so far.
    pub fn position(&self) -> usize {
        self.cursor
    }

    fn consume(&mut self, frame: FrameId, pid: Option<PageId>, access: Access) -> (u32, bool) {
        let t = self.cursor;
        self.cursor += 1;
        let Some(&id) = self.trace.ids.get(t) else {
            self.mismatch
                .get_or_insert_with(|| format!("reference {t} beyond the trace"));
            return (NEVER, access.is_write());
        };
        let page = self.trace.pages[id as usize];
        let expected_ok = match pid {
            Some(p) => p.0 == page,
            None => self.frame_page[frame.index()] == id,
        };
        if !expected_ok || self.trace.writes[t] != access.is_write() {
            self.mismatch.get_or_insert_with(|| {
                format!("reference {t}: trace has page {page}, pool referenced {frame} {pid:?} {access:?}")
            });
        }
        (self.trace.next[t], self.trace.writes[t])
    }
}

impl Policy for OfflinePolicy {
    fn name(&self) -> &'static str {
        match self.core.rule {
            OfflineRule::Belady => "belady",
            OfflineRule::CleanBeyond { .. } => "offline-clean-beyond",
            OfflineRule::CostAware { .. } => "offline-cost-aware",
        }
    }
    fn frames_count(&self) -> usize {
        self.frames
    }
    fn on_insert(&mut self, frame: FrameId, pid: PageId, access: Access) {
        let (next, w) = self.consume(frame, Some(pid), access);
        self.frame_page[frame.index()] = self
            .trace
            .ids
            .get(self.cursor - 1)
            .copied()
            .unwrap_or(NEVER);
        self.core.reference(frame.0, next, w);
    }
    fn on_hit(&mut self, frame: FrameId, access: Access) {
        let (next, w) = self.consume(frame, None, access);
        let dirty = self.core.dirty[frame.index()] || w;
        self.core.reference(frame.0, next, dirty);
    }
    fn on_clean(&mut self, frame: FrameId) {
        self.core.clean(frame.0);
    }
    fn on_remove(&mut self, frame: FrameId) {
        self.core.remove(frame.0);
        self.frame_page[frame.index()] = NEVER;
    }
    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let t = self.cursor.min(NEVER as usize - 1) as u32;
        self.core
            .victim(t, &|k| evictable(FrameId(k)))
            .map(|k| Victim::Evict(FrameId(k)))
    }
    fn bytes_per_frame(&self) -> usize {
        4 + 4 + 1 + 1 + 2 * 8
    }
    fn check_invariants(&self) -> Result<(), String> {
        match &self.mismatch {
            Some(m) => Err(format!("{}: {m}", self.name())),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_reference_string() {
        // 3 frames, 7 0 1 2 0 3 0 4 2 3 0 3 2: MIN has 7 misses (textbook).
        let t: Vec<(bool, u64)> = [7u64, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2]
            .iter()
            .map(|&p| (false, p))
            .collect();
        let r = belady_misses(&t, 3);
        assert_eq!((r.misses, r.hits), (7, 6));
    }

    #[test]
    fn table3_write_aware_rule_beats_belady_cost() {
        // FD-Buffer paper Table 3 (pages X=10, Y=11 preloaded clean): W_A W_B R_C R_D R_C
        // R_D R_C W_B R_A with 2 frames.
        let mut t = vec![(false, 10u64), (false, 11)];
        for (w, p) in [
            (true, 1),
            (true, 2),
            (false, 3),
            (false, 4),
            (false, 3),
            (false, 4),
            (false, 3),
            (true, 2),
            (false, 1),
        ] {
            t.push((w, p));
        }
        let d = DenseTrace::new(&t);
        let b = simulate(&d, 2, OfflineRule::Belady);
        assert_eq!((b.misses - 2, b.write_backs), (6, 2));
        let c = simulate(
            &d,
            2,
            OfflineRule::CostAware {
                read: 1.0,
                write: 10.0,
            },
        );
        let cost = |r: OfflineResult| (r.misses - 2) as f64 + 10.0 * r.write_backs as f64;
        assert!(cost(c) < cost(b), "{c:?} vs {b:?}");
    }
}
