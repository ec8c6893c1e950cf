//! The SQLite VFS (C ABI through `rusqlite::ffi`, SQLite bundled): the main database file
//! is a [`FlashDb`]; every other file (rollback journal, WAL, temporary files) goes to
//! the default OS VFS (plain files beside the database's name) or to a [`MemFs`].
//!
//! One VFS object is registered per [`crate::Database`] under a unique name
//! (`flashbuf-N`) and unregistered when the database is dropped, after its connection.
//!
//! # Locking
//! One connection per database at a time: a second open of the main database file through
//! the same VFS is refused (`SQLITE_CANTOPEN`, the reason in [`FlashDb::last_error`]).
//! Other processes are kept out by the store's device (a file device holds an exclusive
//! lock on its file). `xLock`/`xUnlock` only record the level; SQLite runs in
//! `locking_mode=EXCLUSIVE` (set by [`crate::Database::open`]), which also lets WAL work
//! without shared memory: the main file's methods are version 1 (no `xShm*`, no
//! memory-mapped I/O).
//!
//! # Errors
//! A failing store call becomes `SQLITE_IOERR_READ`/`_WRITE`/`_FSYNC`/`_TRUNCATE`, a page
//! that fails its check `SQLITE_IOERR_CORRUPTFS`; the message is kept in
//! [`FlashDb::last_error`].

mod files;
mod methods;

use crate::db::FlashDb;
use crate::error::Error;
use crate::memfs::MemFs;
use methods::{
    x_access, x_current_time, x_current_time_int64, x_delete, x_full_pathname, x_get_last_error,
    x_open, x_randomness, x_sleep, MainFile, MemFileHandle,
};
use rusqlite::ffi;
use std::ffi::{c_int, c_void, CString};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Which file an I/O event concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// The main database file (the store).
    Main,
    /// The rollback journal.
    Journal,
    /// The write-ahead log.
    Wal,
    /// Any other file (temporary databases, statement journals, ...).
    Other,
}

/// What an I/O event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoKind {
    /// A write.
    Write,
    /// A sync.
    Sync,
    /// A truncation.
    Truncate,
    /// A file deletion.
    Delete,
}

/// An I/O operation the VFS is about to perform (for [`IoHook`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoEvent {
    /// The file.
    pub file: FileKind,
    /// The operation.
    pub op: IoKind,
}

/// Called before every write, sync, truncation and deletion on the main database file and
/// on [`MemFs`] files (tests take crash images there). It must not call into SQLite.
pub type IoHook = Arc<dyn Fn(IoEvent) + Send + Sync>;

/// Where SQLite's files other than the main database go.
#[derive(Debug, Clone)]
pub enum AuxFiles {
    /// Plain files through the default OS VFS, named after the database's name in this
    /// directory (`DIR/NAME-journal`, `DIR/NAME-wal`).
    Dir(std::path::PathBuf),
    /// In memory, with crash images (tests).
    Memory(MemFs),
}

pub(crate) struct Shared {
    pub(super) db: Arc<FlashDb>,
    pub(super) main_open: AtomicBool,
    pub(super) aux: AuxFiles,
    pub(super) hook: Option<IoHook>,
    pub(super) parent: *mut ffi::sqlite3_vfs,
}

impl Shared {
    pub(super) fn event(&self, file: FileKind, op: IoKind) {
        if let Some(h) = &self.hook {
            h(IoEvent { file, op });
        }
    }
}

/// A VFS registered for one [`FlashDb`] (unregistered on drop). [`crate::Database`]
/// registers one and opens its connection on it; use it directly only to open a
/// connection yourself (`Connection::open_with_flags_and_vfs(name, flags, vfs.name())`),
/// which must then set the page size and 32 reserved bytes itself (see [`crate::layout`])
/// and be closed before the `FlashVfs` is dropped.
pub struct FlashVfs {
    vfs: Box<ffi::sqlite3_vfs>,
    name: CString,
    shared: Box<Shared>,
}

// SAFETY: the raw pointers are SQLite's default VFS (a static object SQLite never frees)
// and our own boxed objects; `Shared`'s contents are `Send + Sync` (the store and pool are,
// the rest is atomics and immutable data), and SQLite calls VFS methods from any thread.
unsafe impl Send for FlashVfs {}

static NEXT_VFS: AtomicU64 = AtomicU64::new(0);

impl FlashVfs {
    /// Registers a VFS (named `flashbuf-N`) whose main database file is `db`.
    pub fn new(db: Arc<FlashDb>, aux: AuxFiles, hook: Option<IoHook>) -> Result<Self, Error> {
        if !db.mount() {
            return Err(Error::Unsupported(
                "the database is already served by another FlashVfs".to_string(),
            ));
        }
        let unmount = |e: Error, db: &FlashDb| {
            db.unmount();
            e
        };
        // SAFETY: plain SQLite API calls; `sqlite3_vfs_find(NULL)` returns the default
        // VFS, which lives as long as the process.
        let parent = unsafe {
            let rc = ffi::sqlite3_initialize();
            if rc != ffi::SQLITE_OK {
                return Err(Error::Unsupported(format!(
                    "sqlite3_initialize failed ({rc})"
                )));
            }
            ffi::sqlite3_vfs_find(ptr::null())
        };
        if parent.is_null() {
            return Err(Error::Unsupported("SQLite has no default VFS".to_string()));
        }
        // SAFETY: `parent` is non-null and valid (see above).
        let p = unsafe { &*parent };
        let name = CString::new(format!(
            "flashbuf-{}",
            NEXT_VFS.fetch_add(1, Ordering::Relaxed)
        ))
        .map_err(|e| unmount(Error::Unsupported(e.to_string()), &db))?;
        let shared = Box::new(Shared {
            db,
            main_open: AtomicBool::new(false),
            aux,
            hook,
            parent,
        });
        let sz = [
            p.szOsFile as usize,
            std::mem::size_of::<MainFile>(),
            std::mem::size_of::<MemFileHandle>(),
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        let mut vfs = Box::new(ffi::sqlite3_vfs {
            iVersion: 2,
            szOsFile: sz as c_int,
            mxPathname: p.mxPathname,
            pNext: ptr::null_mut(),
            zName: name.as_ptr(),
            pAppData: &*shared as *const Shared as *mut c_void,
            xOpen: Some(x_open),
            xDelete: Some(x_delete),
            xAccess: Some(x_access),
            xFullPathname: Some(x_full_pathname),
            xDlOpen: p.xDlOpen,
            xDlError: p.xDlError,
            xDlSym: p.xDlSym,
            xDlClose: p.xDlClose,
            xRandomness: Some(x_randomness),
            xSleep: Some(x_sleep),
            xCurrentTime: Some(x_current_time),
            xGetLastError: Some(x_get_last_error),
            xCurrentTimeInt64: Some(x_current_time_int64),
            xSetSystemCall: None,
            xGetSystemCall: None,
            xNextSystemCall: None,
        });
        // SAFETY: `vfs` is boxed (stable address) and outlives its registration (Drop
        // unregisters it before the box is freed).
        let rc = unsafe { ffi::sqlite3_vfs_register(&mut *vfs, 0) };
        if rc != ffi::SQLITE_OK {
            return Err(Error::Unsupported(format!(
                "sqlite3_vfs_register failed ({rc})"
            )));
        }
        Ok(Self { vfs, name, shared })
    }

    /// The name the VFS is registered under.
    pub fn name(&self) -> &str {
        self.name.to_str().unwrap_or("flashbuf")
    }
}

impl Drop for FlashVfs {
    fn drop(&mut self) {
        // SAFETY: registered in `new`; no connection uses it any more (the database drops
        // its connection first).
        unsafe {
            ffi::sqlite3_vfs_unregister(&mut *self.vfs);
        }
        self.shared.db.unmount();
    }
}
