//! `flashbuf compare`: every policy × store × device × buffer size.

use crate::common::{base_config, check_ratio, exit_for, print, CommonArgs};
use clap::Args;
use flashbuf_lab::compare::{compare, Matrix};
use flashbuf_lab::registry::{validate_devices, validate_policy, validate_store};
use flashbuf_lab::result::{csv, json, legend, table};
use flashbuf_lab::spec::Spec;
use flashbuf_lab::sweep;
use flashbuf_lab::{BufferSize, LabError, RunResult};
use std::process::ExitCode;

#[derive(Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// A policy (repeat for more). `flashbuf list policies` shows every name and option.
    /// Option grids make one policy per value: `cfdc:window=0.25..0.75/3` (3 values,
    /// evenly spaced), `cfdc:cluster_size=32|64`.
    #[arg(long = "policy")]
    pub policy: Vec<String>,
    /// Policies, comma-separated (options allowed: lru,cfdc:window=0.25,cluster_size=32).
    #[arg(long)]
    pub policies: Option<String>,
    /// A store (repeat for more); `flashbuf list stores`.
    #[arg(long = "store")]
    pub store: Vec<String>,
    /// Stores, comma-separated (options allowed).
    #[arg(long)]
    pub stores: Option<String>,
    /// A device (repeat for more); `flashbuf list devices`.
    #[arg(long = "device")]
    pub device: Vec<String>,
    /// Devices, comma-separated (options allowed: sim:mtron:seed=7,precondition=true,memory).
    #[arg(long)]
    pub devices: Option<String>,
    /// Buffer sizes in pages: a number, a list (`100,400`) or a log-spaced range
    /// (`100..10000/5`); repeat for more.
    #[arg(long = "buffer-pages", allow_hyphen_values = true)]
    pub buffer_pages: Vec<String>,
    /// Buffer sizes as fractions of the trace's distinct pages: a number, a list
    /// (`0.01,0.03`) or a log-spaced range (`0.01..0.3/6`); repeat for more. Default:
    /// 0.01, 0.03 and 0.1.
    #[arg(long = "buffer-ratio", allow_hyphen_values = true)]
    pub buffer_ratio: Vec<String>,
    /// Runs of the matrix at once (default: the machine's cores). Counts are identical to
    /// a sequential run's; each run is single-threaded.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub jobs: Option<u16>,
    /// Print CSV instead of a table.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Also draw a metric against buffer size (log scale), one line per policy × store,
    /// one panel per device, into this file (SVG, or PNG if it ends in .png).
    #[arg(long)]
    pub plot: Option<std::path::PathBuf>,
    /// The plot's metric: miss-ratio, write-backs, cost (device us per reference), wa,
    /// erases, response.
    #[arg(long, default_value = "cost")]
    pub metric: String,
}

/// The components named by a repeated flag and its comma-separated short form (split
/// between components only, never inside `name:key=value,key=value`), each checked by
/// `check`; an error names the flag and the value.
fn specs(
    (flag, short_flag): (&str, &str),
    repeated: &[String],
    short: &Option<String>,
    default: &[&str],
    check: impl Fn(&Spec) -> Result<(), LabError>,
) -> Result<Vec<Spec>, LabError> {
    let mut names: Vec<(String, String)> = repeated
        .iter()
        .map(|n| (flag.to_string(), n.clone()))
        .collect();
    if let Some(s) = short {
        names.extend(
            Spec::split_list(s)
                .into_iter()
                .map(|n| (short_flag.to_string(), n)),
        );
    }
    if names.is_empty() {
        names = default
            .iter()
            .map(|s| (flag.to_string(), s.to_string()))
            .collect();
    }
    names
        .iter()
        .map(|(f, n)| {
            let named = |e: LabError| LabError::Usage(format!("{f} {n}: {e}"));
            let spec = crate::common::parse_component(f, n, &check)?;
            let grid = sweep::expand(&spec).map_err(named)?;
            for s in &grid {
                check(s).map_err(|e| LabError::Usage(format!("{f} {n}: {s}: {e}")))?;
            }
            Ok(grid)
        })
        .collect::<Result<Vec<Vec<Spec>>, LabError>>()
        .map(|v| v.into_iter().flatten().collect())
}

/// Policies compared when none is named: every online policy.
const DEFAULT_POLICIES: &[&str] = &["lru", "cflru", "cfdc", "casa"];
/// The device used when none is named: the simulated Mtron SSD of the CFDC and
/// StableBuffer papers.
const DEFAULT_DEVICES: &[&str] = &["sim:mtron"];

/// One progress bar for the whole matrix (runs done, elapsed, ETA) on stderr; hidden
/// when `quiet`.
fn matrix_bar(total: usize, quiet: bool) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    if let Ok(s) = ProgressStyle::with_template(
        "matrix [{bar:30}] {pos}/{len} runs, {elapsed} elapsed, ETA {eta}",
    ) {
        pb.set_style(s.progress_chars("=> "));
    }
    pb
}

/// The runs of `flashbuf compare` (and its plot, when asked).
pub fn runs(a: &CompareArgs) -> Result<Vec<RunResult>, LabError> {
    let mut buffers: Vec<BufferSize> = Vec::new();
    for text in &a.buffer_pages {
        let pages = sweep::sizes(text, |x| {
            if x >= 1.0 && x.fract() == 0.0 {
                Ok(x)
            } else {
                Err(LabError::Usage(format!(
                    "--buffer-pages {text}: {x} is not a whole number of pages (at least 1)"
                )))
            }
        })?;
        for p in pages {
            let b = BufferSize::Pages(p.round() as usize);
            if !buffers.contains(&b) {
                buffers.push(b);
            }
        }
    }
    for text in &a.buffer_ratio {
        for r in sweep::sizes(text, |x| {
            check_ratio(x).map_err(|e| LabError::Usage(format!("--buffer-ratio {text}: {e}")))
        })? {
            buffers.push(BufferSize::Ratio(r));
        }
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
        policies: specs(
            ("--policy", "--policies"),
            &a.policy,
            &a.policies,
            DEFAULT_POLICIES,
            validate_policy,
        )?,
        stores: specs(
            ("--store", "--stores"),
            &a.store,
            &a.stores,
            &["direct"],
            |s| validate_store(s, a.common.page_size),
        )?,
        devices: specs(
            ("--device", "--devices"),
            &a.device,
            &a.devices,
            DEFAULT_DEVICES,
            |s| validate_devices([s]),
        )?,
        buffers,
    };
    let metric = flashbuf_lab::plot::Metric::parse(&a.metric)?;
    if let Some(p) = &a.plot {
        let ext = p
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        if !matches!(ext.as_deref(), Some("svg" | "png")) {
            return Err(LabError::Usage(format!(
                "--plot {}: the file name must end in .svg or .png",
                p.display()
            )));
        }
    }
    let quiet = a.common.quiet || a.common.json || a.csv;
    let jobs = a.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    let bar = matrix_bar(m.len(), quiet);
    let runs = compare(&m, jobs, |r| {
        bar.println(format!(
            "{} {} {} {} pages: {} misses, {} writes, {:.2} M refs/s",
            r.policy,
            r.store,
            r.device,
            r.buffer_pages,
            r.misses,
            r.page_writes,
            r.refs_per_s / 1e6
        ));
        bar.inc(1);
    });
    bar.finish_and_clear();
    let runs = runs?;
    if let Some(p) = &a.plot {
        let title = format!("{} ({} B pages)", m.base.trace.display(), m.base.page_size);
        flashbuf_lab::plot::plot(&runs, p, &title, metric)?;
    }
    Ok(runs)
}

pub fn run(a: CompareArgs) -> Result<ExitCode, LabError> {
    let runs = runs(&a)?;
    if a.common.json {
        print(&json(&runs))?;
        print("\n")?;
    } else if a.csv {
        print(&csv(&runs))?;
    } else {
        print(&table(&runs))?;
        if a.common.explain {
            print(&format!("\n{}", legend(&runs)))?;
        }
    }
    Ok(exit_for(&runs))
}
