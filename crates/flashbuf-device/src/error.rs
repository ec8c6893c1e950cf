//! Device errors.

use std::io;
use thiserror::Error;

/// Which operation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoOp {
    /// A read.
    Read,
    /// A write.
    Write,
    /// A sync (fsync).
    Sync,
    /// A resize.
    SetLen,
    /// Opening the device.
    Open,
}

impl std::fmt::Display for IoOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IoOp::Read => "read",
            IoOp::Write => "write",
            IoOp::Sync => "sync",
            IoOp::SetLen => "set_len",
            IoOp::Open => "open",
        })
    }
}

/// Errors of the device layer.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum DeviceError {
    /// The operating system reported an error.
    #[error("{op} at byte {offset} on {device}: {source}")]
    Io {
        /// Failed operation.
        op: IoOp,
        /// Byte offset of the request (0 for sync).
        offset: u64,
        /// Device description.
        device: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The request reaches beyond the end of the device.
    #[error(
        "{op} of {len} bytes at byte {offset} reaches beyond the device end ({device_len} bytes)"
    )]
    OutOfRange {
        /// Failed operation.
        op: IoOp,
        /// Byte offset.
        offset: u64,
        /// Request length.
        len: u64,
        /// Device length.
        device_len: u64,
    },
    /// Offset, length or buffer address breaks the device's alignment rule.
    #[error("{op} at byte {offset} of {len} bytes is not aligned to {align} bytes")]
    Misaligned {
        /// Failed operation.
        op: IoOp,
        /// Byte offset.
        offset: u64,
        /// Request length.
        len: u64,
        /// Required alignment.
        align: usize,
    },
    /// Another process (or another handle) holds the device's lock.
    #[error("{path} is in use by another process (file lock held)")]
    Locked {
        /// Path of the locked file.
        path: String,
    },
    /// A fault injected on purpose by a test wrapper.
    #[error("injected {kind} on {op}")]
    Injected {
        /// Failed operation.
        op: IoOp,
        /// What was injected, e.g. `EIO` or `ENOSPC`.
        kind: &'static str,
    },
    /// The device is out of space.
    #[error("device full: {0}")]
    NoSpace(String),
    /// A bad configuration (unknown profile, impossible geometry, ...).
    #[error("invalid device configuration: {0}")]
    Config(String),
}
