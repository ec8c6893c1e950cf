//! `flashbuf mrc`: LRU's miss and write-back curves for every buffer size in one pass.

use crate::common::{default_trace, parse_format, print};
use clap::Args;
use flashbuf_lab::mrc::{log_sizes, lru_curve, report, Sampling};
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
    /// Policy: lru (the stack algorithm whose curves one pass gives exactly).
    #[arg(long, default_value = "lru")]
    pub policy: String,
    /// Buffer sizes in pages, comma-separated (default: --points sizes log-spaced up to the
    /// trace's distinct pages).
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<usize>,
    /// Number of log-spaced sizes when --sizes is not given.
    #[arg(long, default_value_t = 100)]
    pub points: usize,
    /// SHARDS sampling: rate=R (fixed rate, 0 < R <= 1) or size=N (at most N sampled
    /// pages). Default: exact.
    #[arg(long)]
    pub sample: Option<String>,
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

/// What `flashbuf mrc` prints (JSON, CSV or a table, as `a` asks; its plot when asked).
pub fn output(a: &MrcArgs) -> Result<String, LabError> {
    if a.policy != "lru" {
        return Err(LabError::Usage(format!(
            "--policy {}: one-pass curves are exact for LRU only (a stack algorithm); \
             for other policies run `flashbuf compare` over the sizes",
            a.policy
        )));
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

pub fn run(a: MrcArgs) -> Result<ExitCode, LabError> {
    print(&output(&a)?)?;
    Ok(ExitCode::SUCCESS)
}
