//! One replay run: a trace through policy × store × device, with the integrity oracle.

use crate::feed::{Feed, FeedSummary};
use crate::oracle::Oracle;
use crate::registry::{
    build_device, build_policy, build_store, device_facts, BuildContext, DeviceFacts,
};
use crate::result::RunResult;
use crate::scan::{scan_trace, TraceScan};
use crate::spec::Spec;
use crate::LabError;
use flashbuf_core::page::{self, HEADER_BYTES};
use flashbuf_core::{AlignedBuf, DirtyRanges, PageId};
use flashbuf_device::{CountingDevice, Device};
use flashbuf_pool::policy::Access;
use flashbuf_pool::{BufferPool, PageAccess};
use flashbuf_store::{PageStore, ReadOutcome, StoreError};
use flashbuf_trace::{Format, Op};
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

/// Replays one configuration. `scan` may carry a pre-computed scan of the trace (it is
/// computed here when the run needs one and none is given).
pub fn run(cfg: &RunConfig, scan: Option<&TraceScan>) -> Result<RunResult, LabError> {
    let needs_scan =
        matches!(cfg.buffer, BufferSize::Ratio(_)) || device_needs_capacity(&cfg.device);
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

    let start = Instant::now();
    let cpu_start = process_cpu_s();
    ctx.facts = match cfg.facts {
        Some(f) => f,
        None => device_facts(&cfg.device, &ctx)?,
    };
    let built = build_device(&cfg.device, &ctx)?;
    let cleanup = built.cleanup.clone();
    // Split device time into reads and writes (not on the memory device, which has no
    // clock; its replays are the speed benchmark).
    let (device, counting): (Box<dyn Device>, _) = if cfg.device.name == "memory" {
        (built.device, None)
    } else {
        let c = Arc::new(CountingDevice::new(built.device));
        (Box::new(c.clone()), Some(c))
    };
    let result = (|| {
        let store = build_store(&cfg.store, device, &ctx)?;
        let policy = build_policy(&cfg.policy, frames, &ctx)?;
        let mut oracle = Oracle::with_capacity(ctx.data_pages as usize);
        let progress = progress_bar(cfg, scan);
        let dev0 = store.device_stats();
        let feed = Feed::start(&cfg.trace, cfg.format, cfg.page_size as u32, cfg.limit_refs)?;
        let mut r = match policy {
            Some(policy) => {
                let pool = BufferPool::new(store, frames, policy)?;
                let summary = replay_pool(&pool, feed, &mut oracle, &progress, cfg.paranoid)?;
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
                r.format = summary.format.to_string();
                r.flush_writes = pool.flush_all()? as u64;
                pool.store().sync()?;
                if cfg.paranoid {
                    pool.check_invariants().map_err(LabError::Invariant)?;
                    verify_all(pool.store(), &mut oracle, cfg.page_size)?;
                }
                r
            }
            None => {
                let (summary, reads, writes) =
                    replay_passthrough(&store, feed, &mut oracle, &progress, cfg.page_size)?;
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
        r.verify_errors = oracle.errors();
        r.first_verify_error = oracle.first_error().map(str::to_string);
        r.scan_time_s = scan.map_or(0.0, |s| s.scan_time_s);
        Ok(r)
    })();
    if let Some(p) = cleanup {
        let _ = std::fs::remove_file(p);
    }
    result
}

fn device_needs_capacity(device: &Spec) -> bool {
    device.name == "sim"
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
) -> Result<FeedSummary, LabError> {
    let mut batches = 0u64;
    while let Some(batch) = feed.next_batch()? {
        let key = |i: usize| {
            let r = batch[i];
            let access = if r.op.is_write() {
                Access::Write
            } else {
                Access::Read
            };
            (r.page, access)
        };
        let result = pool.access_many(batch.len(), key, |i, page| {
            let pid = batch[i].page;
            match page {
                PageAccess::Read(data) => oracle.check(pid, data),
                PageAccess::Write(mut w) => {
                    oracle.check(pid, w.data());
                    let s = oracle.bump(pid);
                    w.write(0, &s);
                }
            }
        });
        if let Err((_, e)) = result {
            return Err(corrupt_or(e, oracle));
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
) -> Result<(FeedSummary, u64, u64), LabError> {
    let mut rbuf = AlignedBuf::zeroed(page_size, 4096);
    // The write buffer stays zero apart from header and stamp, so nothing else leaks in.
    let mut wbuf = AlignedBuf::zeroed(page_size, 4096);
    let full = DirtyRanges::full(page_size);
    let (mut reads, mut writes) = (0u64, 0u64);
    while let Some(batch) = feed.next_batch()? {
        for r in &batch {
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
