//! Write clustering: CFDC's prioritized page clusters ([`ClusterSet`]) and a decorator that
//! gives write clustering to any policy ([`Clustered`]).
//!
//! Sources: CFDC (Ou, Härder, Jin, DaMoN 2009, `cfdc.txt` §3.2–3.3, Formula 1, Fig. 3, and
//! the outlook in §5), and `design.md` §4 "Write clustering, two modes".
//!
//! # CFDC's metric, exactly and in O(log n)
//! A *cluster* holds pages whose numbers share `page / cluster_size`, in the order they
//! entered it. Its priority is Formula 1:
//!
//! ```text
//! P(c) = Σ_{i=1}^{n-1} |p_i − p_{i−1}|  /  (n² · (globaltime − timestamp(c)))
//! ```
//!
//! with the dividend set to 1 for a single-page cluster. `globaltime` ticks each time a page
//! enters the set (for CFDC: each time a dirty page leaves the working region) and
//! `timestamp(c)` is the globaltime at the cluster's creation. The lowest priority is
//! evicted first.
//!
//! Priorities change with globaltime, and the order of two clusters can flip: writing
//! `x_c = dividend / n²`, `P(c) = x_c / (G − T_c)`, and `1/P(c) = (G − T_c) / x_c` is a line
//! in `G`. Two lines cross at most once, but no static key orders all clusters for all
//! future times, so a heap keyed by priorities computed at insertion time (or compared
//! with the current globaltime inside the heap's comparator, which silently breaks the
//! heap invariant) does not give the paper's victim. This module keeps the clusters in a
//! **kinetic tournament** (a binary tournament tree over cluster slots, as in Basch,
//! Guibas and Hershberger's kinetic data structures): each inner node holds the winner
//! (lower priority) of its two children *at the current globaltime* and the first future
//! globaltime at which that comparison flips, computed exactly in integers; each node also
//! holds the earliest flip in its subtree. When globaltime ticks, only the nodes whose
//! certificate expired are recomputed; a change to one cluster recomputes its leaf-to-root
//! path (stopping early where nothing changed). The root is therefore always the exact
//! minimum of Formula 1, with no floating point and no staleness: O(log n) per cluster
//! change, plus, when globaltime reaches a certificate, the recomputation of the failed
//! node and of its ancestors (at most O(log n) per failure, shared between failures).
//! Since `1/P` moves linearly with globaltime, two clusters swap at most once between
//! changes, and the work stays small: on the first 40,000 references of the TPC-C trace at
//! 96 frames, about 1.8 recomputed comparisons per globaltime tick
//! ([`ClusterSet::kinetic_events`] counts them).
//!
//! # Readings of points the text leaves open
//! - **Ties** between equal priorities are broken by the older timestamp, then by the
//!   smaller cluster number: the order is `(P(c), timestamp(c), cluster number)`.
//! - **globaltime and timestamps.** A page entering the set stamps a cluster it creates
//!   with the current globaltime, and then globaltime increments. Priorities are only ever
//!   evaluated after the increment, so `globaltime − timestamp(c) ≥ 1` for every cluster and
//!   the case `globaltime == timestamp(c)` never arises (with the other order, increment
//!   first, a new cluster would have age 0: priority +∞, never the victim while another
//!   cluster exists).
//! - **Draining.** A cluster that gave a victim gets priority 0 (sticky): it stays at 0
//!   until it is empty, pages joining it join the drain, and draining clusters come before
//!   all others (among themselves by timestamp, then number). Its victims are taken in
//!   the cluster's order (the "first page" of §3.2).
//! - Removing a page from the middle of a cluster (a hit, a write-back) updates the
//!   dividend to the sum over the remaining pages in their entering order.
//! - Pinned pages are skipped: the victim is the first evictable page in cluster order
//!   (clusters by priority, pages by entering order).
//! - `cluster_size` is at most 32,768 pages, so that every comparison fits in 128-bit
//!   integers.
//!
//! # The [`Clustered`] decorator: two modes
//! Wraps any policy and tracks page ids and dirtiness from the events. When the inner
//! policy's victim is clean, it is evicted as is. When it is dirty:
//! - [`ClusterMode::Batch`] (CFDC's §5 outlook, `clustering=batch`): the victim is evicted
//!   and every dirty, evictable page of its cluster is written back with it in one store
//!   batch, sorted by page number (`Victim::Batch`); the others stay resident, clean.
//! - [`ClusterMode::Drain`] (the papers' behaviour, `clustering=drain`): the victim is
//!   evicted alone and its cluster starts draining: the following faults that the inner
//!   policy would serve with a dirty page take the draining cluster's pages first, one per
//!   fault, in the order they became dirty, until it is empty. Faults the inner policy
//!   serves with a clean page still get that clean page (clean first, as CFDC's clean
//!   queue comes before its clusters).
//!
//! **Which cluster** ([`ClusterChoice`]). Through the [`Policy`] trait an inner policy names
//! one frame, so by default ([`ClusterChoice::Victim`]) the cluster is the inner victim's.
//! A policy whose dirty victims are interchangeable, so that it decides only *that* a dirty
//! page goes and leaves *which* open (CASA choosing its dirty list, FD-Buffer's dirty pool),
//! takes [`ClusterChoice::Metric`]: the cluster is then the one with the lowest CFDC
//! priority among all resident dirty pages (globaltime ticks each time a page becomes
//! dirty; a cluster's pages are ordered by the time they became dirty), and its first
//! evictable page is the victim.

use super::{Access, IoKind, Policy, Victim};
use crate::PoolError;
use flashbuf_core::{FrameId, PageId};
use hashbrown::HashMap;
use std::cmp::Ordering;

const NIL: u32 = u32::MAX;
const NEVER: u64 = u64::MAX;

/// CFDC's default `MAX_CLUSTER_SIZE` (§4.3).
pub const DEFAULT_CLUSTER_SIZE: u64 = 64;
/// The largest cluster size accepted (keeps the exact comparisons within 128 bits).
pub const MAX_CLUSTER_SIZE: u64 = 1 << 15;

/// Checks a cluster size.
pub fn check_cluster_size(cluster_size: u64) -> Result<(), PoolError> {
    if cluster_size == 0 || cluster_size > MAX_CLUSTER_SIZE {
        return Err(PoolError::Config(format!(
            "cluster size {cluster_size} is not in 1..={MAX_CLUSTER_SIZE} pages"
        )));
    }
    Ok(())
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    cluster: u64,
    head: u32,
    tail: u32,
    n: u32,
    sum: u64,
    /// Cached `dividend(self)` and `n²` (the hot comparison reads only these).
    div: u64,
    n2: u64,
    stamp: u64,
    draining: bool,
    live: bool,
}

impl Slot {
    #[inline]
    fn cache(&mut self) {
        self.div = dividend(self);
        self.n2 = u64::from(self.n) * u64::from(self.n);
    }
}

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
    cluster_size: u64,
    pid: Vec<u64>,
    prev: Vec<u32>,
    next: Vec<u32>,
    slot_of: Vec<u32>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    by_cluster: HashMap<u64, u32>,
    globaltime: u64,
    members: usize,
    /// Leaves of the tournament (a power of two, at least the number of slots).
    leaves: usize,
    /// Winner slot of each node (`NIL`: no live cluster below); node 1 is the root, the
    /// leaf of slot `s` is `leaves + s`.
    win: Vec<u32>,
    /// Earliest globaltime at which some certificate in the node's subtree fails.
    exp: Vec<u64>,
    /// Scratch for the pinned slow path (capacity reserved up front).
    order: Vec<u32>,
    /// Comparisons recomputed because globaltime reached their certificate.
    kinetic_events: u64,
}

impl ClusterSet {
    /// Bytes of state per frame (page links plus a slot and two tree nodes per frame, and
    /// the hash table).
    pub const BYTES_PER_FRAME: usize = 8 + 4 + 4 + 4 + 48 + 2 * (4 + 8) + 4 + 16;

    /// A set for frames `0..frames_count` with clusters of `cluster_size` page numbers.
    pub fn new(frames_count: usize, cluster_size: u64) -> Result<Self, PoolError> {
        check_cluster_size(cluster_size)?;
        let slots = frames_count.max(1);
        let leaves = slots.next_power_of_two();
        Ok(Self {
            cluster_size,
            pid: vec![0; frames_count],
            prev: vec![NIL; frames_count],
            next: vec![NIL; frames_count],
            slot_of: vec![NIL; frames_count],
            slots: vec![EMPTY_SLOT; slots],
            free: (0..slots as u32).rev().collect(),
            // Twice the live maximum: a full table of tombstones is rehashed in place, never grown.
            by_cluster: HashMap::with_capacity(2 * slots),
            globaltime: 0,
            members: 0,
            leaves,
            win: vec![NIL; 2 * leaves],
            exp: vec![NEVER; 2 * leaves],
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
        self.slot_of[f.index()] != NIL
    }

    /// Whether `f` is in a draining cluster.
    pub fn is_draining(&self, f: FrameId) -> bool {
        let s = self.slot_of[f.index()];
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
        self.pid[i] = pid.0;
        self.slot_of[i] = s;
        let slot = &mut self.slots[s as usize];
        self.next[i] = NIL;
        self.prev[i] = slot.tail;
        if slot.tail != NIL {
            slot.sum += self.pid[slot.tail as usize].abs_diff(pid.0);
            self.next[slot.tail as usize] = i as u32;
        } else {
            slot.head = i as u32;
        }
        slot.tail = i as u32;
        slot.n += 1;
        slot.cache();
        self.members += 1;
        self.update(s);
    }

    /// Removes `f` (in the set) from its cluster; an empty cluster disappears.
    pub fn remove(&mut self, f: FrameId) {
        let i = f.index();
        let s = self.slot_of[i];
        debug_assert!(s != NIL, "{f} is in no cluster");
        if s == NIL {
            return;
        }
        let (p, n) = (self.prev[i], self.next[i]);
        let me = self.pid[i];
        let slot = &mut self.slots[s as usize];
        if p != NIL {
            slot.sum -= self.pid[p as usize].abs_diff(me);
            self.next[p as usize] = n;
        } else {
            slot.head = n;
        }
        if n != NIL {
            slot.sum -= self.pid[n as usize].abs_diff(me);
            self.prev[n as usize] = p;
        } else {
            slot.tail = p;
        }
        if p != NIL && n != NIL {
            slot.sum += self.pid[p as usize].abs_diff(self.pid[n as usize]);
        }
        slot.n -= 1;
        slot.cache();
        let empty = slot.n == 0;
        let cluster = slot.cluster;
        self.prev[i] = NIL;
        self.next[i] = NIL;
        self.slot_of[i] = NIL;
        self.members -= 1;
        if empty {
            self.slots[s as usize] = EMPTY_SLOT;
            self.by_cluster.remove(&cluster);
            self.free.push(s);
        }
        self.update(s);
    }

    /// Sets the priority of `f`'s cluster to 0: it drains before any other.
    pub fn drain_cluster_of(&mut self, f: FrameId) {
        let s = self.slot_of[f.index()];
        if s != NIL && !self.slots[s as usize].draining {
            self.slots[s as usize].draining = true;
            self.update(s);
        }
    }

    /// The pages of `f`'s cluster in entering order (empty if `f` is not in the set).
    pub fn cluster_members(&self, f: FrameId) -> impl Iterator<Item = (FrameId, PageId)> + '_ {
        let s = self.slot_of[f.index()];
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
            cur = self.next[i as usize];
            Some((FrameId(i), PageId(self.pid[i as usize])))
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
        let root = self.win[1];
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
            cur = self.next[cur as usize];
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

    // ---- the kinetic tournament ----

    /// globaltime += 1, then recompute every comparison whose certificate expired.
    fn tick(&mut self) {
        self.globaltime += 1;
        if self.exp[1] <= self.globaltime {
            self.refresh(1);
        }
    }

    fn refresh(&mut self, node: usize) {
        if self.exp[node] > self.globaltime || node >= self.leaves {
            return;
        }
        self.refresh(2 * node);
        self.refresh(2 * node + 1);
        self.kinetic_events += 1;
        self.recompute(node);
    }

    /// Slot `s` changed (created, removed, new key): recompute its path to the root. The
    /// walk stops early at a node whose winner and expiry did not change and whose winner
    /// is not `s`: `s` takes part in no comparison above it, so nothing above changes.
    fn update(&mut self, s: u32) {
        let mut node = self.leaves + s as usize;
        self.win[node] = if self.slots[s as usize].live { s } else { NIL };
        self.exp[node] = NEVER;
        while node > 1 {
            node /= 2;
            let before = (self.win[node], self.exp[node]);
            self.recompute(node);
            if (self.win[node], self.exp[node]) == before && before.0 != s {
                break;
            }
        }
    }

    #[inline]
    fn recompute(&mut self, node: usize) {
        let (l, r) = (2 * node, 2 * node + 1);
        let (a, b) = (self.win[l], self.win[r]);
        let (w, cert) = if a == NIL {
            (b, NEVER)
        } else if b == NIL {
            (a, NEVER)
        } else if self.less(a, b) {
            (a, self.flip_time(a, b))
        } else {
            (b, self.flip_time(b, a))
        };
        self.win[node] = w;
        self.exp[node] = cert.min(self.exp[l]).min(self.exp[r]);
    }

    fn cmp_slots(&self, a: u32, b: u32) -> Ordering {
        if a == b {
            Ordering::Equal
        } else if self.less(a, b) {
            Ordering::Less
        } else {
            Ordering::Greater
        }
    }

    /// Whether cluster `a` comes before `b` at the current globaltime.
    #[inline]
    fn less(&self, a: u32, b: u32) -> bool {
        let (x, y) = (&self.slots[a as usize], &self.slots[b as usize]);
        let tie = (x.stamp, x.cluster) < (y.stamp, y.cluster);
        match (x.draining, y.draining) {
            (true, true) => tie,
            (true, false) => true,
            (false, true) => false,
            (false, false) => {
                let g = self.globaltime;
                // P(x) < P(y)  ⇔  d_x · n_y² · (g − T_y) < d_y · n_x² · (g − T_x)
                let lhs = u128::from(weight(x, y)) * u128::from(g - y.stamp);
                let rhs = u128::from(weight(y, x)) * u128::from(g - x.stamp);
                lhs < rhs || (lhs == rhs && tie)
            }
        }
    }

    /// The first globaltime after now at which loser `l` comes before winner `w`.
    fn flip_time(&self, w: u32, l: u32) -> u64 {
        let (ws, ls) = (&self.slots[w as usize], &self.slots[l as usize]);
        if ws.draining || ls.draining {
            // Draining vs draining: a fixed order; draining vs not: 0 < P always.
            return NEVER;
        }
        // l first at g  ⇔  f(g) = α(g − T_w) − β(g − T_l) < 0 (or = 0 and l wins ties),
        // α = d_l·n_w², β = d_w·n_l². f is linear in g with slope α − β.
        let (alpha, beta) = (weight(ls, ws), weight(ws, ls));
        if alpha >= beta {
            return NEVER;
        }
        let g = self.globaltime;
        let f = i128::from(alpha) * i128::from(g - ws.stamp)
            - i128::from(beta) * i128::from(g - ls.stamp);
        let slope = beta - alpha;
        let l_wins_ties = (ls.stamp, ls.cluster) < (ws.stamp, ws.cluster);
        debug_assert!(f > 0 || (f == 0 && !l_wins_ties), "loser already wins");
        // Steps k ≥ 1 until f − slope·k < 0 (≤ 0 if l wins ties). In 64 bits when f fits
        // (always, in practice): a 128-bit division costs several times more.
        let k = match u64::try_from(f) {
            Ok(f) if l_wins_ties => f.div_ceil(slope),
            Ok(f) => f / slope + 1,
            Err(_) => {
                let (f, slope) = (f.unsigned_abs(), u128::from(slope));
                let k = if l_wins_ties {
                    f.div_ceil(slope)
                } else {
                    f / slope + 1
                };
                u64::try_from(k).unwrap_or(NEVER)
            }
        };
        g.checked_add(k).unwrap_or(NEVER)
    }

    /// Checks members, dividends, the hash table and the tournament against a recompute
    /// from scratch; `Err` names the first problem.
    pub fn check(&self) -> Result<(), String> {
        let mut members = 0usize;
        for (&cluster, &s) in &self.by_cluster {
            let c = &self.slots[s as usize];
            if !c.live || c.cluster != cluster {
                return Err(format!(
                    "clusters: slot {s} does not hold cluster {cluster}"
                ));
            }
            let (mut n, mut sum, mut prev, mut cur) = (0u32, 0u64, NIL, c.head);
            while cur != NIL {
                let i = cur as usize;
                if self.slot_of[i] != s || self.prev[i] != prev {
                    return Err(format!(
                        "clusters: frame {cur} badly linked in cluster {cluster}"
                    ));
                }
                if self.pid[i] / self.cluster_size != cluster {
                    return Err(format!(
                        "clusters: page {} in cluster {cluster}",
                        self.pid[i]
                    ));
                }
                if prev != NIL {
                    sum += self.pid[prev as usize].abs_diff(self.pid[i]);
                }
                n += 1;
                if n > c.n {
                    return Err(format!("clusters: cluster {cluster} longer than {}", c.n));
                }
                prev = cur;
                cur = self.next[i];
            }
            if n != c.n
                || n == 0
                || prev != c.tail
                || sum != c.sum
                || c.div != dividend(c)
                || c.n2 != u64::from(n) * u64::from(n)
            {
                return Err(format!(
                    "clusters: cluster {cluster} has n={n} sum={sum}, records n={} sum={}",
                    c.n, c.sum
                ));
            }
            if c.stamp >= self.globaltime {
                return Err(format!("clusters: cluster {cluster} stamped in the future"));
            }
            members += n as usize;
        }
        let linked = self.slot_of.iter().filter(|&&s| s != NIL).count();
        if members != self.members || linked != members {
            return Err(format!(
                "clusters: {members} linked, {linked} frames claim a cluster, count {}",
                self.members
            ));
        }
        let live = self.slots.iter().filter(|c| c.live).count();
        if live != self.by_cluster.len() || live + self.free.len() != self.slots.len() {
            return Err("clusters: slot accounting broken".into());
        }
        // The tournament: every node's winner and certificate, from scratch.
        for node in (1..self.leaves).rev() {
            let (a, b) = (self.win[2 * node], self.win[2 * node + 1]);
            let w = match (a, b) {
                (NIL, x) | (x, NIL) => x,
                _ if self.less(a, b) => a,
                _ => b,
            };
            if self.win[node] != w {
                return Err(format!(
                    "clusters: tournament node {node} has a stale winner"
                ));
            }
            if self.exp[node] <= self.globaltime {
                return Err(format!(
                    "clusters: tournament node {node} has an expired certificate"
                ));
            }
        }
        for s in 0..self.slots.len() {
            let want = if self.slots[s].live { s as u32 } else { NIL };
            if self.win[self.leaves + s] != want {
                return Err(format!("clusters: leaf of slot {s} is stale"));
            }
        }
        let best = self
            .by_cluster
            .values()
            .copied()
            .min_by(|&a, &b| self.cmp_slots(a, b));
        if best.unwrap_or(NIL) != self.win[1] {
            return Err("clusters: the tournament's root is not the minimum".into());
        }
        Ok(())
    }
}

/// Formula 1's dividend: the sum of distances, or 1 for a single page.
#[inline]
fn dividend(c: &Slot) -> u64 {
    if c.n <= 1 {
        1
    } else {
        c.sum
    }
}

/// `dividend(x) · n(y)²`: below 2⁶⁰ (dividend < n·cluster_size ≤ 2³⁰, n² ≤ 2³⁰).
#[inline]
fn weight(x: &Slot, y: &Slot) -> u64 {
    x.div * y.n2
}

/// How dirty victims leave: see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterMode {
    /// The whole cluster is written back in one batch with the victim.
    Batch,
    /// The victim leaves alone; the following dirty victims come from its cluster.
    Drain,
}

/// Which cluster a dirty victim comes from: see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterChoice {
    /// The inner policy's victim's cluster.
    Victim,
    /// The cluster with the lowest CFDC priority among all resident dirty pages.
    Metric,
}

/// Options of [`Clustered`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusteringConfig {
    /// Batch or drain.
    pub mode: ClusterMode,
    /// Pages per cluster (erase block / page size), `1..=MAX_CLUSTER_SIZE`.
    pub cluster_size: u64,
    /// How the cluster is chosen.
    pub choice: ClusterChoice,
}

impl ClusteringConfig {
    /// Batch mode, victim's cluster.
    pub fn batch(cluster_size: u64) -> Self {
        Self {
            mode: ClusterMode::Batch,
            cluster_size,
            choice: ClusterChoice::Victim,
        }
    }

    /// Drain mode, victim's cluster.
    pub fn drain(cluster_size: u64) -> Self {
        Self {
            mode: ClusterMode::Drain,
            cluster_size,
            choice: ClusterChoice::Victim,
        }
    }

    /// The same options with another cluster choice.
    pub fn with_choice(self, choice: ClusterChoice) -> Self {
        Self { choice, ..self }
    }

    /// Cluster size from the device geometry: erase block bytes / page bytes.
    pub fn cluster_size_of(erase_block_bytes: u64, page_size: usize) -> Result<u64, PoolError> {
        let ps = page_size as u64;
        if ps == 0 || erase_block_bytes < ps || !erase_block_bytes.is_multiple_of(ps) {
            return Err(PoolError::Config(format!(
                "erase block of {erase_block_bytes} bytes is not a multiple of the {page_size}-byte page"
            )));
        }
        Ok(erase_block_bytes / ps)
    }
}

/// Write clustering around any policy. See the module documentation.
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::{Access, Clustered, ClusteringConfig, Lru, Policy, Victim};
/// let mut p = Clustered::new(Lru::new(4), ClusteringConfig::batch(64)).unwrap();
/// p.on_insert(FrameId(0), PageId(9), Access::Write); // LRU victim, cluster 0
/// p.on_insert(FrameId(1), PageId(200), Access::Write); // cluster 3
/// p.on_insert(FrameId(2), PageId(3), Access::Write); // cluster 0
/// p.on_insert(FrameId(3), PageId(5), Access::Read); // cluster 0, clean
/// // Frame 0 goes; the dirty pages of its cluster are written with it, by page number.
/// assert_eq!(
///     p.choose_victim(&|_| true),
///     Some(Victim::Batch { evict: FrameId(0), write_back: &[FrameId(2), FrameId(0)] })
/// );
/// ```
#[derive(Debug, Clone)]
pub struct Clustered<P> {
    inner: P,
    cfg: ClusteringConfig,
    pid: Vec<u64>,
    dirty: ClusterSet,
    batch: Vec<FrameId>,
    sort: Vec<(u64, FrameId)>,
}

impl<P: Policy> Clustered<P> {
    /// Wraps `inner`; errors on a bad cluster size.
    pub fn new(inner: P, cfg: ClusteringConfig) -> Result<Self, PoolError> {
        let n = inner.frames_count();
        let size = usize::try_from(cfg.cluster_size)
            .unwrap_or(usize::MAX)
            .min(n);
        Ok(Self {
            dirty: ClusterSet::new(n, cfg.cluster_size)?,
            inner,
            cfg,
            pid: vec![0; n],
            batch: Vec::with_capacity(size),
            sort: Vec::with_capacity(size),
        })
    }

    /// The wrapped policy.
    pub fn inner(&self) -> &P {
        &self.inner
    }

    /// The options.
    pub fn config(&self) -> ClusteringConfig {
        self.cfg
    }

    /// The resident dirty pages' clusters, lowest CFDC priority first.
    pub fn dirty_clusters(&self) -> Vec<ClusterInfo> {
        self.dirty.clusters_by_priority()
    }

    /// `Batch` of the evictable dirty pages of `e`'s cluster, by page number.
    fn batch_of(&mut self, e: FrameId, evictable: &dyn Fn(FrameId) -> bool) -> Victim<'_> {
        self.sort.clear();
        self.sort.extend(
            self.dirty
                .cluster_members(e)
                .filter(|&(f, _)| evictable(f))
                .map(|(f, p)| (p.0, f)),
        );
        if self.sort.len() <= 1 {
            return Victim::Evict(e);
        }
        self.sort.sort_unstable();
        self.batch.clear();
        self.batch.extend(self.sort.iter().map(|&(_, f)| f));
        Victim::Batch {
            evict: e,
            write_back: &self.batch,
        }
    }
}

impl<P: Policy> Policy for Clustered<P> {
    fn name(&self) -> &'static str {
        match self.cfg.mode {
            ClusterMode::Batch => "clustered-batch",
            ClusterMode::Drain => "clustered-drain",
        }
    }

    fn frames_count(&self) -> usize {
        self.inner.frames_count()
    }

    fn on_insert(&mut self, frame: FrameId, pid: PageId, access: Access) {
        self.pid[frame.index()] = pid.0;
        if access.is_write() {
            self.dirty.push(frame, pid);
        }
        self.inner.on_insert(frame, pid, access);
    }

    fn on_hit(&mut self, frame: FrameId, access: Access) {
        if access.is_write() && !self.dirty.contains(frame) {
            self.dirty.push(frame, PageId(self.pid[frame.index()]));
        }
        self.inner.on_hit(frame, access);
    }

    fn on_clean(&mut self, frame: FrameId) {
        if self.dirty.contains(frame) {
            self.dirty.remove(frame);
        }
        self.inner.on_clean(frame);
    }

    fn on_remove(&mut self, frame: FrameId) {
        if self.dirty.contains(frame) {
            self.dirty.remove(frame);
        }
        self.inner.on_remove(frame);
    }

    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let v = match self.inner.choose_victim(evictable)? {
            Victim::Evict(f) => f,
            Victim::Batch { evict, write_back } => {
                // The inner policy clusters by itself: pass its batch through.
                self.batch.clear();
                self.batch.extend_from_slice(write_back);
                return Some(Victim::Batch {
                    evict,
                    write_back: &self.batch,
                });
            }
        };
        if !self.dirty.contains(v) {
            return Some(Victim::Evict(v));
        }
        Some(match (self.cfg.mode, self.cfg.choice) {
            (ClusterMode::Batch, ClusterChoice::Victim) => self.batch_of(v, evictable),
            (ClusterMode::Batch, ClusterChoice::Metric) => {
                let e = self.dirty.first_in_order(evictable, false).unwrap_or(v);
                self.batch_of(e, evictable)
            }
            (ClusterMode::Drain, ClusterChoice::Victim) => {
                match self.dirty.first_in_order(evictable, true) {
                    Some(m) => Victim::Evict(m),
                    None => {
                        self.dirty.drain_cluster_of(v);
                        Victim::Evict(v)
                    }
                }
            }
            (ClusterMode::Drain, ClusterChoice::Metric) => {
                let e = self.dirty.first_in_order(evictable, false).unwrap_or(v);
                self.dirty.drain_cluster_of(e);
                Victim::Evict(e)
            }
        })
    }

    fn bytes_per_frame(&self) -> usize {
        self.inner.bytes_per_frame() + 8 + ClusterSet::BYTES_PER_FRAME
    }

    fn prepare_miss(&mut self, access: Access) {
        self.inner.prepare_miss(access)
    }

    fn wants_io_observations(&self) -> bool {
        self.inner.wants_io_observations()
    }

    fn observe_io(&mut self, kind: IoKind, latency_us: f64) {
        self.inner.observe_io(kind, latency_us)
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.dirty.check()?;
        self.inner.check_invariants()
    }

    fn report(&self) -> Vec<(&'static str, f64)> {
        let mut r = self.inner.report();
        r.push(("cluster_size", self.cfg.cluster_size as f64));
        r.push(("dirty_clusters", self.dirty.clusters() as f64));
        r.push(("dirty_pages", self.dirty.len() as f64));
        r
    }
}
