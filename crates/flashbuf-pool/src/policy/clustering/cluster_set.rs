//! [`ClusterSet`]: dirty pages grouped in CFDC clusters (`page / cluster_size`), with the
//! lowest Formula 1 priority found by the block scan when a victim cluster is chosen
//! (`super::lowest`, `super::scan`).
//! The readings (ties, globaltime and timestamps, draining) are in the module
//! documentation of [`super`].

use super::check_cluster_size;
use super::scan::{Blocks, SCAN_BYTES_PER_ENTRY};
use flashbuf_core::{ConfigError, FrameId, PageId};
use hashbrown::HashMap;

mod check;

pub(super) const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    pub(super) cluster: u64,
    pub(super) head: u32,
    pub(super) tail: u32,
    pub(super) n: u32,
    pub(super) sum: u64,
    pub(super) stamp: u64,
    /// Position of the cluster among the scan's entries (`ClusterSet::active`).
    pub(super) pos: u32,
    pub(super) draining: bool,
    pub(super) live: bool,
}

impl Slot {
    /// The scan's `r = n² / dividend` of a live cluster, or −1 (never the largest
    /// inverse priority) while it drains.
    #[inline]
    pub(super) fn scan_r(&self) -> f64 {
        if self.draining {
            -1.0
        } else {
            f64::from(self.n) * f64::from(self.n) / dividend(self) as f64
        }
    }
}

/// A frame's page number and place in its cluster: one record per frame, so that a page
/// entering or leaving a cluster touches one cache line for itself (not one per field).
///
/// Measured (cachegrind, `bench --data none --policy cfdc`, TPC-C, 1,241 frames, first 2 M
/// references, whole replay): four arrays (`pid`, `prev`, `next`, `slot_of`) -> this record,
/// 1,120.4 M -> 1,114.6 M instructions, D1 misses 12.90 M -> 12.31 M (write misses
/// 3.38 M -> 2.90 M, most of them in `push`). Same hits, misses, page writes and cluster
/// write runs (full trace, 1,241 and 400 frames, `cfdc` and the `clustering=` decorators).
#[derive(Debug, Clone, Copy)]
pub(super) struct Member {
    pub(super) pid: u64,
    pub(super) prev: u32,
    pub(super) next: u32,
    /// The frame's cluster slot, `NIL` when the frame is in no cluster.
    pub(super) slot: u32,
}

const NO_MEMBER: Member = Member {
    pid: 0,
    prev: NIL,
    next: NIL,
    slot: NIL,
};

const EMPTY_SLOT: Slot = Slot {
    cluster: 0,
    head: NIL,
    tail: NIL,
    n: 0,
    sum: 0,
    stamp: 0,
    pos: NIL,
    draining: false,
    live: false,
};

/// A cluster as reported by [`ClusterSet::clusters_by_priority`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterInfo {
    /// Cluster number (`page / cluster_size`).
    pub cluster: u64,
    /// Pages in the cluster (`n`).
    pub pages: u32,
    /// The dividend of Formula 1 (1 for a single page).
    pub dividend: u64,
    /// `timestamp(c)`.
    pub timestamp: u64,
    /// Whether the cluster is draining (priority 0).
    pub draining: bool,
    /// Priority numerator (0 when draining).
    pub numerator: u64,
    /// Priority denominator `n² · (globaltime − timestamp)` (1 when draining).
    pub denominator: u128,
}

impl ClusterInfo {
    /// The priority as a float (for reports).
    pub fn priority(&self) -> f64 {
        self.numerator as f64 / self.denominator as f64
    }
}

/// Dirty pages grouped in CFDC clusters, with the lowest-priority cluster always at hand.
/// See the module documentation.
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::clustering::ClusterSet;
/// let mut s = ClusterSet::new(8, 64).unwrap();
/// s.push(FrameId(0), PageId(7)); // cluster 0, timestamp 0; globaltime 1
/// s.push(FrameId(1), PageId(5)); //                          globaltime 2
/// s.push(FrameId(2), PageId(70)); // cluster 1, timestamp 2;  globaltime 3
/// // cluster 0: |5 − 7| / (2² · (3 − 0)) = 1/6; cluster 1: 1 / (1 · (3 − 2)) = 1.
/// assert_eq!(s.first_in_order(&|_| true, false), Some(FrameId(0)));
/// ```
#[derive(Debug, Clone)]
pub struct ClusterSet {
    pub(super) cluster_size: u64,
    /// Per frame: page number, cluster links and slot.
    pub(super) at: Vec<Member>,
    pub(super) slots: Vec<Slot>,
    pub(super) free: Vec<u32>,
    pub(super) by_cluster: HashMap<u64, u32>,
    pub(super) globaltime: u64,
    pub(super) members: usize,
    /// The live clusters' slots, densely: the scan's entries by position.
    pub(super) active: Vec<u32>,
    /// The scan's float inputs of `active`, by block (`super::scan`).
    pub(super) blocks: Blocks,
    /// The draining clusters' slots (they come first, by timestamp).
    pub(super) draining: Vec<u32>,
    /// Scratch for the pinned slow path (capacity reserved up front).
    pub(super) order: Vec<u32>,
    /// Choices that scanned the clusters (no cluster draining).
    pub(super) scans: u64,
}

impl ClusterSet {
    /// Bytes of state per frame (the frame's `Member` record — page, links, slot, padded
    /// to 24 bytes — plus a slot, its place among the scan's entries and their floats, and
    /// the hash table).
    pub const BYTES_PER_FRAME: usize =
        std::mem::size_of::<Member>() + std::mem::size_of::<Slot>() + 4 + SCAN_BYTES_PER_ENTRY + 16;

    /// A set for frames `0..frames_count` with clusters of `cluster_size` page numbers.
    pub fn new(frames_count: usize, cluster_size: u64) -> Result<Self, ConfigError> {
        check_cluster_size(cluster_size)?;
        let slots = frames_count.max(1);
        let mut blocks = Blocks::new(slots);
        blocks.start(std::iter::empty());
        Ok(Self {
            cluster_size,
            at: vec![NO_MEMBER; frames_count],
            slots: vec![EMPTY_SLOT; slots],
            free: (0..slots as u32).rev().collect(),
            // Twice the live maximum: a full table of tombstones is rehashed in place, never grown.
            by_cluster: HashMap::with_capacity(2 * slots),
            globaltime: 0,
            members: 0,
            active: Vec::with_capacity(slots),
            blocks,
            draining: Vec::with_capacity(slots),
            order: Vec::with_capacity(slots),
            scans: 0,
        })
    }

    /// Pages per cluster.
    pub fn cluster_size(&self) -> u64 {
        self.cluster_size
    }

    /// Current globaltime.
    pub fn globaltime(&self) -> u64 {
        self.globaltime
    }

    /// Number of pages in the set.
    pub fn len(&self) -> usize {
        self.members
    }

    /// Whether the set holds no page.
    pub fn is_empty(&self) -> bool {
        self.members == 0
    }

    /// How many victim choices scanned the clusters' priorities (none was draining).
    pub fn scans(&self) -> u64 {
        self.scans
    }

    /// Number of clusters.
    pub fn clusters(&self) -> usize {
        self.by_cluster.len()
    }

    /// Whether `f` is in the set.
    #[inline]
    pub fn contains(&self, f: FrameId) -> bool {
        self.at[f.index()].slot != NIL
    }

    /// Whether `f` is in a draining cluster.
    pub fn is_draining(&self, f: FrameId) -> bool {
        let s = self.at[f.index()].slot;
        s != NIL && self.slots[s as usize].draining
    }

    /// Page `pid` in frame `f` (not in the set) enters it: a new cluster is stamped with
    /// the current globaltime, then globaltime increments; the page joins its cluster's
    /// tail.
    pub fn push(&mut self, f: FrameId, pid: PageId) {
        debug_assert!(!self.contains(f), "{f} already in a cluster");
        let stamp = self.globaltime;
        self.globaltime += 1;
        let cluster = pid.0 / self.cluster_size;
        let s = match self.by_cluster.get(&cluster) {
            Some(&s) => s,
            None => {
                let s = self
                    .free
                    .pop()
                    .unwrap_or_else(|| unreachable!("more clusters than frames"));
                let pos = self.active.len();
                self.slots[s as usize] = Slot {
                    cluster,
                    stamp,
                    pos: pos as u32,
                    live: true,
                    ..EMPTY_SLOT
                };
                self.by_cluster.insert(cluster, s);
                self.active.push(s);
                self.blocks.push(pos, stamp);
                s
            }
        };
        let i = f.index();
        let slot = &mut self.slots[s as usize];
        self.at[i] = Member {
            pid: pid.0,
            prev: slot.tail,
            next: NIL,
            slot: s,
        };
        if slot.tail != NIL {
            let t = &mut self.at[slot.tail as usize];
            slot.sum += t.pid.abs_diff(pid.0);
            t.next = i as u32;
        } else {
            slot.head = i as u32;
        }
        slot.tail = i as u32;
        slot.n += 1;
        self.members += 1;
        // A draining cluster's place depends only on its timestamp, never on its pages.
        if !slot.draining {
            let (pos, r) = (slot.pos as usize, slot.scan_r());
            self.blocks.set_r(pos, r);
        }
    }

    /// Removes `f` (in the set) from its cluster; an empty cluster disappears.
    pub fn remove(&mut self, f: FrameId) {
        let i = f.index();
        let Member {
            pid: me,
            prev: p,
            next: n,
            slot: s,
        } = self.at[i];
        debug_assert!(s != NIL, "{f} is in no cluster");
        if s == NIL {
            return;
        }
        let slot = &mut self.slots[s as usize];
        let mut p_pid = None;
        if p != NIL {
            let m = &mut self.at[p as usize];
            slot.sum -= m.pid.abs_diff(me);
            m.next = n;
            p_pid = Some(m.pid);
        } else {
            slot.head = n;
        }
        if n != NIL {
            let m = &mut self.at[n as usize];
            slot.sum -= m.pid.abs_diff(me);
            m.prev = p;
            if let Some(pp) = p_pid {
                slot.sum += pp.abs_diff(m.pid);
            }
        } else {
            slot.tail = p;
        }
        slot.n -= 1;
        let empty = slot.n == 0;
        let (draining, cluster, pos, r) = (slot.draining, slot.cluster, slot.pos, slot.scan_r());
        self.at[i] = Member {
            pid: me,
            ..NO_MEMBER
        };
        self.members -= 1;
        if empty {
            self.slots[s as usize] = EMPTY_SLOT;
            self.by_cluster.remove(&cluster);
            self.free.push(s);
            self.deactivate(s, pos as usize, draining);
        } else if !draining {
            // As in `push`: a draining cluster's place does not depend on its pages.
            self.blocks.set_r(pos as usize, r);
        }
    }

    /// The emptied cluster of slot `s` leaves the scan's entries (the last entry takes
    /// its position) and, if it drained, the draining clusters.
    fn deactivate(&mut self, s: u32, pos: usize, draining: bool) {
        let last = self.active.len() - 1;
        self.active.swap_remove(pos);
        self.blocks.swap_remove(pos, last);
        if let Some(&moved) = self.active.get(pos) {
            self.slots[moved as usize].pos = pos as u32;
        }
        if draining {
            if let Some(k) = self.draining.iter().position(|&d| d == s) {
                self.draining.swap_remove(k);
            }
        }
    }

    /// Sets the priority of `f`'s cluster to 0: it drains before any other.
    pub fn drain_cluster_of(&mut self, f: FrameId) {
        let s = self.at[f.index()].slot;
        if s != NIL && !self.slots[s as usize].draining {
            let slot = &mut self.slots[s as usize];
            slot.draining = true;
            let (pos, r) = (slot.pos as usize, slot.scan_r());
            self.blocks.set_r(pos, r);
            self.draining.push(s);
        }
    }

    /// The pages of `f`'s cluster in entering order (empty if `f` is not in the set).
    pub fn cluster_members(&self, f: FrameId) -> impl Iterator<Item = (FrameId, PageId)> + '_ {
        let s = self.at[f.index()].slot;
        let mut cur = if s == NIL {
            NIL
        } else {
            self.slots[s as usize].head
        };
        std::iter::from_fn(move || {
            if cur == NIL {
                return None;
            }
            let i = cur;
            let m = &self.at[i as usize];
            cur = m.next;
            Some((FrameId(i), PageId(m.pid)))
        })
    }

    /// The first evictable page in cluster order: clusters by `(priority, timestamp,
    /// number)`, pages by entering order. With `only_draining`, only draining clusters
    /// are considered. While a cluster drains, a look at the draining ones; else one scan
    /// of the clusters' priorities (`super::lowest`); then the cluster walk when the
    /// lowest cluster's first page is evictable, a sort of the clusters otherwise (pinned
    /// pages only).
    pub fn first_in_order(
        &mut self,
        evictable: &dyn Fn(FrameId) -> bool,
        only_draining: bool,
    ) -> Option<FrameId> {
        let root = self.lowest();
        if root == NIL {
            return None;
        }
        if only_draining && !self.slots[root as usize].draining {
            return None;
        }
        if let Some(f) = self.first_evictable_of(root, evictable) {
            return Some(f);
        }
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        order.extend(self.by_cluster.values().copied());
        order.sort_unstable_by(|&a, &b| self.cmp_slots(a, b));
        let found = order
            .iter()
            .take_while(|&&s| !only_draining || self.slots[s as usize].draining)
            .find_map(|&s| self.first_evictable_of(s, evictable));
        self.order = order;
        found
    }

    fn first_evictable_of(&self, s: u32, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let mut cur = self.slots[s as usize].head;
        while cur != NIL {
            if evictable(FrameId(cur)) {
                return Some(FrameId(cur));
            }
            cur = self.at[cur as usize].next;
        }
        None
    }

    /// Every cluster, lowest priority first (allocates; for tests and reports).
    pub fn clusters_by_priority(&self) -> Vec<ClusterInfo> {
        let mut v: Vec<u32> = self.by_cluster.values().copied().collect();
        v.sort_unstable_by(|&a, &b| self.cmp_slots(a, b));
        v.into_iter().map(|s| self.info(s)).collect()
    }

    fn info(&self, s: u32) -> ClusterInfo {
        let c = &self.slots[s as usize];
        let dividend = dividend(c);
        let (numerator, denominator) = if c.draining {
            (0, 1)
        } else {
            (
                dividend,
                u128::from(c.n) * u128::from(c.n) * u128::from(self.globaltime - c.stamp),
            )
        };
        ClusterInfo {
            cluster: c.cluster,
            pages: c.n,
            dividend,
            timestamp: c.stamp,
            draining: c.draining,
            numerator,
            denominator,
        }
    }
}

/// Formula 1's dividend: the sum of distances, or 1 for a single page.
#[inline]
pub(super) fn dividend(c: &Slot) -> u64 {
    if c.n <= 1 {
        1
    } else {
        c.sum
    }
}
