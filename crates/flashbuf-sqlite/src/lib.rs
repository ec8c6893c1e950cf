//! SQLite on flashbuf (placeholder docs; see below).

mod backend;
mod database;
mod db;
mod error;
pub mod layout;
pub mod memfs;
pub mod meta;
pub mod sql;
pub mod torture;
mod vfs;

pub use backend::{Cache, StorePool};
pub use database::{
    store_on, Database, JournalMode, OpenOptions, Synchronous, POOL_MODE_SQLITE_CACHE_PAGES,
};
pub use db::{FlashDb, FlashStats, VfsCounters};
pub use error::Error;
pub use memfs::MemFs;
pub use rusqlite;
pub use sql::driver::{run as run_sql, run_loaded as run_sql_loaded, SqlRunResult};
pub use sql::{parse_sql_workload, SqlWorker, SqlWorkload};
pub use vfs::{AuxFiles, FileKind, FlashVfs, IoEvent, IoHook, IoKind};
