//! The trace formats: their names, and one line parser per format.
//!
//! Each parser turns one line (without its line terminator, never blank, never a `#`
//! comment) into a [`Parsed`] value, or into an error message that the reader prefixes
//! with the file name and line number.

use std::fmt;
use std::str::FromStr;

pub(crate) mod arc;
pub(crate) mod disksim;
pub(crate) mod fields;
pub(crate) mod lcs;
pub(crate) mod msr;
pub(crate) mod pagetrace;
pub(crate) mod spc;

use crate::Op;

/// Largest number of pages one request may span (2^24, i.e. 64 GiB of 4 KiB pages).
///
/// A larger request is a parse error: no real trace issues one, and an absurd size in a
/// corrupt line would otherwise expand to billions of references.
pub const MAX_REQUEST_PAGES: u64 = 1 << 24;

/// Number of bits of a page number that address pages inside one SPC ASU or DiskSim
/// device; the ASU / device number goes above them: `page = (asu << 40) | page_within`.
pub const ADDRESS_SPACE_BITS: u32 = 40;

/// A trace file format.
///
/// The names used by [`FromStr`] and [`Display`](fmt::Display) are `pagetrace`, `msr`,
/// `spc`, `lcs-csv`, `disksim` and `arc`; `auto` (detect from the content) is handled by
/// [`Format::parse_arg`] and by passing `None` to [`TraceReader::open`](crate::TraceReader::open).
///
/// ```
/// use flashbuf_trace::Format;
/// assert_eq!("lcs-csv".parse::<Format>().unwrap(), Format::LcsCsv);
/// assert_eq!(Format::ArcLis.to_string(), "arc");
/// assert_eq!(Format::parse_arg("auto").unwrap(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Page-reference CSV: header `op,page`, then `R,123` / `W,123`.
    PageTrace,
    /// MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    Msr,
    /// UMass SPC: `ASU,LBA,Size,Opcode,Timestamp`.
    Spc,
    /// libCacheSim CSV: `version,time,op,size,lbn` with a hex SCSI opcode.
    LcsCsv,
    /// DiskSim ASCII: `time device sector sectors flags`.
    DiskSim,
    /// ARC `.lis`: `first_page page_count _ _`.
    ArcLis,
}

impl Format {
    /// Every format, in the order of the CLI's list.
    pub const ALL: [Format; 6] = [
        Format::PageTrace,
        Format::Msr,
        Format::Spc,
        Format::LcsCsv,
        Format::DiskSim,
        Format::ArcLis,
    ];

    /// The format's name (`pagetrace`, `msr`, `spc`, `lcs-csv`, `disksim`, `arc`).
    pub const fn name(self) -> &'static str {
        match self {
            Format::PageTrace => "pagetrace",
            Format::Msr => "msr",
            Format::Spc => "spc",
            Format::LcsCsv => "lcs-csv",
            Format::DiskSim => "disksim",
            Format::ArcLis => "arc",
        }
    }

    /// Whether the format addresses bytes (or sectors) and so depends on the page size.
    pub const fn is_byte_addressed(self) -> bool {
        !matches!(self, Format::PageTrace | Format::ArcLis)
    }

    /// Parses a CLI argument: a format name, or `auto` for `None` (detect).
    pub fn parse_arg(s: &str) -> Result<Option<Format>, ParseFormatError> {
        if s.trim().eq_ignore_ascii_case("auto") {
            Ok(None)
        } else {
            s.parse().map(Some)
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown format name; its message lists the valid ones.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown trace format '{0}'; valid formats: auto, pagetrace, msr, spc, lcs-csv, disksim, arc"
)]
pub struct ParseFormatError(pub String);

impl FromStr for Format {
    type Err = ParseFormatError;

    /// Accepts the names of [`Format::name`] (case-insensitive) and the aliases
    /// `lcs`, `libcachesim`, `lis`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        Ok(match t.as_str() {
            "pagetrace" => Format::PageTrace,
            "msr" => Format::Msr,
            "spc" => Format::Spc,
            "lcs-csv" | "lcs" | "libcachesim" => Format::LcsCsv,
            "disksim" => Format::DiskSim,
            "arc" | "lis" => Format::ArcLis,
            _ => return Err(ParseFormatError(s.to_string())),
        })
    }
}

/// What one line of a trace amounts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// One page reference.
    One(Op, u64),
    /// References to the pages `first..=last`, in order (`first < last`).
    Span(Op, u64, u64),
    /// A valid line that references nothing (e.g. a SCSI command that is neither a read
    /// nor a write); counted by [`TraceReader::skipped`](crate::TraceReader::skipped).
    Skip,
}

/// The pages touched by `size` bytes at byte `offset`: `offset/ps ..= (offset+size-1)/ps`,
/// or just the page containing `offset` when `size` is 0.
#[inline]
pub(crate) fn byte_span(op: Op, offset: u64, size: u64, ps: u64) -> Result<Parsed, String> {
    let first = offset / ps;
    let last = if size == 0 {
        first
    } else {
        match offset.checked_add(size - 1) {
            Some(end) => end / ps,
            None => {
                return Err(format!(
                    "request at byte {offset} of {size} bytes overflows 64 bits"
                ))
            }
        }
    };
    span(op, first, last, size)
}

#[inline]
fn span(op: Op, first: u64, last: u64, size: u64) -> Result<Parsed, String> {
    if first == last {
        Ok(Parsed::One(op, first))
    } else if last - first >= MAX_REQUEST_PAGES {
        Err(format!(
            "request of {size} bytes spans {} pages, more than the limit of {MAX_REQUEST_PAGES}",
            last - first + 1
        ))
    } else {
        Ok(Parsed::Span(op, first, last))
    }
}

/// Places a parsed request inside address space `space` (SPC ASU, DiskSim device).
#[inline]
pub(crate) fn in_space(p: Parsed, space: u64, what: &str) -> Result<Parsed, String> {
    const LIMIT: u64 = 1 << ADDRESS_SPACE_BITS;
    if space >= 1 << (64 - ADDRESS_SPACE_BITS) {
        return Err(format!(
            "{what} {space} is too large (at most {})",
            (1u64 << (64 - ADDRESS_SPACE_BITS)) - 1
        ));
    }
    let base = space << ADDRESS_SPACE_BITS;
    let last = match p {
        Parsed::One(_, l) | Parsed::Span(_, _, l) => l,
        Parsed::Skip => return Ok(p),
    };
    if last >= LIMIT {
        return Err(format!(
            "request ends at page {last}, beyond the 2^{ADDRESS_SPACE_BITS} pages of one {what}"
        ));
    }
    Ok(match p {
        Parsed::One(op, a) => Parsed::One(op, base | a),
        Parsed::Span(op, a, b) => Parsed::Span(op, base | a, base | b),
        Parsed::Skip => Parsed::Skip,
    })
}
