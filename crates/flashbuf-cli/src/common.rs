//! Arguments and helpers shared by the commands.

use clap::Args;
use flashbuf_lab::{BufferSize, LabError, RunConfig, RunResult};
use flashbuf_trace::Format;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// The bundled sample trace (first 200,000 references of the TPC-C page trace).
pub const SAMPLE_TRACE: &str = "testdata/traces/tpcc-sample.pagetrace.csv.zst";

/// The default page size: PostgreSQL's 8 KB blocks, those of every bundled PostgreSQL
/// trace (no trace format here records its page size).
pub const DEFAULT_PAGE_SIZE: usize = 8192;

/// Parses `--page-size` of the commands that only read traces (`convert`, `mrc`): the
/// unit byte addresses are divided by, any whole number of bytes from 1 (`1` keeps
/// byte or object addresses as they are).
pub fn parse_trace_page_size(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 && u32::try_from(n).is_ok() => Ok(n),
        _ => Err(format!(
            "'{s}': for reading a trace, the page size is a whole number of bytes from 1 to {}",
            u32::MAX
        )),
    }
}

/// Parses `--page-size` of the commands that build stores ([`flashbuf_lab::config::PAGE_SIZE_RULE`]).
pub fn parse_page_size(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a whole number of bytes"))?;
    if flashbuf_core::page::is_valid_page_size(n) {
        Ok(n)
    } else {
        Err(flashbuf_lab::config::PAGE_SIZE_RULE.to_string())
    }
}

#[derive(Args, Clone)]
pub struct CommonArgs {
    /// Trace file (.zst/.gz accepted). Default: the bundled sample under testdata/.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Trace format: auto, pagetrace, msr, spc, lcs-csv, disksim, arc, oracle-general, blkparse, blkparse-d, pagebin, ranges.
    #[arg(long, default_value = "auto")]
    pub format: String,
    /// Page size in bytes (default: 8192, PostgreSQL's, as in the bundled traces;
    /// byte-addressed traces become one reference per page touched).
    #[arg(long, default_value_t = DEFAULT_PAGE_SIZE, value_parser = parse_page_size)]
    pub page_size: usize,
    /// Seed for everything random.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Check invariants during the run and verify every page at the end.
    #[arg(long)]
    pub paranoid: bool,
    /// Replay only the first N references.
    #[arg(long)]
    pub limit: Option<u64>,
    /// Print one JSON document on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// After the table, say what each column means.
    #[arg(long)]
    pub explain: bool,
    /// Workload dynamics applied to the replayed trace per epoch: wm1, wm2 (FD-Buffer
    /// paper's models) or ratio=X (a constant write ratio X, e.g. ratio=0.5 or ratio=50%).
    #[arg(long, conflicts_with = "write_ratio")]
    pub workload: Option<String>,
    /// Same as --workload ratio=X: turn reads into writes or writes into reads, uniformly
    /// at random per epoch, to reach write ratio X.
    #[arg(long)]
    pub write_ratio: Option<String>,
    /// Asymmetry dynamics applied to the device per epoch: rm1 or rm2 (FD-Buffer paper).
    #[arg(long)]
    pub asymmetry: Option<String>,
    /// References per epoch of --workload and --asymmetry.
    #[arg(long, default_value_t = 5000)]
    pub epoch: u64,
    /// Add the offline cost bounds to each run: --bounds (device read/write latencies as
    /// costs), --bounds r=R (costs 1 and R) or --bounds read=X,write=Y.
    #[arg(long, num_args = 0..=1, default_missing_value = "device")]
    pub bounds: Option<String>,
    /// The trace's data set exists on the device before the run (every miss reads the
    /// device; without it, pages never written are read for free). For the direct store.
    #[arg(long)]
    pub presize: bool,
    /// Replay the first N references before measuring (the papers' warm-up), or `fill`:
    /// until the buffer is full (FD-Buffer §5.1). Counts, device time and ratios cover the
    /// references after them; the warm-up's misses and page writes are reported apart
    /// (warmup_refs, cold_misses, cold_page_writes).
    #[arg(long, default_value = "0", value_name = "N|fill")]
    pub warmup: flashbuf_lab::config::Warmup,
    /// Which bytes a write changes: `whole`, `trace` (a range I/O CSV's own ranges),
    /// `empirical:FILE` (ranges of overwrites drawn, seeded, from the range I/O CSV FILE),
    /// or `auto` (trace for a range I/O CSV, else whole).
    /// Reported as dirty_model; only ICL depends on it.
    #[arg(long, default_value = "auto", value_name = "MODEL")]
    pub dirty_bytes: String,
    /// What pages carry: `bytes` (whole pages, copied and checksummed) or `none` (only
    /// each page's header and stamp, 64 bytes; every policy, store and device decision and
    /// cost as with bytes, for fast policy and device sweeps; every store takes it).
    /// Reported as data.
    #[arg(long, default_value = "bytes", value_name = "bytes|none")]
    pub data: flashbuf_core::DataMode,
}

#[derive(Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Buffer replacement policy, `NAME[:key=value,...]` (`none`: pass-through to the
    /// store); `flashbuf list policies` shows every name and option.
    #[arg(long, default_value = "lru")]
    pub policy: String,
    /// Page store (write path), `NAME[:key=value,...]`; `flashbuf list stores`.
    #[arg(long, default_value = "direct")]
    pub store: String,
    /// Device, `NAME[:ARG][:key=value,...]` (`memory`, `sim:mtron`, `file:PATH`, ...);
    /// `flashbuf list devices`.
    #[arg(long, default_value = "memory")]
    pub device: String,
    /// Buffer size in pages.
    #[arg(long, conflicts_with = "buffer_ratio")]
    pub buffer_pages: Option<usize>,
    /// Buffer size as a fraction of the trace's distinct pages (default 0.03).
    #[arg(long, allow_negative_numbers = true)]
    pub buffer_ratio: Option<f64>,
}

/// The bundled sample: relative to the working directory, else to the source tree.
pub fn default_trace() -> PathBuf {
    let local = PathBuf::from(SAMPLE_TRACE);
    if local.exists() {
        return local;
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(SAMPLE_TRACE)
}

pub fn parse_format(s: &str) -> Result<Option<Format>, LabError> {
    if s == "auto" {
        return Ok(None);
    }
    s.parse::<Format>()
        .map(Some)
        .map_err(|e| LabError::Usage(e.to_string()))
}

/// The run configuration of the common arguments: trace, page size, seed, checks, and
/// the run options (dynamics, bounds, pre-sizing); LRU / direct / memory until the command
/// names its own.
pub fn base_config(c: &CommonArgs, buffer: BufferSize) -> Result<RunConfig, LabError> {
    use flashbuf_lab::dynamics::{parse_asymmetry, parse_ratio, Dynamics, WorkloadTransform};
    let workload = match (&c.workload, &c.write_ratio) {
        (Some(w), _) => Some(WorkloadTransform::parse(w)?),
        (None, Some(x)) => Some(WorkloadTransform::Ratio(parse_ratio(x)?)),
        (None, None) => None,
    };
    if c.epoch == 0 {
        return Err(LabError::Usage("--epoch must be at least 1".into()));
    }
    Ok(RunConfig {
        trace: c.trace.clone().unwrap_or_else(default_trace),
        format: parse_format(&c.format)?,
        buffer,
        page_size: c.page_size,
        seed: c.seed,
        paranoid: c.paranoid,
        progress: !c.quiet && std::io::stderr().is_terminal() && std::io::stdout().is_terminal(),
        limit_refs: c.limit,
        dynamics: Dynamics {
            workload,
            asymmetry: c.asymmetry.as_deref().map(parse_asymmetry).transpose()?,
            epoch_refs: c.epoch,
        },
        bounds: c
            .bounds
            .as_deref()
            .map(flashbuf_lab::bounds::BoundsCost::parse)
            .transpose()?,
        presize: c.presize,
        warmup: c.warmup,
        dirty_bytes: flashbuf_lab::dirty::DirtyBytes::parse(&c.dirty_bytes)?,
        data: c.data,
        ..RunConfig::default()
    })
}

pub fn exit_for(runs: &[RunResult]) -> ExitCode {
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

pub fn print(s: &str) -> Result<(), LabError> {
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Parses the component `text` given to `flag`; an error names the flag and the value, and
/// an unknown name reads better than the syntax error it caused (`simm:mtron`: "unknown
/// device 'simm'", not "'mtron' is not key=value"). `check` validates the bare name.
pub fn parse_component(
    flag: &str,
    text: &str,
    check: &dyn Fn(&flashbuf_lab::spec::Spec) -> Result<(), LabError>,
) -> Result<flashbuf_lab::spec::Spec, LabError> {
    use flashbuf_lab::spec::{ConfigError, Spec};
    let named = |e: LabError| LabError::Usage(format!("{flag} {text}: {e}"));
    flashbuf_lab::spec::parse(text).map_err(|e| {
        let bare = Spec {
            name: text
                .split(':')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string(),
            ..Spec::default()
        };
        match check(&bare) {
            Err(unknown @ LabError::Config(ConfigError::UnknownName { .. })) => named(unknown),
            _ => named(e),
        }
    })
}

pub fn replay_config(a: &ReplayArgs) -> Result<RunConfig, LabError> {
    let buffer = match (a.buffer_pages, a.buffer_ratio) {
        (Some(n), _) => BufferSize::Pages(n),
        (None, Some(r)) => BufferSize::Ratio(
            check_ratio(r).map_err(|e| LabError::Usage(format!("--buffer-ratio {r}: {e}")))?,
        ),
        (None, None) => BufferSize::Ratio(0.03),
    };
    let mut cfg = base_config(&a.common, buffer)?;
    use flashbuf_lab::registry::{validate_devices, validate_policy, validate_store};
    cfg.policy = parse_component("--policy", &a.policy, &validate_policy)?;
    cfg.store = parse_component("--store", &a.store, &|s| validate_store(s, cfg.page_size))?;
    cfg.device = parse_component("--device", &a.device, &|s| validate_devices([s]))?;
    Ok(cfg)
}

pub fn check_ratio(r: f64) -> Result<f64, LabError> {
    if r > 0.0 && r <= 1.0 {
        Ok(r)
    } else {
        Err(LabError::Usage(format!("{r} is not a fraction in (0, 1]")))
    }
}
