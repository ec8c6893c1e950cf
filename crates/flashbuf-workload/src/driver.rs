//! The driver: loads a workload, runs its transactions on several threads for a number
//! of transactions or seconds, and measures.
//!
//! ```
//! use flashbuf_device::MemDevice;
//! use flashbuf_pool::{policy::Lru, BufferPool};
//! use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore};
//! use flashbuf_workload::{driver, parse_workload, EngineStore, RunConfig, RunLimit};
//!
//! let store: Box<dyn PageStore> =
//!     Box::new(DirectStore::create(MemDevice::new(0), DirectStoreConfig::with_page_size(4096))?);
//! let pool = BufferPool::new(EngineStore::new(store), 256, Box::new(Lru::new(256)))?;
//! let w = parse_workload("tpcb:accounts=2000")?;
//! let cfg = RunConfig { threads: 2, limit: RunLimit::Transactions(500), seed: 7 };
//! let r = driver::run(&*w, &pool, &cfg)?;
//! assert_eq!(r.transactions, 500);
//! assert!(r.consistency.ok(), "{:?}", r.consistency.failed);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Wall-clock throughput counts the transaction phase only (not the load). Device-time
//! throughput divides by the device time the run consumed (`device_stats().device_time_us`,
//! a virtual clock on simulated devices; `None` when the device reports no time, as the
//! memory device). Response times are wall-clock, per transaction. The write-back
//! statistics cover the run's write-backs (evictions and clustered writes) and, apart,
//! the final flush that makes the run durable.

use crate::dirty_stats::{DirtySummary, WriteBackSnapshot};
use crate::workload::{Consistency, EnginePool, Session, Workload, WorkloadError};
use flashbuf_core::DeviceStats;
use flashbuf_pool::PoolStats;
use flashbuf_store::PageStore;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// When a run stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RunLimit {
    /// After this many transactions, over all threads.
    Transactions(u64),
    /// After this many seconds of wall-clock time.
    Seconds(f64),
}

/// How to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunConfig {
    /// Driver threads (at least 1).
    pub threads: usize,
    /// When to stop.
    pub limit: RunLimit,
    /// Seed of the load and of every thread's transactions.
    pub seed: u64,
}

/// Count and response times of one transaction kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KindResult {
    /// The kind.
    pub kind: &'static str,
    /// Transactions run.
    pub count: u64,
    /// Mean response time, µs.
    pub response_us_mean: f64,
    /// 99th-percentile response time, µs.
    pub response_us_p99: f64,
}

/// Dirty-range statistics of the pool's write-backs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WriteBackReport {
    /// Overwrites during the transaction phase, by the ranges the pool recorded.
    pub run: DirtySummary,
    /// The same by the exact difference from the previous image (if the store counts it).
    pub run_exact: Option<DirtySummary>,
    /// Overwrites of the final flush, by recorded ranges.
    pub flush: DirtySummary,
    /// The final flush by exact difference.
    pub flush_exact: Option<DirtySummary>,
    /// First writes of pages during the run and the flush (not in the statistics).
    pub first_writes: u64,
}

/// What a run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkloadResult {
    /// The workload's name.
    pub workload: &'static str,
    /// Driver threads.
    pub threads: usize,
    /// The seed.
    pub seed: u64,
    /// Wall-clock seconds of the load (including its sync).
    pub load_seconds: f64,
    /// Transactions run.
    pub transactions: u64,
    /// Per kind.
    pub by_kind: Vec<KindResult>,
    /// Wall-clock seconds of the transaction phase.
    pub wall_seconds: f64,
    /// Transactions per wall-clock second.
    pub tps_wall: f64,
    /// Device time of the transaction phase, seconds.
    pub device_seconds: f64,
    /// Transactions per second of device time (`None` if the device reports no time).
    pub tps_device: Option<f64>,
    /// Mean response time, µs.
    pub response_us_mean: f64,
    /// 99th-percentile response time, µs.
    pub response_us_p99: f64,
    /// The workload's consistency conditions after the run.
    pub consistency: Consistency,
    /// Pool counters of the transaction phase.
    pub pool: PoolStats,
    /// Device counters of the transaction phase.
    pub device: DeviceStats,
    /// Dirty ranges of the write-backs.
    pub write_backs: WriteBackReport,
}

/// Loads `workload` into `pool` (which must be over an empty store) and runs it.
pub fn run(
    workload: &dyn Workload,
    pool: &EnginePool,
    cfg: &RunConfig,
) -> Result<WorkloadResult, WorkloadError> {
    let t0 = Instant::now();
    let session = workload.load(pool, cfg.seed)?;
    pool.sync()?;
    let load_seconds = t0.elapsed().as_secs_f64();
    let mut r = run_session(workload, &*session, pool, cfg)?;
    r.load_seconds = load_seconds;
    Ok(r)
}

/// Per-thread measurements: response times in ns, by kind.
type Samples = Vec<Vec<u64>>;

/// Runs the transactions of an already loaded `session` and measures (see [`run`]).
pub fn run_session(
    workload: &dyn Workload,
    session: &dyn Session,
    pool: &EnginePool,
    cfg: &RunConfig,
) -> Result<WorkloadResult, WorkloadError> {
    let threads = cfg.threads.max(1);
    let kinds = workload.kinds();
    let (ws0, dev0, pool0) = (
        pool.store().snapshot(),
        pool.store().device_stats(),
        pool.stats(),
    );
    let claimed = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let results: Vec<Result<Samples, WorkloadError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (claimed, stop) = (&claimed, &stop);
                s.spawn(move || {
                    let mut w = session.worker(t, threads, cfg.seed);
                    let mut samples: Samples = vec![Vec::new(); kinds.len()];
                    while !stop.load(Relaxed) && go_on(cfg.limit, claimed, start) {
                        let t1 = Instant::now();
                        match w.step() {
                            Ok(k) => samples[k].push(t1.elapsed().as_nanos() as u64),
                            Err(e) => {
                                stop.store(true, Relaxed);
                                return Err(e);
                            }
                        }
                    }
                    Ok(samples)
                })
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(t, h)| {
                h.join()
                    .unwrap_or(Err(WorkloadError::Panicked { thread: t }))
            })
            .collect()
    });
    let wall = start.elapsed();
    let mut per_kind: Samples = vec![Vec::new(); kinds.len()];
    for r in results {
        for (k, v) in r?.into_iter().enumerate() {
            per_kind[k].extend(v);
        }
    }
    let (ws1, dev1, pool1) = (
        pool.store().snapshot(),
        pool.store().device_stats(),
        pool.stats(),
    );
    pool.sync()?;
    let ws2 = pool.store().snapshot();
    let consistency = session.check()?;
    Ok(assemble(
        workload,
        cfg,
        per_kind,
        wall,
        [&ws0, &ws1, &ws2],
        dev1 - dev0,
        pool_delta(&pool1, &pool0),
        consistency,
    ))
}

/// Whether a thread should start another transaction (claims it when counting).
fn go_on(limit: RunLimit, claimed: &AtomicU64, start: Instant) -> bool {
    match limit {
        RunLimit::Transactions(n) => claimed.fetch_add(1, Relaxed) < n,
        RunLimit::Seconds(s) => start.elapsed() < Duration::from_secs_f64(s.max(0.0)),
    }
}

fn pool_delta(a: &PoolStats, b: &PoolStats) -> PoolStats {
    PoolStats {
        hits: a.hits - b.hits,
        misses: a.misses - b.misses,
        page_reads: a.page_reads - b.page_reads,
        unwritten_reads: a.unwritten_reads - b.unwritten_reads,
        page_writes: a.page_writes - b.page_writes,
        write_batches: a.write_batches - b.write_batches,
        evictions: a.evictions - b.evictions,
        dirty_evictions: a.dirty_evictions - b.dirty_evictions,
        failed_loads: a.failed_loads - b.failed_loads,
    }
}

/// Mean and nearest-rank p99 of ns samples, in µs.
fn mean_p99_us(v: &mut [u64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    v.sort_unstable();
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
    let rank = ((0.99 * v.len() as f64).ceil() as usize).clamp(1, v.len());
    (mean / 1e3, v[rank - 1] as f64 / 1e3)
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    workload: &dyn Workload,
    cfg: &RunConfig,
    mut per_kind: Samples,
    wall: Duration,
    ws: [&WriteBackSnapshot; 3],
    device: DeviceStats,
    pool: PoolStats,
    consistency: Consistency,
) -> WorkloadResult {
    let by_kind: Vec<KindResult> = workload
        .kinds()
        .iter()
        .zip(per_kind.iter_mut())
        .map(|(&kind, v)| {
            let (m, p) = mean_p99_us(v);
            KindResult {
                kind,
                count: v.len() as u64,
                response_us_mean: m,
                response_us_p99: p,
            }
        })
        .collect();
    let mut all: Vec<u64> = per_kind.concat();
    let transactions = all.len() as u64;
    let (mean, p99) = mean_p99_us(&mut all);
    let wall_seconds = wall.as_secs_f64();
    let device_seconds = device.device_time_us / 1e6;
    let run = ws[1].since(ws[0]);
    let flush = ws[2].since(ws[1]);
    WorkloadResult {
        workload: workload.name(),
        threads: cfg.threads.max(1),
        seed: cfg.seed,
        load_seconds: 0.0,
        transactions,
        by_kind,
        wall_seconds,
        tps_wall: transactions as f64 / wall_seconds.max(1e-9),
        device_seconds,
        tps_device: (device_seconds > 0.0).then(|| transactions as f64 / device_seconds),
        response_us_mean: mean,
        response_us_p99: p99,
        consistency,
        pool,
        device,
        write_backs: WriteBackReport {
            run: run.recorded.summary(),
            run_exact: run.exact.as_ref().map(|h| h.summary()),
            flush: flush.recorded.summary(),
            flush_exact: flush.exact.as_ref().map(|h| h.summary()),
            first_writes: run.first_writes + flush.first_writes,
        },
    }
}
