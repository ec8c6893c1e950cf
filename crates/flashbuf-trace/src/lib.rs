//! Streaming readers of page-reference and block-I/O traces for the flashbuf lab.
//!
//! [`TraceReader`] opens a trace (plain, `.zst` or `.gz`: compression is recognised by the
//! file's magic bytes, not by its name), detects its [`Format`] unless told, and yields
//! [`PageRef`]s — an [`Op`] and a [`PageId`](flashbuf_core::PageId) — in batches
//! ([`TraceReader::next_batch`]) or one by one (its [`Iterator`] impl). It reads through
//! one 1 MiB buffer and parses bytes by hand, without allocating per line: text formats
//! line by line, binary formats record by record (same buffer, batches and errors).
//! [`PageBinWriter`] writes flashbuf's own binary page trace.
//!
//! # Speed
//!
//! Each CSV and whitespace format has a fast path that reads a common, well-formed line
//! straight from the buffer, eight digits at a time; any other line (spaces around fields,
//! other spellings, errors) goes to the format's general parser, which accepts the same
//! lines with the same result and words the errors (blkparse has only the general parser).
//! The page trace of TPC-C (`tpcc-pg15-w4.pagetrace.csv.zst`, 5.1 M references, 66 MB of
//! text) reads in 80–140 ms on one core, zstd decompression included; the same references
//! as `pagebin` (41 MB) in 10–13 ms plain (390–530 M references/s) and 50–57 ms
//! zstd-compressed (4.6 MB): see `examples/read_speed.rs`.
//!
//! # Formats
//!
//! | name (`--format`) | [`Format`] | line or record | addresses |
//! |---|---|---|---|
//! | `pagetrace` | [`Format::PageTrace`] | header `op,page`, then `R,123` / `W,123` | page numbers |
//! | `msr` | [`Format::Msr`] | `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, Type `Read`/`Write` (any case) | bytes |
//! | `spc` | [`Format::Spc`] | `ASU,LBA,Size,Opcode,Timestamp`, Opcode `r`/`w` (any case) | LBA in 512-byte sectors, Size in bytes |
//! | `lcs-csv` | [`Format::LcsCsv`] | `version,time,op,size,lbn`, op a SCSI opcode in hex (`28`, `0x2a`) | lbn in 512-byte blocks, size in bytes |
//! | `disksim` | [`Format::DiskSim`] | `time device sector sectors flags` (whitespace), flags bit 0: 1 = read, 0 = write | 512-byte sectors |
//! | `arc` | [`Format::ArcLis`] | `first_page page_count _ _` (whitespace), reads only | page numbers |
//! | `oracle-general` | [`Format::OracleGeneral`] | binary, 24-byte LE records `{u32 clock_time; u64 obj_id; u32 obj_size; i64 next_access_vtime}` (libCacheSim), reads only; size-0 records skipped | `obj_id` as the page number |
//! | `blkparse`, `blkparse-d` | [`Format::Blkparse`] | `maj,min cpu seq time pid action RWBS sector + n [process]`; `Q` (or `D`) events with RWBS `R`/`W`; discards and requests without data skipped; the summary ignored | 512-byte sectors, one address space per device |
//! | `pagebin` | [`Format::PageBin`] | binary: 16-byte header (magic [`PAGEBIN_MAGIC`], version), then `u64` LE per reference, bit 63 = write | page numbers (< 2^63) |
//!
//! oracleGeneral has no magic: auto-detection takes it from a file name containing
//! `oracleGeneral`; pagebin is recognised by its magic, blkparse by the shape of its event
//! lines (see [`detect::detect`]). The formats' module headers give their full rules
//! (`src/formats/oracle.rs`, `blkparse.rs`, `pagebin.rs`), including where we deviate from
//! libCacheSim (an incomplete last record is an error; a `next_access_vtime` below -1 is a
//! bad record) and why blkparse counts `Q` by default.
//!
//! A header line is skipped when it is the first line of a CSV format: `op,page` for
//! page traces, any first line starting with a letter for MSR, SPC and libCacheSim CSV.
//! libCacheSim opcodes other than READ(6/10/12/16) `08 28 a8 88` and WRITE(6/10/12/16)
//! `0a 2a aa 8a` are valid but reference nothing; they are counted by
//! [`TraceReader::skipped`]. An ARC line with `page_count` 0, an oracleGeneral record of
//! size 0 and a counted blkparse request without data are skipped the same way.
//!
//! # Page conversion
//!
//! A byte-addressed request (MSR, SPC, libCacheSim CSV, DiskSim, blkparse) of `size` bytes at byte
//! `offset` becomes one reference per page touched, in ascending order, at the page size
//! given to [`TraceReader::open`]: pages `offset / ps ..= (offset + size - 1) / ps`. A
//! request of size 0 becomes one reference to the page containing `offset` (blkparse
//! requests of 0 sectors are skipped instead: they are flushes). Page traces, ARC,
//! oracleGeneral and pagebin traces name pages directly and ignore the page size; an ARC
//! line expands to `page_count` reads of consecutive pages.
//!
//! SPC ASUs, DiskSim devices and blkparse devices (numbered `major · 4096 + minor`) are
//! separate address spaces: the page number is `(space << 40) | page_within`
//! ([`ADDRESS_SPACE_BITS`]), so spaces below 2^24 and 2^40 pages per space are
//! representable; beyond is a parse error.
//! MSR files are one volume each: Hostname and DiskNumber are checked but not used.
//! One request may span at most [`MAX_REQUEST_PAGES`] pages.
//!
//! # Errors
//!
//! - Blank lines (only spaces, tabs, `\r`) and lines starting with `#` are skipped;
//!   `\r\n` line ends and spaces around fields are accepted.
//! - Every malformed line — wrong number of fields, non-numeric or out-of-range number,
//!   unknown op, bytes that are not valid UTF-8, an incomplete last line without a line
//!   break — is a [`TraceError::Parse`] naming the file and the 1-based line, e.g.
//!   `trace.csv line 17: expected op R or W, found 'X'`. The bad line is consumed; reading
//!   on continues with the next line.
//! - Binary formats: a record that cannot be valid (an incomplete last record, an
//!   oracleGeneral `next_access_vtime` below -1) is a [`TraceError::Record`] naming the file
//!   and the 1-based record, e.g. `t.oracleGeneral record 4: incomplete record: the trace
//!   ends 5 bytes into this 24-byte record (is the file truncated?)`; the record is
//!   consumed. A missing or wrong pagebin header is a final [`TraceError::BadHeader`].
//! - A compressed stream that is truncated or corrupt is a [`TraceError::Decompress`]
//!   naming the file (never a silent end of trace); other read failures are
//!   [`TraceError::Io`].
//! - Auto-detection that finds nothing is [`TraceError::UnknownFormat`], naming the file
//!   and quoting its first line (and pointing to `--format oracle-general` when the
//!   content is binary). See [`detect::detect`] for the rules.

pub mod detect;
mod error;
mod formats;
mod range_stream;
mod reader;
mod record;
mod source;

pub use error::TraceError;
pub use formats::pagebin::{
    PageBinWriteError, PageBinWriter, PAGEBIN_MAGIC, PAGEBIN_MAX_PAGE, PAGEBIN_VERSION,
};
pub use formats::ranges::parse_ranges;
pub use formats::{BlkAction, Format, ParseFormatError, ADDRESS_SPACE_BITS, MAX_REQUEST_PAGES};
pub use range_stream::{RangeRecord, RangeStream};
pub use reader::{TraceReader, BUFFER_BYTES};
pub use record::{Op, PageRef};
pub use source::Compression;
