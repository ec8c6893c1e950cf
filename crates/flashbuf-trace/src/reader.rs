//! [`TraceReader`]: streams page references out of a trace file of any supported format.

use crate::detect::detect;
use crate::formats::fields::trim;
use crate::formats::{arc, blkparse, disksim, lcs, msr, oracle, pagetrace, ranges, spc, Parsed};
use crate::source::{open_stream, Compression};
use crate::{Format, Op, PageRef, TraceError};
use flashbuf_core::PageId;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

mod records;
mod refill;

use refill::find_newline;

/// Size of the read buffer; also the longest line accepted.
pub const BUFFER_BYTES: usize = 1 << 20;

/// Most bytes one read of a compressed trace adds to the buffer: it is decompressed
/// straight into the buffer, and parsing then finds it in cache. Plain files are read a
/// whole buffer at a time (fewer system calls).
const READ_CHUNK_BYTES: usize = 64 << 10;

/// How much content auto-detection looks at (at least; the whole file if shorter).
const SNIFF_BYTES: usize = 64 << 10;

/// A streaming reader of page references.
///
/// It reads the file (decompressing `.zst`/`.gz`, recognised by their magic bytes) through
/// one [`BUFFER_BYTES`] buffer, parses lines (or decodes the fixed-size records of binary
/// formats) by hand without allocating, and turns each
/// request into one [`PageRef`] per page touched (see the [crate] docs). Use
/// [`next_batch`](TraceReader::next_batch) for speed, or the [`Iterator`] impl for
/// convenience.
///
/// A [`TraceError::Parse`] consumes the bad line (a [`TraceError::Record`] the bad record):
/// calling again continues with the next one. Read and decompression errors, and a bad
/// file header, are final: later calls report the end of the trace.
///
/// # Example
///
/// ```
/// use flashbuf_trace::{Format, Op, PageRef, TraceReader};
///
/// let path = std::env::temp_dir().join(format!("flashbuf-doc-{}.csv", std::process::id()));
/// // An MSR Cambridge request of 12 KiB at byte 4096 touches pages 1, 2 and 3 of 4 KiB.
/// std::fs::write(&path, "128166372003061629,hm,1,Write,4096,12288,90\n")?;
///
/// let mut reader = TraceReader::open(&path, None, 4096)?;
/// assert_eq!(reader.format(), Format::Msr);
/// let mut batch = Vec::new();
/// while reader.next_batch(&mut batch, 65536)? > 0 {}
/// assert_eq!(batch, [PageRef::write(1), PageRef::write(2), PageRef::write(3)]);
/// assert_eq!(batch[0].op, Op::Write);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TraceReader {
    path: PathBuf,
    format: Format,
    compression: Compression,
    page_size: u64,
    src: Box<dyn Read + Send>,
    buf: Box<[u8]>,
    /// Unparsed content is `buf[pos..end]`.
    pos: usize,
    end: usize,
    /// The source is exhausted.
    eof: bool,
    /// A fatal error happened: report the end of the trace from now on.
    done: bool,
    line: u64,
    /// The first content line (which may be a header) is still to come.
    header_pending: bool,
    /// The rest of a multi-page request that did not fit the last batch: op, next, last.
    pending: Option<(Op, u64, u64)>,
    skipped: u64,
    /// An error met after some references of a batch; returned by the next call.
    deferred: Option<TraceError>,
    /// Scratch space of the [`Iterator`] impl.
    single: Vec<PageRef>,
}

impl std::fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceReader")
            .field("path", &self.path)
            .field("format", &self.format)
            .field("compression", &self.compression)
            .field("page_size", &self.page_size)
            .field("line", &self.line)
            .finish_non_exhaustive()
    }
}

impl TraceReader {
    /// Opens the trace at `path`. `format: None` detects it from the content (and, failing
    /// that, the name: see [`detect`](crate::detect::detect)). `page_size_bytes` converts
    /// byte- and sector-addressed formats to pages; it must not be 0.
    pub fn open(
        path: &Path,
        format: Option<Format>,
        page_size_bytes: u32,
    ) -> Result<Self, TraceError> {
        if page_size_bytes == 0 {
            return Err(TraceError::BadPageSize {
                path: path.to_path_buf(),
                page_size: 0,
            });
        }
        let file = File::open(path).map_err(|source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_reader(file, path, format, page_size_bytes)
    }

    /// Reads a trace from any byte stream (plain or compressed); `name` is used in
    /// messages and as a hint for auto-detection. Otherwise as [`TraceReader::open`].
    pub fn from_reader<R: Read + Send + 'static>(
        reader: R,
        name: impl Into<PathBuf>,
        format: Option<Format>,
        page_size_bytes: u32,
    ) -> Result<Self, TraceError> {
        let path = name.into();
        if page_size_bytes == 0 {
            return Err(TraceError::BadPageSize { path, page_size: 0 });
        }
        let (compression, src) = match open_stream(reader) {
            Ok(s) => s,
            Err(source) => return Err(TraceError::Io { path, source }),
        };
        let mut r = TraceReader {
            path,
            format: format.unwrap_or(Format::PageTrace),
            compression,
            page_size: u64::from(page_size_bytes),
            src,
            buf: vec![0u8; BUFFER_BYTES].into_boxed_slice(),
            pos: 0,
            end: 0,
            eof: false,
            done: false,
            line: 0,
            header_pending: true,
            pending: None,
            skipped: 0,
            deferred: None,
            single: Vec::with_capacity(1),
        };
        if format.is_none() {
            while r.end < SNIFF_BYTES && !r.eof {
                r.read_more()?;
            }
            r.format =
                detect(&r.buf[..r.end], &r.path).map_err(|reason| TraceError::UnknownFormat {
                    path: r.path.clone(),
                    reason,
                })?;
        }
        Ok(r)
    }

    /// The format being read (detected or given).
    pub fn format(&self) -> Format {
        self.format
    }

    /// The compression recognised from the file's magic bytes.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// The file (or name) the trace is read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The page size used to convert byte addresses to pages.
    pub fn page_size(&self) -> u32 {
        // Built from a u32 in the constructors.
        self.page_size as u32
    }

    /// The number of the line read last (1-based; 0 before the first line), counting
    /// blank, comment and header lines, in the decompressed text; for binary formats, the
    /// number of records read (the file header not counted).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// How many valid requests referenced no page: libCacheSim requests with a SCSI opcode
    /// that is neither a read nor a write, ARC lines with a page count of 0, oracleGeneral
    /// records of size 0, and counted blkparse requests without data (discards, flushes,
    /// 0 sectors, pass-through commands).
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Appends up to `max` page references to `out`; returns how many (0 = end of trace;
    /// also 0 when `max` is 0).
    ///
    /// When an error is met after some references were appended, those are returned
    /// first and the error comes with the next call.
    pub fn next_batch(&mut self, out: &mut Vec<PageRef>, max: usize) -> Result<usize, TraceError> {
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        if max == 0 || self.done {
            return Ok(0);
        }
        out.reserve(max.min(1 << 16));
        let start = out.len();
        let target = start.saturating_add(max);
        let result = match self.format {
            Format::PageTrace => self.fill(
                out,
                target,
                pagetrace::bulk,
                pagetrace::fast,
                pagetrace::parse,
                pagetrace::is_header,
            ),
            Format::Msr => self.fill(out, target, no_bulk, msr::fast, msr::parse, msr::is_header),
            Format::Spc => self.fill(out, target, no_bulk, spc::fast, spc::parse, spc::is_header),
            Format::LcsCsv => {
                self.fill(out, target, no_bulk, lcs::fast, lcs::parse, lcs::is_header)
            }
            Format::DiskSim => self.fill(
                out,
                target,
                no_bulk,
                disksim::fast,
                disksim::parse,
                no_header,
            ),
            Format::ArcLis => self.fill(out, target, no_bulk, arc::fast, arc::parse, no_header),
            Format::Blkparse(action) => self.fill(
                out,
                target,
                no_bulk,
                no_fast,
                |l, ps| blkparse::parse(l, ps, action),
                no_header,
            ),
            Format::OracleGeneral => {
                self.fill_records(out, target, oracle::RECORD_BYTES, oracle::decode)
            }
            Format::PageBin => self.fill_pagebin(out, target),
            Format::RangeCsv => self.fill(
                out,
                target,
                no_bulk,
                no_fast,
                ranges::parse,
                ranges::is_header,
            ),
        };
        let n = out.len() - start;
        match result {
            Ok(()) => Ok(n),
            Err(e) if n > 0 => {
                self.deferred = Some(e);
                Ok(n)
            }
            Err(e) => Err(e),
        }
    }

    /// The parsing loop, one instance per format. `fast` may take a common, simple line
    /// from the front of the unparsed bytes before the general path: it returns what the
    /// line means and its length with its line break, or `None` to leave the line to
    /// `parse` (see `formats::scan`). Before it, `bulk` may take a run of such lines that
    /// mean one reference each, appending up to `target` and returning the bytes used.
    #[inline(always)]
    fn fill(
        &mut self,
        out: &mut Vec<PageRef>,
        target: usize,
        bulk: impl Fn(&[u8], &mut Vec<PageRef>, usize) -> usize,
        fast: impl Fn(&[u8], u64) -> Option<(Parsed, usize)>,
        parse: impl Fn(&[u8], u64) -> Result<Parsed, String>,
        is_header: fn(&[u8]) -> bool,
    ) -> Result<(), TraceError> {
        if let Some((op, next, last)) = self.pending.take() {
            self.emit_span(out, target, op, next, last);
        }
        while out.len() < target {
            if !self.header_pending {
                // Local copies keep the loop-carried position in a register.
                let (mut pos, mut line) = (self.pos, self.line);
                while out.len() < target && self.end - pos >= FAST_LOOKAHEAD {
                    let before = out.len();
                    pos += bulk(&self.buf[pos..self.end], out, target);
                    line += (out.len() - before) as u64;
                    if out.len() >= target || self.end - pos < FAST_LOOKAHEAD {
                        break;
                    }
                    let Some((parsed, len)) = fast(&self.buf[pos..self.end], self.page_size) else {
                        break;
                    };
                    pos += len;
                    line += 1;
                    match parsed {
                        Parsed::One(op, page) => out.push(PageRef {
                            op,
                            page: PageId(page),
                        }),
                        Parsed::Span(op, first, last) => {
                            self.emit_span(out, target, op, first, last)
                        }
                        Parsed::Skip => self.skipped += 1,
                        Parsed::Ignore => {}
                    }
                }
                (self.pos, self.line) = (pos, line);
                if out.len() >= target {
                    break;
                }
            }
            let rest = &self.buf[self.pos..self.end];
            let (line, had_newline) = match find_newline(rest) {
                Some(i) => {
                    self.pos += i + 1;
                    (&rest[..i], true)
                }
                None if self.eof => {
                    if rest.is_empty() {
                        break;
                    }
                    self.pos = self.end;
                    (rest, false)
                }
                None => {
                    self.read_more()?;
                    continue;
                }
            };
            self.line += 1;
            let line = match line {
                [l @ .., b'\r'] => l,
                l => l,
            };
            match line.first() {
                None | Some(b'#') => continue,
                Some(b' ' | b'\t') => {
                    let t = trim(line);
                    if t.is_empty() || t[0] == b'#' {
                        continue;
                    }
                }
                Some(_) => {}
            }
            if self.header_pending {
                self.header_pending = false;
                if is_header(line) {
                    continue;
                }
            }
            match parse(line, self.page_size) {
                Ok(Parsed::One(op, page)) => out.push(PageRef {
                    op,
                    page: PageId(page),
                }),
                Ok(Parsed::Span(op, first, last)) => self.emit_span(out, target, op, first, last),
                Ok(Parsed::Skip) => self.skipped += 1,
                Ok(Parsed::Ignore) => {}
                Err(message) => return Err(self.parse_error(message, had_newline)),
            }
        }
        Ok(())
    }

    /// Appends pages `first..=last` up to `target` references; keeps the rest pending.
    fn emit_span(&mut self, out: &mut Vec<PageRef>, target: usize, op: Op, first: u64, last: u64) {
        let room = target.saturating_sub(out.len()) as u64;
        let count = (last - first).saturating_add(1);
        let n = count.min(room);
        out.extend((0..n).map(|k| PageRef {
            op,
            page: PageId(first + k),
        }));
        if n < count {
            self.pending = Some((op, first + n, last));
        }
    }

    #[cold]
    fn parse_error(&self, mut message: String, had_newline: bool) -> TraceError {
        if !had_newline {
            message.push_str(" (last line has no line break: is the file truncated?)");
        }
        TraceError::Parse {
            path: self.path.clone(),
            line: self.line,
            message,
        }
    }
}

/// Fewest unparsed bytes for which the fast path is tried (its loads are bounds-checked;
/// this only avoids failing attempts near the end of the buffer).
const FAST_LOOKAHEAD: usize = 32;

fn no_header(_: &[u8]) -> bool {
    false
}

/// The bulk path of formats that have none.
#[inline(always)]
fn no_bulk(_: &[u8], _: &mut Vec<PageRef>, _: usize) -> usize {
    0
}

/// The fast path of formats that have none.
fn no_fast(_: &[u8], _: u64) -> Option<(Parsed, usize)> {
    None
}

impl Iterator for TraceReader {
    type Item = Result<PageRef, TraceError>;

    /// The next reference. After a [`TraceError::Parse`] or [`TraceError::Record`] the
    /// iterator goes on with the next line or record; after other errors it ends.
    fn next(&mut self) -> Option<Self::Item> {
        let mut one = std::mem::take(&mut self.single);
        one.clear();
        let item = match self.next_batch(&mut one, 1) {
            Ok(0) => None,
            Ok(_) => one.first().copied().map(Ok),
            Err(e) => Some(Err(e)),
        };
        self.single = one;
        item
    }
}
