//! The buffer pool and its replacement policies.
//!
//! - [`BufferPool`]: fixed frames over a [`flashbuf_store::PageStore`], a page table, read
//!   and write pin guards usable from many threads, write-back through the store, dirty
//!   byte ranges recorded per page. `Send + Sync`.
//! - [`policy`]: the [`policy::Policy`] trait (policies decide, the pool acts) and one
//!   file per policy.

mod error;
mod frame;
pub mod page_table;
pub mod policy;
mod pool;
mod sync;

pub use error::PoolError;
pub use pool::{
    BufferPool, PageAccess, PageReadGuard, PageWriteGuard, PageWriter, PoolStats, ResidentCounts,
    ACCESS_RUN_MAX,
};
