//! The lab's umbrella error.

use flashbuf_core::ConfigError;
use flashbuf_device::DeviceError;
use flashbuf_pool::PoolError;
use flashbuf_store::StoreError;
use flashbuf_trace::TraceError;
use thiserror::Error;

/// Any error a lab command can meet.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LabError {
    /// Bad command-line input: unknown name, bad option, impossible size.
    #[error("{0}")]
    Usage(String),
    /// An unknown name or option, or a bad option value (checked before anything runs).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A trace could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A device failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// A store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The buffer pool failed.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// Writing output failed.
    #[error("output: {0}")]
    Output(#[from] std::io::Error),
    /// A file or directory operation failed; `context` names the file and the operation.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, naming the file (`cannot create directory /x`).
        context: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// An invariant check (`--paranoid`) failed.
    #[error("invariant violated: {0}")]
    Invariant(String),
    /// An engine run (`flashbuf run`) failed: the workload's or SQLite's error.
    #[error("engine run failed: {0}")]
    Engine(String),
}

impl LabError {
    /// A file error with its context (`cannot open /x/y`).
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        LabError::Io {
            context: context.into(),
            source,
        }
    }
}
