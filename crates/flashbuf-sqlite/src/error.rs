//! Errors of the SQLite layer.

use flashbuf_core::ConfigError;
use flashbuf_pool::PoolError;
use flashbuf_store::StoreError;
use thiserror::Error;

/// Errors of `flashbuf-sqlite`.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The page store failed (device error, corrupt page, poisoned store).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The buffer pool failed.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// SQLite returned an error.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A bad configuration (store spec, page size, option).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The store holds something that is not a flashbuf-sqlite database, or one made for
    /// another page size or format.
    #[error("refusing to open the database: {0}")]
    Format(String),
    /// SQLite asked for something the VFS does not do (a write that is not one whole
    /// page, a page 1 without the reserved bytes flashbuf needs, a second connection).
    #[error("unsupported by the flashbuf VFS: {0}")]
    Unsupported(String),
    /// A file of the torture journal or the side files could not be used.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
    /// A workload found data it cannot use (a missing row, a bad value).
    #[error("{workload}: {detail}")]
    Data {
        /// The workload.
        workload: &'static str,
        /// What is wrong.
        detail: String,
    },
}

impl Error {
    /// An [`Error::Data`].
    pub fn data(workload: &'static str, detail: impl Into<String>) -> Self {
        Error::Data {
            workload,
            detail: detail.into(),
        }
    }

    /// An [`Error::Io`] about `path`.
    pub fn io(path: impl std::fmt::Display, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_string(),
            source,
        }
    }
}
