//! The dirty byte ranges of a range I/O CSV, as a stream beside the references.
//!
//! [`TraceReader`](crate::TraceReader) yields a range CSV's references (16 bytes each, in
//! batches); the bytes each write-back changed are not part of a [`PageRef`](crate::PageRef).
//! A pass-through replay that hands a store the real ranges reads them with a
//! [`RangeStream`] over the same file, one record per reference in the same order: the
//! two streams are in lockstep because every line of the format is exactly one reference.
//! The stream parses what the reader checks (and reports a malformed line the same way,
//! naming it), so a caller can compare the page of each record with the reference's.

use crate::formats::fields::{expect_u64, show, split, trim};
use crate::formats::ranges::{is_header, parse_ranges};
use crate::source::open_stream;
use crate::{Op, TraceError};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// One line of a range I/O CSV with its ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeRecord<'a> {
    /// Read or write-back.
    pub op: Op,
    /// The trace's page number (not mapped).
    pub page: u64,
    /// The runs of bytes the write-back changed, `(offset, length)`, as in the file (empty
    /// for reads).
    pub ranges: &'a [(u32, u32)],
    /// The `new` flag of a write: 0 an overwrite, 1 a block beyond the end of the file, 2
    /// the first real content of a zero block (0 for reads).
    pub new: u8,
}

/// Reads a range I/O CSV (plain, zstd or gzip) line by line with the ranges of each write.
///
/// ```
/// use flashbuf_trace::{Op, RangeStream};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.csv");
/// std::fs::write(&path, "op,page,ranges,new\nR,7,,\nW,7,0:24;100:8,0\n")?;
/// let mut s = RangeStream::open(&path)?;
/// let r = s.next_record()?.unwrap();
/// assert_eq!((r.op, r.page, r.ranges.len()), (Op::Read, 7, 0));
/// let w = s.next_record()?.unwrap();
/// assert_eq!((w.op, w.ranges), (Op::Write, &[(0, 24), (100, 8)][..]));
/// assert!(s.next_record()?.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RangeStream {
    path: PathBuf,
    src: BufReader<Box<dyn std::io::Read + Send>>,
    line: u64,
    text: Vec<u8>,
    ranges: Vec<(u32, u32)>,
    /// The first content line (which may be the header) is still to come.
    header_pending: bool,
}

impl std::fmt::Debug for RangeStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RangeStream")
            .field("path", &self.path)
            .field("line", &self.line)
            .finish_non_exhaustive()
    }
}

impl RangeStream {
    /// Opens the range CSV at `path`.
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let io = |source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let (_, src) = open_stream(file).map_err(io)?;
        Ok(Self {
            path: path.to_path_buf(),
            src: BufReader::with_capacity(1 << 20, src),
            line: 0,
            text: Vec::with_capacity(256),
            ranges: Vec::with_capacity(128),
            header_pending: true,
        })
    }

    /// The 1-based line of the last record returned.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The next record, or `None` at the end of the file. Blank lines, `#` comments and
    /// the header are skipped.
    pub fn next_record(&mut self) -> Result<Option<RangeRecord<'_>>, TraceError> {
        loop {
            self.text.clear();
            let n = self
                .src
                .read_until(b'\n', &mut self.text)
                .map_err(|source| TraceError::Io {
                    path: self.path.clone(),
                    source,
                })?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            let mut l = &self.text[..];
            while let [rest @ .., b'\n' | b'\r'] = l {
                l = rest;
            }
            let t = trim(l);
            if t.is_empty() || t[0] == b'#' {
                continue;
            }
            if std::mem::take(&mut self.header_pending) && is_header(t) {
                continue;
            }
            let (op, page, new) =
                parse_line(t, &mut self.ranges).map_err(|message| TraceError::Parse {
                    path: self.path.clone(),
                    line: self.line,
                    message,
                })?;
            return Ok(Some(RangeRecord {
                op,
                page,
                ranges: &self.ranges,
                new,
            }));
        }
    }
}

/// Parses one data line into `(op, page, new)`, its ranges into `ranges`.
fn parse_line(line: &[u8], ranges: &mut Vec<(u32, u32)>) -> Result<(Op, u64, u8), String> {
    let [op, page, field, new] = split::<4>(line, b',').map_err(|n| {
        format!("expected 4 comma-separated fields (op,page,ranges,new), found {n}")
    })?;
    let page = expect_u64(page, "a page number")?;
    ranges.clear();
    match trim(op) {
        b"R" | b"r" => Ok((Op::Read, page, 0)),
        b"W" | b"w" => {
            let text = std::str::from_utf8(trim(field)).map_err(|_| "ranges are not text")?;
            for (o, l) in parse_ranges(text)? {
                let (o, l) = u32::try_from(o)
                    .ok()
                    .zip(u32::try_from(l).ok())
                    .ok_or_else(|| format!("range {o}:{l} is beyond 4 GiB"))?;
                ranges.push((o, l));
            }
            let new = match trim(new) {
                b"0" => 0,
                b"1" => 1,
                b"2" => 2,
                n => return Err(format!("expected new 0, 1 or 2, found '{}'", show(n))),
            };
            Ok((Op::Write, page, new))
        }
        o => Err(format!("expected op R or W, found '{}'", show(o))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        std::fs::write(&p, "op,page,ranges,new\n\n# c\nW,1,0:4,0\nW,2,0:x,0\n").unwrap();
        let mut s = RangeStream::open(&p).unwrap();
        assert_eq!(s.next_record().unwrap().unwrap().page, 1);
        assert_eq!(s.line(), 4);
        let e = s.next_record().unwrap_err().to_string();
        assert!(e.contains("line 5") && e.contains("not a length"), "{e}");
    }
}
