//! `flashbuf compare`: every policy × store × device × buffer size.

use crate::common::{base_config, check_ratio, exit_for, print, CommonArgs};
use clap::Args;
use flashbuf_lab::compare::{compare, Matrix};
use flashbuf_lab::registry::{validate_devices, validate_policy, validate_store};
use flashbuf_lab::result::{csv, json, table};
use flashbuf_lab::spec::{ConfigError, Spec};
use flashbuf_lab::{BufferSize, LabError};
use std::process::ExitCode;

#[derive(Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// A policy (repeat for more).
    #[arg(long = "policy")]
    pub policy: Vec<String>,
    /// Policies, comma-separated (options allowed: lru,cfdc:window=0.25,cluster_size=32).
    #[arg(long)]
    pub policies: Option<String>,
    /// A store (repeat for more).
    #[arg(long = "store")]
    pub store: Vec<String>,
    /// Stores, comma-separated (options allowed).
    #[arg(long)]
    pub stores: Option<String>,
    /// A device (repeat for more).
    #[arg(long = "device")]
    pub device: Vec<String>,
    /// Devices, comma-separated (options allowed: sim:mtron:seed=7,precondition=true,memory).
    #[arg(long)]
    pub devices: Option<String>,
    /// A buffer size in pages (repeat for more).
    #[arg(long = "buffer-pages")]
    pub buffer_pages: Vec<usize>,
    /// A buffer size as a fraction of distinct pages (repeat for more).
    #[arg(long = "buffer-ratio")]
    pub buffer_ratio: Vec<f64>,
    /// Print CSV instead of a table.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Also draw I/O cost per reference against buffer size, one line per policy × store
    /// × device, into this SVG file.
    #[arg(long)]
    pub plot: Option<std::path::PathBuf>,
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
            let spec = flashbuf_lab::spec::parse(n).map_err(|e| {
                // An unknown name reads better than the syntax error it caused
                // (`simm:mtron`: "unknown device 'simm'", not "'mtron' is not key=value").
                let name = n.split(':').next().unwrap_or_default().trim();
                let bare = Spec {
                    name: name.to_string(),
                    ..Spec::default()
                };
                match check(&bare) {
                    Err(unknown @ LabError::Config(ConfigError::UnknownName { .. })) => {
                        named(unknown)
                    }
                    _ => named(e),
                }
            })?;
            check(&spec).map_err(named)?;
            Ok(spec)
        })
        .collect()
}

/// Policies compared when none is named: every online policy.
const DEFAULT_POLICIES: &[&str] = &["lru", "cflru", "cfdc", "casa"];
/// The device used when none is named: the simulated Mtron SSD of the CFDC and
/// StableBuffer papers.
const DEFAULT_DEVICES: &[&str] = &["sim:mtron"];

pub fn run(a: CompareArgs) -> Result<ExitCode, LabError> {
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
    if let Some(p) = &a.plot {
        let title = format!("{} ({} B pages)", m.base.trace.display(), m.base.page_size);
        flashbuf_lab::plot::plot_svg(&runs, p, &title)?;
    }
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
