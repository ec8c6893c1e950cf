//! Streaming readers of page-reference and block-I/O traces for the flashbuf lab.
//!
//! [`TraceReader`] opens a trace (plain, `.zst` or `.gz`: compression is recognised by the
//! file's magic bytes, not by its name), detects its [`Format`] unless told, and yields
//! [`PageRef`]s — an [`Op`] and a [`PageId`](flashbuf_core::PageId) — in batches
//! ([`TraceReader::next_batch`]) or one by one (its [`Iterator`] impl). It reads through
//! one 1 MiB buffer and parses bytes by hand, without allocating per line.
//!
//! # Speed
//!
//! Each format has a fast path that reads a common, well-formed line straight from the
//! buffer, eight digits at a time; any other line (spaces around fields, other
//! spellings, errors) goes to the format's general parser, which accepts the same lines
//! with the same result and words the errors. The page trace of TPC-C
//! (`tpcc-pg15-w4.pagetrace.csv.zst`, 5.1 M references, 60 MB of text) reads in about
//! 80 ms on one core, zstd decompression included: see `examples/read_speed.rs`.
//!
//! # Formats
//!
//! | name (`--format`) | [`Format`] | line | addresses |
//! |---|---|---|---|
//! | `pagetrace` | [`Format::PageTrace`] | header `op,page`, then `R,123` / `W,123` | page numbers |
//! | `msr` | [`Format::Msr`] | `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, Type `Read`/`Write` (any case) | bytes |
//! | `spc` | [`Format::Spc`] | `ASU,LBA,Size,Opcode,Timestamp`, Opcode `r`/`w` (any case) | LBA in 512-byte sectors, Size in bytes |
//! | `lcs-csv` | [`Format::LcsCsv`] | `version,time,op,size,lbn`, op a SCSI opcode in hex (`28`, `0x2a`) | lbn in 512-byte blocks, size in bytes |
//! | `disksim` | [`Format::DiskSim`] | `time device sector sectors flags` (whitespace), flags bit 0: 1 = read, 0 = write | 512-byte sectors |
//! | `arc` | [`Format::ArcLis`] | `first_page page_count _ _` (whitespace), reads only | page numbers |
//!
//! A header line is skipped when it is the first line of a CSV format: `op,page` for
//! page traces, any first line starting with a letter for MSR, SPC and libCacheSim CSV.
//! libCacheSim opcodes other than READ(6/10/12/16) `08 28 a8 88` and WRITE(6/10/12/16)
//! `0a 2a aa 8a` are valid but reference nothing; they are counted by
//! [`TraceReader::skipped`]. An ARC line with `page_count` 0 is skipped the same way.
//!
//! # Page conversion
//!
//! A byte-addressed request (MSR, SPC, libCacheSim, DiskSim) of `size` bytes at byte
//! `offset` becomes one reference per page touched, in ascending order, at the page size
//! given to [`TraceReader::open`]: pages `offset / ps ..= (offset + size - 1) / ps`. A
//! request of size 0 becomes one reference to the page containing `offset`. Page traces
//! and ARC traces name pages directly and ignore the page size; an ARC line expands to
//! `page_count` reads of consecutive pages.
//!
//! SPC ASUs and DiskSim devices are separate address spaces: the page number is
//! `(asu_or_device << 40) | page_within` ([`ADDRESS_SPACE_BITS`]), so ASUs and devices
//! below 2^24 and 2^40 pages per ASU or device are representable; beyond is a parse error.
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
//! - A compressed stream that is truncated or corrupt is a [`TraceError::Decompress`]
//!   naming the file (never a silent end of trace); other read failures are
//!   [`TraceError::Io`].
//! - Auto-detection that finds nothing is [`TraceError::UnknownFormat`], naming the file
//!   and quoting its first line. See [`detect::detect`] for the rules.

pub mod detect;
mod error;
mod formats;
mod reader;
mod record;
mod source;

pub use error::TraceError;
pub use formats::pagebin::{
    PageBinWriteError, PageBinWriter, PAGEBIN_MAGIC, PAGEBIN_MAX_PAGE, PAGEBIN_VERSION,
};
pub use formats::{BlkAction, Format, ParseFormatError, ADDRESS_SPACE_BITS, MAX_REQUEST_PAGES};
pub use reader::{TraceReader, BUFFER_BYTES};
pub use record::{Op, PageRef};
pub use source::Compression;
