//! Which bytes of a page a replayed write changes (`--dirty-bytes`; issue 15).
//!
//! A page trace says *that* a write dirtied a page, not *which bytes*; a write path that
//! logs only changed bytes (ICL) would look far better than it is if the lab invented
//! small changes. So a replay uses real ranges or none:
//!
//! - `whole` — every write changes the whole page (the default for traces without ranges);
//! - `trace` — the ranges the trace records for each write-back (range I/O CSV, the
//!   default for such a trace: PostgreSQL's own write-backs with the exact bytes that
//!   differ from the block's previous on-disk version). Through a pool (a second buffer
//!   below PostgreSQL's) a page's ranges merge until it is written back, so the store
//!   sees the bytes changed since it last saw the page;
//! - `empirical:FILE` — each write changes the ranges of an overwrite drawn at random
//!   (seeded) from the range I/O CSV `FILE`: the empirical distribution of a real source,
//!   for traces that have none. Only overwrites (`new` = 0) are drawn.
//!
//! The model a run used is reported (`dirty_model` in every result), with the mean bytes a
//! write changed (`dirty_exact_bytes_per_write`: the model's bytes below the page header
//! plus the header) and the mean bytes handed to the store (`dirty_bytes_per_write`: the
//! pool's and the store's [`DirtyRanges`] keep at most [`DirtyRanges::CAPACITY`] runs, so
//! neighbouring runs merge into a superset).
//!
//! Offsets are page offsets. The first [`HEADER_BYTES`] of a flashbuf page are its header
//! (id, version, checksum), which every write changes; a trace's ranges inside it are
//! covered by it. Ranges beyond the page are an error naming the line.

mod content;
mod empirical;

pub use content::PageContent;
pub use empirical::Empirical;

use crate::LabError;
use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::DirtyRanges;
use flashbuf_trace::{Format, Op, RangeStream};
use std::fmt;
use std::path::{Path, PathBuf};

/// The `--dirty-bytes` choice.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum DirtyBytes {
    /// `trace` for a range I/O CSV, else `whole`.
    #[default]
    Auto,
    /// Every write changes the whole page.
    Whole,
    /// The trace's own ranges (range I/O CSV).
    Trace,
    /// Ranges drawn from the overwrites of a range I/O CSV.
    Empirical(PathBuf),
}

impl DirtyBytes {
    /// Parses `auto`, `whole`, `trace` or `empirical:FILE`.
    pub fn parse(s: &str) -> Result<Self, LabError> {
        match s.trim() {
            "auto" => Ok(DirtyBytes::Auto),
            "whole" => Ok(DirtyBytes::Whole),
            "trace" => Ok(DirtyBytes::Trace),
            t => match t.split_once(':') {
                Some(("empirical", f)) if !f.is_empty() => Ok(DirtyBytes::Empirical(f.into())),
                _ => Err(LabError::Usage(format!(
                    "--dirty-bytes '{t}': expected whole, trace, auto or empirical:FILE (a range I/O CSV)"
                ))),
            },
        }
    }

    /// The model a run uses: `Auto` resolved for a trace of `format`; refuses `trace`
    /// where the trace has no ranges.
    pub fn resolve(&self, format: Format) -> Result<Self, LabError> {
        let ranges = format == Format::RangeCsv;
        match self {
            DirtyBytes::Auto if ranges => Ok(DirtyBytes::Trace),
            DirtyBytes::Auto => Ok(DirtyBytes::Whole),
            DirtyBytes::Trace if !ranges => Err(LabError::Usage(format!(
                "--dirty-bytes trace: a {format} trace records no dirty ranges (only a range I/O CSV does); use whole or empirical:FILE"
            ))),
            other => Ok(other.clone()),
        }
    }
}

impl fmt::Display for DirtyBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DirtyBytes::Auto => f.write_str("auto"),
            DirtyBytes::Whole => f.write_str("whole"),
            DirtyBytes::Trace => f.write_str("trace"),
            DirtyBytes::Empirical(p) => write!(f, "empirical:{}", p.display()),
        }
    }
}

/// Where a run's ranges come from, once resolved (not for `whole`).
pub enum RangeSource {
    /// The trace's own, read beside the references.
    Trace(RangeStream),
    /// Drawn from a sample.
    Empirical(Empirical),
}

impl RangeSource {
    /// Opens the source of `model` for the trace at `trace` (`None` for `whole`).
    pub fn open(model: &DirtyBytes, trace: &Path, seed: u64) -> Result<Option<Self>, LabError> {
        Ok(match model {
            DirtyBytes::Trace => Some(RangeSource::Trace(RangeStream::open(trace)?)),
            DirtyBytes::Empirical(f) => Some(RangeSource::Empirical(Empirical::load(f, seed)?)),
            DirtyBytes::Auto | DirtyBytes::Whole => None,
        })
    }

    /// The ranges of the next reference (an `op`, in trace order) into `out`, clipped to
    /// the payload and checked against `page_size`; reads yield none. The trace source
    /// checks the op and returns the record's (unmapped) page, for the caller to check
    /// that it is in step with the references.
    pub fn next(
        &mut self,
        op: Op,
        page_size: usize,
        out: &mut Vec<(u32, u32)>,
    ) -> Result<Option<u64>, LabError> {
        out.clear();
        let mut page = None;
        let raw: &[(u32, u32)] = match self {
            RangeSource::Trace(s) => {
                let line = s.line() + 1;
                let r = s.next_record()?.ok_or_else(|| {
                    LabError::Usage(format!("dirty ranges: the trace ended early (line {line})"))
                })?;
                if r.op != op {
                    return Err(LabError::Usage(format!(
                        "dirty ranges: line {} is out of step with the references",
                        line
                    )));
                }
                page = Some(r.page);
                r.ranges
            }
            RangeSource::Empirical(e) if op.is_write() => e.draw(),
            RangeSource::Empirical(_) => &[],
        };
        for &(o, l) in raw {
            let end = u64::from(o) + u64::from(l);
            if end > page_size as u64 {
                return Err(LabError::Usage(format!(
                    "dirty ranges: range {o}:{l} ends beyond the {page_size}-byte page (is --page-size the trace's?)"
                )));
            }
            let start = o.max(HEADER_BYTES as u32);
            if (start as u64) < end {
                out.push((start, end as u32 - start));
            }
        }
        Ok(page)
    }
}

/// What the writes of a run changed, summed.
#[derive(Debug, Clone, Default)]
pub struct DirtyStats {
    /// Writes counted.
    pub writes: u64,
    /// Bytes the model changed (its ranges below the header, plus the header).
    pub exact_bytes: u64,
    /// Bytes of the ranges handed to the store ([`DirtyRanges`], a superset; 0 through a
    /// pool).
    pub handed_bytes: u64,
    /// Reused for each write's union (no allocation per write).
    scratch: Vec<(u32, u32)>,
}

impl DirtyStats {
    /// Counts one write of `ranges` (payload ranges, as [`RangeSource::next`] gives them)
    /// handed over as `handed` (`None` through a pool, which merges a page's writes
    /// before it writes back).
    pub fn count(&mut self, ranges: &[(u32, u32)], handed: Option<&DirtyRanges>) {
        self.writes += 1;
        self.scratch.clear();
        self.scratch.extend(ranges.iter().map(|&(o, l)| (o, o + l)));
        self.scratch.sort_unstable();
        let (mut union, mut end) = (0u64, 0u32);
        for &(a, b) in &self.scratch {
            let a = a.max(end);
            if b > a {
                union += u64::from(b - a);
                end = b;
            }
        }
        self.exact_bytes += HEADER_BYTES as u64 + union;
        self.handed_bytes += handed.map_or(0, |h| h.total_bytes() as u64);
    }

    /// Mean exact bytes per write (`None` without writes).
    pub fn exact_mean(&self) -> Option<f64> {
        (self.writes > 0).then(|| self.exact_bytes as f64 / self.writes as f64)
    }

    /// Mean handed bytes per write (`None` without writes or through a pool).
    pub fn handed_mean(&self) -> Option<f64> {
        (self.writes > 0 && self.handed_bytes > 0)
            .then(|| self.handed_bytes as f64 / self.writes as f64)
    }
}

/// The [`DirtyRanges`] handed to a store for a write of payload `ranges`: the header plus
/// the ranges (merged down to the capacity).
pub fn handed_ranges(ranges: &[(u32, u32)]) -> DirtyRanges {
    let mut d = DirtyRanges::new();
    d.add(0, HEADER_BYTES);
    for &(o, l) in ranges {
        d.add(o as usize, l as usize);
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_resolve() {
        assert_eq!(DirtyBytes::parse("whole").unwrap(), DirtyBytes::Whole);
        let e = DirtyBytes::parse("empirical:x.csv").unwrap();
        assert_eq!(e.to_string(), "empirical:x.csv");
        assert!(DirtyBytes::parse("half")
            .unwrap_err()
            .to_string()
            .contains("empirical:FILE"));
        let a = DirtyBytes::Auto;
        assert_eq!(a.resolve(Format::RangeCsv).unwrap(), DirtyBytes::Trace);
        assert_eq!(a.resolve(Format::PageTrace).unwrap(), DirtyBytes::Whole);
        let e = DirtyBytes::Trace
            .resolve(Format::Msr)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no dirty ranges"), "{e}");
    }

    #[test]
    fn stats_count_exact_and_handed() {
        let mut s = DirtyStats::default();
        let r = [
            (40, 8),
            (44, 8),
            (100, 1),
            (200, 1),
            (300, 1),
            (400, 1),
            (500, 1),
        ];
        let h = handed_ranges(&r);
        s.count(&r, Some(&h));
        assert_eq!(s.exact_bytes, 32 + 12 + 5);
        assert!(s.handed_bytes > s.exact_bytes, "{s:?}");
    }
}
