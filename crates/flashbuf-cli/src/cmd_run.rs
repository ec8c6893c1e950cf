//! `flashbuf run`: an engine workload over policy × store × device.

use crate::common::{parse_page_size, print, DEFAULT_PAGE_SIZE};
use clap::Args;
use flashbuf_lab::engine::{run_engine, Engine, EngineConfig, EngineResult};
use flashbuf_lab::LabError;
use flashbuf_workload::RunLimit;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct RunArgs {
    /// The workload, `NAME[:key=value,...]`: tpcc:warehouses=N, tpcb:scale=N,
    /// cfdc:scan=X,update=Y; `flashbuf list workloads`.
    #[arg(long)]
    pub workload: String,
    /// The engine: native (flashbuf's B+-tree) or sqlite (SQL through rusqlite on a
    /// flashbuf VFS; tpcc and tpcb).
    #[arg(long, default_value = "native")]
    pub engine: String,
    /// Driver threads (sqlite: 1).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Transactions to run (default 10000 unless --seconds).
    #[arg(long, conflicts_with = "seconds")]
    pub transactions: Option<u64>,
    /// Seconds to run.
    #[arg(long, allow_negative_numbers = true)]
    pub seconds: Option<f64>,
    /// Buffer replacement policy (`none`: sqlite pass-through); `flashbuf list policies`.
    #[arg(long, default_value = "lru")]
    pub policy: String,
    /// Page store; `flashbuf list stores`.
    #[arg(long, default_value = "direct")]
    pub store: String,
    /// Device; `flashbuf list devices`.
    #[arg(long, default_value = "memory")]
    pub device: String,
    /// Frames of the buffer pool.
    #[arg(long, default_value_t = 1024)]
    pub buffer_pages: usize,
    /// Page size in bytes.
    #[arg(long, default_value_t = DEFAULT_PAGE_SIZE, value_parser = parse_page_size)]
    pub page_size: usize,
    /// Data the device is built for (simulated devices), e.g. 1GiB.
    #[arg(long, default_value = "1GiB")]
    pub capacity: String,
    /// Seed for everything random.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Write the store's reads and write-backs, with the dirty byte ranges of every
    /// write-back, to this file (range I/O CSV; zstd if it ends in .zst); replay it with
    /// `flashbuf replay --trace FILE --policy none`.
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

fn config(a: &RunArgs) -> Result<EngineConfig, LabError> {
    let limit = match (a.transactions, a.seconds) {
        (_, Some(s)) if !(s > 0.0 && s.is_finite() && s <= 1e7) => {
            return Err(LabError::Usage(format!(
                "--seconds {s}: a duration from above 0 to 10,000,000 seconds"
            )))
        }
        (_, Some(s)) => RunLimit::Seconds(s),
        (Some(0), _) => return Err(LabError::Usage("--transactions must be at least 1".into())),
        (Some(n), None) => RunLimit::Transactions(n),
        (None, None) => RunLimit::Transactions(10_000),
    };
    let capacity_bytes = flashbuf_lab::spec::parse_bytes(&a.capacity)
        .map_err(|e| LabError::Usage(format!("--capacity {}: {e}", a.capacity)))?;
    use crate::common::parse_component;
    use flashbuf_lab::registry::{validate_devices, validate_policy, validate_store};
    Ok(EngineConfig {
        engine: a.engine.parse::<Engine>()?,
        workload: a.workload.clone(),
        threads: a.threads,
        limit,
        policy: parse_component("--policy", &a.policy, &validate_policy)?,
        store: parse_component("--store", &a.store, &|s| validate_store(s, a.page_size))?,
        device: parse_component("--device", &a.device, &|s| validate_devices([s]))?,
        buffer_pages: a.buffer_pages,
        page_size: a.page_size,
        capacity_bytes,
        seed: a.seed,
        record: a.record.clone(),
    })
}

fn text(r: &EngineResult) -> String {
    let kinds: Vec<String> = r
        .by_kind
        .iter()
        .map(|k| format!("{} {} ({:.0} us mean)", k.kind, k.count, k.response_us_mean))
        .collect();
    format!(
        "{} {} on {} / {} / {}, {} frames of {} B, {} thread(s)\n\
         {} transactions: {:.1} tps wall, {} tps on the device's clock; response {:.0} us mean, {:.0} us p99\n\
         pool: {} hits, {} misses; store: {} page reads, {} page writes; device: {} reads, {} writes, {:.3} s, {} erases, WA {:.2}\n\
         kinds: {}\n\
         consistency: {}\n",
        r.engine_name(),
        r.workload,
        r.policy,
        r.store,
        r.device,
        r.buffer_pages,
        r.page_size,
        r.threads,
        r.transactions,
        r.tps_wall,
        r.tps_device.map_or("-".to_string(), |t| format!("{t:.1}")),
        r.response_us_mean,
        r.response_us_p99,
        r.hits,
        r.misses,
        r.page_reads,
        r.page_writes,
        r.device_reads,
        r.device_writes,
        r.device_time_us / 1e6,
        r.erases,
        r.write_amplification,
        kinds.join(", "),
        if r.consistency {
            format!("true ({})", r.consistency_checked.join(", "))
        } else {
            format!("FAILED: {}", r.consistency_failed.join("; "))
        }
    )
}

/// The result of `flashbuf run`.
pub fn result(a: &RunArgs) -> Result<EngineResult, LabError> {
    let cfg = config(a)?;
    cfg.validate()?;
    run_engine(&cfg)
}

/// The JSON document of `flashbuf run --json` (without the final newline).
pub fn json(r: &EngineResult) -> String {
    let doc = serde_json::json!({ "runs": [r] });
    format!("{doc:#}")
}

pub fn run(a: RunArgs) -> Result<ExitCode, LabError> {
    let r = result(&a)?;
    if a.json {
        print(&format!("{}\n", json(&r)))?;
    } else {
        print(&text(&r))?;
    }
    Ok(if r.consistency {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
