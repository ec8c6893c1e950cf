//! A preparatory pass over a trace: counts, distinct pages, dense address-space size.

use crate::feed::Feed;
use crate::LabError;
use flashbuf_trace::Format;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// What a scan found.
#[derive(Debug, Clone, Serialize)]
pub struct TraceScan {
    /// References.
    pub references: u64,
    /// Write references.
    pub writes: u64,
    /// Distinct pages referenced.
    pub distinct_pages: u64,
    /// Size of the dense address space the pages map into (see [`crate::feed`]).
    pub dense_pages: u64,
    /// The format read.
    pub format: String,
    /// Seconds the scan took.
    pub scan_time_s: f64,
}

impl TraceScan {
    /// A scan of nothing read: one reference to one page (what a reproduction's planning
    /// pass uses instead of reading a trace).
    pub fn stand_in() -> Self {
        Self {
            references: 1,
            writes: 0,
            distinct_pages: 1,
            dense_pages: 1,
            format: String::new(),
            scan_time_s: 0.0,
        }
    }
}

/// Scans `path` (at most `limit` references).
pub fn scan_trace(
    path: &Path,
    format: Option<Format>,
    page_size: u32,
    limit: Option<u64>,
) -> Result<TraceScan, LabError> {
    let t = Instant::now();
    let mut feed = Feed::start(path, format, page_size, limit)?;
    let (mut refs, mut writes) = (0u64, 0u64);
    while let Some(batch) = feed.next_batch()? {
        for r in &batch {
            writes += u64::from(r.op.is_write());
        }
        refs += batch.len() as u64;
        feed.recycle(batch);
    }
    let summary = feed.finish()?;
    Ok(TraceScan {
        references: refs,
        writes,
        distinct_pages: summary.distinct_pages,
        dense_pages: summary.map.pages_count(),
        format: summary.format.to_string(),
        scan_time_s: t.elapsed().as_secs_f64(),
    })
}
