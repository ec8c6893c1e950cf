//! Rows of a cost curve (`flashbuf mrc`): table, CSV, JSON and an SVG with three panels
//! (miss ratio, write-backs per reference, I/O cost per reference) on a log x-axis.

use super::{CurveRun, Sampling};
use crate::LabError;
use plotters::prelude::*;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// One size of the curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CurveRow {
    /// Buffer frames.
    pub buffer_pages: usize,
    /// Misses (page reads), cold misses included.
    pub misses: f64,
    /// `misses / references`.
    pub miss_ratio: f64,
    /// Dirty evictions during the trace (replay's `page_writes`).
    pub page_writes: f64,
    /// Dirty pages a final flush writes.
    pub flush_writes: f64,
    /// `read_us · misses + write_us · (page_writes + flush_writes)`, µs.
    pub io_cost_us: f64,
    /// `io_cost_us / references`.
    pub io_cost_per_ref_us: f64,
}

/// The curve at `sizes` with I/O costs `read_us` and `write_us` per page.
pub fn rows(run: &CurveRun, sizes: &[usize], read_us: f64, write_us: f64) -> Vec<CurveRow> {
    let refs = run.curve.references.max(1.0);
    sizes
        .iter()
        .map(|&s| {
            let p = run.curve.at(s);
            let cost = read_us * p.misses + write_us * (p.page_writes + p.flush_writes);
            CurveRow {
                buffer_pages: s,
                misses: p.misses,
                miss_ratio: p.miss_ratio,
                page_writes: p.page_writes,
                flush_writes: p.flush_writes,
                io_cost_us: cost,
                io_cost_per_ref_us: cost / refs,
            }
        })
        .collect()
}

fn exact(sampling: Sampling) -> bool {
    matches!(sampling, Sampling::Exact)
}

fn num(x: f64, exact: bool) -> String {
    if exact {
        format!("{}", x.round() as u64)
    } else {
        format!("{x:.1}")
    }
}

/// A fixed-width table.
pub fn table(run: &CurveRun, rows: &[CurveRow]) -> String {
    let e = exact(run.sampling);
    let mut s = format!(
        "LRU curve ({}), {} references, {:.0} distinct pages, {:.2} s\n",
        run.sampling, run.references, run.curve.distinct_pages, run.wall_s
    );
    let _ = writeln!(
        s,
        "{:>12} {:>14} {:>10} {:>14} {:>12} {:>14}",
        "buffer_pages", "misses", "miss_ratio", "page_writes", "flush_writes", "cost/ref_us"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:>12} {:>14} {:>10.5} {:>14} {:>12} {:>14.3}",
            r.buffer_pages,
            num(r.misses, e),
            r.miss_ratio,
            num(r.page_writes, e),
            num(r.flush_writes, e),
            r.io_cost_per_ref_us
        );
    }
    s
}

/// CSV with a header line.
pub fn csv(run: &CurveRun, rows: &[CurveRow]) -> String {
    let e = exact(run.sampling);
    let mut s = String::from(
        "buffer_pages,misses,miss_ratio,page_writes,flush_writes,io_cost_us,io_cost_per_ref_us\n",
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{}",
            r.buffer_pages,
            num(r.misses, e),
            r.miss_ratio,
            num(r.page_writes, e),
            num(r.flush_writes, e),
            r.io_cost_us,
            r.io_cost_per_ref_us
        );
    }
    s
}

#[derive(Serialize)]
struct JsonDoc<'a> {
    policy: &'static str,
    trace: String,
    sampling: String,
    references: u64,
    distinct_pages: f64,
    wall_s: f64,
    memory_bytes: usize,
    read_us: f64,
    write_us: f64,
    rows: &'a [CurveRow],
}

/// One JSON document.
pub fn json(
    run: &CurveRun,
    trace: &Path,
    rows: &[CurveRow],
    read_us: f64,
    write_us: f64,
) -> String {
    let doc = JsonDoc {
        policy: "lru",
        trace: trace.display().to_string(),
        sampling: run.sampling.to_string(),
        references: run.references,
        distinct_pages: run.curve.distinct_pages,
        wall_s: run.wall_s,
        memory_bytes: run.curve.memory_bytes,
        read_us,
        write_us,
        rows,
    };
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// Draws the three panels into an SVG at `path` (`references`: the trace's, to turn
/// write-backs into a rate).
pub fn plot(rows: &[CurveRow], references: f64, path: &Path, title: &str) -> Result<(), LabError> {
    let err = |e: &dyn std::fmt::Display| LabError::Usage(format!("plot {}: {e}", path.display()));
    let pts: Vec<&CurveRow> = rows.iter().filter(|r| r.buffer_pages > 0).collect();
    let (Some(first), Some(last)) = (pts.first(), pts.last()) else {
        return Err(err(&"no sizes to plot"));
    };
    let x0 = first.buffer_pages as f64;
    let x1 = (last.buffer_pages as f64).max(x0 + 1.0);
    let root = SVGBackend::new(path, (900, 900)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root
        .titled(title, ("sans-serif", 18))
        .map_err(|e| err(&e))?;
    let panels = root.split_evenly((3, 1));
    type Metric = fn(&CurveRow, f64) -> f64;
    let metrics: [(&str, Metric); 3] = [
        ("miss ratio", |r, _| r.miss_ratio),
        ("write-backs per reference", |r, n| {
            (r.page_writes + r.flush_writes) / n
        }),
        ("I/O cost per reference (µs)", |r, _| r.io_cost_per_ref_us),
    ];
    let n = references.max(1.0);
    for (panel, (label, f)) in panels.iter().zip(metrics) {
        let ys: Vec<(f64, f64)> = pts
            .iter()
            .map(|r| (r.buffer_pages as f64, f(r, n)))
            .collect();
        let ymax = ys.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1e-12) * 1.05;
        let mut chart = ChartBuilder::on(panel)
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(70)
            .build_cartesian_2d((x0..x1).log_scale(), 0.0..ymax)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("buffer (pages, log scale)")
            .y_desc(label)
            .draw()
            .map_err(|e| err(&e))?;
        chart
            .draw_series(LineSeries::new(ys, BLUE.stroke_width(2)))
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
