//! `flashbuf compare`: every policy × store × device × buffer size.

use crate::common::{base_config, check_ratio, exit_for, print, run_options, CommonArgs};
use clap::Args;
use flashbuf_lab::compare::{compare_with, Matrix};
use flashbuf_lab::result::{csv, json, table};
use flashbuf_lab::spec::Spec;
use flashbuf_lab::{BufferSize, LabError};
use std::process::ExitCode;

#[derive(Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// A policy (repeat for more).
    #[arg(long = "policy")]
    pub policy: Vec<String>,
    /// Policies without options, comma-separated.
    #[arg(long)]
    pub policies: Option<String>,
    /// A store (repeat for more).
    #[arg(long = "store")]
    pub store: Vec<String>,
    /// Stores without options, comma-separated.
    #[arg(long)]
    pub stores: Option<String>,
    /// A device (repeat for more).
    #[arg(long = "device")]
    pub device: Vec<String>,
    /// Devices without options, comma-separated.
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
    names.iter().map(|n| flashbuf_lab::spec::parse(n)).collect()
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
        policies: specs(&a.policy, &a.policies, DEFAULT_POLICIES)?,
        stores: specs(&a.store, &a.stores, &["direct"])?,
        devices: specs(&a.device, &a.devices, DEFAULT_DEVICES)?,
        buffers,
    };
    let quiet = a.common.quiet || a.common.json || a.csv;
    let total = m.len();
    let mut done = 0;
    let runs = compare_with(&m, &run_options(&a.common)?, |r| {
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
