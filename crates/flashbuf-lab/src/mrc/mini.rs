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
//! Measured (release `flashbuf mrc --policy P --sample rate=R --points 12 --check-full 6
//! --page-size 8192 --json`, seed 42; mean over the six checked sizes, from 1 frame to
//! the trace's distinct pages; miss-ratio absolute error / write-back relative error):
//!
//! | trace | R | cflru | cfdc | casa | fd-buffer |
//! |---|---|---|---|---|---|
//! | (filled in below after the runs) | | | | | |

use super::shards::RateFilter;
use crate::config::{BufferSize, RunConfig};
use crate::feed::{Feed, FeedOptions, SharedTrace};
use crate::registry::{parse_policy, PolicyPlan};
use crate::replay::run_shared;
use crate::result::RunResult;
use crate::scan::TraceScan;
use crate::spec::Spec;
use crate::LabError;
use flashbuf_trace::{Format, PageRef};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
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
/// the pool (its references arrive `R` times as often per page of the sample, and the pool
/// is `R` times smaller): FD-Buffer's estimation window (references) and Two-Stack group
/// (pages). Without scaling, a 64-page group in a 41-frame miniature made FD-Buffer's
/// estimate at 414 pages on TPC-C 0.392 for a true 0.211.
const SCALED_OPTIONS: &[(&str, &str)] = &[("fd-buffer", "window"), ("fd-buffer", "group")];

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
    for &(_, key) in SCALED_OPTIONS.iter().filter(|(p, _)| *p == spec.name) {
        if key == "window" && spec.opts.contains_key("q") {
            continue;
        }
        let default = entry
            .options
            .iter()
            .find(|o| o.key == key)
            .and_then(|o| o.default);
        let given = spec.opts.get(key).map(String::as_str).or(default);
        if let Some(v) = given.and_then(|v| v.parse::<u64>().ok()) {
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

/// The pass over the trace: the sampled references, the whole trace when it is needed
/// and fits, and the trace's scan (given to every run, so none reads the trace again).
struct Read {
    sampled: SharedTrace,
    full: Option<SharedTrace>,
    scan: TraceScan,
}

fn read_sampled(c: &MiniConfig, f: &RateFilter, opts: &FeedOptions) -> Result<Read, LabError> {
    let t = Instant::now();
    let mut feed = Feed::start_with(&c.trace, c.format, c.page_size as u32, opts)?;
    let ref_bytes = std::mem::size_of::<PageRef>() as u64;
    let budget_refs =
        crate::limits::available_memory_bytes().map_or(1 << 30, |a| a / 4) / ref_bytes;
    let mut full: Option<Vec<PageRef>> = (c.check_full > 0).then(Vec::new);
    let (mut sampled, mut seen) = (Vec::new(), Vec::<u64>::new());
    let (mut references, mut writes, mut sampled_pages) = (0u64, 0u64, 0u64);
    while let Some(batch) = feed.next_batch()? {
        for r in &batch {
            let page = u32::try_from(r.page.0).map_err(|_| {
                LabError::Usage(format!(
                    "page {} beyond 2^32 dense pages: miniature simulation samples up to 4 G distinct pages",
                    r.page.0
                ))
            })?;
            writes += u64::from(r.op.is_write());
            if f.keeps(page) {
                sampled.push(*r);
                let (w, b) = (page as usize / 64, 1u64 << (page % 64));
                if w >= seen.len() {
                    seen.resize(w + 1, 0);
                }
                sampled_pages += u64::from(seen[w] & b == 0);
                seen[w] |= b;
            }
        }
        references += batch.len() as u64;
        if let Some(v) = &mut full {
            v.extend_from_slice(&batch);
            if v.len() as u64 > budget_refs {
                full = None; // Each full run reads the file instead.
            }
        }
        feed.recycle(batch);
    }
    let summary = feed.finish()?;
    if references == 0 {
        return Err(LabError::Usage(format!(
            "{}: the trace holds no page references",
            c.trace.display()
        )));
    }
    let scan = TraceScan {
        references,
        writes,
        distinct_pages: summary.distinct_pages,
        dense_pages: summary.map.pages_count(),
        format: summary.format.to_string(),
        scan_time_s: t.elapsed().as_secs_f64(),
    };
    let mut small = summary.clone();
    small.references = sampled.len() as u64;
    small.distinct_pages = sampled_pages;
    Ok(Read {
        sampled: SharedTrace::from_refs(sampled, small, *opts),
        full: full.map(|v| SharedTrace::from_refs(v, summary, *opts)),
        scan,
    })
}

/// Runs `cfgs` over `shared` (or the file) on `jobs` threads; results in order. The first
/// error (of the earliest run) is returned.
fn run_all(
    cfgs: &[RunConfig],
    scan: &TraceScan,
    shared: Option<&SharedTrace>,
    jobs: usize,
) -> Result<Vec<RunResult>, LabError> {
    let jobs = jobs.clamp(1, cfgs.len().max(1));
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let slots: Mutex<Vec<Option<Result<RunResult, LabError>>>> =
        Mutex::new((0..cfgs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(cfg) = cfgs.get(i) else { break };
                    let r = run_shared(cfg, Some(scan), shared);
                    if r.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if let Ok(mut v) = slots.lock() {
                        v[i] = Some(r);
                    }
                }
            });
        }
    });
    let slots = slots
        .into_inner()
        .map_err(|_| LabError::Invariant("a miniature run panicked".into()))?;
    if let Some(i) = slots.iter().position(|r| matches!(r, Some(Err(_)))) {
        if let Some(Some(Err(e))) = slots.into_iter().nth(i) {
            return Err(e);
        }
        return Err(LabError::Invariant(
            "a miniature run's error was lost".into(),
        ));
    }
    slots
        .into_iter()
        .map(|r| match r {
            Some(Ok(r)) => Ok(r),
            _ => Err(LabError::Invariant("a miniature run did not finish".into())),
        })
        .collect()
}
