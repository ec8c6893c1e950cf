//! [`ClusterSet`]: dirty pages grouped in CFDC clusters (`page / cluster_size`), with the
//! lowest Formula 1 priority always at the root of a kinetic tournament (`super::kinetic`).
//! The readings (ties, globaltime and timestamps, draining) are in the module
//! documentation of [`super`].

use super::check_cluster_size;
use super::kinetic::{Node, EMPTY_NODE};
use flashbuf_core::{ConfigError, FrameId, PageId};
use hashbrown::HashMap;

mod check;

pub(super) const NIL: u32 = u32::MAX;
pub(super) const NEVER: u64 = u64::MAX;

#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    pub(super) cluster: u64,
    pub(super) head: u32,
    pub(super) tail: u32,
    pub(super) n: u32,
    pub(super) sum: u64,
    /// Cached `dividend(self)` and `n²` (the hot comparison reads only these).
    pub(super) div: u64,
    pub(super) n2: u64,
    pub(super) stamp: u64,
    pub(super) draining: bool,
    pub(super) live: bool,
}

impl Slot {
    #[inline]
    fn cache(&mut self) {
        self.div = dividend(self);
        self.n2 = u64::from(self.n) * u64::from(self.n);
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
    div: 0,
    n2: 0,
    stamp: 0,
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
    /// Leaves of the tournament (a power of two, at least the number of slots).
    pub(super) leaves: usize,
    /// The tournament's nodes, by pairs of siblings (layout in `super::kinetic`).
    pub(super) tree: Vec<[Node; 2]>,
    /// Scratch for the pinned slow path (capacity reserved up front).
    pub(super) order: Vec<u32>,
    /// Comparisons recomputed because globaltime reached their certificate.
    pub(super) kinetic_events: u64,
}

impl ClusterSet {
    /// Bytes of state per frame (the frame's `Member` record — page, links, slot, padded
    /// to 24 bytes — plus a slot and two tree nodes per frame, and the hash table).
    pub const BYTES_PER_FRAME: usize = std::mem::size_of::<Member>() + 48 + 2 * (4 + 8) + 4 + 16;

    /// A set for frames `0..frames_count` with clusters of `cluster_size` page numbers.
    pub fn new(frames_count: usize, cluster_size: u64) -> Result<Self, ConfigError> {
        check_cluster_size(cluster_size)?;
        let slots = frames_count.max(1);
        let leaves = slots.next_power_of_two();
        Ok(Self {
            cluster_size,
            at: vec![NO_MEMBER; frames_count],
            slots: vec![EMPTY_SLOT; slots],
            free: (0..slots as u32).rev().collect(),
            // Twice the live maximum: a full table of tombstones is rehashed in place, never grown.
            by_cluster: HashMap::with_capacity(2 * slots),
            globaltime: 0,
            members: 0,
            leaves,
            tree: vec![[EMPTY_NODE; 2]; leaves],
            order: Vec::with_capacity(slots),
            kinetic_events: 0,
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

    /// How many tournament comparisons were recomputed because globaltime reached the
    /// time at which their order flips (the kinetic events: a measure of the work the
    /// time-varying priorities cost).
    pub fn kinetic_events(&self) -> u64 {
        self.kinetic_events
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
        self.tick();
        let cluster = pid.0 / self.cluster_size;
        let s = match self.by_cluster.get(&cluster) {
            Some(&s) => s,
            None => {
                let s = self
                    .free
                    .pop()
                    .unwrap_or_else(|| unreachable!("more clusters than frames"));
                self.slots[s as usize] = Slot {
                    cluster,
                    stamp,
                    live: true,
                    ..EMPTY_SLOT
                };
                self.by_cluster.insert(cluster, s);
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
        slot.cache();
        let draining = slot.draining;
        self.members += 1;
        // A draining cluster's comparisons depend only on its timestamp and number, never
        // on its pages: the tournament does not change.
        if !draining {
            self.update(s);
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
        slot.cache();
        let empty = slot.n == 0;
        let draining = slot.draining;
        let cluster = slot.cluster;
        self.at[i] = Member {
            pid: me,
            ..NO_MEMBER
        };
        self.members -= 1;
        if empty {
            self.slots[s as usize] = EMPTY_SLOT;
            self.by_cluster.remove(&cluster);
            self.free.push(s);
            self.update(s);
        } else if !draining {
            // As in `push`: a draining cluster's place does not depend on its pages.
            self.update(s);
        }
    }

    /// Sets the priority of `f`'s cluster to 0: it drains before any other.
    pub fn drain_cluster_of(&mut self, f: FrameId) {
        let s = self.at[f.index()].slot;
        if s != NIL && !self.slots[s as usize].draining {
            self.slots[s as usize].draining = true;
            self.update_drained(s);
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
    /// are considered. O(1) plus the cluster walk when the lowest cluster's first page is
    /// evictable; a sort of the clusters otherwise (pinned pages only).
    pub fn first_in_order(
        &mut self,
        evictable: &dyn Fn(FrameId) -> bool,
        only_draining: bool,
    ) -> Option<FrameId> {
        let root = self.root();
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
