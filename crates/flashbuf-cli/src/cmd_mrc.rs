//! `flashbuf mrc`: LRU's miss and write-back curves for every buffer size in one pass;
//! for other policies, miniature simulation (the real policy over a sampled trace in a
//! scaled pool, one run per size), with its error against full runs on request.

use crate::common::{default_trace, parse_format, print};
use clap::Args;
use flashbuf_lab::mrc::{
    log_sizes, lru_curve, mini_report, miniature, report, MiniConfig, Sampling,
};
use flashbuf_lab::LabError;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct MrcArgs {
    /// Trace file (.zst/.gz accepted). Default: the bundled sample under testdata/.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Trace format: auto, pagetrace, msr, spc, lcs-csv, disksim, arc, oracle-general, blkparse, blkparse-d, pagebin, ranges.
    #[arg(long, default_value = "auto")]
    pub format: String,
    /// Page size in bytes (byte-addressed traces become one reference per page touched).
    #[arg(long, default_value_t = crate::common::DEFAULT_PAGE_SIZE, value_parser = crate::common::parse_trace_page_size)]
    pub page_size: usize,
    /// Policy with options (e.g. cfdc:window=0.25). lru: exact curves in one pass (a stack
    /// algorithm); any other pool policy: miniature simulation.
    #[arg(long, default_value = "lru")]
    pub policy: String,
    /// auto (exact for lru, miniature otherwise), exact (lru only) or miniature (also for
    /// lru, e.g. to measure its error against the exact curve).
    #[arg(long, default_value = "auto")]
    pub method: String,
    /// Buffer sizes in pages, comma-separated (default: --points sizes log-spaced up to the
    /// trace's distinct pages).
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<usize>,
    /// Number of log-spaced sizes when --sizes is not given.
    #[arg(long, default_value_t = 100)]
    pub points: usize,
    /// SHARDS sampling: rate=R (fixed rate, 0 < R <= 1) or size=N (at most N sampled
    /// pages). Default: exact for lru, rate=0.1 for miniature simulation (which takes
    /// fixed rates only).
    #[arg(long)]
    pub sample: Option<String>,
    /// Miniature simulation: also replay the whole trace at K of the sizes and report the
    /// estimate's error there.
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub check_full: usize,
    /// Miniature simulation: page bytes (`bytes`) or metadata only (`none`, faster; the
    /// same estimates) in every run, as `replay --data`.
    #[arg(long, default_value = "bytes", value_name = "bytes|none")]
    pub data: flashbuf_core::DataMode,
    /// Miniature simulation: runs at once (default: the machine's cores).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub jobs: Option<u16>,
    /// I/O costs for the cost column: read=X,write=Y (µs per page; default 1 and 1).
    #[arg(long, default_value = "read=1,write=1")]
    pub cost: String,
    /// Replay only the first N references.
    #[arg(long)]
    pub limit: Option<u64>,
    /// Seed of the sampling hash.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
    /// Print CSV.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Also draw miss ratio, write-backs and cost per reference (log x-axis) into this SVG.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

fn sampling(s: Option<&str>) -> Result<Sampling, LabError> {
    let Some(s) = s else {
        return Ok(Sampling::Exact);
    };
    let bad = || {
        LabError::Usage(format!(
            "--sample {s}: expected rate=R (0 < R <= 1) or size=N (N >= 1)"
        ))
    };
    match s.split_once('=') {
        Some(("rate", v)) => match v.parse::<f64>() {
            Ok(r) if r > 0.0 && r <= 1.0 => Ok(Sampling::Rate(r)),
            _ => Err(bad()),
        },
        Some(("size", v)) => match v.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(Sampling::Size(n)),
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

fn costs(s: &str) -> Result<(f64, f64), LabError> {
    let (mut r, mut w) = (1.0, 1.0);
    for kv in s.split(',').filter(|x| !x.trim().is_empty()) {
        let parsed = kv
            .split_once('=')
            .and_then(|(k, v)| v.trim().parse::<f64>().ok().map(|x| (k.trim(), x)))
            .filter(|(_, x)| x.is_finite() && *x >= 0.0);
        match parsed {
            Some(("read", x)) => r = x,
            Some(("write", x)) => w = x,
            _ => {
                return Err(LabError::Usage(format!(
                    "--cost {s}: expected read=X,write=Y with X, Y >= 0"
                )))
            }
        }
    }
    Ok((r, w))
}

/// Whether `a` asks for miniature simulation (checks the method and the policy).
fn is_miniature(a: &MrcArgs) -> Result<bool, LabError> {
    let lru = flashbuf_lab::spec::parse(&a.policy)?.name == "lru";
    match a.method.as_str() {
        "auto" => Ok(!lru),
        "miniature" => Ok(true),
        "exact" if lru => Ok(false),
        "exact" => Err(LabError::Usage(format!(
            "--method exact --policy {}: one-pass curves are exact for LRU only (a stack \
             algorithm); use --method miniature (or auto)",
            a.policy
        ))),
        m => Err(LabError::Usage(format!(
            "--method {m}: expected auto, exact or miniature"
        ))),
    }
}

/// What `flashbuf mrc` prints (JSON, CSV or a table, as `a` asks; its plot when asked).
pub fn output(a: &MrcArgs) -> Result<String, LabError> {
    if is_miniature(a)? {
        return output_miniature(a);
    }
    if a.check_full > 0 {
        return Err(LabError::Usage(
            "--check-full: the LRU curve is exact; use it with --method miniature".into(),
        ));
    }
    let sampling = sampling(a.sample.as_deref())?;
    let (read_us, write_us) = costs(&a.cost)?;
    let trace = a.trace.clone().unwrap_or_else(default_trace);
    let run = lru_curve(
        &trace,
        parse_format(&a.format)?,
        a.page_size as u32,
        a.limit,
        sampling,
        a.seed,
    )?;
    if run.references == 0 {
        return Err(LabError::Usage(format!(
            "{}: the trace has no references",
            trace.display()
        )));
    }
    let sizes = if a.sizes.is_empty() {
        log_sizes(a.points, run.curve.distinct_pages.round().max(1.0) as usize)
    } else {
        if a.sizes.contains(&0) {
            return Err(LabError::Usage(
                "--sizes: a buffer has at least 1 page".into(),
            ));
        }
        a.sizes.clone()
    };
    let rows = report::rows(&run, &sizes, read_us, write_us);
    if let Some(p) = &a.plot {
        let title = format!("LRU, {} ({})", trace.display(), run.sampling);
        report::plot(&rows, run.curve.references, p, &title)?;
    }
    let out = if a.json {
        report::json(&run, &trace, &rows, read_us, write_us) + "\n"
    } else if a.csv {
        report::csv(&run, &rows)
    } else {
        report::table(&run, &rows)
    };
    Ok(out)
}

/// `flashbuf mrc` by miniature simulation.
fn output_miniature(a: &MrcArgs) -> Result<String, LabError> {
    let given = a.sample.as_deref().map(|s| sampling(Some(s))).transpose()?;
    let rate = match given.unwrap_or(Sampling::Rate(0.1)) {
        Sampling::Rate(r) => r,
        Sampling::Exact => 1.0,
        Sampling::Size(_) => {
            return Err(LabError::Usage(
                "--sample size=N: miniature simulation takes a fixed rate (rate=R) only".into(),
            ))
        }
    };
    let (read_us, write_us) = costs(&a.cost)?;
    let trace = a.trace.clone().unwrap_or_else(default_trace);
    let jobs = a.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    let run = miniature(&MiniConfig {
        trace: trace.clone(),
        format: parse_format(&a.format)?,
        page_size: a.page_size,
        limit: a.limit,
        policy: flashbuf_lab::spec::parse(&a.policy)?,
        rate,
        seed: a.seed,
        sizes: a.sizes.clone(),
        points: a.points,
        check_full: a.check_full,
        jobs,
        data: a.data,
    })?;
    let rows = mini_report::rows(&run, read_us, write_us);
    if let Some(p) = &a.plot {
        let title = format!(
            "{} (miniature, rate={}), {}",
            a.policy,
            run.rate,
            trace.display()
        );
        report::plot(&rows, run.references as f64, p, &title)?;
    }
    Ok(if a.json {
        mini_report::json(&run, &trace, &rows, read_us, write_us) + "\n"
    } else if a.csv {
        mini_report::csv(&run, &rows)
    } else {
        mini_report::table(&run, &rows)
    })
}

pub fn run(a: MrcArgs) -> Result<ExitCode, LabError> {
    print(&output(&a)?)?;
    Ok(ExitCode::SUCCESS)
}
