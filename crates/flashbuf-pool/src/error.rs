//! Pool errors.

use flashbuf_store::StoreError;
use thiserror::Error;

/// Errors of the buffer pool.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum PoolError {
    /// The store failed (I/O error, corrupt page, poisoned store, ...).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Every frame is pinned; nothing can be evicted.
    #[error("all {frames_count} frames are pinned; no page can be evicted")]
    AllPinned {
        /// Number of frames.
        frames_count: usize,
    },
    /// The configuration is impossible (zero frames, page size mismatch, ...).
    #[error("invalid buffer pool configuration: {0}")]
    Config(String),
    /// A policy broke its contract (named a pinned or unknown frame). A bug, reported
    /// rather than acted upon.
    #[error("policy '{policy}' broke its contract: {detail}")]
    Policy {
        /// Policy name.
        policy: &'static str,
        /// What happened.
        detail: String,
    },
}
