//! Store errors.

use flashbuf_core::{page::PageCheckError, ConfigError, PageId};
use flashbuf_device::DeviceError;
use thiserror::Error;

/// Errors of the store layer.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The device failed; the store is now poisoned.
    #[error("device error (store poisoned): {0}")]
    Device(#[from] DeviceError),
    /// A page failed its check; its bytes are not returned.
    #[error("{pid} is corrupt: {reason}")]
    Corrupt {
        /// The page.
        pid: PageId,
        /// What the check found.
        reason: PageCheckError,
    },
    /// The store refused to open: the on-device format is not what was asked for.
    #[error("refusing to open store: {0}")]
    Format(String),
    /// An earlier device error poisoned the store; reopen it to continue.
    #[error("store is poisoned by an earlier I/O error ({0}); reopen it")]
    Poisoned(String),
    /// A caller broke the contract (wrong buffer size, page id out of range, ...).
    #[error("invalid request: {0}")]
    Invalid(String),
    /// The store is full.
    #[error("store full: {0}")]
    Full(String),
    /// A configuration that could be resolved only with the device (a device profile
    /// that could not be measured or loaded, a staging area the profile makes empty).
    #[error(transparent)]
    Config(#[from] ConfigError),
}
