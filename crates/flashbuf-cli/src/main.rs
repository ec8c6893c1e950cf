//! `flashbuf`: the lab's command line (design.md §7).

use clap::{Args, Parser, Subcommand};
use flashbuf_lab::compare::{compare, Matrix};
use flashbuf_lab::result::{csv, json, table};
use flashbuf_lab::spec::Spec;
use flashbuf_lab::{BufferSize, LabError, RunConfig};
use flashbuf_trace::Format;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// The bundled sample trace (first 200,000 references of the TPC-C page trace).
const SAMPLE_TRACE: &str = "testdata/traces/tpcc-sample.pagetrace.csv.zst";

#[derive(Parser)]
#[command(
    name = "flashbuf",
    version,
    about = "flashbuf lab: replay traces through buffer policies, write paths and (simulated) flash devices"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replay one trace through one policy × store × device.
    Replay(ReplayArgs),
    /// Replay a trace through every policy × store × device × buffer size given.
    Compare(CompareArgs),
    /// Measure replay speed: repeat one configuration and report the best and median
    /// references per second (trace reading and decompression included) and peak memory.
    Bench(BenchArgs),
}

#[derive(Args)]
struct BenchArgs {
    #[command(flatten)]
    replay: ReplayArgs,
    /// Repetitions.
    #[arg(long, default_value_t = 5)]
    runs: usize,
}

#[derive(Args, Clone)]
struct CommonArgs {
    /// Trace file (.zst/.gz accepted). Default: the bundled sample under testdata/.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Trace format: auto, pagetrace, msr, spc, lcs-csv, disksim, arc.
    #[arg(long, default_value = "auto")]
    format: String,
    /// Page size in bytes.
    #[arg(long, default_value_t = 4096)]
    page_size: usize,
    /// Seed for everything random.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Check invariants during the run and verify every page at the end.
    #[arg(long)]
    paranoid: bool,
    /// Replay only the first N references.
    #[arg(long)]
    limit: Option<u64>,
    /// Print one JSON document on stdout instead of a table.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

#[derive(Args)]
struct ReplayArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Replacement policy (`none` = pass-through to the store).
    #[arg(long, default_value = "lru")]
    policy: String,
    /// Page store.
    #[arg(long, default_value = "direct")]
    store: String,
    /// Device.
    #[arg(long, default_value = "memory")]
    device: String,
    /// Buffer size in pages.
    #[arg(long, conflicts_with = "buffer_ratio")]
    buffer_pages: Option<usize>,
    /// Buffer size as a fraction of the trace's distinct pages (default 0.03).
    #[arg(long)]
    buffer_ratio: Option<f64>,
}

#[derive(Args)]
struct CompareArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// A policy (repeat for more).
    #[arg(long = "policy")]
    policy: Vec<String>,
    /// Policies without options, comma-separated.
    #[arg(long)]
    policies: Option<String>,
    /// A store (repeat for more).
    #[arg(long = "store")]
    store: Vec<String>,
    /// Stores without options, comma-separated.
    #[arg(long)]
    stores: Option<String>,
    /// A device (repeat for more).
    #[arg(long = "device")]
    device: Vec<String>,
    /// Devices without options, comma-separated.
    #[arg(long)]
    devices: Option<String>,
    /// A buffer size in pages (repeat for more).
    #[arg(long = "buffer-pages")]
    buffer_pages: Vec<usize>,
    /// A buffer size as a fraction of distinct pages (repeat for more).
    #[arg(long = "buffer-ratio")]
    buffer_ratio: Vec<f64>,
    /// Print CSV instead of a table.
    #[arg(long, conflicts_with = "json")]
    csv: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn dispatch(cli: Cli) -> Result<ExitCode, LabError> {
    match cli.command {
        Command::Replay(a) => cmd_replay(a),
        Command::Compare(a) => cmd_compare(a),
        Command::Bench(a) => cmd_bench(a),
    }
}

/// The bundled sample: relative to the working directory, else to the source tree.
fn default_trace() -> PathBuf {
    let local = PathBuf::from(SAMPLE_TRACE);
    if local.exists() {
        return local;
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(SAMPLE_TRACE)
}

fn parse_format(s: &str) -> Result<Option<Format>, LabError> {
    if s == "auto" {
        return Ok(None);
    }
    s.parse::<Format>()
        .map(Some)
        .map_err(|e| LabError::Usage(e.to_string()))
}

fn base_config(c: &CommonArgs, buffer: BufferSize) -> Result<RunConfig, LabError> {
    Ok(RunConfig {
        trace: c.trace.clone().unwrap_or_else(default_trace),
        format: parse_format(&c.format)?,
        policy: Spec::parse("lru")?,
        store: Spec::parse("direct")?,
        device: Spec::parse("memory")?,
        buffer,
        page_size: c.page_size,
        seed: c.seed,
        paranoid: c.paranoid,
        progress: !c.quiet && std::io::stderr().is_terminal() && std::io::stdout().is_terminal(),
        limit_refs: c.limit,
    })
}

fn exit_for(runs: &[flashbuf_lab::RunResult]) -> ExitCode {
    let bad: Vec<_> = runs.iter().filter(|r| r.verify_errors > 0).collect();
    for r in &bad {
        eprintln!(
            "error: {} verify errors in {} / {} / {}: {}",
            r.verify_errors,
            r.policy,
            r.store,
            r.device,
            r.first_verify_error.as_deref().unwrap_or("")
        );
    }
    if bad.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

fn print(s: &str) -> Result<(), LabError> {
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn replay_config(a: &ReplayArgs) -> Result<RunConfig, LabError> {
    let buffer = match (a.buffer_pages, a.buffer_ratio) {
        (Some(n), _) => BufferSize::Pages(n),
        (None, Some(r)) => BufferSize::Ratio(check_ratio(r)?),
        (None, None) => BufferSize::Ratio(0.03),
    };
    let mut cfg = base_config(&a.common, buffer)?;
    cfg.policy = Spec::parse(&a.policy)?;
    cfg.store = Spec::parse(&a.store)?;
    cfg.device = Spec::parse(&a.device)?;
    Ok(cfg)
}

fn cmd_bench(a: BenchArgs) -> Result<ExitCode, LabError> {
    let mut cfg = replay_config(&a.replay)?;
    cfg.progress = false;
    // A ratio needs the distinct-page count: scan once, outside the timed runs.
    let scan = match cfg.buffer {
        BufferSize::Ratio(_) => Some(flashbuf_lab::scan::scan_trace(
            &cfg.trace,
            cfg.format,
            cfg.page_size as u32,
            cfg.limit_refs,
        )?),
        BufferSize::Pages(_) => None,
    };
    let mut runs = Vec::new();
    for i in 0..a.runs.max(1) {
        let r = flashbuf_lab::run(&cfg, scan.as_ref())?;
        if !a.replay.common.json {
            eprintln!(
                "run {}: {:.2} M refs/s ({:.3} s wall, {:.3} s CPU)",
                i + 1,
                r.refs_per_s / 1e6,
                r.wall_time_s,
                r.cpu_time_s
            );
        }
        runs.push(r);
    }
    let mut speeds: Vec<f64> = runs.iter().map(|r| r.refs_per_s).collect();
    speeds.sort_by(f64::total_cmp);
    let best = speeds[speeds.len() - 1];
    let median = speeds[speeds.len() / 2];
    let last = &runs[runs.len() - 1];
    if a.replay.common.json {
        let doc = serde_json::json!({
            "bench": {
                "policy": last.policy, "store": last.store, "device": last.device,
                "buffer_pages": last.buffer_pages, "page_size": last.page_size,
                "trace": last.trace, "references": last.references, "runs": runs.len(),
                "best_refs_per_s": best, "median_refs_per_s": median,
                "max_rss_bytes": flashbuf_lab::result::max_rss_bytes(),
            },
            "runs": runs,
        });
        print(&format!("{doc:#}\n"))?;
    } else {
        print(&format!(
            "{} {} {} buffer {} pages of {} B, {} refs: best {:.2} M refs/s, median {:.2} M refs/s, peak RSS {} MiB\n",
            last.policy,
            last.store,
            last.device,
            last.buffer_pages,
            last.page_size,
            last.references,
            best / 1e6,
            median / 1e6,
            flashbuf_lab::result::max_rss_bytes() >> 20
        ))?;
    }
    Ok(exit_for(&runs))
}

fn cmd_replay(a: ReplayArgs) -> Result<ExitCode, LabError> {
    let cfg = replay_config(&a)?;
    let r = flashbuf_lab::run(&cfg, None)?;
    let runs = vec![r];
    if a.common.json {
        print(&json(&runs))?;
        print("\n")?;
    } else {
        print(&table(&runs))?;
    }
    Ok(exit_for(&runs))
}

fn check_ratio(r: f64) -> Result<f64, LabError> {
    if r > 0.0 && r <= 1.0 {
        Ok(r)
    } else {
        Err(LabError::Usage(format!(
            "--buffer-ratio {r} must be in (0, 1]"
        )))
    }
}

fn specs(
    repeated: &[String],
    short: &Option<String>,
    default: &[&str],
) -> Result<Vec<Spec>, LabError> {
    let mut names: Vec<String> = repeated.to_vec();
    if let Some(s) = short {
        names.extend(
            s.split(',')
                .map(str::trim)
                .filter(|x| !x.is_empty())
                .map(String::from),
        );
    }
    if names.is_empty() {
        names = default.iter().map(|s| s.to_string()).collect();
    }
    names.iter().map(|n| Spec::parse(n)).collect()
}

fn cmd_compare(a: CompareArgs) -> Result<ExitCode, LabError> {
    let mut buffers: Vec<BufferSize> = a
        .buffer_pages
        .iter()
        .map(|&n| BufferSize::Pages(n))
        .collect();
    for &r in &a.buffer_ratio {
        buffers.push(BufferSize::Ratio(check_ratio(r)?));
    }
    if buffers.is_empty() {
        buffers = vec![
            BufferSize::Ratio(0.01),
            BufferSize::Ratio(0.03),
            BufferSize::Ratio(0.10),
        ];
    }
    let base = base_config(&a.common, buffers[0])?;
    let m = Matrix {
        base,
        policies: specs(&a.policy, &a.policies, &["lru"])?,
        stores: specs(&a.store, &a.stores, &["direct"])?,
        devices: specs(&a.device, &a.devices, &["cost:read_us=100,write_us=1000"])?,
        buffers,
    };
    let quiet = a.common.quiet || a.common.json || a.csv;
    let total = m.len();
    let mut done = 0;
    let runs = compare(&m, |r| {
        done += 1;
        if !quiet {
            eprintln!(
                "[{done}/{total}] {} {} {} {} pages: {} misses, {} writes, {:.0} refs/s",
                r.policy, r.store, r.device, r.buffer_pages, r.misses, r.page_writes, r.refs_per_s
            );
        }
    })?;
    if a.common.json {
        print(&json(&runs))?;
        print("\n")?;
    } else if a.csv {
        print(&csv(&runs))?;
    } else {
        print(&table(&runs))?;
    }
    Ok(exit_for(&runs))
}
