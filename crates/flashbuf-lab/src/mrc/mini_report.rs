//! A miniature curve ([`super::mini`]) as rows of the LRU curve's shape ([`CurveRow`]:
//! the same table columns, CSV columns first, JSON fields and plot), marked as estimates
//! (`method`, `sample_rate`), with the full runs' errors where they were checked.

use super::mini::{FullCheck, MiniRun};
use super::report::CurveRow;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// The method's name in every output.
pub const METHOD: &str = "miniature";

/// The estimate at each size as a curve row (costs as in [`super::report::rows`]).
pub fn rows(run: &MiniRun, read_us: f64, write_us: f64) -> Vec<CurveRow> {
    let refs = run.references.max(1) as f64;
    run.points
        .iter()
        .map(|p| {
            let cost = read_us * p.misses + write_us * (p.page_writes + p.flush_writes);
            CurveRow {
                buffer_pages: p.buffer_pages,
                misses: p.misses,
                miss_ratio: p.misses / refs,
                page_writes: p.page_writes,
                flush_writes: p.flush_writes,
                io_cost_us: cost,
                io_cost_per_ref_us: cost / refs,
            }
        })
        .collect()
}

fn header(run: &MiniRun) -> String {
    format!(
        "{} curve ({METHOD}, rate={}, miniatures run {}), {} references ({} sampled), {} distinct pages ({} sampled), {:.2} s",
        run.policy.to_uppercase(),
        run.rate,
        run.mini_policy,
        run.references,
        run.sampled_references,
        run.distinct_pages,
        run.sampled_pages,
        run.mini_wall_s
    )
}

fn opt(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |x| format!("{x:.4}"))
}

/// A fixed-width table; checked sizes show the full run's miss ratio and the errors, and
/// a last line their means.
pub fn table(run: &MiniRun, rows: &[CurveRow]) -> String {
    let mut s = header(run) + "\n";
    let _ = writeln!(
        s,
        "{:>12} {:>10} {:>14} {:>10} {:>14} {:>12} {:>12} {:>10} {:>10} {:>10}",
        "buffer_pages",
        "mini_pages",
        "misses",
        "miss_ratio",
        "page_writes",
        "flush_writes",
        "cost/ref_us",
        "full_mr",
        "mr_abs_err",
        "wb_rel_err"
    );
    for (r, p) in rows.iter().zip(&run.points) {
        let f = p.full.as_ref();
        let _ = writeln!(
            s,
            "{:>12} {:>10} {:>14.1} {:>10.5} {:>14.1} {:>12.1} {:>12.3} {:>10} {:>10} {:>10}",
            r.buffer_pages,
            p.mini_pages,
            r.misses,
            r.miss_ratio,
            r.page_writes,
            r.flush_writes,
            r.io_cost_per_ref_us,
            opt(f.map(|f| f.miss_ratio)),
            opt(f.map(|f| f.miss_ratio_abs_err)),
            opt(f.and_then(|f| f.page_writes_rel_err)),
        );
    }
    if let Some((mr, wb)) = run.mean_errors() {
        let _ = writeln!(
            s,
            "mean error over {} full runs ({:.2} s): miss ratio {mr:.4} (absolute), page writes {} (relative)",
            run.points.iter().filter(|p| p.full.is_some()).count(),
            run.full_wall_s,
            opt(wb)
        );
    }
    s
}

/// CSV: the LRU curve's columns, then the method, the rate, the miniature's frames and the
/// full-run columns (empty where not checked).
pub fn csv(run: &MiniRun, rows: &[CurveRow]) -> String {
    let mut s = String::from(
        "buffer_pages,misses,miss_ratio,page_writes,flush_writes,io_cost_us,io_cost_per_ref_us,\
         method,sample_rate,mini_pages,full_misses,full_page_writes,full_miss_ratio,\
         miss_ratio_abs_err,page_writes_rel_err\n",
    );
    for (r, p) in rows.iter().zip(&run.points) {
        let f = p.full.as_ref();
        let cell = |x: Option<String>| x.unwrap_or_default();
        let _ = writeln!(
            s,
            "{},{:.1},{},{:.1},{:.1},{},{},{METHOD},{},{},{},{},{},{},{}",
            r.buffer_pages,
            r.misses,
            r.miss_ratio,
            r.page_writes,
            r.flush_writes,
            r.io_cost_us,
            r.io_cost_per_ref_us,
            run.rate,
            p.mini_pages,
            cell(f.map(|f| f.misses.to_string())),
            cell(f.map(|f| f.page_writes.to_string())),
            cell(f.map(|f| f.miss_ratio.to_string())),
            cell(f.map(|f| f.miss_ratio_abs_err.to_string())),
            cell(f.and_then(|f| f.page_writes_rel_err).map(|x| x.to_string())),
        );
    }
    s
}

#[derive(Serialize)]
struct JsonRow<'a> {
    #[serde(flatten)]
    row: &'a CurveRow,
    mini_pages: usize,
    sampled_miss_ratio: f64,
    full: Option<&'a FullCheck>,
}

#[derive(Serialize)]
struct JsonCheck {
    sizes: usize,
    mean_miss_ratio_abs_err: f64,
    mean_page_writes_rel_err: Option<f64>,
    wall_s: f64,
}

#[derive(Serialize)]
struct JsonDoc<'a> {
    policy: &'a str,
    mini_policy: &'a str,
    method: &'static str,
    trace: String,
    sample_rate: f64,
    references: u64,
    sampled_references: u64,
    distinct_pages: u64,
    sampled_pages: u64,
    wall_s: f64,
    read_us: f64,
    write_us: f64,
    rows: Vec<JsonRow<'a>>,
    check: Option<JsonCheck>,
}

/// One JSON document: the LRU curve's fields and rows, plus `method`, `sample_rate`, each
/// row's `mini_pages`, `sampled_miss_ratio` and `full` check, and the mean errors.
pub fn json(run: &MiniRun, trace: &Path, rows: &[CurveRow], read_us: f64, write_us: f64) -> String {
    let check = run.mean_errors().map(|(mr, wb)| JsonCheck {
        sizes: run.points.iter().filter(|p| p.full.is_some()).count(),
        mean_miss_ratio_abs_err: mr,
        mean_page_writes_rel_err: wb,
        wall_s: run.full_wall_s,
    });
    let doc = JsonDoc {
        policy: &run.policy,
        mini_policy: &run.mini_policy,
        method: METHOD,
        trace: trace.display().to_string(),
        sample_rate: run.rate,
        references: run.references,
        sampled_references: run.sampled_references,
        distinct_pages: run.distinct_pages,
        sampled_pages: run.sampled_pages,
        wall_s: run.mini_wall_s,
        read_us,
        write_us,
        rows: rows
            .iter()
            .zip(&run.points)
            .map(|(row, p)| JsonRow {
                row,
                mini_pages: p.mini_pages,
                sampled_miss_ratio: p.sampled_miss_ratio,
                full: p.full.as_ref(),
            })
            .collect(),
        check,
    };
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}
