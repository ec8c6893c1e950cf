//! Cost curves in one pass (`flashbuf mrc`, design.md §11): LRU's exact miss *and
//! write-back* counts for every buffer size from one pass over a trace, hence the I/O cost
//! `C_r · misses(C) + C_w · writebacks(C)` for any read/write cost pair; SHARDS sampling
//! for long traces.
//!
//! - [`stack`]: stack distances (Fenwick tree over time slots, compacted).
//! - [`curve`]: the miss/write-back difference arrays and the resulting [`Curve`].
//! - [`shards`]: fixed-rate and fixed-size SHARDS.
//! - [`report`]: rows with I/O costs, table, CSV, JSON, plot.
//! - [`mini`]: miniature simulation for policies that are not stack algorithms (the real
//!   policy over a spatially sampled trace in a scaled pool), with its error against full
//!   runs; [`mini_report`]: its table, CSV and JSON.

pub mod curve;
pub mod mini;
pub mod mini_report;
mod mini_runs;
pub mod report;
pub mod shards;
pub mod stack;

pub use curve::{Curve, CurveBuilder, CurvePoint};
pub use mini::{miniature, MiniConfig, MiniPoint, MiniRun};
pub use shards::{RateFilter, Sampler, Sampling};

use crate::feed::{Feed, FeedOptions};
use crate::LabError;
use flashbuf_trace::Format;
use std::path::Path;
use std::time::Instant;

/// A computed curve and what it cost.
#[derive(Debug, Clone)]
pub struct CurveRun {
    /// The curve.
    pub curve: Curve,
    /// Sampling used.
    pub sampling: Sampling,
    /// Wall seconds, trace reading included.
    pub wall_s: f64,
    /// References read from the trace.
    pub references: u64,
}

/// Computes LRU's curve of `trace` (pages of `page_size` bytes, mapped densely as for a
/// replay) under `sampling`.
pub fn lru_curve(
    trace: &Path,
    format: Option<Format>,
    page_size: u32,
    limit: Option<u64>,
    sampling: Sampling,
    seed: u64,
) -> Result<CurveRun, LabError> {
    let started = Instant::now();
    let opts = FeedOptions {
        limit,
        transform: None,
    };
    let mut feed = Feed::start_with(trace, format, page_size, &opts)?;
    let mut s = Sampler::new(sampling, seed);
    let mut references = 0u64;
    while let Some(batch) = feed.next_batch()? {
        for r in &batch {
            let page = dense_page_u32(r.page.0)?;
            s.access(r.op.is_write(), page);
        }
        references += batch.len() as u64;
        feed.recycle(batch);
    }
    feed.finish()?;
    Ok(CurveRun {
        curve: s.finish(),
        sampling,
        wall_s: started.elapsed().as_secs_f64(),
        references,
    })
}

/// A dense page number as the hash and the curves take it (at most 2^32 distinct pages).
pub(crate) fn dense_page_u32(page: u64) -> Result<u32, LabError> {
    u32::try_from(page).map_err(|_| {
        LabError::Usage(format!(
            "page {page} beyond 2^32 dense pages: curves support up to 4 G distinct pages"
        ))
    })
}

/// `n` sizes spread evenly on a log scale over `1..=max` (distinct, ascending).
pub fn log_sizes(n: usize, max: usize) -> Vec<usize> {
    let max = max.max(1);
    let mut v: Vec<usize> = (0..n.max(1))
        .map(|i| {
            let f = if n <= 1 {
                1.0
            } else {
                i as f64 / (n - 1) as f64
            };
            ((max as f64).powf(f).round() as usize).clamp(1, max)
        })
        .collect();
    v.dedup();
    v
}
