//! `flashbuf run`: an engine workload (the native B+-tree engine of `flashbuf-workload`, or
//! SQLite through `flashbuf-sqlite`) over policy × store × device, measured as a replay is.
//!
//! Every name and option is checked before anything is built ([`EngineConfig::validate`]).
//! The device is built for [`EngineConfig::capacity_bytes`] of data (an engine's size is not
//! known in advance). The native engine always runs through a buffer pool; SQLite runs
//! pass-through (`--policy none`: SQLite's own cache above the store) or through a pool
//! with SQLite's cache kept small. SQLite's journal/WAL live in memory (`MemFs`): the
//! device figures are those of the database file. With [`EngineConfig::record`], the
//! store's reads and writes are written as a range I/O CSV ([`record`]).

pub mod record;

use crate::registry::{
    build_device, build_store, device_facts, parse_policy, validate_devices, validate_policy,
    validate_store, BuildContext, PolicyPlan,
};
use crate::spec::Spec;
use crate::LabError;
use flashbuf_core::DeviceStats;
use flashbuf_pool::policy::Policy;
use flashbuf_pool::BufferPool;
use flashbuf_store::PageStore;
use flashbuf_workload::driver::KindResult;
use flashbuf_workload::{EngineStore, RunConfig, RunLimit};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;

/// Which engine runs the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// flashbuf's B+-tree engine over the pool (`flashbuf_workload`).
    Native,
    /// SQLite through flashbuf's VFS (`flashbuf_sqlite`).
    Sqlite,
}

impl std::str::FromStr for Engine {
    type Err = LabError;
    fn from_str(s: &str) -> Result<Self, LabError> {
        match s {
            "native" => Ok(Engine::Native),
            "sqlite" => Ok(Engine::Sqlite),
            other => Err(LabError::Usage(format!(
                "unknown engine '{other}'; valid engines: native, sqlite"
            ))),
        }
    }
}

/// One engine run.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// The engine.
    pub engine: Engine,
    /// The workload, `NAME[:key=value,...]` (`flashbuf_workload::WORKLOADS`).
    pub workload: String,
    /// Driver threads (SQLite: 1).
    pub threads: usize,
    /// Transactions or seconds.
    pub limit: RunLimit,
    /// Replacement policy (`none`: SQLite pass-through).
    pub policy: Spec,
    /// Page store.
    pub store: Spec,
    /// Device.
    pub device: Spec,
    /// Frames of the pool.
    pub buffer_pages: usize,
    /// Page size in bytes.
    pub page_size: usize,
    /// Data the device is built for, bytes.
    pub capacity_bytes: u64,
    /// Seed of everything random.
    pub seed: u64,
    /// Record the store's reads and writes here (range I/O CSV).
    pub record: Option<PathBuf>,
}

/// What a run measured: the engine's figures and the I/O fields of a replay.
#[derive(Debug, Clone, Serialize)]
pub struct EngineResult {
    /// `native` or `sqlite`.
    pub engine: Engine,
    /// The workload with its options.
    pub workload: String,
    /// Policy with options.
    pub policy: String,
    /// Store with options.
    pub store: String,
    /// Device with options.
    pub device: String,
    /// Frames of the pool (0 in pass-through).
    pub buffer_pages: usize,
    /// Page size, bytes.
    pub page_size: usize,
    /// Driver threads.
    pub threads: usize,
    /// Seed.
    pub seed: u64,
    /// Transactions run.
    pub transactions: u64,
    /// Wall-clock seconds of the load.
    pub load_seconds: f64,
    /// Wall-clock seconds of the transaction phase.
    pub wall_seconds: f64,
    /// Transactions per wall-clock second.
    pub tps_wall: f64,
    /// Device time of the transaction phase, seconds.
    pub device_seconds: f64,
    /// Transactions per second of device time (`None`: the device keeps no time).
    pub tps_device: Option<f64>,
    /// Mean response time, µs (wall clock).
    pub response_us_mean: f64,
    /// 99th percentile response time, µs (wall clock).
    pub response_us_p99: f64,
    /// Every consistency condition held.
    pub consistency: bool,
    /// The conditions checked.
    pub consistency_checked: Vec<String>,
    /// The conditions that failed, with what was found.
    pub consistency_failed: Vec<String>,
    /// Per transaction kind.
    pub by_kind: Vec<KindResult>,
    /// Pool hits during the transaction phase (0 in pass-through).
    pub hits: u64,
    /// Pool misses during the transaction phase.
    pub misses: u64,
    /// Pages read from the store during the transaction phase.
    pub page_reads: u64,
    /// Pages written to the store during the transaction phase.
    pub page_writes: u64,
    /// Read requests at the device.
    pub device_reads: u64,
    /// Write requests at the device.
    pub device_writes: u64,
    /// Device time, µs.
    pub device_time_us: f64,
    /// Flash erases.
    pub erases: u64,
    /// The FTL's write amplification.
    pub write_amplification: f64,
    /// Dirty-range statistics of the write-backs (native engine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_backs: Option<flashbuf_workload::driver::WriteBackReport>,
    /// The recording written, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
}

impl EngineResult {
    /// `native` or `sqlite`.
    pub fn engine_name(&self) -> &'static str {
        match self.engine {
            Engine::Native => "native",
            Engine::Sqlite => "sqlite",
        }
    }
}

impl EngineConfig {
    /// Checks every name and option without building anything.
    pub fn validate(&self) -> Result<(), LabError> {
        flashbuf_workload::parse_workload(&self.workload)?;
        validate_policy(&self.policy)?;
        validate_store(&self.store, self.page_size)?;
        validate_devices([&self.device])?;
        if self.threads == 0 {
            return Err(LabError::Usage("--threads must be at least 1".into()));
        }
        match (self.engine, parse_policy(&self.policy)?) {
            (Engine::Native, PolicyPlan::PassThrough) => {
                return Err(LabError::Usage(
                    "--policy none: the native engine runs over a buffer pool; pass-through is \
                     for --engine sqlite (SQLite's own cache above the store)"
                        .into(),
                ))
            }
            (_, PolicyPlan::Pool { entry, .. }) if entry.needs_trace => {
                return Err(LabError::Usage(format!(
                    "--policy {}: an offline policy needs the whole trace in advance; an \
                     engine run has none (record one with --record and replay it)",
                    self.policy
                )))
            }
            _ => {}
        }
        if self.engine == Engine::Sqlite {
            flashbuf_sqlite::sql::parse_sql_workload(&self.workload)?;
            if self.threads != 1 {
                return Err(LabError::Usage(format!(
                    "--threads {}: SQLite on flashbuf runs one connection",
                    self.threads
                )));
            }
        }
        if self.buffer_pages < 4 {
            return Err(LabError::Usage(format!(
                "--buffer-pages {}: an engine needs at least 4 frames",
                self.buffer_pages
            )));
        }
        Ok(())
    }

    fn context(&self) -> BuildContext {
        BuildContext {
            page_size: self.page_size,
            data: flashbuf_core::DataMode::Bytes,
            data_pages: self.capacity_bytes / self.page_size.max(1) as u64,
            seed: self.seed,
            facts: Default::default(),
        }
    }
}

/// The store of a run, with its recorder if one is asked for.
fn store(cfg: &EngineConfig, ctx: &mut BuildContext) -> Result<StoreChain, LabError> {
    ctx.facts = device_facts(&cfg.device, ctx)?;
    let dev = build_device(&cfg.device, ctx)?;
    let store = build_store(&cfg.store, dev.device, ctx)?;
    match &cfg.record {
        None => Ok(StoreChain {
            store,
            recorder: None,
            cleanup: dev.cleanup,
        }),
        Some(path) => {
            let sink = record::open_sink(path)
                .map_err(|e| LabError::Usage(format!("--record {}: {e}", path.display())))?;
            let r = Arc::new(record::Recorder::new(store, sink).map_err(LabError::Output)?);
            Ok(StoreChain {
                store: Box::new(r.clone()),
                recorder: Some(r),
                cleanup: dev.cleanup,
            })
        }
    }
}

struct StoreChain {
    store: Box<dyn PageStore>,
    recorder: Option<Arc<record::Recorder<Box<dyn PageStore>>>>,
    cleanup: Option<PathBuf>,
}

/// Runs `cfg` (see the module docs).
pub fn run_engine(cfg: &EngineConfig) -> Result<EngineResult, LabError> {
    cfg.validate()?;
    let mut ctx = cfg.context();
    let chain = store(cfg, &mut ctx)?;
    let policy = crate::registry::build_policy(&cfg.policy, cfg.buffer_pages, &ctx)?;
    let rc = RunConfig {
        threads: cfg.threads,
        limit: cfg.limit,
        seed: cfg.seed,
    };
    let result = match cfg.engine {
        Engine::Native => native(cfg, chain.store, policy, &rc),
        Engine::Sqlite => sqlite(cfg, chain.store, policy, &rc),
    };
    if let Some(p) = &chain.cleanup {
        let _ = std::fs::remove_file(p);
    }
    let mut r = result?;
    if let (Some(rec), Some(path)) = (&chain.recorder, &cfg.record) {
        rec.finish()
            .map_err(|e| LabError::Usage(format!("--record {}: {e}", path.display())))?;
        r.record = Some(path.display().to_string());
    }
    Ok(r)
}

/// What both drivers measure (the native `WorkloadResult`'s and SQLite's
/// `SqlRunResult`'s common fields).
struct Figures {
    transactions: u64,
    load_seconds: f64,
    wall_seconds: f64,
    tps_wall: f64,
    device_seconds: f64,
    tps_device: Option<f64>,
    response_us_mean: f64,
    response_us_p99: f64,
    consistency: flashbuf_workload::Consistency,
    by_kind: Vec<KindResult>,
}

/// The result of a run with its configuration, device counters and the drivers' figures;
/// the pool and store counts are the engine's to fill.
fn base(cfg: &EngineConfig, frames: usize, dev: DeviceStats, f: Figures) -> EngineResult {
    EngineResult {
        engine: cfg.engine,
        workload: cfg.workload.clone(),
        policy: cfg.policy.to_string(),
        store: cfg.store.to_string(),
        device: cfg.device.to_string(),
        buffer_pages: frames,
        page_size: cfg.page_size,
        threads: cfg.threads,
        seed: cfg.seed,
        transactions: f.transactions,
        load_seconds: f.load_seconds,
        wall_seconds: f.wall_seconds,
        tps_wall: f.tps_wall,
        device_seconds: f.device_seconds,
        tps_device: f.tps_device,
        response_us_mean: f.response_us_mean,
        response_us_p99: f.response_us_p99,
        consistency: f.consistency.ok(),
        consistency_checked: f.consistency.checked,
        consistency_failed: f.consistency.failed,
        by_kind: f.by_kind,
        hits: 0,
        misses: 0,
        page_reads: 0,
        page_writes: 0,
        device_reads: dev.reads,
        device_writes: dev.writes,
        device_time_us: dev.device_time_us,
        erases: dev.erases,
        write_amplification: dev.write_amplification(),
        write_backs: None,
        record: None,
    }
}

fn native(
    cfg: &EngineConfig,
    store: Box<dyn PageStore>,
    policy: Option<Box<dyn Policy>>,
    rc: &RunConfig,
) -> Result<EngineResult, LabError> {
    let policy = policy.ok_or_else(|| LabError::Usage("the native engine needs a pool".into()))?;
    let pool = BufferPool::new(EngineStore::new(store), cfg.buffer_pages, policy)?;
    let w = flashbuf_workload::parse_workload(&cfg.workload)?;
    let r = flashbuf_workload::run(&*w, &pool, rc)
        .map_err(|e| LabError::Engine(format!("{}: {e}", cfg.workload)))?;
    let figures = Figures {
        transactions: r.transactions,
        load_seconds: r.load_seconds,
        wall_seconds: r.wall_seconds,
        tps_wall: r.tps_wall,
        device_seconds: r.device_seconds,
        tps_device: r.tps_device,
        response_us_mean: r.response_us_mean,
        response_us_p99: r.response_us_p99,
        consistency: r.consistency,
        by_kind: r.by_kind,
    };
    let mut out = base(cfg, cfg.buffer_pages, r.device, figures);
    out.hits = r.pool.hits;
    out.misses = r.pool.misses;
    out.page_reads = r.pool.page_reads;
    out.page_writes = r.pool.page_writes;
    out.write_backs = Some(r.write_backs);
    Ok(out)
}

fn sqlite(
    cfg: &EngineConfig,
    store: Box<dyn PageStore>,
    policy: Option<Box<dyn Policy>>,
    rc: &RunConfig,
) -> Result<EngineResult, LabError> {
    use flashbuf_sqlite::{Cache, Database, FlashDb, MemFs, OpenOptions};
    let sql_err = |e: flashbuf_sqlite::Error| LabError::Engine(format!("sqlite: {e}"));
    let (cache, frames) = match policy {
        None => (Cache::PassThrough, 0),
        Some(policy) => (
            Cache::Pool {
                frames: cfg.buffer_pages,
                policy,
            },
            cfg.buffer_pages,
        ),
    };
    let db = FlashDb::open(store, cache).map_err(sql_err)?;
    let mut db = Database::open(db, OpenOptions::in_memory(MemFs::new())).map_err(sql_err)?;
    let w = flashbuf_sqlite::sql::parse_sql_workload(&cfg.workload)?;
    let (conn, flash) = db.split_mut();
    let r = flashbuf_sqlite::sql::driver::run(&*w, conn, Some(flash), rc).map_err(sql_err)?;
    let f = r.flash.unwrap_or_else(|| flash.stats());
    let figures = Figures {
        transactions: r.transactions,
        load_seconds: r.load_seconds,
        wall_seconds: r.wall_seconds,
        tps_wall: r.tps_wall,
        device_seconds: r.device_seconds,
        tps_device: r.tps_device,
        response_us_mean: r.response_us_mean,
        response_us_p99: r.response_us_p99,
        consistency: r.consistency,
        by_kind: r.by_kind,
    };
    let mut out = base(cfg, frames, f.device, figures);
    if let Some(p) = f.pool {
        out.hits = p.hits;
        out.misses = p.misses;
    } else {
        out.misses = f.store.page_reads;
    }
    out.page_reads = f.store.page_reads;
    out.page_writes = f.store.page_writes;
    db.close().map_err(sql_err)?;
    Ok(out)
}
