//! One replay run: a trace through policy × store × device, with the integrity oracle.

use crate::bounds::{self, BoundsCost};
use crate::feed::{Feed, FeedOptions, FeedSummary};
use crate::oracle::Oracle;
use crate::registry::{
    build_device, build_offline_policy, build_policy_hooked, build_store, device_facts, is_offline,
    BuildContext, BuiltPolicy, DeviceFacts,
};
use crate::result::RunResult;
use crate::scan::{scan_trace, TraceScan};
use crate::spec::Spec;
use crate::LabError;
use flashbuf_core::page::{self, HEADER_BYTES};
use flashbuf_core::{AlignedBuf, DirtyRanges, PageId};
use flashbuf_device::{CountingDevice, Device, MemDevice};
use flashbuf_pool::policy::{Access, FdBufferHandle};
use flashbuf_pool::{BufferPool, PageAccess};
use flashbuf_store::{PageStore, ReadOutcome, StoreError};
use flashbuf_trace::{Format, Op, PageRef};
use flashbuf_workload::dynamics::AsymmetryModel;
use flashbuf_workload::dynamics::{asymmetry_name, AsymmetryDevice, Dynamics, EpochClock};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// How big the buffer is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BufferSize {
    /// A number of frames.
    Pages(usize),
    /// A fraction of the trace's distinct pages (rounded down, at least one frame).
    Ratio(f64),
}

impl std::fmt::Display for BufferSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BufferSize::Pages(n) => write!(f, "{n}"),
            BufferSize::Ratio(r) => write!(f, "{}%", r * 100.0),
        }
    }
}

/// Everything that defines one run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Trace file.
    pub trace: PathBuf,
    /// Trace format (`None` = detect).
    pub format: Option<Format>,
    /// Replacement policy (`none` = pass-through).
    pub policy: Spec,
    /// Page store.
    pub store: Spec,
    /// Device.
    pub device: Spec,
    /// Buffer size.
    pub buffer: BufferSize,
    /// Page size in bytes.
    pub page_size: usize,
    /// Seed for everything random in the run.
    pub seed: u64,
    /// Check invariants periodically and verify every page at the end.
    pub paranoid: bool,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Replay at most this many references.
    pub limit_refs: Option<u64>,
    /// The device's facts, if already known (`compare` computes them once per device);
    /// otherwise the run computes them.
    pub facts: Option<DeviceFacts>,
}

/// Options of a run beyond [`RunConfig`] (kept apart so that `RunConfig` literals stay
/// valid): dynamics and offline bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RunOptions {
    /// Workload transform, asymmetry model, epoch length ([`crate::dynamics`]).
    pub dynamics: Dynamics,
    /// Compute the offline cost bounds and the run's ratios to them ([`crate::bounds`]).
    pub bounds: Option<BoundsCost>,
    /// The data set exists on the device before the run: right after the store is
    /// formatted, the device is extended to hold every page the trace touches, so every
    /// miss reads the device (as in the papers, whose databases were on the flash device).
    /// Without it, the direct store answers reads beyond the device's current length
    /// without device I/O (pages never written). Meant for the direct store.
    pub presize: bool,
}

/// Replays one configuration. `scan` may carry a pre-computed scan of the trace (it is
/// computed here when the run needs one and none is given).
pub fn run(cfg: &RunConfig, scan: Option<&TraceScan>) -> Result<RunResult, LabError> {
    run_with(cfg, scan, &RunOptions::default())
}

/// [`run`] with dynamics and bounds.
///
/// Offline policies (`belady`, `offline:...`) load the whole mapped and transformed trace
/// into memory first (through the same feed, so they see exactly the references the pool
/// will see), build the policy from it, and replay it from memory; their `refs_per_s`
/// includes that loading. With `opts.bounds`, the trace is read once more after the
/// replay (or reused, for offline policies) to compute the bounds; that time is not in
/// `refs_per_s`.
pub fn run_with(
    cfg: &RunConfig,
    scan: Option<&TraceScan>,
    opts: &RunOptions,
) -> Result<RunResult, LabError> {
    let needs_scan = matches!(cfg.buffer, BufferSize::Ratio(_))
        || device_needs_capacity(&cfg.device)
        || store_needs_capacity(&cfg.store)
        || opts.presize
        || opts
            .dynamics
            .workload
            .is_some_and(|w| w.needs_trace_ratio());
    let owned_scan;
    let scan = match scan {
        Some(s) => Some(s),
        None if needs_scan => {
            owned_scan = scan_trace(&cfg.trace, cfg.format, cfg.page_size as u32, cfg.limit_refs)?;
            Some(&owned_scan)
        }
        None => None,
    };
    let frames = match cfg.buffer {
        BufferSize::Pages(n) => n,
        BufferSize::Ratio(r) => {
            let distinct = scan.map_or(0, |s| s.distinct_pages);
            ((distinct as f64 * r).floor() as usize).max(1)
        }
    };
    let mut ctx = BuildContext {
        page_size: cfg.page_size,
        data_pages: scan.map_or(0, |s| s.dense_pages),
        seed: cfg.seed,
        facts: Default::default(),
    };
    let mut dynamics = opts.dynamics;
    if let (Some(w), Some(s)) = (dynamics.workload, scan) {
        dynamics.workload = Some(w.resolve(s.writes as f64 / s.references.max(1) as f64));
    }
    let epoch_refs = dynamics.epoch_refs.max(1);
    let feed_opts = FeedOptions {
        limit: cfg.limit_refs,
        transform: dynamics.workload.map(|w| (w, epoch_refs, cfg.seed)),
    };

    let start = Instant::now();
    let cpu_start = process_cpu_s();
    ctx.facts = match cfg.facts {
        Some(f) => f,
        None => device_facts(&cfg.device, &ctx)?,
    };
    let built = build_device(&cfg.device, &ctx)?;
    let cleanup = built.cleanup.clone();
    let mut device = built.device;
    // Asymmetry dynamics: latency added on the device's clock per epoch.
    let asym = dynamics.asymmetry.map(|m| {
        let a = Arc::new(AsymmetryDevice::new(device_placeholder(&mut device), m));
        device = Box::new(a.clone());
        a
    });
    // Split device time into reads and writes (not on the memory device, which has no
    // clock; its replays are the speed benchmark).
    let (device, counting): (Box<dyn Device>, _) = if cfg.device.name == "memory" {
        (device, None)
    } else {
        let c = Arc::new(CountingDevice::new(device));
        (Box::new(c.clone()), Some(c))
    };
    // Keep a handle on the device to extend it after formatting (`presize`).
    let (device, handle): (Box<dyn Device>, Option<SharedDevice>) = if opts.presize {
        let a = Arc::new(device);
        (Box::new(a.clone()), Some(a))
    } else {
        (device, None)
    };
    let result = (|| {
        let store = build_store(&cfg.store, device, &ctx)?;
        if let Some(d) = &handle {
            let want = d.len() + ctx.data_bytes();
            let want = d.max_len().map_or(want, |m| want.min(m));
            if want > d.len() {
                d.set_len(want)?;
            }
        }
        let mut kept_trace: Option<Vec<(bool, u64)>> = None;
        let (policy, feed) = if is_offline(&cfg.policy) {
            let (refs, summary) =
                Feed::start_with(&cfg.trace, cfg.format, cfg.page_size as u32, &feed_opts)?
                    .collect_all()?;
            let pairs: Vec<(bool, u64)> =
                refs.iter().map(|r| (r.op.is_write(), r.page.0)).collect();
            let p = build_offline_policy(&cfg.policy, frames, &pairs, &ctx)?;
            kept_trace = Some(pairs);
            let built = BuiltPolicy {
                policy: p,
                fd_handle: None,
                fixed_r: None,
            };
            (Some(built), Feed::from_memory(refs, summary))
        } else {
            let p = build_policy_hooked(&cfg.policy, frames, &ctx)?;
            let feed = Feed::start_with(&cfg.trace, cfg.format, cfg.page_size as u32, &feed_opts)?;
            (p, feed)
        };
        let mut oracle = Oracle::with_capacity(ctx.data_pages as usize);
        let progress = progress_bar(cfg, scan);
        let dev0 = store.device_stats();
        let fd_r = match (&policy, dynamics.asymmetry) {
            (
                Some(BuiltPolicy {
                    fd_handle: Some(h),
                    fixed_r: Some(r0),
                    ..
                }),
                Some(m),
            ) => Some((h.clone(), *r0, m)),
            _ => None,
        };
        let mut hooks = EpochHooks {
            epoch_refs,
            clock: asym.as_ref().map(|a| a.clock()),
            fd_r,
            writes: 0,
        };
        let mut r = match policy {
            Some(built) => {
                let pool = BufferPool::new(store, frames, built.policy)?;
                let summary = replay_pool(
                    &pool,
                    feed,
                    &mut oracle,
                    &progress,
                    cfg.paranoid,
                    &mut hooks,
                )?;
                let elapsed = start.elapsed().as_secs_f64();
                let cpu = process_cpu_s() - cpu_start;
                let ps = pool.stats();
                let dev = pool.store().device_stats() - dev0;
                let mut r = RunResult::new(cfg, frames, summary.references, elapsed, cpu, dev);
                r.hits = ps.hits;
                r.misses = ps.misses;
                r.page_reads = ps.page_reads;
                r.page_writes = ps.page_writes;
                r.distinct_pages = summary.distinct_pages;
                r.dirty_evictions = ps.dirty_evictions;
                r.write_batches = ps.write_batches;
                r.metadata_bytes_per_frame = pool.metadata_bytes_per_frame();
                r.policy_report = pool
                    .policy_report()
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect();
                // The advisor's share of the replay's wall time (FD-Buffer, timed).
                if let Some(&ns) = r.policy_report.get("advisor_ns") {
                    if ns > 0.0 && elapsed > 0.0 {
                        r.policy_report
                            .insert("advisor_share_of_wall".into(), ns * 1e-9 / elapsed);
                    }
                }
                r.format = summary.format.to_string();
                r.flush_writes = pool.flush_all()? as u64;
                pool.store().sync()?;
                r.store_report = pool.store().report().into_iter().collect();
                if cfg.paranoid {
                    pool.check_invariants().map_err(LabError::Invariant)?;
                    verify_all(pool.store(), &mut oracle, cfg.page_size)?;
                }
                r
            }
            None => {
                let (summary, reads, writes) = replay_passthrough(
                    &store,
                    feed,
                    &mut oracle,
                    &progress,
                    cfg.page_size,
                    &mut hooks,
                )?;
                let elapsed = start.elapsed().as_secs_f64();
                let cpu = process_cpu_s() - cpu_start;
                let dev = store.device_stats() - dev0;
                let mut r = RunResult::new(cfg, 0, summary.references, elapsed, cpu, dev);
                r.misses = summary.references;
                r.page_reads = reads;
                r.page_writes = writes;
                r.distinct_pages = summary.distinct_pages;
                r.format = summary.format.to_string();
                store.sync()?;
                r.store_report = store.report().into_iter().collect();
                if cfg.paranoid {
                    store.check_invariants().map_err(LabError::Invariant)?;
                    verify_all(&store, &mut oracle, cfg.page_size)?;
                }
                r
            }
        };
        progress.finish_and_clear();
        if let Some(c) = &counting {
            let io = c.counts();
            r.device_read_time_us = io.read_time_us;
            r.device_write_time_us = io.write_time_us;
            if r.page_writes > 0 {
                r.write_time_per_page_us = io.write_time_us / r.page_writes as f64;
            }
        }
        if dynamics.is_active() {
            r.workload = dynamics.workload.map(|w| w.to_string());
            r.asymmetry = dynamics.asymmetry.map(|m| asymmetry_name(m).to_string());
            r.epoch_refs = Some(epoch_refs);
            r.trace_writes = Some(hooks.writes);
            r.asymmetry_added_us = asym.as_ref().map(|a| a.extra_us());
        }
        r.verify_errors = oracle.errors();
        r.first_verify_error = oracle.first_error().map(str::to_string);
        r.scan_time_s = scan.map_or(0.0, |s| s.scan_time_s);
        if let Some(cost) = opts.bounds {
            let trace = match kept_trace.take() {
                Some(t) => t,
                None => {
                    let (refs, _) =
                        Feed::start_with(&cfg.trace, cfg.format, cfg.page_size as u32, &feed_opts)?
                            .collect_all()?;
                    refs.iter().map(|r| (r.op.is_write(), r.page.0)).collect()
                }
            };
            let b = bounds::compute(&trace, frames, cost.model(&ctx.facts));
            bounds::annotate(&mut r, &b);
        }
        Ok(r)
    })();
    if let Some(p) = cleanup {
        let _ = std::fs::remove_file(p);
    }
    result
}

/// A device shared between the store and the lab.
type SharedDevice = Arc<Box<dyn Device>>;

/// Takes the device out of `slot`, leaving an empty memory device (the slot is refilled
/// right after).
fn device_placeholder(slot: &mut Box<dyn Device>) -> Box<dyn Device> {
    std::mem::replace(slot, Box::new(MemDevice::new(0)))
}

/// What the replay does at epoch boundaries (dynamics), and the writes it counts.
struct EpochHooks {
    epoch_refs: u64,
    /// Tells the asymmetry device the epoch.
    clock: Option<EpochClock>,
    /// FD-Buffer with a fixed `R_0`: gets `R_i` per epoch.
    fd_r: Option<(FdBufferHandle, f64, AsymmetryModel)>,
    writes: u64,
}

impl EpochHooks {
    fn active(&self) -> bool {
        self.clock.is_some() || self.fd_r.is_some()
    }

    fn enter(&self, epoch: u64) {
        if let Some(c) = &self.clock {
            c.set(epoch);
        }
        if let Some((h, r0, m)) = &self.fd_r {
            h.set_r(Some(m.r(*r0, epoch)));
        }
    }
}

fn device_needs_capacity(device: &Spec) -> bool {
    device.name == "sim"
}

/// The log-structured store sizes its page ids (and, on growable devices, its space) by
/// the trace's data.
fn store_needs_capacity(store: &Spec) -> bool {
    store.name == "log-structured"
}

fn progress_bar(cfg: &RunConfig, scan: Option<&TraceScan>) -> ProgressBar {
    if !cfg.progress {
        return ProgressBar::hidden();
    }
    let total = scan.map(|s| s.references);
    let pb = match total {
        Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
    };
    let style = if total.is_some() {
        ProgressStyle::with_template(
            "{prefix} [{bar:30}] {human_pos}/{human_len} refs ({per_sec}, {eta})",
        )
    } else {
        ProgressStyle::with_template("{prefix} {spinner} {human_pos} refs ({per_sec})")
    };
    if let Ok(s) = style {
        pb.set_style(s.progress_chars("=> "));
    }
    pb.set_prefix(format!("{} {} {}", cfg.policy, cfg.store, cfg.device));
    pb
}

/// Replays through the pool. Every reference checks the page's stamp; writes stamp it anew.
fn replay_pool<S: PageStore>(
    pool: &BufferPool<S>,
    mut feed: Feed,
    oracle: &mut Oracle,
    progress: &ProgressBar,
    paranoid: bool,
    hooks: &mut EpochHooks,
) -> Result<FeedSummary, LabError> {
    let mut batches = 0u64;
    let mut pos = 0u64;
    let e = hooks.epoch_refs;
    while let Some(batch) = feed.next_batch()? {
        hooks.writes += batch.iter().filter(|r| r.op.is_write()).count() as u64;
        if hooks.active() {
            // Split at epoch boundaries so each epoch runs under its own settings.
            let mut i = 0;
            while i < batch.len() {
                let left = (e - pos % e) as usize;
                let end = batch.len().min(i + left);
                hooks.enter(pos / e);
                access_all(pool, &batch[i..end], oracle)?;
                pos += (end - i) as u64;
                i = end;
            }
        } else {
            access_all(pool, &batch, oracle)?;
            pos += batch.len() as u64;
        }
        progress.inc(batch.len() as u64);
        feed.recycle(batch);
        batches += 1;
        if paranoid && batches.is_multiple_of(16) {
            pool.check_invariants().map_err(LabError::Invariant)?;
        }
    }
    feed.finish()
}

/// Fixes every reference of `refs` in order through the pool, with the oracle.
fn access_all<S: PageStore>(
    pool: &BufferPool<S>,
    refs: &[PageRef],
    oracle: &mut Oracle,
) -> Result<(), LabError> {
    let key = |i: usize| {
        let r = refs[i];
        let access = if r.op.is_write() {
            Access::Write
        } else {
            Access::Read
        };
        (r.page, access)
    };
    let result = pool.access_many(refs.len(), key, |i, page| {
        let pid = refs[i].page;
        match page {
            PageAccess::Read(data) => oracle.check(pid, data),
            PageAccess::Write(mut w) => {
                oracle.check(pid, w.data());
                let s = oracle.bump(pid);
                w.write(0, &s);
            }
        }
    });
    match result {
        Ok(()) => Ok(()),
        Err((_, e)) => Err(corrupt_or(e, oracle)),
    }
}

fn corrupt_or(e: flashbuf_pool::PoolError, oracle: &mut Oracle) -> LabError {
    if let flashbuf_pool::PoolError::Store(StoreError::Corrupt { pid, reason }) = &e {
        oracle.record_error(format!("{pid} corrupt: {reason}"));
    }
    e.into()
}

/// Pass-through: every reference goes straight to the store (I/O traces captured below a
/// buffer). Returns the summary and the page reads and writes issued.
fn replay_passthrough(
    store: &dyn PageStore,
    mut feed: Feed,
    oracle: &mut Oracle,
    progress: &ProgressBar,
    page_size: usize,
    hooks: &mut EpochHooks,
) -> Result<(FeedSummary, u64, u64), LabError> {
    let mut rbuf = AlignedBuf::zeroed(page_size, 4096);
    // The write buffer stays zero apart from header and stamp, so nothing else leaks in.
    let mut wbuf = AlignedBuf::zeroed(page_size, 4096);
    let full = DirtyRanges::full(page_size);
    let (mut reads, mut writes) = (0u64, 0u64);
    let mut pos = 0u64;
    let active = hooks.active();
    while let Some(batch) = feed.next_batch()? {
        for r in &batch {
            if active && pos.is_multiple_of(hooks.epoch_refs) {
                hooks.enter(pos / hooks.epoch_refs);
            }
            pos += 1;
            let pid = r.page;
            match r.op {
                Op::Read => {
                    match store.read_page(pid, &mut rbuf) {
                        Ok(_) => oracle.check(pid, &rbuf[HEADER_BYTES..]),
                        Err(StoreError::Corrupt { pid, reason }) => {
                            oracle.record_error(format!("{pid} corrupt: {reason}"));
                            return Err(StoreError::Corrupt { pid, reason }.into());
                        }
                        Err(e) => return Err(e.into()),
                    }
                    reads += 1;
                }
                Op::Write => {
                    let s = oracle.bump(pid);
                    wbuf[HEADER_BYTES..HEADER_BYTES + s.len()].copy_from_slice(&s);
                    page::seal(&mut wbuf, pid, u64::from(oracle.expected(pid)));
                    store.write_page(pid, &wbuf, &full)?;
                    writes += 1;
                }
            }
        }
        progress.inc(batch.len() as u64);
        feed.recycle(batch);
    }
    hooks.writes = writes;
    Ok((feed.finish()?, reads, writes))
}

/// Reads every page the oracle saw written straight from the store and checks its stamp.
fn verify_all(
    store: &dyn PageStore,
    oracle: &mut Oracle,
    page_size: usize,
) -> Result<(), LabError> {
    let mut buf = AlignedBuf::zeroed(page_size, 4096);
    let written: Vec<(PageId, u32)> = oracle.written().collect();
    for (pid, _) in written {
        match store.read_page(pid, &mut buf) {
            Ok(ReadOutcome::Found) => oracle.check(pid, &buf[HEADER_BYTES..]),
            Ok(ReadOutcome::Unwritten) => {
                oracle.record_error(format!("{pid} lost: store has never seen it"))
            }
            Err(StoreError::Corrupt { pid, reason }) => {
                oracle.record_error(format!("{pid} corrupt: {reason}"))
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// CPU seconds used by the process so far (all threads).
pub fn process_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
