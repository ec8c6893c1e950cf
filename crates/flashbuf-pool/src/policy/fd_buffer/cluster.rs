//! Write clustering inside FD-Buffer's dirty pool (On et al., IEEE TC 2014, §4.5), with
//! the victim cluster chosen by CFDC's priority (Ou, Härder and Jin, DaMoN 2009, §3.2–3.3,
//! Formula 1).
//!
//! # Readings
//! - A cluster is the set of dirty-pool pages with the same `page / cluster_pages`
//!   (`cluster_pages` = erase block / page size, §4.5). Pages are kept in the order they
//!   entered the dirty pool (CFDC: the page order in a cluster corresponds "to the point
//!   of time they entered the cluster").
//! - `P(c) = Σ_{i=1}^{n−1} |p_i − p_{i−1}| / (n² · (globaltime − timestamp(c)))`, the
//!   dividend 1 for a one-page cluster. FD-Buffer has no working region, so *globaltime*
//!   counts pages entering the dirty pool (CFDC counts dirty pages leaving its working
//!   region for its priority region: the same event, "a dirty page becomes a candidate").
//!   `timestamp(c)` is the globaltime at the cluster's creation, taken before the
//!   increment, so the divisor is never zero.
//! - The victim cluster is the one of lowest priority at the moment of choice, compared
//!   exactly (integer cross-multiplication, no floats); ties go to the older cluster.
//!   The choice scans the live clusters once per *victim cluster* (not per eviction) — an
//!   exact priority queue is impossible with a globaltime-dependent key. The scan is a
//!   branch-free pass over dense arrays: the largest `1/P(c) = (g − t_c) · n_c² / div_c`
//!   in floating point (a multiplication per cluster, no division), overall and per block
//!   of 32 clusters; then, only inside the blocks that reach it, the clusters within a
//!   relative `10⁻⁹` of it are compared exactly (float error is far below that, so the
//!   exact minimum is always among them: the same cluster as a one-pass exact
//!   comparison). A block no cluster of which changed since the scan that last computed
//!   it is computed again only if its bound (its largest then, plus the age gained since
//!   times its largest `n²/div`) reaches the floor (`priority.rs`: about 3.5 of 9 blocks
//!   a choice). Cluster numbers are found in a [`PageMap`].
//! - The scan's float inputs (`t`, `r` of `Blocks`) are kept only from the first choice by
//!   priority on: `victim=order` (the `cost=clustered` variant) never scans and no longer
//!   pays a division per page entering or leaving. Cachegrind, first 2 M TPC-C references
//!   at 1,241 frames (`flashbuf bench --data none --limit 2000000`): `cost=clustered`
//!   1,966.0 M -> 1,958.6 M instructions; `fd-buffer` 2,014.1 M -> 2,014.9 M (the check);
//!   same decisions at 1,241 and 400 frames.
//! - Tried and dropped: a kinetic tournament over the clusters (CFDC's until stop 42, which now uses this scan too; exact integer
//!   certificates, lazy catch-up and refresh at the choice, a node's last comparison
//!   reused while its certificate held; commit `be2333d` has it with its property test).
//!   Same choices, but slower here: 151 M instructions in the choice against the scan's
//!   141 M (2,022 M in all against 2,014 M). A choice comes every 2.9 dirty evictions,
//!   with about 270 live clusters and 3.3 clusters touched since the last choice; removing
//!   the winner alone redoes a comparison at each of the 9 levels (about 70 instructions
//!   each with its certificate), against about 4 instructions per cluster for the scan.
//! - Tried and dropped (stop 31): the last entered cluster's slot as a cache before the
//!   map in `enter` (with the cluster number by a precomputed shift): too few hits, `enter`
//!   21.1 M -> 23.1 M instructions (first 2 M TPC-C references, 1,241 frames).
//! - Once chosen, the cluster's priority is 0: it *drains* — each following eviction from
//!   the dirty pool takes its next page (first entered first) until it is empty
//!   (`drain`, the papers' mode). In `batch` mode each eviction from the cluster also
//!   writes back every dirty page of the cluster, sorted by page number, in one store
//!   batch. Either way only the evicted page leaves the dirty pool (§4.5, "we move only the
//!   evicted dirty page to the clean pool"): written-back pages stay where they are, clean,
//!   and leave later as the cluster drains (no write needed then) unless re-referenced.
//! - Hits do not remove a page from its cluster (FD-Buffer has no working region to
//!   send it to); a page leaves its cluster only when it leaves the dirty pool.

mod check;
mod priority;
#[cfg(test)]
mod tests;

use super::two_stack::PageMap;
use crate::policy::clustering::scan::{Blocks, SCAN_BYTES_PER_ENTRY};
use flashbuf_core::FrameId;
use priority::Live;

const NIL: u32 = u32::MAX;

/// How dirty-pool victims are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clustering {
    /// No clustering: the dirty pool's inner ordering picks the victim.
    #[default]
    Off,
    /// Drain the victim cluster one page per eviction (the papers' behaviour).
    Drain {
        /// Pages per cluster (erase block / page size).
        cluster_pages: u64,
    },
    /// Write the victim cluster's dirty pages at once, sorted, as one batch.
    Batch {
        /// Pages per cluster (erase block / page size).
        cluster_pages: u64,
    },
}

/// How the dirty pool picks a new victim cluster when none is draining.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClusterVictim {
    /// The cluster of lowest CFDC priority `P(c)` (the paper, §4.5).
    #[default]
    Priority,
    /// An extension, not in the paper: the cluster of the page the dirty pool's inner
    /// ordering would evict (its LRU page); that page goes first, then the rest of its
    /// cluster drains. Keeps the dirty pool's recency order in charge of *which* pages
    /// leave, clustering only *when* their neighbours leave.
    OrderVictim,
}

impl Clustering {
    /// Pages per cluster, if clustering is on.
    pub fn cluster_pages(self) -> Option<u64> {
        match self {
            Clustering::Off => None,
            Clustering::Drain { cluster_pages } | Clustering::Batch { cluster_pages } => {
                Some(cluster_pages)
            }
        }
    }
}

#[derive(Debug, Clone)]
struct Cluster {
    no: u64,
    first: u32,
    last: u32,
    n: u32,
    ipd: u64,
    timestamp: u64,
    active_pos: u32,
}

/// The dirty pool's clusters.
#[derive(Debug, Clone)]
pub struct Clusters {
    cluster_pages: u64,
    prev: Vec<u32>,
    next: Vec<u32>,
    slot_of: Vec<u32>,
    page: Vec<u64>,
    slots: Vec<Cluster>,
    free_slots: Vec<u32>,
    /// Cluster number → slot (at most one cluster per frame).
    map: PageMap<u32>,
    /// Live clusters, densely, with their priority inputs (scanned when choosing).
    active: Vec<Live>,
    /// The scan's state: each `active` entry's timestamp and `n² / div` as floats, by
    /// block, and each block's bound from the last scan that computed it (`priority.rs`).
    blocks: Blocks,
    /// Whether the floats of `blocks` are kept: from the first choice by priority on
    /// (`victim=order` never scans, so never pays for them).
    ranked: bool,
    globaltime: u64,
    draining: u32,
    /// Clusters examined when choosing victim clusters.
    scanned: u64,
    /// Victim clusters chosen so far and their pages at the choice (`drained()`).
    drained: (u64, u64),
}

impl Clusters {
    /// Clusters of `cluster_pages` pages for `frames_count` frames.
    pub fn new(frames_count: usize, cluster_pages: u64) -> Self {
        Self {
            cluster_pages: cluster_pages.max(1),
            prev: vec![NIL; frames_count],
            next: vec![NIL; frames_count],
            slot_of: vec![NIL; frames_count],
            page: vec![0; frames_count],
            slots: Vec::new(),
            free_slots: Vec::new(),
            map: PageMap::new(frames_count, NIL),
            active: Vec::new(),
            blocks: Blocks::new(frames_count),
            ranked: false,
            globaltime: 0,
            draining: NIL,
            scanned: 0,
            drained: (0, 0),
        }
    }

    /// Bytes of state per frame for `m` frames: links, cluster slot, page, and the
    /// frame's share of the cluster records (at most one cluster per frame: the record,
    /// the scan's entry and floats) and of the cluster map.
    pub fn bytes_per_frame(&self, m: usize) -> usize {
        let map = self.map.capacity() * PageMap::<u32>::slot_bytes();
        let cluster =
            std::mem::size_of::<Cluster>() + std::mem::size_of::<Live>() + SCAN_BYTES_PER_ENTRY;
        4 + 4 + 4 + 8 + cluster + map.div_ceil(m.max(1))
    }

    /// Clusters examined so far when choosing victim clusters.
    pub fn scanned(&self) -> u64 {
        self.scanned
    }

    /// Victim clusters chosen so far and the sum of their sizes (pages) when chosen
    /// (the clustered-cost variant's calibration, `super::calibration`).
    pub fn drained(&self) -> (u64, u64) {
        self.drained
    }

    /// Number of live clusters.
    pub fn len(&self) -> usize {
        self.active.len()
    }

    /// Whether no cluster is live.
    pub fn is_empty(&self) -> bool {
        self.active.is_empty()
    }

    /// `pid` is about to enter the dirty pool ([`Clusters::enter`]): the CPU starts
    /// fetching its cluster's map entry (a hint; changes nothing).
    #[inline]
    pub fn prefetch_enter(&self, pid: u64) {
        self.map
            .prefetch(super::cluster_of(pid, self.cluster_pages));
    }

    /// Frame `f` holding `pid` entered the dirty pool.
    pub fn enter(&mut self, f: FrameId, pid: u64) {
        let fi = f.index();
        debug_assert_eq!(self.slot_of[fi], NIL, "{f} already clustered");
        let no = super::cluster_of(pid, self.cluster_pages);
        let slot = match self.map.get(no) {
            Some(s) => s,
            None => {
                let c = Cluster {
                    no,
                    first: NIL,
                    last: NIL,
                    n: 0,
                    ipd: 0,
                    timestamp: self.globaltime,
                    active_pos: self.active.len() as u32,
                };
                let s = match self.free_slots.pop() {
                    Some(s) => {
                        self.slots[s as usize] = c;
                        s
                    }
                    None => {
                        self.slots.push(c);
                        (self.slots.len() - 1) as u32
                    }
                };
                self.active.push(Live {
                    slot: s,
                    n: 0,
                    div: 1,
                    timestamp: self.globaltime,
                });
                if self.ranked {
                    self.blocks.push(self.active.len() - 1, self.globaltime);
                }
                self.map.insert(no, s);
                s
            }
        };
        self.globaltime += 1;
        self.page[fi] = pid;
        self.slot_of[fi] = slot;
        let c = &mut self.slots[slot as usize];
        self.prev[fi] = c.last;
        self.next[fi] = NIL;
        if c.last != NIL {
            c.ipd += self.page[c.last as usize].abs_diff(pid);
            self.next[c.last as usize] = f.0;
        } else {
            c.first = f.0;
        }
        c.last = f.0;
        c.n += 1;
        let (pos, live) = (c.active_pos as usize, Live::of(slot, c));
        self.put_live(pos, live);
    }

    /// Stores the priority inputs of the `active` entry at `pos`.
    #[inline]
    fn put_live(&mut self, pos: usize, live: Live) {
        if self.ranked {
            // The timestamp never changes: only `r` is stored.
            self.blocks.set_r(pos, live.inverse_density());
        }
        self.active[pos] = live;
    }

    /// Frame `f` left the dirty pool.
    pub fn leave(&mut self, f: FrameId) {
        let fi = f.index();
        let slot = self.slot_of[fi];
        debug_assert_ne!(slot, NIL, "{f} not clustered");
        if slot == NIL {
            return;
        }
        let (p, n) = (self.prev[fi], self.next[fi]);
        let me = self.page[fi];
        let c = &mut self.slots[slot as usize];
        if p != NIL {
            c.ipd -= self.page[p as usize].abs_diff(me);
            self.next[p as usize] = n;
        } else {
            c.first = n;
        }
        if n != NIL {
            c.ipd -= self.page[n as usize].abs_diff(me);
            self.prev[n as usize] = p;
        } else {
            c.last = p;
        }
        if p != NIL && n != NIL {
            c.ipd += self.page[p as usize].abs_diff(self.page[n as usize]);
        }
        c.n -= 1;
        self.prev[fi] = NIL;
        self.next[fi] = NIL;
        self.slot_of[fi] = NIL;
        if c.n == 0 {
            let (no, pos) = (c.no, c.active_pos as usize);
            self.map.remove(no);
            self.active.swap_remove(pos);
            if self.ranked {
                self.blocks.swap_remove(pos, self.active.len());
            }
            if let Some(moved) = self.active.get(pos) {
                self.slots[moved.slot as usize].active_pos = pos as u32;
            }
            self.free_slots.push(slot);
            self.draining = if self.draining == slot {
                NIL
            } else {
                self.draining
            };
        } else {
            let (pos, live) = (c.active_pos as usize, Live::of(slot, c));
            self.put_live(pos, live);
        }
    }

    fn first_evictable(&self, slot: u32, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let mut c = self.slots[slot as usize].first;
        while c != NIL {
            if evictable(FrameId(c)) {
                return Some(FrameId(c));
            }
            c = self.next[c as usize];
        }
        None
    }

    /// The next victim: the draining cluster's first evictable page, else the first
    /// evictable page of the lowest-priority cluster (which becomes the draining one).
    pub fn victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        if self.draining != NIL {
            if let Some(f) = self.first_evictable(self.draining, evictable) {
                return Some(f);
            }
        }
        let mut skip: Vec<u32> = Vec::new();
        loop {
            self.scanned += self.active.len() as u64;
            let b = self.lowest_priority(&skip)?;
            if let Some(f) = self.first_evictable(b, evictable) {
                self.draining = b;
                self.drained.0 += 1;
                self.drained.1 += u64::from(self.slots[b as usize].n);
                return Some(f);
            }
            skip.push(b);
        }
    }

    /// The draining cluster's first evictable page, if a cluster is draining and has one.
    pub fn draining_victim(&self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        if self.draining == NIL {
            return None;
        }
        self.first_evictable(self.draining, evictable)
    }

    /// Makes `f`'s cluster the draining one (priority 0).
    pub fn start_draining(&mut self, f: FrameId) {
        let slot = self.slot_of[f.index()];
        if slot != NIL {
            self.draining = slot;
            self.drained.0 += 1;
            self.drained.1 += u64::from(self.slots[slot as usize].n);
        }
    }

    /// Members of `f`'s cluster accepted by `keep`, sorted by page number, into `out`.
    pub fn cluster_members_sorted(
        &self,
        f: FrameId,
        keep: &dyn Fn(FrameId) -> bool,
        out: &mut Vec<FrameId>,
    ) {
        out.clear();
        let slot = self.slot_of[f.index()];
        if slot == NIL {
            return;
        }
        let mut c = self.slots[slot as usize].first;
        while c != NIL {
            if keep(FrameId(c)) {
                out.push(FrameId(c));
            }
            c = self.next[c as usize];
        }
        out.sort_unstable_by_key(|m| self.page[m.index()]);
    }

    /// Whether `f` is in a cluster.
    pub fn contains(&self, f: FrameId) -> bool {
        self.slot_of[f.index()] != NIL
    }
}
