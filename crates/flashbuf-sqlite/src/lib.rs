//! SQLite on flashbuf: a SQLite VFS whose main database file is a flashbuf
//! [`PageStore`](flashbuf_store::PageStore), crash-tested.
//!
//! # Opening a SQLite database on flashbuf
//!
//! Any store of the store table (`flashbuf_store::STORES`) on any device; SQLite's page is
//! the store's page; the WAL (or rollback journal) goes to plain files in a directory:
//!
//! ```
//! use flashbuf_device::MemDevice; // or FileDevice, SimDevice, any Box<dyn Device>
//! use flashbuf_sqlite::{store_on, Cache, Database, FlashDb, OpenOptions};
//! use flashbuf_store::registry::StoreContext;
//!
//! let dir = tempfile::tempdir()?; // SQLite's WAL goes here
//! let store = store_on("stable-buffer", Box::new(MemDevice::new(0)), &StoreContext::new(4096), true)?;
//! let db = Database::open(FlashDb::open(store, Cache::PassThrough)?, OpenOptions::in_dir(dir.path()))?;
//! db.execute_batch("CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT); INSERT INTO kv VALUES ('hi', 'flash')")?;
//! let v: String = db.query_row("SELECT v FROM kv WHERE k = 'hi'", [], |r| r.get(0))?;
//! assert_eq!(v, "flash");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Database`] derefs to a [`rusqlite::Connection`] (SQLite is bundled). To let a
//! flashbuf buffer pool and a flash-aware policy hold the pages instead of SQLite's cache,
//! open with [`Cache::Pool`]`{ frames, policy }` (SQLite's cache is then set to
//! [`POOL_MODE_SQLITE_CACHE_PAGES`]); `store_on(spec, device, ctx, false)` reopens and
//! recovers an existing store, and SQLite recovers its WAL or journal on open.
//!
//! # Design
//! - [`vfs`](FlashVfs): the C VFS (through `rusqlite::ffi`; one registered VFS per
//!   database, `flashbuf-N`). The main database file is a [`FlashDb`]; journal, WAL and
//!   temporary files go to the default OS VFS ([`AuxFiles::Dir`]) or to a [`MemFs`] whose
//!   files are fault devices (crash tests). `xSync` is the store's `sync()` (in pool mode
//!   the pool's `sync()`: write back every dirty page, then sync the store). Locking: one
//!   connection per database at a time, SQLite in `locking_mode=EXCLUSIVE` (which also
//!   lets WAL run without shared memory); other processes are kept out by the store's
//!   device (a file device's exclusive lock).
//! - [`layout`]: flashbuf's 32-byte page header lives in 32 bytes SQLite reserves at the
//!   end of every page (`SQLITE_FCNTL_RESERVE_BYTES`, as `cksumvfs` does), moved to the
//!   front of the flashbuf page; a page 1 without exactly 32 reserved bytes is refused.
//! - [`meta`]: SQLite's file size and the write epoch in a record of two copies (flashbuf
//!   pages 0 and 1); SQLite page `n` is flashbuf page `n + 1`.
//! - [`Cache`]: pass-through (every SQLite read and write is a store call) or through a
//!   [`flashbuf_pool::BufferPool`] (writes go through write guards, recording only the byte
//!   runs SQLite changed: real dirty ranges for stores that use them).
//! - [`sql`]: TPC-B-like and TPC-C-like as SQL (the native workloads' options, draws,
//!   NURand and consistency conditions 1–4 as SQL queries) and a driver
//!   ([`run_sql`], [`Database::run_workload`]) reporting tps, response times, consistency
//!   and the counters below SQLite ([`FlashStats`]).
//! - [`torture`]: TPC-B as SQL with every commit journalled to an fsynced side file, killed
//!   and checked (`flashbuf-sqlite-torture run|check`).
//!
//! # Why rusqlite's FFI and not `sqlite-plugin`
//! `sqlite-plugin` (0.11) generates its bindings with bindgen at build time (libclang
//! needed, not only crates.io), and its VFS trait takes over every file, so the journal
//! and WAL would have to be reimplemented. rusqlite (maintained, SQLite bundled,
//! pre-generated bindings) exposes `sqlite3_vfs`, and a shim VFS delegates the other files
//! to SQLite's own OS VFS unchanged.

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
