//! Errors of the trace readers.

use std::path::PathBuf;

/// Everything that can go wrong while opening or reading a trace.
///
/// Every variant names the file; [`TraceError::Parse`] also names the 1-based line, e.g.
/// `trace.csv line 17: expected op R or W, found 'X'`, and [`TraceError::Record`] the
/// 1-based record of a binary format, e.g. `t.oracleGeneral record 9: incomplete record ...`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The trace file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A compressed stream ended early or is corrupt (a truncated `.zst` or `.gz` file is
    /// reported here, never as a silent end of trace).
    #[error(
        "{}: {compression} stream is truncated or corrupt (after {unit} {line}): {source}",
        path.display()
    )]
    Decompress {
        /// The trace file.
        path: PathBuf,
        /// `"zstd"` or `"gzip"`.
        compression: &'static str,
        /// `"line"` for text formats, `"record"` for binary ones.
        unit: &'static str,
        /// The last line (or record) read completely before the failure.
        line: u64,
        /// The decoder's error.
        source: std::io::Error,
    },
    /// A malformed line.
    #[error("{} line {line}: {message}", path.display())]
    Parse {
        /// The trace file.
        path: PathBuf,
        /// 1-based line number (of the decompressed text).
        line: u64,
        /// What was expected and what was found.
        message: String,
    },
    /// A bad record of a binary format (an incomplete last record, a value out of range).
    #[error("{} record {record}: {message}", path.display())]
    Record {
        /// The trace file.
        path: PathBuf,
        /// 1-based record number (of the decompressed stream, after any file header).
        record: u64,
        /// What is wrong.
        message: String,
    },
    /// The file header of a binary format is missing or wrong (bad magic, unknown version).
    #[error("{}: bad {format} header: {message}", path.display())]
    BadHeader {
        /// The trace file.
        path: PathBuf,
        /// The format whose header was expected.
        format: &'static str,
        /// What is wrong.
        message: String,
    },
    /// Auto-detection found no format that matches the content (nor the file name).
    #[error("{}: unknown trace format: {reason}", path.display())]
    UnknownFormat {
        /// The trace file.
        path: PathBuf,
        /// Why, including what the first line looked like.
        reason: String,
    },
    /// The page size passed to [`TraceReader::open`](crate::TraceReader::open) is zero.
    #[error("{}: page size must be at least 1 byte, got {page_size}", path.display())]
    BadPageSize {
        /// The trace file.
        path: PathBuf,
        /// The rejected page size.
        page_size: u32,
    },
}

impl TraceError {
    /// The file the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            TraceError::Io { path, .. }
            | TraceError::Decompress { path, .. }
            | TraceError::Parse { path, .. }
            | TraceError::Record { path, .. }
            | TraceError::BadHeader { path, .. }
            | TraceError::UnknownFormat { path, .. }
            | TraceError::BadPageSize { path, .. } => path,
        }
    }

    /// The 1-based line of a [`TraceError::Parse`], `None` for the other variants.
    pub fn line(&self) -> Option<u64> {
        match self {
            TraceError::Parse { line, .. } => Some(*line),
            _ => None,
        }
    }

    /// The 1-based record of a [`TraceError::Record`], `None` for the other variants.
    pub fn record(&self) -> Option<u64> {
        match self {
            TraceError::Record { record, .. } => Some(*record),
            _ => None,
        }
    }
}
