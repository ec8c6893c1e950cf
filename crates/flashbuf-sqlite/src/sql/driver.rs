//! The SQL driver: loads a workload, runs its transactions on one connection for a number
//! of transactions or seconds, and measures — the fields of the native driver's
//! `WorkloadResult` that apply to SQLite, plus the counters below SQLite.
//!
//! Wall-clock throughput counts the transaction phase only. Device-time throughput divides
//! by the device time the phase consumed below flashbuf (a virtual clock on simulated
//! devices); `None` for SQLite's default VFS or a device that reports no time. Response
//! times are wall-clock, per transaction. One connection, so `threads` must be 1.

use super::SqlWorkload;
use crate::db::{FlashDb, FlashStats};
use crate::error::Error;
use flashbuf_pool::PoolStats;
use flashbuf_store::StoreStats;
use flashbuf_workload::driver::KindResult;
use flashbuf_workload::{Consistency, RunConfig, RunLimit};
use rusqlite::Connection;
use serde::Serialize;
use std::time::{Duration, Instant};

/// What a SQL run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SqlRunResult {
    /// The workload's name.
    pub workload: &'static str,
    /// `sqlite` on flashbuf, or `sqlite-default-vfs`.
    pub engine: &'static str,
    /// The seed.
    pub seed: u64,
    /// Wall-clock seconds of the load.
    pub load_seconds: f64,
    /// Transactions run (committed or rolled back by the workload's rules).
    pub transactions: u64,
    /// Per kind.
    pub by_kind: Vec<KindResult>,
    /// Wall-clock seconds of the transaction phase.
    pub wall_seconds: f64,
    /// Transactions per wall-clock second.
    pub tps_wall: f64,
    /// Device time of the transaction phase, seconds (0 without flashbuf).
    pub device_seconds: f64,
    /// Transactions per second of device time.
    pub tps_device: Option<f64>,
    /// Mean response time, µs.
    pub response_us_mean: f64,
    /// 99th-percentile response time, µs.
    pub response_us_p99: f64,
    /// The workload's consistency conditions after the run.
    pub consistency: Consistency,
    /// Counters below SQLite during the transaction phase (flashbuf only).
    pub flash: Option<FlashStats>,
}

/// The engine label of a run.
fn engine(flash: Option<&FlashDb>) -> &'static str {
    if flash.is_some() {
        "sqlite"
    } else {
        "sqlite-default-vfs"
    }
}

/// Loads `workload` through `conn` (an empty database) and runs it; `flash` is the
/// database under the connection when it is on flashbuf.
pub fn run(
    workload: &dyn SqlWorkload,
    conn: &mut Connection,
    flash: Option<&FlashDb>,
    cfg: &RunConfig,
) -> Result<SqlRunResult, Error> {
    let t0 = Instant::now();
    workload.load(conn, cfg.seed)?;
    let load_seconds = t0.elapsed().as_secs_f64();
    let mut r = run_loaded(workload, conn, flash, cfg)?;
    r.load_seconds = load_seconds;
    Ok(r)
}

/// Runs the transactions of an already loaded database and measures (see [`run`]).
pub fn run_loaded(
    workload: &dyn SqlWorkload,
    conn: &mut Connection,
    flash: Option<&FlashDb>,
    cfg: &RunConfig,
) -> Result<SqlRunResult, Error> {
    if cfg.threads != 1 {
        return Err(Error::Unsupported(format!(
            "{} driver threads; SQLite on flashbuf runs one connection",
            cfg.threads
        )));
    }
    let kinds = workload.kinds();
    let mut worker = workload.worker(conn, cfg.seed)?;
    let before = flash.map(|f| f.stats());
    let mut samples: Vec<Vec<u64>> = vec![Vec::new(); kinds.len()];
    let start = Instant::now();
    let mut n = 0u64;
    while go_on(cfg.limit, n, start) {
        let t1 = Instant::now();
        let k = worker.step(conn)?;
        samples[k].push(t1.elapsed().as_nanos() as u64);
        n += 1;
    }
    let wall = start.elapsed();
    let delta = match (flash, before) {
        (Some(f), Some(b)) => Some(f.stats().since(&b)),
        _ => None,
    };
    let consistency = workload.check(conn)?;
    Ok(assemble(
        workload,
        engine(flash),
        cfg.seed,
        samples,
        wall,
        delta,
        consistency,
    ))
}

fn go_on(limit: RunLimit, done: u64, start: Instant) -> bool {
    match limit {
        RunLimit::Transactions(n) => done < n,
        RunLimit::Seconds(s) => start.elapsed() < Duration::from_secs_f64(s.max(0.0)),
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

fn assemble(
    workload: &dyn SqlWorkload,
    engine: &'static str,
    seed: u64,
    mut samples: Vec<Vec<u64>>,
    wall: Duration,
    flash: Option<FlashStats>,
    consistency: Consistency,
) -> SqlRunResult {
    let by_kind = workload
        .kinds()
        .iter()
        .zip(samples.iter_mut())
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
    let mut all = samples.concat();
    let transactions = all.len() as u64;
    let (mean, p99) = mean_p99_us(&mut all);
    let wall_seconds = wall.as_secs_f64();
    let device_seconds = flash.map_or(0.0, |f| f.device.device_time_us / 1e6);
    SqlRunResult {
        workload: workload.name(),
        engine,
        seed,
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
        flash,
    }
}

impl FlashStats {
    /// The counts between `earlier` and `self` (the file size is `self`'s).
    pub fn since(&self, earlier: &FlashStats) -> FlashStats {
        let v = (self.vfs, earlier.vfs);
        FlashStats {
            db_pages: self.db_pages,
            vfs: crate::VfsCounters {
                reads: v.0.reads - v.1.reads,
                writes: v.0.writes - v.1.writes,
                syncs: v.0.syncs - v.1.syncs,
                truncates: v.0.truncates - v.1.truncates,
                hole_pages: v.0.hole_pages - v.1.hole_pages,
                meta_writes: v.0.meta_writes - v.1.meta_writes,
            },
            pool: match (self.pool, earlier.pool) {
                (Some(a), Some(b)) => Some(pool_delta(&a, &b)),
                (a, _) => a,
            },
            store: StoreStats {
                page_reads: self.store.page_reads - earlier.store.page_reads,
                unwritten_reads: self.store.unwritten_reads - earlier.store.unwritten_reads,
                page_writes: self.store.page_writes - earlier.store.page_writes,
                batches: self.store.batches - earlier.store.batches,
                syncs: self.store.syncs - earlier.store.syncs,
            },
            device: self.device - earlier.device,
        }
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
