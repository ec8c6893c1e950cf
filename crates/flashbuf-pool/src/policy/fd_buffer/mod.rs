//! FD-Buffer: cost-based adaptive replacement with a clean pool and a dirty pool
//! (S. T. On, S. Gao, B. He, M. Wu, Q. Luo, J. Xu, "FD-Buffer: A Cost-Based Adaptive
//! Buffer Replacement Algorithm for Flash Memory Devices", IEEE Trans. Computers 63(9),
//! 2014).
//!
//! The parts, one file each:
//! - this file: the buffer manager (§4.2, Algorithms 1 and 2) as a [`Policy`], the
//!   window bookkeeping and the policy advisor's runs (§4.4);
//! - [`order`]: the pluggable inner policies of the two pools;
//! - [`two_stack`]: the Two-Stack estimator (§4.3, Algorithms 3 and 4, present
//!   conditions, group-based stacks);
//! - [`cost`]: Eqs. (3), (5)–(7) and the advisor's minimisation;
//! - [`advisor`]: window rules, online `R`, advisor clock;
//! - [`cluster`]: write clustering in the dirty pool (§4.5);
//! - [`naive`]: an `O(n)`-per-operation reference for differential tests.
//!
//! # How Algorithms 1 and 2 map onto the pool contract
//! A resident page is in the clean pool `C` if clean, in the dirty pool `D` once written
//! (Algorithm 1: a write hit in `C` does `C.Remove; D.Add`). On a miss the pool asks
//! [`Policy::choose_victim`], then calls `on_remove(victim)` and `on_insert(frame, page,
//! access)`: the frame joins `C` for a read and `D` for a write, which is exactly
//! Algorithm 2's frame movement (`D.Remove; C.Add` in FindVictimForClean, `C.Remove;
//! D.Add` in FindVictimForDirty).
//!
//! Algorithm 2 depends on whether the *incoming* access is a read (FindVictimForClean:
//! victim from `D` iff `|D| > M_d`) or a write (FindVictimForDirty: victim from `C` iff
//! `|C| > M_c`); with a full buffer the two differ exactly when `|C| = M_c`, the steady
//! state. The pool announces the incoming access through [`Policy::prepare_miss`] before
//! `choose_victim`; a driver that calls `choose_victim` itself (tests) can announce it
//! through [`FdBufferHandle::set_next_access`]. Without an announcement the miss is taken
//! as a read (FindVictimForClean) and counted in the report as `unhinted_misses`.
//!
//! Pages written back without being evicted (cluster batches, `flush_all`) stay in the
//! pool they are in, clean (§4.5: only the evicted page moves). If the chosen pool has no
//! evictable frame (all pinned), the other pool gives the victim.
//!
//! # Windows and the advisor
//! Every reference (hit or miss) feeds the Two-Stack estimator and the window counters.
//! When a window closes (by default after 5,000 references) the advisor computes
//! Eqs. (5)–(7) for every `M_c` in `1..=M−1` from the window's counters and takes the
//! `M_c` minimising Eq. (3) with the current `R`; it applies from the next reference. `M_c`
//! starts at `M/2` (option `initial_clean_ratio`; the paper does not say).
//!
//! # Estimation accuracy (Table 5)
//! With `track_accuracy`, a second Two-Stack without present conditions runs alongside,
//! and each window leaves a [`WindowRecord`]: the estimates of `P_c`, `P_d`, `P_d^w` at
//! the `M_c` in force during the window (with and without present conditions) and the
//! rates measured in the real pools during that window: `P_c` = accesses not found in `C`
//! / accesses, `P_d` = accesses not found in `D` / accesses, `P_d^w` = writes not found
//! in `D` / writes. [`mean_errors`] averages the paper's error `|v − v'| / v`.
//!
//! # Report
//! [`Policy::report`] gives `m_c`, `m_d`, `clean_pages`, `dirty_pages`, the last window's
//! estimates at the `M_c` in force (`est_p_c`, `est_p_d`, `est_p_d_w`), `r`, `windows`,
//! the advisor's overhead (`advisor_work` units, `advisor_ns` with a clock), the
//! estimator's per-access work (`stack_work`), `cluster_scans`, `unhinted_misses`, and
//! with `track_accuracy` the mean Table 5 errors (`err_p_c`, ..., `err_p_c_without_pr`, ...).
//!
//! # Driving it through the pool
//! ```
//! use flashbuf_core::PageId;
//! use flashbuf_device::MemDevice;
//! use flashbuf_pool::policy::fd_buffer::{FdBuffer, FdBufferOptions};
//! use flashbuf_pool::policy::Access;
//! use flashbuf_pool::BufferPool;
//! use flashbuf_store::{DirectStore, DirectStoreConfig};
//!
//! let policy = FdBuffer::new(64, FdBufferOptions::default().fixed_r(136.0).track_accuracy(true)).unwrap();
//! let handle = policy.handle(); // keep it: the pool owns the policy from now on
//! let store = DirectStore::create(MemDevice::new(0), DirectStoreConfig::with_page_size(4096)).unwrap();
//! let pool = BufferPool::new(store, 64, Box::new(policy)).unwrap();
//! for i in 0..20_000u64 {
//!     let (write, page) = (i % 7 == 0, (i * 31) % 500);
//!     handle.set_next_access(if write { Access::Write } else { Access::Read });
//!     if write {
//!         pool.write(PageId(page)).unwrap().write(0, b"x");
//!     } else {
//!         drop(pool.read(PageId(page)).unwrap());
//!     }
//! }
//! let records = handle.take_window_records(); // Table 5: one per window of 5,000
//! assert_eq!(records.len(), 4);
//! let report = pool.policy_report();
//! assert!(report.iter().any(|&(k, v)| k == "unhinted_misses" && v == 0.0));
//! ```
//!
//! With several threads fixing pages at once, announcements can interleave; the handle is
//! then best-effort (the replaying lab is single-threaded).

pub mod advisor;
pub mod cluster;
pub mod cost;
pub mod naive;
pub mod order;
pub mod two_stack;

pub use advisor::{AdvisorClock, Asymmetry, RateEstimator, Window};
pub use cluster::{ClusterVictim, Clustering};
pub use cost::MissRates;
pub use order::{FifoOrder, LruOrder, OrderKind, PoolOrder};

use super::{Access, IoKind, Policy, Victim};
use crate::PoolError;
use cluster::Clusters;
use cost::Curves;
use flashbuf_core::{FrameId, PageId};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Arc;
use two_stack::TwoStack;

/// FD-Buffer's options. Build with the chained setters from [`Default`].
///
/// ```
/// use flashbuf_pool::policy::fd_buffer::{Clustering, FdBufferOptions, OrderKind};
/// let o = FdBufferOptions::default()
///     .window_refs(5_000)
///     .group_size(64)
///     .fixed_r(136.0)
///     .clustering(Clustering::Drain { cluster_pages: 64 })
///     .inner(OrderKind::Lru);
/// assert_eq!(o.group_size, 64);
/// ```
#[derive(Clone)]
pub struct FdBufferOptions {
    /// When a workload-estimation window closes (default 5,000 references).
    pub window: Window,
    /// Group size of the group-based stacks (default 64; 1 = exact stacks).
    pub group_size: usize,
    /// Where `R` comes from (default online, m = 32,768, initial 1).
    pub asymmetry: Asymmetry,
    /// Write clustering in the dirty pool (default off).
    pub clustering: Clustering,
    /// How a new victim cluster is chosen (default CFDC's priority, the paper's).
    pub cluster_victim: ClusterVictim,
    /// Inner policy of both pools (for [`FdBuffer::from_options`]; default LRU).
    pub inner: OrderKind,
    /// Use present conditions (default true; false = the "w/o PR" estimator).
    pub present_conditions: bool,
    /// Keep per-window estimated vs measured rates (Table 5); costs a second estimator.
    pub track_accuracy: bool,
    /// `M_c` before the first advisor run, as a fraction of `M` (default 0.5).
    pub initial_clean_ratio: f64,
    /// Read cost in µs for [`Window::CostBound`] when no I/O is observed (default 100).
    pub read_cost_us: f64,
    /// Clock for measuring the advisor's CPU time (default none: work units only).
    pub clock: Option<AdvisorClock>,
}

impl Default for FdBufferOptions {
    fn default() -> Self {
        Self {
            window: Window::default(),
            group_size: 64,
            asymmetry: Asymmetry::default(),
            clustering: Clustering::Off,
            cluster_victim: ClusterVictim::Priority,
            inner: OrderKind::Lru,
            present_conditions: true,
            track_accuracy: false,
            initial_clean_ratio: 0.5,
            read_cost_us: 100.0,
            clock: None,
        }
    }
}

impl std::fmt::Debug for FdBufferOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FdBufferOptions")
            .field("window", &self.window)
            .field("group_size", &self.group_size)
            .field("asymmetry", &self.asymmetry)
            .field("clustering", &self.clustering)
            .field("cluster_victim", &self.cluster_victim)
            .field("inner", &self.inner)
            .field("present_conditions", &self.present_conditions)
            .field("track_accuracy", &self.track_accuracy)
            .field("initial_clean_ratio", &self.initial_clean_ratio)
            .field("read_cost_us", &self.read_cost_us)
            .field("clock", &self.clock.is_some())
            .finish()
    }
}

impl FdBufferOptions {
    /// Fixed windows of `refs` references.
    pub fn window_refs(mut self, refs: u64) -> Self {
        self.window = Window::Refs(refs);
        self
    }
    /// Windows sized so that the advisor's time stays below `q` of the window's I/O cost
    /// (§4.4), between `min_refs` and `max_refs` references.
    pub fn overhead_bound(mut self, q: f64, min_refs: u64, max_refs: u64) -> Self {
        self.window = Window::CostBound {
            q,
            min_refs,
            max_refs,
        };
        self
    }
    /// Group size of the stacks.
    pub fn group_size(mut self, z: usize) -> Self {
        self.group_size = z;
        self
    }
    /// A fixed `R` (from a device profile).
    pub fn fixed_r(mut self, r: f64) -> Self {
        self.asymmetry = Asymmetry::Fixed(r);
        self
    }
    /// Online `R` over the last `m` observations of each kind, `initial` before that.
    pub fn online_r(mut self, m: usize, initial: f64) -> Self {
        self.asymmetry = Asymmetry::Online { m, initial };
        self
    }
    /// Write clustering mode.
    pub fn clustering(mut self, c: Clustering) -> Self {
        self.clustering = c;
        self
    }
    /// How a new victim cluster is chosen.
    pub fn cluster_victim(mut self, c: ClusterVictim) -> Self {
        self.cluster_victim = c;
        self
    }
    /// Inner policy of both pools.
    pub fn inner(mut self, k: OrderKind) -> Self {
        self.inner = k;
        self
    }
    /// Present conditions on or off.
    pub fn present_conditions(mut self, on: bool) -> Self {
        self.present_conditions = on;
        self
    }
    /// Per-window accuracy records on or off.
    pub fn track_accuracy(mut self, on: bool) -> Self {
        self.track_accuracy = on;
        self
    }
    /// Initial `M_c / M`.
    pub fn initial_clean_ratio(mut self, ratio: f64) -> Self {
        self.initial_clean_ratio = ratio;
        self
    }
    /// Read cost in µs used by cost-bound windows without I/O observations.
    pub fn read_cost_us(mut self, us: f64) -> Self {
        self.read_cost_us = us;
        self
    }
    /// A clock (ns) to time the advisor with.
    pub fn clock(mut self, clock: AdvisorClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Checks the options for `frames_count` frames.
    pub fn validate(&self, frames_count: usize) -> Result<(), PoolError> {
        let bad = |s: String| Err(PoolError::Config(format!("fd-buffer: {s}")));
        if frames_count == 0 {
            return bad("zero frames".into());
        }
        if self.group_size == 0 {
            return bad("group_size must be at least 1".into());
        }
        match self.window {
            Window::Refs(0) => return bad("window of 0 references".into()),
            Window::CostBound {
                q,
                min_refs,
                max_refs,
            } if q.is_nan() || q <= 0.0 || min_refs == 0 || max_refs < min_refs => {
                return bad(format!(
                    "bad overhead bound q={q}, refs {min_refs}..={max_refs}"
                ))
            }
            _ => {}
        }
        match self.asymmetry {
            Asymmetry::Fixed(r) if !(r.is_finite() && r >= 0.0) => return bad(format!("R = {r}")),
            Asymmetry::Online { m, initial }
                if m == 0 || !(initial.is_finite() && initial >= 0.0) =>
            {
                return bad(format!("online R with m = {m}, initial {initial}"))
            }
            _ => {}
        }
        if self.clustering.cluster_pages() == Some(0) {
            return bad("cluster of 0 pages".into());
        }
        if !(0.0..=1.0).contains(&self.initial_clean_ratio) {
            return bad(format!("initial_clean_ratio {}", self.initial_clean_ratio));
        }
        Ok(())
    }
}

/// One workload-estimation window's estimates and measurements (paper Table 5).
#[derive(Debug, Clone, PartialEq)]
pub struct WindowRecord {
    /// Window number (0-based).
    pub index: u64,
    /// References in the window.
    pub refs: u64,
    /// Writes in the window.
    pub writes: u64,
    /// `M_c` in force during the window.
    pub m_c: usize,
    /// `M_c` the advisor chose for the next window.
    pub next_m_c: usize,
    /// `R` used by the advisor.
    pub r: f64,
    /// Estimates at `m_c` with present conditions (or without, if they are off).
    pub estimated: MissRates,
    /// Estimates at `m_c` without present conditions (accuracy tracking only).
    pub estimated_without_pr: Option<MissRates>,
    /// Rates measured in the real pools during the window.
    pub measured: MissRates,
}

/// Relative errors `|v − v'| / v` of one estimate against a measurement; `None` where the
/// measured value is 0.
pub fn relative_errors(est: MissRates, measured: MissRates) -> [Option<f64>; 3] {
    let e = |v: f64, v2: f64| (v > 0.0).then(|| (v - v2).abs() / v);
    [
        e(measured.p_c, est.p_c),
        e(measured.p_d, est.p_d),
        e(measured.p_d_w, est.p_d_w),
    ]
}

/// Mean relative errors over windows, `[P_c, P_d, P_d^w]`, with present conditions and
/// (when tracked) without; windows where a measured rate is 0 are left out of that mean.
pub fn mean_errors(records: &[WindowRecord]) -> ([f64; 3], Option<[f64; 3]>) {
    let mean = |get: &dyn Fn(&WindowRecord) -> Option<MissRates>| {
        let mut sum = [0.0f64; 3];
        let mut n = [0u32; 3];
        let mut any = false;
        for r in records {
            if let Some(est) = get(r) {
                any = true;
                for (k, e) in relative_errors(est, r.measured).into_iter().enumerate() {
                    if let Some(e) = e {
                        sum[k] += e;
                        n[k] += 1;
                    }
                }
            }
        }
        any.then(|| {
            let mut out = [0.0; 3];
            for k in 0..3 {
                out[k] = if n[k] > 0 { sum[k] / n[k] as f64 } else { 0.0 };
            }
            out
        })
    };
    (
        mean(&|r| Some(r.estimated)).unwrap_or([0.0; 3]),
        mean(&|r| r.estimated_without_pr),
    )
}

const HINT_NONE: u8 = 0;
const HINT_READ: u8 = 1;
const HINT_WRITE: u8 = 2;

struct Shared {
    hint: AtomicU8,
    /// `f64` bits of an `R` set by the driver (NaN bits = none).
    r_override: AtomicU64,
    records: Mutex<Vec<WindowRecord>>,
}

/// A handle shared between an [`FdBuffer`] and its driver, usable after the policy was
/// boxed into a pool: announce the next access (Algorithm 2 needs it), override `R`
/// (asymmetry models RM1/RM2 with a fixed `R`), and collect [`WindowRecord`]s.
#[derive(Clone)]
pub struct FdBufferHandle(Arc<Shared>);

impl std::fmt::Debug for FdBufferHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FdBufferHandle").finish_non_exhaustive()
    }
}

impl FdBufferHandle {
    fn new() -> Self {
        Self(Arc::new(Shared {
            hint: AtomicU8::new(HINT_NONE),
            r_override: AtomicU64::new(f64::NAN.to_bits()),
            records: Mutex::new(Vec::new()),
        }))
    }

    /// Announces that the next fix is `access` (call before `pool.read`/`pool.write`).
    #[inline]
    pub fn set_next_access(&self, access: Access) {
        let h = if access.is_write() {
            HINT_WRITE
        } else {
            HINT_READ
        };
        self.0.hint.store(h, Relaxed);
    }

    #[inline]
    fn take_hint(&self) -> u8 {
        self.0.hint.load(Relaxed)
    }

    #[inline]
    fn clear_hint(&self) {
        self.0.hint.store(HINT_NONE, Relaxed);
    }

    /// Overrides `R` from now on (`None` returns to the configured source).
    pub fn set_r(&self, r: Option<f64>) {
        self.0
            .r_override
            .store(r.unwrap_or(f64::NAN).to_bits(), Relaxed);
    }

    fn r_override(&self) -> Option<f64> {
        let r = f64::from_bits(self.0.r_override.load(Relaxed));
        (!r.is_nan()).then_some(r)
    }

    /// The window records so far (kept only with `track_accuracy`).
    pub fn window_records(&self) -> Vec<WindowRecord> {
        self.0.records.lock().clone()
    }

    /// Takes the window records collected so far.
    pub fn take_window_records(&self) -> Vec<WindowRecord> {
        std::mem::take(&mut *self.0.records.lock())
    }
}

/// Pool tag of a frame.
const FREE: u8 = 0;
const CLEAN: u8 = 1;
const DIRTY: u8 = 2;

#[derive(Debug, Clone, Copy, Default)]
struct WindowStats {
    refs: u64,
    writes: u64,
    c_hits: u64,
    d_hits: u64,
    d_write_hits: u64,
    reads_io: u64,
    writes_io: u64,
    observed_us: f64,
}

/// Counters of the advisor and the estimator.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AdvisorStats {
    /// Windows closed (advisor runs).
    pub windows: u64,
    /// Advisor work units: counter entries summed plus `M_c` candidates evaluated.
    pub advisor_work: u64,
    /// Advisor CPU time measured with the injected clock (0 without one).
    pub advisor_ns: u64,
    /// Estimator work units: stack group-boundary updates (per-access cost).
    pub stack_work: u64,
    /// Clusters examined when choosing victim clusters.
    pub cluster_scans: u64,
    /// Misses without an announced access (taken as reads).
    pub unhinted_misses: u64,
}

/// FD-Buffer (§4) as a [`Policy`]: a clean pool run by `C` and a dirty pool run by `D`
/// (both [`LruOrder`] by default), sized by the policy advisor.
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::fd_buffer::{FdBuffer, FdBufferOptions};
/// use flashbuf_pool::policy::{Access, Policy, Victim};
///
/// let mut p = FdBuffer::new(4, FdBufferOptions::default().fixed_r(100.0).window_refs(8)).unwrap();
/// let hint = p.handle();
/// p.on_insert(FrameId(0), PageId(1), Access::Write); // dirty pool
/// for f in 1..4 {
///     p.on_insert(FrameId(f), PageId(10 + f as u64), Access::Read); // clean pool
/// }
/// // |C| = 3 > M_c = 2: a read miss still takes the clean pool's LRU page.
/// hint.set_next_access(Access::Read);
/// assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
/// assert_eq!(p.m_c(), 2);
/// p.check_invariants().unwrap();
/// ```
pub struct FdBuffer<C: PoolOrder = LruOrder, D: PoolOrder = LruOrder> {
    m: usize,
    opts: FdBufferOptions,
    clean: C,
    dirty: D,
    tag: Vec<u8>,
    page: Vec<u64>,
    dirty_bit: Vec<bool>,
    m_c: usize,
    est: TwoStack,
    shadow: Option<TwoStack>,
    win: WindowStats,
    rate: Option<RateEstimator>,
    last_comp_ns: f64,
    last_est: MissRates,
    curves: Curves,
    clusters: Option<Clusters>,
    batch: Vec<FrameId>,
    shared: FdBufferHandle,
    stats: AdvisorStats,
}

impl FdBuffer<LruOrder, LruOrder> {
    /// FD-Buffer with LRU in both pools (the paper's setting).
    pub fn new(frames_count: usize, opts: FdBufferOptions) -> Result<Self, PoolError> {
        Self::with_orders(
            frames_count,
            opts,
            LruOrder::new(frames_count),
            LruOrder::new(frames_count),
        )
    }
}

impl FdBuffer<Box<dyn PoolOrder>, Box<dyn PoolOrder>> {
    /// FD-Buffer with the inner policy named in `opts.inner` for both pools.
    pub fn from_options(frames_count: usize, opts: FdBufferOptions) -> Result<Self, PoolError> {
        let k = opts.inner;
        Self::with_orders(
            frames_count,
            opts,
            k.build(frames_count),
            k.build(frames_count),
        )
    }
}

impl<C: PoolOrder, D: PoolOrder> FdBuffer<C, D> {
    /// FD-Buffer with the given (empty) orderings for the clean and the dirty pool.
    pub fn with_orders(
        frames_count: usize,
        opts: FdBufferOptions,
        clean: C,
        dirty: D,
    ) -> Result<Self, PoolError> {
        opts.validate(frames_count)?;
        if !clean.is_empty() || !dirty.is_empty() {
            return Err(PoolError::Config(
                "fd-buffer: pool orderings must start empty".into(),
            ));
        }
        let m = frames_count;
        let m_c = initial_m_c(m, opts.initial_clean_ratio);
        let rate = match opts.asymmetry {
            Asymmetry::Online { m, initial } => Some(RateEstimator::new(m, initial)),
            Asymmetry::Fixed(_) => None,
        };
        let clusters = opts
            .clustering
            .cluster_pages()
            .map(|n| Clusters::new(frames_count, n));
        Ok(Self {
            m,
            est: TwoStack::new(m, opts.group_size, opts.present_conditions),
            shadow: opts
                .track_accuracy
                .then(|| TwoStack::new(m, opts.group_size, false)),
            opts,
            clean,
            dirty,
            tag: vec![FREE; m],
            page: vec![0; m],
            dirty_bit: vec![false; m],
            m_c,
            win: WindowStats::default(),
            rate,
            last_comp_ns: 0.0,
            last_est: MissRates::default(),
            curves: Curves::default(),
            clusters,
            batch: Vec::new(),
            shared: FdBufferHandle::new(),
            stats: AdvisorStats::default(),
        })
    }

    /// The shared handle (announce accesses, override `R`, read window records).
    pub fn handle(&self) -> FdBufferHandle {
        self.shared.clone()
    }

    /// Current target size of the clean pool, `M_c`.
    pub fn m_c(&self) -> usize {
        self.m_c
    }

    /// Pages in the clean and the dirty pool.
    pub fn pool_sizes(&self) -> (usize, usize) {
        (self.clean.len(), self.dirty.len())
    }

    /// The `R` in force.
    pub fn r(&self) -> f64 {
        if let Some(r) = self.shared.r_override() {
            return r;
        }
        match (&self.rate, self.opts.asymmetry) {
            (Some(e), _) => e.r(),
            (None, Asymmetry::Fixed(r)) => r,
            (None, Asymmetry::Online { initial, .. }) => initial,
        }
    }

    /// Advisor and estimator counters.
    pub fn advisor_stats(&self) -> AdvisorStats {
        AdvisorStats {
            stack_work: self.est.work() + self.shadow.as_ref().map_or(0, |s| s.work()),
            cluster_scans: self.clusters.as_ref().map_or(0, |c| c.scanned()),
            ..self.stats
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
        self.tag[f.index()] = DIRTY;
        self.dirty_bit[f.index()] = true;
        self.dirty.add(f);
        if let Some(c) = self.clusters.as_mut() {
            c.enter(f, self.page[f.index()]);
        }
    }

    #[inline]
    fn reference(&mut self, pid: u64, write: bool) {
        self.est.access(pid, write);
        if let Some(s) = self.shadow.as_mut() {
            s.access(pid, write);
        }
        self.win.refs += 1;
        self.win.writes += u64::from(write);
        let close = match self.opts.window {
            Window::Refs(n) => self.win.refs >= n,
            Window::CostBound {
                q,
                min_refs,
                max_refs,
            } => {
                self.win.refs >= max_refs
                    || (self.win.refs >= min_refs
                        && self.window_io_cost_us() * 1000.0 >= self.last_comp_ns / q)
            }
        };
        if close {
            self.close_window();
        }
    }

    fn window_io_cost_us(&self) -> f64 {
        if self.opts_observes_io() {
            self.win.observed_us
        } else {
            let c = self.opts.read_cost_us;
            self.win.reads_io as f64 * c + self.win.writes_io as f64 * c * self.r()
        }
    }

    fn opts_observes_io(&self) -> bool {
        self.rate.is_some()
    }

    /// The policy advisor (§4.4): runs at the end of each window.
    fn close_window(&mut self) {
        let t0 = self.opts.clock.as_ref().map(|c| c());
        let r = self.r();
        self.curves.fill(self.est.counters());
        let (next, _cost) = self.curves.best_m_c(r);
        let estimated = self.curves.rates(self.m_c);
        let mut work = 5 * self.m as u64;
        let estimated_without_pr = self.shadow.as_ref().map(|s| {
            work += 4 * self.m as u64;
            Curves::new(s.counters()).rates(self.m_c)
        });
        if self.opts.track_accuracy {
            let w = self.win;
            let frac = |miss: u64, total: u64| {
                if total == 0 {
                    0.0
                } else {
                    miss as f64 / total as f64
                }
            };
            let measured = MissRates {
                p_c: frac(w.refs - w.c_hits, w.refs),
                p_d: frac(w.refs - w.d_hits, w.refs),
                p_d_w: frac(w.writes - w.d_write_hits, w.writes),
            };
            self.shared.0.records.lock().push(WindowRecord {
                index: self.stats.windows,
                refs: w.refs,
                writes: w.writes,
                m_c: self.m_c,
                next_m_c: next,
                r,
                estimated,
                estimated_without_pr,
                measured,
            });
        }
        self.last_est = estimated;
        self.m_c = next;
        self.est.clear_counters();
        if let Some(s) = self.shadow.as_mut() {
            s.clear_counters();
        }
        self.win = WindowStats::default();
        self.stats.windows += 1;
        self.stats.advisor_work += work;
        self.last_comp_ns = match (t0, self.opts.clock.as_ref()) {
            (Some(t0), Some(c)) => {
                let dt = c().saturating_sub(t0);
                self.stats.advisor_ns += dt;
                dt as f64
            }
            _ => work as f64,
        };
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
        let dirty_bit = &self.dirty_bit;
        cl.cluster_members_sorted(
            v,
            &|f| dirty_bit[f.index()] && (f == v || evictable(f)),
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

fn initial_m_c(m: usize, ratio: f64) -> usize {
    if m < 2 {
        return m;
    }
    ((m as f64 * ratio).round() as usize).clamp(1, m - 1)
}

impl<C: PoolOrder, D: PoolOrder> Policy for FdBuffer<C, D> {
    fn name(&self) -> &'static str {
        "fd-buffer"
    }

    fn frames_count(&self) -> usize {
        self.m
    }

    fn on_insert(&mut self, frame: FrameId, pid: PageId, access: Access) {
        self.shared.clear_hint();
        let i = frame.index();
        debug_assert_eq!(self.tag[i], FREE, "{frame} inserted twice");
        self.page[i] = pid.0;
        self.win.reads_io += 1;
        if access.is_write() {
            self.join_dirty(frame);
        } else {
            self.tag[i] = CLEAN;
            self.dirty_bit[i] = false;
            self.clean.add(frame);
        }
        self.reference(pid.0, access.is_write());
    }

    fn on_hit(&mut self, frame: FrameId, access: Access) {
        self.shared.clear_hint();
        let i = frame.index();
        let write = access.is_write();
        match self.tag[i] {
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
                    self.dirty_bit[i] = true;
                }
                self.dirty.update(frame);
            }
            _ => debug_assert!(false, "hit on free {frame}"),
        }
        self.reference(self.page[i], write);
    }

    fn on_clean(&mut self, frame: FrameId) {
        self.dirty_bit[frame.index()] = false;
    }

    fn on_remove(&mut self, frame: FrameId) {
        let i = frame.index();
        match self.tag[i] {
            CLEAN => self.clean.remove(frame),
            DIRTY => {
                self.dirty.remove(frame);
                if let Some(c) = self.clusters.as_mut() {
                    c.leave(frame);
                }
            }
            _ => debug_assert!(false, "removing free {frame}"),
        }
        self.tag[i] = FREE;
        self.dirty_bit[i] = false;
    }

    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let hint = self.shared.take_hint();
        if hint == HINT_NONE {
            self.stats.unhinted_misses += 1;
        }
        let (c_len, d_len) = (self.clean.len(), self.dirty.len());
        let from_dirty = if hint == HINT_WRITE {
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
                self.win.writes_io += u64::from(self.dirty_bit[f.index()]);
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
        // Orders, tag, page, dirty bit; two stacks (5 words + map entry per slot) and
        // four counter arrays; clusters if on.
        self.clean.bytes_per_frame()
            + self.dirty.bytes_per_frame()
            + 1
            + 8
            + 1
            + 2 * (8 + 4 * 4 + 16) * if self.shadow.is_some() { 2 } else { 1 }
            + 4 * 8
            + if self.clusters.is_some() { 24 } else { 0 }
    }

    fn prepare_miss(&mut self, access: Access) {
        self.shared.set_next_access(access);
    }

    fn wants_io_observations(&self) -> bool {
        self.rate.is_some()
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
        self.clean.check()?;
        self.dirty.check()?;
        let mut n = [0usize; 3];
        for (i, &t) in self.tag.iter().enumerate() {
            if t > DIRTY {
                return Err(format!("frame {i}: bad tag {t}"));
            }
            n[t as usize] += 1;
            if t == CLEAN && self.dirty_bit[i] {
                return Err(format!("frame {i}: dirty page in the clean pool"));
            }
            if t == FREE && self.dirty_bit[i] {
                return Err(format!("frame {i}: free but dirty"));
            }
            let clustered = self
                .clusters
                .as_ref()
                .map(|c| c.contains(FrameId(i as u32)));
            if clustered.is_some_and(|c| c != (t == DIRTY)) {
                return Err(format!("frame {i}: cluster membership disagrees with pool"));
            }
        }
        if n[CLEAN as usize] != self.clean.len() || n[DIRTY as usize] != self.dirty.len() {
            return Err(format!(
                "tags say {} clean / {} dirty, pools hold {} / {}",
                n[1],
                n[2],
                self.clean.len(),
                self.dirty.len()
            ));
        }
        for f in self.clean.members_victim_first() {
            if self.tag[f.index()] != CLEAN {
                return Err(format!(
                    "{f} in the clean ordering but tagged {}",
                    self.tag[f.index()]
                ));
            }
        }
        for f in self.dirty.members_victim_first() {
            if self.tag[f.index()] != DIRTY {
                return Err(format!(
                    "{f} in the dirty ordering but tagged {}",
                    self.tag[f.index()]
                ));
            }
        }
        if self.m >= 2 && !(1..self.m).contains(&self.m_c) {
            return Err(format!("M_c = {} outside 1..{}", self.m_c, self.m));
        }
        self.est.check()?;
        if let Some(s) = &self.shadow {
            s.check()?;
        }
        if let Some(c) = &self.clusters {
            c.check(&|f| self.tag[f.index()] == DIRTY)?;
        }
        Ok(())
    }

    fn report(&self) -> Vec<(&'static str, f64)> {
        let s = self.advisor_stats();
        let mut v = vec![
            ("m_c", self.m_c as f64),
            ("m_d", (self.m - self.m_c) as f64),
            ("clean_pages", self.clean.len() as f64),
            ("dirty_pages", self.dirty.len() as f64),
            ("est_p_c", self.last_est.p_c),
            ("est_p_d", self.last_est.p_d),
            ("est_p_d_w", self.last_est.p_d_w),
            ("r", self.r()),
            ("windows", s.windows as f64),
            ("advisor_work", s.advisor_work as f64),
            ("advisor_ns", s.advisor_ns as f64),
            ("stack_work", s.stack_work as f64),
            ("cluster_scans", s.cluster_scans as f64),
            ("unhinted_misses", s.unhinted_misses as f64),
        ];
        if self.opts.track_accuracy {
            let recs = self.shared.0.records.lock();
            let (with, without) = mean_errors(&recs);
            v.push(("err_p_c", with[0]));
            v.push(("err_p_d", with[1]));
            v.push(("err_p_d_w", with[2]));
            if let Some(w) = without {
                v.push(("err_p_c_without_pr", w[0]));
                v.push(("err_p_d_without_pr", w[1]));
                v.push(("err_p_d_w_without_pr", w[2]));
            }
        }
        v
    }
}
