//! FD-Buffer's buffer manager (§4.2, Algorithms 1 and 2) as a [`Policy`]: the clean pool
//! `C`, the dirty pool `D`, the victim choice for the incoming access, the dirty pool's
//! write clustering (§4.5). How the algorithms map onto the pool contract is in the
//! module documentation of [`super`].

use super::cluster::Clusters;
use super::clustered_cost::ClusteredCost;
use super::cost::Curves;
use super::moves::Savings;
use super::stream_model::{in_flight_bytes, Detached, STREAM_MEMORY_MAX};
use super::two_stack::{TwoStack, ABSENT};
use super::window::WindowStats;
use super::{
    update_r, AdvisorStats, ClusterVictim, Clustering, FdBufferOptions, LruOrder, MissRates,
    PoolOrder, RateEstimator, Window, WindowRecord,
};
use crate::policy::{Access, IoKind, Policy, PolicyReport, StreamModel, StreamOutput, Victim};
use flashbuf_core::{DeviceFacts, FrameId, PageId};

mod build;
mod check;
mod frame;

pub(super) use frame::{FrameState, CLEAN, DIRTY, FREE};

/// FD-Buffer (§4) as a [`Policy`]: a clean pool run by `C` and a dirty pool run by `D`
/// (both [`LruOrder`] by default), sized by the policy advisor.
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::fd_buffer::{FdBuffer, FdBufferOptions};
/// use flashbuf_pool::policy::{Access, Policy, Victim};
///
/// let mut p = FdBuffer::new(4, FdBufferOptions::default().fixed_r(100.0).window_refs(8)).unwrap();
/// p.on_insert(FrameId(0), PageId(1), Access::Write); // dirty pool
/// for f in 1..4 {
///     p.on_insert(FrameId(f), PageId(10 + f as u64), Access::Read); // clean pool
/// }
/// // |C| = 3 > M_c = 2: a read miss still takes the clean pool's LRU page.
/// p.prepare_miss(PageId(20), Access::Read);
/// assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
/// assert_eq!(p.m_c(), 2);
/// p.check_invariants().unwrap();
/// ```
pub struct FdBuffer<C: PoolOrder = LruOrder, D: PoolOrder = LruOrder> {
    pub(super) m: usize,
    pub(super) opts: FdBufferOptions,
    pub(super) clean: C,
    /// The dirty pool's ordering, kept only when something reads it (`ordered_dirty`).
    pub(super) dirty: D,
    /// Pages in the dirty pool (whether or not `dirty` keeps their order).
    pub(super) d_len: usize,
    /// Whether the dirty pool's inner ordering is kept: not when clusters choose the
    /// dirty pool's victims by CFDC's priority (`victim=priority`, the paper's), since
    /// then nothing reads the order.
    pub(super) ordered_dirty: bool,
    /// Per frame: its page, Two-Stack slots, pool tag and dirty bit, side by side.
    pub(super) fr: Vec<FrameState>,
    pub(super) m_c: usize,
    pub(super) est: TwoStack,
    /// The estimator when it runs elsewhere ([`Policy::detach_stream_model`]): its
    /// windows' counters as they arrive; `None`: `est` runs here.
    pub(super) stream: Option<Detached>,
    pub(super) shadow: Option<TwoStack>,
    pub(super) win: WindowStats,
    /// References before which no window can close (`window.rs`).
    pub(super) refs_check: u64,
    pub(super) rate: Option<RateEstimator>,
    pub(super) last_comp_ns: f64,
    pub(super) last_est: MissRates,
    pub(super) curves: Curves,
    /// `moves=cusum`: each candidate split's savings since the last move.
    pub(super) savings: Savings,
    pub(super) clusters: Option<Clusters>,
    /// The clustered-cost variant's model (`None`: Eq. (3) as printed).
    pub(super) clustered_cost: Option<ClusteredCost>,
    pub(super) batch: Vec<FrameId>,
    /// The access of the miss being served (`prepare_miss`), until the next reference.
    pub(super) next_access: Option<Access>,
    /// `R` when it is fixed (options, then cost updates); unused with online `R`.
    pub(super) fixed_r: f64,
    /// Window records (with `track_accuracy`).
    pub(super) records: Vec<WindowRecord>,
    pub(super) stats: AdvisorStats,
}

impl<C: PoolOrder, D: PoolOrder> FdBuffer<C, D> {
    /// Current target size of the clean pool, `M_c`.
    pub fn m_c(&self) -> usize {
        self.m_c
    }

    /// Pages in the clean and the dirty pool.
    pub fn pool_sizes(&self) -> (usize, usize) {
        (self.clean.len(), self.d_len)
    }

    /// The `R` in force: measured online, or the fixed one (last cost update, else the
    /// options').
    pub fn r(&self) -> f64 {
        match &self.rate {
            Some(e) => e.r(),
            None => self.fixed_r,
        }
    }

    /// The estimates at the current `M_c` from the last closed window.
    pub fn last_estimates(&self) -> MissRates {
        self.last_est
    }

    /// The options.
    pub fn options(&self) -> &FdBufferOptions {
        &self.opts
    }

    #[inline]
    fn join_dirty(&mut self, f: FrameId) {
        self.fr[f.index()].tag = DIRTY;
        self.fr[f.index()].dirty = true;
        self.d_len += 1;
        if self.ordered_dirty {
            self.dirty.add(f);
        }
        if let Some(c) = self.clusters.as_mut() {
            c.enter(f, self.fr[f.index()].page);
        }
    }

    /// The dirty pool's victim; `Pick::Batch` leaves the write-back set in `self.batch`.
    fn dirty_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Pick> {
        let Some(cl) = self.clusters.as_mut() else {
            return self.dirty.victim(evictable).map(Pick::Evict);
        };
        let v = match self.opts.cluster_victim {
            ClusterVictim::Priority => cl.victim(evictable)?,
            ClusterVictim::OrderVictim => match cl.draining_victim(evictable) {
                Some(v) => v,
                None => {
                    let v = self.dirty.victim(evictable)?;
                    cl.start_draining(v);
                    v
                }
            },
        };
        if !matches!(self.opts.clustering, Clustering::Batch { .. }) {
            return Some(Pick::Evict(v));
        }
        let fr = &self.fr;
        cl.cluster_members_sorted(
            v,
            &|f| fr[f.index()].dirty && (f == v || evictable(f)),
            &mut self.batch,
        );
        if self.batch.is_empty() || (self.batch.len() == 1 && self.batch[0] == v) {
            return Some(Pick::Evict(v));
        }
        Some(Pick::Batch(v))
    }
}

/// A victim before it is turned into a [`Victim`] borrowing the batch.
#[derive(Clone, Copy)]
enum Pick {
    Evict(FrameId),
    Batch(FrameId),
}

impl<C: PoolOrder, D: PoolOrder> Policy for FdBuffer<C, D> {
    fn name(&self) -> &'static str {
        "fd-buffer"
    }

    fn frames_count(&self) -> usize {
        self.m
    }

    fn on_insert(&mut self, frame: FrameId, pid: PageId, access: Access) {
        self.next_access = None;
        let i = frame.index();
        debug_assert_eq!(self.fr[i].tag, FREE, "{frame} inserted twice");
        self.fr[i].page = pid.0;
        if self.stream.is_none() {
            self.fr[i].slots = self.est.admit_in(frame, pid.0);
        }
        if let Some(s) = self.shadow.as_mut() {
            s.admit(frame, pid.0);
        }
        self.win.reads_io += 1;
        if access.is_write() {
            self.join_dirty(frame);
        } else {
            self.fr[i].tag = CLEAN;
            self.fr[i].dirty = false;
            self.clean.add(frame);
        }
        self.reference(frame, pid.0, access.is_write());
    }

    fn on_hit(&mut self, frame: FrameId, access: Access) {
        self.next_access = None;
        let i = frame.index();
        let write = access.is_write();
        match self.fr[i].tag {
            CLEAN => {
                self.win.c_hits += 1;
                if write {
                    self.clean.remove(frame);
                    self.join_dirty(frame);
                } else {
                    self.clean.update(frame);
                }
            }
            DIRTY => {
                self.win.d_hits += 1;
                if write {
                    self.win.d_write_hits += 1;
                    self.fr[i].dirty = true;
                }
                if self.ordered_dirty {
                    self.dirty.update(frame);
                }
            }
            _ => debug_assert!(false, "hit on free {frame}"),
        }
        self.reference(frame, self.fr[i].page, write);
    }

    fn on_clean(&mut self, frame: FrameId) {
        self.fr[frame.index()].dirty = false;
    }

    fn on_remove(&mut self, frame: FrameId) {
        let i = frame.index();
        match self.fr[i].tag {
            CLEAN => self.clean.remove(frame),
            DIRTY => {
                self.d_len -= 1;
                if self.ordered_dirty {
                    self.dirty.remove(frame);
                }
                if let Some(c) = self.clusters.as_mut() {
                    c.leave(frame);
                }
            }
            _ => debug_assert!(false, "removing free {frame}"),
        }
        let slots = std::mem::replace(&mut self.fr[i].slots, ABSENT);
        self.est.release_in(slots, self.fr[i].page);
        if let Some(s) = self.shadow.as_mut() {
            s.release(frame, self.fr[i].page);
        }
        self.fr[i].tag = FREE;
        self.fr[i].dirty = false;
    }

    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let incoming = self.next_access;
        if incoming.is_none() {
            self.stats.unhinted_misses += 1;
        }
        let (c_len, d_len) = (self.clean.len(), self.d_len);
        let from_dirty = if incoming == Some(Access::Write) {
            // FindVictimForDirty: from C iff |C| > M_c.
            c_len <= self.m_c
        } else {
            // FindVictimForClean: from D iff |D| > M_d.
            d_len > self.m - self.m_c
        };
        let pick = if from_dirty {
            match self.dirty_victim(evictable) {
                Some(v) => v,
                None => Pick::Evict(self.clean.victim(evictable)?),
            }
        } else {
            match self.clean.victim(evictable) {
                Some(f) => Pick::Evict(f),
                None => self.dirty_victim(evictable)?,
            }
        };
        Some(match pick {
            Pick::Evict(f) => {
                self.win.writes_io += u64::from(self.fr[f.index()].dirty);
                Victim::Evict(f)
            }
            Pick::Batch(f) => {
                self.win.writes_io += self.batch.len() as u64;
                Victim::Batch {
                    evict: f,
                    write_back: &self.batch,
                }
            }
        })
    }

    fn bytes_per_frame(&self) -> usize {
        // Orders, the frame states, the estimators (stacks, slots, ghosts, counters),
        // clusters if on (links, slot, page, their share of the cluster map), the
        // clustered-cost variant's kept writes and sets (their share per frame).
        self.clean.bytes_per_frame()
            + if self.ordered_dirty {
                self.dirty.bytes_per_frame()
            } else {
                0
            }
            + std::mem::size_of::<FrameState>()
            + self
                .stream
                .as_ref()
                .map_or_else(|| self.est.bytes_per_frame(), |s| s.bytes_per_frame)
            + self.shadow.as_ref().map_or(0, TwoStack::bytes_per_frame)
            + self
                .clusters
                .as_ref()
                .map_or(0, |c| c.bytes_per_frame(self.m))
            + self
                .clustered_cost
                .as_ref()
                .map_or(0, |c| c.bytes() / self.m.max(1))
            + self.savings.bytes() / self.m.max(1)
    }

    /// Records the access (Algorithm 2 picks the victim by it) and starts fetching the
    /// page's ghost entry and, for a write, its cluster's map entry, which `on_insert`
    /// reads after the victim is chosen and evicted and the page read (a cache miss per
    /// insert otherwise; see the module documentation of `super`).
    fn prepare_miss(&mut self, pid: PageId, access: Access) {
        self.next_access = Some(access);
        if self.stream.is_none() {
            self.est.prefetch_admit(pid.0);
        }
        if let (true, Some(c)) = (access.is_write(), self.clusters.as_ref()) {
            c.prefetch_enter(pid.0);
        }
    }

    fn wants_io_observations(&self) -> bool {
        self.rate.is_some()
    }

    /// A fixed `R` becomes `write_us / read_us`; online `R` ignores the update, and so
    /// does a fixed one when the update gives no finite `R` (reads costing nothing).
    fn update_costs(&mut self, costs: &DeviceFacts) {
        if self.rate.is_none() {
            if let Some(r) = update_r(costs) {
                self.fixed_r = r;
            }
        }
        if let (Some(c), Some(seq)) = (self.clustered_cost.as_mut(), costs.seq_write_us) {
            if costs.write_us > 0.0 {
                c.set_seq_ratio(seq / costs.write_us);
            }
        }
    }

    fn observe_io(&mut self, kind: IoKind, latency_us: f64) {
        self.win.observed_us += latency_us;
        if let Some(e) = self.rate.as_mut() {
            match kind {
                IoKind::Read => e.observe_read(latency_us),
                IoKind::Write => e.observe_write(latency_us),
            }
        }
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.check_all()
    }

    /// The Two-Stack estimator, when windows have a fixed number of references and the
    /// counters of the windows in flight fit `STREAM_MEMORY_MAX` (32 MiB; see
    /// `stream_model.rs`); before any reference only.
    fn detach_stream_model(&mut self, refs_ahead: u64) -> Option<Box<dyn StreamModel>> {
        let Window::Refs(n) = self.opts.window else {
            return None;
        };
        let untouched = self.stats.windows == 0 && self.win.refs == 0;
        if self.stream.is_some() || !untouched {
            return None;
        }
        if in_flight_bytes(self.est.counters().bytes(), n, refs_ahead) > STREAM_MEMORY_MAX {
            return None;
        }
        let pr = self.opts.present_conditions;
        let est = std::mem::replace(&mut self.est, TwoStack::for_owner(1, 1, pr));
        let (detached, model) = Detached::new(est, n);
        self.stream = Some(detached);
        Some(Box::new(model))
    }

    /// A window's counters from the detached estimator (anything else is ignored).
    fn stream_output(&mut self, output: StreamOutput) {
        if let Some(s) = self.stream.as_mut() {
            let _ = s.accept(output);
        }
    }

    fn report(&self) -> PolicyReport {
        self.make_report()
    }
}
