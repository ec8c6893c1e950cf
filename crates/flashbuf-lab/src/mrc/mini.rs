//! Miniature simulation (Waldspurger, Saemundsson, Ahmad and Park, "Cache Modeling and
//! Optimization using Miniature Simulations", USENIX ATC '17): curves for policies that
//! are not stack algorithms (CFLRU, CFDC, CASA, FD-Buffer, …), whose misses at one size say
//! nothing about another, so one pass cannot give the whole curve.
//!
//! The trace is read once; a page is kept iff it is in SHARDS' fixed-rate sample at rate
//! `R` ([`super::shards::RateFilter`]: the same hash and seed as the LRU path), and every
//! reference of a kept page is kept, in order, with its page number unchanged (policies
//! that cluster neighbouring pages, as CFDC does, see the same numbers as in a full run).
//! For each buffer size `C` the *real* policy then runs over the sampled references in a
//! pool of `max(1, round(C·R))` frames: the lab's own replay ([`crate::replay::run_shared`]
//! over the sampled trace held in memory, direct store on the memory device, the oracle
//! included), so the pool and the policy are exactly those of a full run. Misses,
//! write-backs and the final flush are scaled by `1/R`; the miss ratio is the scaled misses
//! over the trace's references (as for fixed-rate SHARDS in [`super::shards`]; the
//! miniature's own ratio, the ATC '17 estimator, is kept as `sampled_miss_ratio`). Only
//! fixed-rate sampling: the paper's fixed-size variant lowers the rate as the sample
//! grows, which for a simulation means restarting it (or evicting pages from a live
//! policy), so it is not offered. The miniature runs go to `jobs` threads.
//!
//! With `check_full = K` the same replay also runs on the whole trace at `K` of the sizes
//! (spread over the list) and each checked row gets the miniature's error: the absolute
//! error of the miss ratio and the relative error of `page_writes` (dirty evictions).
//!
//! Measured (release `flashbuf mrc --trace T --policy P --sample rate=R --sizes S
//! --check-full 6 --jobs 2 --json`, seed 42, default options, `--method miniature` for
//! lru; `S`: six sizes log-spaced from 1% to 100% of the trace's distinct pages). Each
//! cell: mean over the six sizes of the miss ratio's absolute error / of the page writes'
//! relative error (over the sizes where the full run wrote):
//!
//! | trace | R | cflru | cfdc | casa | fd-buffer | lru |
//! |---|---|---|---|---|---|---|
//! | tpcc-pg15-w4 (shared) | 0.01 | 0.0095 / 0.045 | 0.0074 / 0.020 | 0.0123 / 0.043 | 0.0085 / 0.036 | 0.0105 / 0.054 |
//! | tpcc-pg15-w4 (shared) | 0.1 | 0.0007 / 0.056 | 0.0012 / 0.029 | 0.0025 / 0.052 | 0.0095 / 0.032 | 0.0011 / 0.051 |
//! | tpcc-pg15-w8 | 0.01 | 0.0032 / 0.023 | 0.0026 / 0.037 | 0.0039 / 0.025 | 0.0040 / 0.122 | 0.0025 / 0.021 |
//! | tpcc-pg15-w8 | 0.1 | 0.0023 / 0.013 | 0.0040 / 0.047 | 0.0016 / 0.032 | 0.0054 / 0.109 | 0.0015 / 0.013 |
//! | pgbench-pg15-s50 | 0.01 | 0.0006 / 0.009 | 0.0007 / 0.011 | 0.0009 / 0.010 | 0.0052 / 0.124 | 0.0006 / 0.007 |
//! | pgbench-pg15-s50 | 0.1 | 0.0006 / 0.006 | 0.0007 / 0.006 | 0.0003 / 0.005 | 0.0050 / 0.074 | 0.0003 / 0.006 |
//! | oltp-pg15-t8 | 0.01 | 0.0118 / 0.365 | 0.0170 / 0.128 | 0.0031 / 0.132 | 0.0253 / 0.484 | 0.0056 / 0.210 |
//! | oltp-pg15-t8 | 0.1 | 0.0173 / 0.077 | 0.0293 / 0.075 | 0.0136 / 0.198 | 0.0298 / 0.492 | 0.0153 / 0.076 |
//!
//! (tpcc-pg15-w4: `../shared/traces`, 5.1 M references, 41,399 pages; the others
//! `traces/` of this repository, 2 M references each, 46,645 / 58,743 / 20,708 pages.)
//! The miniatures took 0.7–2.2 s at R = 0.01 and 1.8–5.6 s at R = 0.1 for six sizes, the
//! trace's reading included, where the six full runs took 7–39 s on the same two
//! threads. FD-Buffer's column is with its window and group scaled ([`miniature_spec`]);
//! unscaled, its TPC-C errors were 0.025 and 0.039. The oltp trace is the hardest (a
//! few pages take a large share of all references, and whether one is sampled moves the
//! whole estimate): there R = 0.1 is no better than 0.01 on this one seed. The ATC '17
//! estimator (the miniature's own miss ratio) had mean errors 0.048 (R = 0.01) and 0.019
//! (R = 0.1) over the same cells, against 0.0067 and 0.0071 for the scaled one: as for
//! SHARDS, hot pages make the sampled share of references a poor scale. Below ~10
//! miniature frames (C·R < 10) estimates are coarse: the pool is rounded to whole frames.

use super::mini_runs::{read_sampled, run_all};
use super::shards::RateFilter;
use crate::config::{BufferSize, RunConfig};
use crate::feed::FeedOptions;
use crate::registry::{parse_policy, PolicyPlan};
use crate::spec::Spec;
use crate::LabError;
use flashbuf_trace::Format;
use std::path::PathBuf;
use std::time::Instant;

/// What a miniature simulation runs.
#[derive(Debug, Clone)]
pub struct MiniConfig {
    /// Trace file.
    pub trace: PathBuf,
    /// Trace format (`None` = detect).
    pub format: Option<Format>,
    /// Page size in bytes (of the trace's mapping and of the pool).
    pub page_size: usize,
    /// Read at most this many references.
    pub limit: Option<u64>,
    /// The policy (any pool policy of the registry).
    pub policy: Spec,
    /// Sampling rate `R` in `(0, 1]`.
    pub rate: f64,
    /// Seed of the sampling hash and of the runs.
    pub seed: u64,
    /// Buffer sizes in frames of the full buffer; empty: `points` log-spaced up to the
    /// trace's distinct pages.
    pub sizes: Vec<usize>,
    /// Number of log-spaced sizes when `sizes` is empty.
    pub points: usize,
    /// Full replays at this many of the sizes, to measure the miniature's error.
    pub check_full: usize,
    /// Runs at once (at least 1).
    pub jobs: usize,
    /// Page bytes or metadata only in every run (`--data`; the estimates are the same).
    pub data: flashbuf_core::DataMode,
}

/// A full run at one size and the miniature's error against it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct FullCheck {
    /// Misses of the full run.
    pub misses: u64,
    /// Dirty evictions of the full run (`page_writes`).
    pub page_writes: u64,
    /// Its miss ratio.
    pub miss_ratio: f64,
    /// `|estimated − full|` miss ratio.
    pub miss_ratio_abs_err: f64,
    /// `|sampled_miss_ratio − full|` (the ATC '17 estimator's error).
    pub sampled_miss_ratio_abs_err: f64,
    /// `|estimated − full| / full` page writes (`None` when the full run wrote none).
    pub page_writes_rel_err: Option<f64>,
    /// Wall seconds of the full run.
    pub wall_s: f64,
}

/// The estimate at one buffer size.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MiniPoint {
    /// Buffer frames estimated for.
    pub buffer_pages: usize,
    /// Frames of the miniature pool (`max(1, round(C·R))`).
    pub mini_pages: usize,
    /// Estimated misses (the miniature's scaled by `1/R`).
    pub misses: f64,
    /// Estimated dirty evictions.
    pub page_writes: f64,
    /// Estimated dirty pages a final flush writes.
    pub flush_writes: f64,
    /// The miniature's misses over its own references.
    pub sampled_miss_ratio: f64,
    /// The full run, with `check_full`.
    pub full: Option<FullCheck>,
}

/// A whole miniature curve.
#[derive(Debug, Clone, PartialEq)]
pub struct MiniRun {
    /// The policy's name.
    pub policy: String,
    /// The policy spec the miniatures ran (options in references or pages scaled by `R`).
    pub mini_policy: String,
    /// The rate realised by the hash threshold.
    pub rate: f64,
    /// References of the trace.
    pub references: u64,
    /// References kept.
    pub sampled_references: u64,
    /// Distinct pages of the trace.
    pub distinct_pages: u64,
    /// Distinct pages kept.
    pub sampled_pages: u64,
    /// One point per size.
    pub points: Vec<MiniPoint>,
    /// Wall seconds: reading plus the miniature runs.
    pub mini_wall_s: f64,
    /// Wall seconds of the full runs (0 without `check_full`).
    pub full_wall_s: f64,
}

impl MiniRun {
    /// Means over the checked sizes: (miss-ratio absolute error, page-writes relative
    /// error over the sizes where the full run wrote), `None` if nothing was checked.
    pub fn mean_errors(&self) -> Option<(f64, Option<f64>)> {
        let checks: Vec<&FullCheck> = self.points.iter().filter_map(|p| p.full.as_ref()).collect();
        if checks.is_empty() {
            return None;
        }
        let mr = checks.iter().map(|c| c.miss_ratio_abs_err).sum::<f64>() / checks.len() as f64;
        let wb: Vec<f64> = checks
            .iter()
            .filter_map(|c| c.page_writes_rel_err)
            .collect();
        let wb = (!wb.is_empty()).then(|| wb.iter().sum::<f64>() / wb.len() as f64);
        Some((mr, wb))
    }
}

/// Checks what needs no trace: the rate, the sizes, the policy (a pool policy).
pub fn validate(c: &MiniConfig) -> Result<(), LabError> {
    if !(c.rate > 0.0 && c.rate <= 1.0) {
        return Err(LabError::Usage(format!(
            "sampling rate {}: miniature simulation needs a rate in (0, 1]",
            c.rate
        )));
    }
    if c.sizes.contains(&0) {
        return Err(LabError::Usage(
            "--sizes: a buffer has at least 1 page".into(),
        ));
    }
    if let PolicyPlan::PassThrough = parse_policy(&c.policy)? {
        return Err(LabError::Usage(format!(
            "--policy {}: the pass-through has no buffer to size",
            c.policy.name
        )));
    }
    Ok(())
}

/// The miniature curve of `c` (see the module docs).
pub fn miniature(c: &MiniConfig) -> Result<MiniRun, LabError> {
    validate(c)?;
    let started = Instant::now();
    let filter = RateFilter::new(c.rate, c.seed);
    let opts = FeedOptions {
        limit: c.limit,
        transform: None,
    };
    let read = read_sampled(c, &filter, &opts)?;
    let distinct = read.scan.distinct_pages;
    let sizes = if c.sizes.is_empty() {
        super::log_sizes(c.points, distinct.max(1) as usize)
    } else {
        c.sizes.clone()
    };
    let base = RunConfig {
        trace: c.trace.clone(),
        format: c.format,
        policy: c.policy.clone(),
        page_size: c.page_size,
        seed: c.seed,
        limit_refs: c.limit,
        data: c.data,
        ..RunConfig::default()
    };
    let with = |pages: usize| RunConfig {
        buffer: BufferSize::Pages(pages),
        ..base.clone()
    };
    let mini_pages: Vec<usize> = sizes
        .iter()
        .map(|&s| ((s as f64 * c.rate).round() as usize).max(1))
        .collect();
    let mini_policy = miniature_spec(&c.policy, c.rate);
    let minis: Vec<RunConfig> = mini_pages
        .iter()
        .map(|&m| RunConfig {
            policy: mini_policy.clone(),
            ..with(m)
        })
        .collect();
    let mini = run_all(&minis, &read.scan, Some(&read.sampled), c.jobs)?;
    let mini_wall_s = started.elapsed().as_secs_f64();
    let checked = checked_indices(sizes.len(), c.check_full);
    let fulls: Vec<RunConfig> = checked.iter().map(|&i| with(sizes[i])).collect();
    let t_full = Instant::now();
    let full = run_all(&fulls, &read.scan, read.full.as_ref(), c.jobs)?;
    let full_wall_s = if fulls.is_empty() {
        0.0
    } else {
        t_full.elapsed().as_secs_f64()
    };
    let scale = 1.0 / filter.rate();
    let refs = read.scan.references.max(1) as f64;
    let mut points: Vec<MiniPoint> = sizes
        .iter()
        .zip(&mini_pages)
        .zip(&mini)
        .map(|((&s, &m), r)| MiniPoint {
            buffer_pages: s,
            mini_pages: m,
            misses: r.misses as f64 * scale,
            page_writes: r.page_writes as f64 * scale,
            flush_writes: r.flush_writes as f64 * scale,
            sampled_miss_ratio: r.misses as f64 / r.references.max(1) as f64,
            full: None,
        })
        .collect();
    for (&i, f) in checked.iter().zip(&full) {
        let p = &mut points[i];
        let full_ratio = f.misses as f64 / f.references.max(1) as f64;
        p.full = Some(FullCheck {
            misses: f.misses,
            page_writes: f.page_writes,
            miss_ratio: full_ratio,
            miss_ratio_abs_err: (p.misses / refs - full_ratio).abs(),
            sampled_miss_ratio_abs_err: (p.sampled_miss_ratio - full_ratio).abs(),
            page_writes_rel_err: (f.page_writes > 0)
                .then(|| (p.page_writes - f.page_writes as f64).abs() / f.page_writes as f64),
            wall_s: f.wall_time_s,
        });
    }
    Ok(MiniRun {
        policy: c.policy.name.clone(),
        mini_policy: mini_policy.to_string(),
        rate: filter.rate(),
        references: read.scan.references,
        sampled_references: read.sampled.refs().len() as u64,
        distinct_pages: distinct,
        sampled_pages: read.sampled.summary().distinct_pages,
        points,
        mini_wall_s,
        full_wall_s,
    })
}

/// Options counted in references or in pages, which a miniature scales by `R` along with
/// the pool (it sees a fraction `R` of the references and has `R` of the frames):
/// FD-Buffer's estimation window (references) and Two-Stack group (pages). CFLRU's and
/// CFDC's windows are fractions of the pool and need nothing; cluster sizes (CFDC's
/// `cluster_size`, the clustering `cluster`) are ranges of page numbers, which sampling
/// keeps unchanged, so they are not scaled either (a cluster holds about `R` times as
/// many sampled pages: part of the error of CFDC's estimates). Without scaling, a 64-page group in a 41-frame miniature made FD-Buffer's
/// estimate at 414 pages on TPC-C 0.392 for a true 0.211.
pub const SCALED_OPTIONS: &[(&str, &str)] = &[("fd-buffer", "window"), ("fd-buffer", "group")];

/// `spec` as a miniature at rate `rate` runs it: each option of [`SCALED_OPTIONS`] (as
/// given, else its default) times `rate`, rounded, at least 1; FD-Buffer's `window` is
/// left alone when `q` sizes the windows. Any other spec is returned unchanged.
pub fn miniature_spec(spec: &Spec, rate: f64) -> Spec {
    let mut out = spec.clone();
    let Ok(entry) = flashbuf_pool::policy::registry::lookup(&spec.name) else {
        return out;
    };
    if rate >= 1.0 {
        return out;
    }
    let clustered_variant =
        spec.name == "fd-buffer" && spec.opts.get("cost").map(String::as_str) == Some("clustered");
    for &(_, key) in SCALED_OPTIONS.iter().filter(|(p, _)| *p == spec.name) {
        if key == "window" && spec.opts.contains_key("q") {
            continue;
        }
        // Group counts (`groups=`, the clustered-cost variant's default) scale with the
        // frames by themselves; a group size beside them would be refused.
        if key == "group"
            && !spec.opts.contains_key("group")
            && (spec.opts.contains_key("groups") || clustered_variant)
        {
            continue;
        }
        let number = |v: &str| v.parse::<u64>().ok();
        let default = entry
            .options
            .iter()
            .find(|o| o.key == key)
            .and_then(|o| o.default)
            .and_then(number);
        let given = match spec.opts.get(key) {
            Some(v) => number(v),
            None => default,
        };
        if let Some(v) = given {
            let scaled = ((v as f64 * rate).round() as u64).max(1);
            out.opts.insert(key.to_string(), scaled.to_string());
        }
    }
    out
}

/// `k` of `0..n`, spread evenly (both ends included when `k ≥ 2`; the middle for 1).
pub fn checked_indices(n: usize, k: usize) -> Vec<usize> {
    let k = k.min(n);
    let mut v: Vec<usize> = match k {
        0 => Vec::new(),
        1 => vec![n / 2],
        _ => (0..k)
            .map(|i| ((i * (n - 1)) as f64 / (k - 1) as f64).round() as usize)
            .collect(),
    };
    v.dedup();
    v
}
