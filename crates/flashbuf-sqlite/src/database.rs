//! [`Database`]: a SQLite connection (rusqlite) whose main database file is a flashbuf
//! store, set up the way the VFS needs it.

use crate::db::FlashDb;
use crate::error::Error;
use crate::layout::RESERVED_BYTES;
use crate::vfs::{AuxFiles, FlashVfs, IoHook};
use flashbuf_device::Device;
use flashbuf_store::registry::{self, StoreContext};
use flashbuf_store::PageStore;
use rusqlite::{ffi, Connection, OpenFlags};
use std::ffi::{c_int, c_void, CString};
use std::sync::Arc;

/// SQLite's journal mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalMode {
    /// Write-ahead log (plain file or [`crate::MemFs`]): commits append to the WAL and
    /// sync it; the store receives pages at checkpoints (every 1,000 WAL pages by
    /// default, and at close).
    Wal,
    /// Rollback journal: each commit syncs the journal, writes the pages to the store and
    /// syncs it. In SQLite's exclusive locking mode the journal is kept and its header
    /// zeroed (and synced) at commit, as `PERSIST` does.
    Delete,
}

impl JournalMode {
    fn pragma(self) -> &'static str {
        match self {
            JournalMode::Wal => "wal",
            JournalMode::Delete => "delete",
        }
    }
}

/// SQLite's `synchronous` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synchronous {
    /// `OFF`: SQLite never syncs (no `xSync`: nothing is durable, not crash-safe); in pool
    /// mode the policy decides every write-back. For measurements only.
    Off,
    /// `NORMAL`: in WAL mode commits do not sync (durable at checkpoints); not crash-safe
    /// for recent commits.
    Normal,
    /// `FULL`: every commit is durable when it returns.
    Full,
    /// `EXTRA`: `FULL`, plus the directory is synced after a rollback journal is deleted.
    Extra,
}

impl Synchronous {
    fn pragma(self) -> &'static str {
        match self {
            Synchronous::Off => "OFF",
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
            Synchronous::Extra => "EXTRA",
        }
    }
}

/// How [`Database::open`] sets SQLite up.
#[derive(Clone)]
pub struct OpenOptions {
    /// The database's name: the journal and WAL are named after it.
    pub name: String,
    /// Where the journal, WAL and temporary files go.
    pub aux: AuxFiles,
    /// Journal mode (default WAL).
    pub journal_mode: JournalMode,
    /// `synchronous` (default `FULL`).
    pub synchronous: Synchronous,
    /// SQLite's page cache in pages; `None`: SQLite's default (2 MiB) in pass-through
    /// mode, [`POOL_MODE_SQLITE_CACHE_PAGES`] in pool mode, so that the pool decides.
    pub sqlite_cache_pages: Option<u32>,
    /// Called before every write, sync, truncation and deletion (tests).
    pub on_io: Option<IoHook>,
}

/// SQLite's cache in pool mode unless set: small, so that flashbuf's pool and its policy
/// decide what stays in memory.
pub const POOL_MODE_SQLITE_CACHE_PAGES: u32 = 64;

impl OpenOptions {
    /// Defaults: WAL, `FULL`, journal files in `dir`, database named `flashbuf.db`.
    pub fn in_dir(dir: impl Into<std::path::PathBuf>) -> Self {
        Self::with_aux(AuxFiles::Dir(dir.into()))
    }

    /// Defaults with SQLite's other files in `fs`.
    pub fn in_memory(fs: crate::MemFs) -> Self {
        Self::with_aux(AuxFiles::Memory(fs))
    }

    fn with_aux(aux: AuxFiles) -> Self {
        Self {
            name: "flashbuf.db".to_string(),
            aux,
            journal_mode: JournalMode::Wal,
            synchronous: Synchronous::Full,
            sqlite_cache_pages: None,
            on_io: None,
        }
    }

    /// Sets the journal mode.
    pub fn journal_mode(mut self, m: JournalMode) -> Self {
        self.journal_mode = m;
        self
    }

    /// Sets `synchronous`.
    pub fn synchronous(mut self, s: Synchronous) -> Self {
        self.synchronous = s;
        self
    }

    /// Sets SQLite's cache size in pages.
    pub fn sqlite_cache_pages(mut self, pages: u32) -> Self {
        self.sqlite_cache_pages = Some(pages);
        self
    }

    /// Sets the I/O hook.
    pub fn on_io(mut self, hook: IoHook) -> Self {
        self.on_io = Some(hook);
        self
    }
}

/// A SQLite connection on a flashbuf store. Derefs to [`rusqlite::Connection`].
///
/// The connection is closed before the VFS is unregistered (field order).
pub struct Database {
    conn: Connection,
    vfs: FlashVfs,
    db: Arc<FlashDb>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("vfs", &self.vfs.name())
            .field("db", &self.db)
            .finish()
    }
}

impl Database {
    /// Opens SQLite on `db`: registers a VFS for it, opens a connection and sets exclusive
    /// locking, the page size and the 32 reserved bytes (for a new database), the journal
    /// mode, `synchronous` and the cache size.
    pub fn open(db: FlashDb, opts: OpenOptions) -> Result<Self, Error> {
        let db = Arc::new(db);
        let pool_mode = db.policy_name().is_some();
        let vfs = FlashVfs::new(db.clone(), opts.aux.clone(), opts.on_io.clone())?;
        let path = match &opts.aux {
            AuxFiles::Dir(dir) => {
                // The unix VFS gives a new journal or WAL the permissions of the database
                // file it belongs to, so that file must exist: an empty file stands for
                // the database (its data is in the store).
                let p = dir.join(&opts.name);
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&p)
                    .map_err(|e| Error::io(p.display(), e))?;
                p
            }
            AuxFiles::Memory(_) => opts.name.clone().into(),
        };
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags_and_vfs(&path, flags, vfs.name())
            .map_err(|e| with_vfs_error(e, &db))?;
        let this = Database { conn, vfs, db };
        this.setup(&opts, pool_mode).map_err(|e| match e {
            Error::Sqlite(e) => with_vfs_error(e, &this.db),
            e => e,
        })?;
        Ok(this)
    }

    fn setup(&self, opts: &OpenOptions, pool_mode: bool) -> Result<(), Error> {
        let c = &self.conn;
        let mode: String = c.query_row("PRAGMA locking_mode=EXCLUSIVE", [], |r| r.get(0))?;
        if mode != "exclusive" {
            return Err(Error::Unsupported(format!(
                "SQLite kept locking mode '{mode}'"
            )));
        }
        if self.db.file_size() == 0 {
            c.execute_batch(&format!("PRAGMA page_size={}", self.db.page_size()))?;
            set_reserved_bytes(c, RESERVED_BYTES)?;
        }
        let jm: String = c.query_row(
            &format!("PRAGMA journal_mode={}", opts.journal_mode.pragma()),
            [],
            |r| r.get(0),
        )?;
        if jm != opts.journal_mode.pragma() {
            return Err(Error::Unsupported(format!(
                "SQLite chose journal mode '{jm}' instead of '{}'",
                opts.journal_mode.pragma()
            )));
        }
        c.execute_batch(&format!("PRAGMA synchronous={}", opts.synchronous.pragma()))?;
        let cache = match (opts.sqlite_cache_pages, pool_mode) {
            (Some(p), _) => Some(p),
            (None, true) => Some(POOL_MODE_SQLITE_CACHE_PAGES),
            (None, false) => None,
        };
        if let Some(p) = cache {
            c.execute_batch(&format!("PRAGMA cache_size={p}"))?;
        }
        Ok(())
    }

    /// The connection.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The connection, mutably (transactions).
    pub fn connection_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// The connection (mutably) and the database file under it, together (for
    /// [`crate::run_sql`]).
    pub fn split_mut(&mut self) -> (&mut Connection, &FlashDb) {
        (&mut self.conn, &self.db)
    }

    /// Loads `workload` (an empty database) and runs it (see [`crate::sql::driver`]).
    pub fn run_workload(
        &mut self,
        workload: &dyn crate::SqlWorkload,
        cfg: &flashbuf_workload::RunConfig,
    ) -> Result<crate::SqlRunResult, Error> {
        let (conn, db) = self.split_mut();
        crate::run_sql(workload, conn, Some(db), cfg)
    }

    /// The database file under SQLite: counters, the store, the last VFS error.
    pub fn flash(&self) -> &FlashDb {
        &self.db
    }

    /// The name the VFS is registered under (`flashbuf-N`).
    pub fn vfs_name(&self) -> &str {
        self.vfs.name()
    }

    /// Closes the connection (in WAL mode SQLite checkpoints and removes the WAL) and
    /// unregisters the VFS.
    pub fn close(self) -> Result<(), Error> {
        let Database { conn, vfs, db } = self;
        conn.close().map_err(|(_, e)| with_vfs_error(e, &db))?;
        drop(vfs);
        Ok(())
    }
}

impl std::ops::Deref for Database {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.conn
    }
}

impl std::ops::DerefMut for Database {
    fn deref_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }
}

impl Database {
    /// `e` with the VFS's last error message added (what the store said), when there is
    /// one: SQLite itself only reports an error code such as "disk I/O error".
    pub fn explain(&self, e: rusqlite::Error) -> Error {
        with_vfs_error(e, &self.db)
    }
}

/// Adds the VFS's last error message (what the store said) to a SQLite error.
fn with_vfs_error(e: rusqlite::Error, db: &FlashDb) -> Error {
    match db.last_error() {
        Some(m) => Error::Unsupported(format!("{e} ({m})")),
        None => Error::Sqlite(e),
    }
}

/// `SQLITE_FCNTL_RESERVE_BYTES` on the main database (effective before its first page is
/// written).
fn set_reserved_bytes(c: &Connection, n: usize) -> Result<(), Error> {
    let main = CString::new("main").map_err(|e| Error::Unsupported(e.to_string()))?;
    let mut v = n as c_int;
    // SAFETY: a valid open handle; the argument is an int, as the file control expects.
    let rc = unsafe {
        ffi::sqlite3_file_control(
            c.handle(),
            main.as_ptr(),
            ffi::SQLITE_FCNTL_RESERVE_BYTES,
            &mut v as *mut c_int as *mut c_void,
        )
    };
    if rc != ffi::SQLITE_OK {
        return Err(Error::Unsupported(format!(
            "SQLITE_FCNTL_RESERVE_BYTES failed ({rc})"
        )));
    }
    Ok(())
}

/// Builds a store from the store table (`direct`, `stable-buffer:recognition=ondemand`,
/// ...) on `device`: formats it when `create`, else opens (recovers) it.
pub fn store_on(
    spec: &str,
    device: Box<dyn Device>,
    ctx: &StoreContext<'_>,
    create: bool,
) -> Result<Box<dyn PageStore>, Error> {
    let parsed = registry::parse_text(spec)?;
    parsed.factory.check(ctx.page_size)?;
    Ok(if create {
        parsed.factory.create(device, ctx)?
    } else {
        parsed.factory.open(device, ctx)?
    })
}
