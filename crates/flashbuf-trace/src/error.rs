//! Errors of the trace readers.

use std::path::PathBuf;

/// Everything that can go wrong while opening or reading a trace.
///
/// Every variant names the file; [`TraceError::Parse`] also names the 1-based line, e.g.
/// `trace.csv line 17: expected op R or W, found 'X'`.
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
        "{}: {compression} stream is truncated or corrupt (after line {line}): {source}",
        path.display()
    )]
    Decompress {
        /// The trace file.
        path: PathBuf,
        /// `"zstd"` or `"gzip"`.
        compression: &'static str,
        /// The last line read completely before the failure.
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
}
