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

use crate::backend::is_corrupt;
use crate::db::FlashDb;
use crate::error::Error;
use crate::memfs::{self, MemFile, MemFs};
use rusqlite::ffi;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
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
    db: Arc<FlashDb>,
    main_open: AtomicBool,
    aux: AuxFiles,
    hook: Option<IoHook>,
    parent: *mut ffi::sqlite3_vfs,
}

impl Shared {
    fn event(&self, file: FileKind, op: IoKind) {
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

/// The main database file as SQLite allocates it (`szOsFile` bytes, `base` first).
#[repr(C)]
struct MainFile {
    base: ffi::sqlite3_file,
    shared: *const Shared,
}

/// A [`MemFs`] file.
#[repr(C)]
struct MemFileHandle {
    base: ffi::sqlite3_file,
    shared: *const Shared,
    /// `Box::into_raw` of the open file's state, freed by `xClose`.
    state: *mut MemState,
}

struct MemState {
    file: MemFile,
    name: String,
    kind: FileKind,
    delete_on_close: bool,
}

fn kind_of(flags: c_int) -> FileKind {
    if flags & ffi::SQLITE_OPEN_MAIN_JOURNAL != 0 {
        FileKind::Journal
    } else if flags & ffi::SQLITE_OPEN_WAL != 0 {
        FileKind::Wal
    } else {
        FileKind::Other
    }
}

/// # Safety
/// `vfs` is one of ours.
unsafe fn shared_of<'a>(vfs: *mut ffi::sqlite3_vfs) -> &'a Shared {
    // SAFETY: pAppData points to the boxed `Shared` for as long as the VFS is registered.
    unsafe { &*((*vfs).pAppData as *const Shared) }
}

/// # Safety
/// `ptr` is null or a valid C string.
unsafe fn name_of(ptr: *const c_char) -> Option<String> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: non-null C string from SQLite.
    Some(
        unsafe { CStr::from_ptr(ptr) }
            .to_string_lossy()
            .into_owned(),
    )
}

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    z_name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: SQLite passes our VFS and `szOsFile` writable bytes at `file`.
    unsafe {
        let s = shared_of(vfs);
        (*file).pMethods = ptr::null();
        if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 {
            if s.main_open.swap(true, Ordering::AcqRel) {
                s.db.set_last_error(
                    "the database is already open through this VFS (one connection at a time)"
                        .to_string(),
                );
                return ffi::SQLITE_CANTOPEN;
            }
            ptr::write(
                file as *mut MainFile,
                MainFile {
                    base: ffi::sqlite3_file {
                        pMethods: &MAIN_METHODS,
                    },
                    shared: s,
                },
            );
            if !out_flags.is_null() {
                *out_flags = flags;
            }
            return ffi::SQLITE_OK;
        }
        match &s.aux {
            AuxFiles::Dir(_) => match (*s.parent).xOpen {
                Some(open) => open(s.parent, z_name, file, flags, out_flags),
                None => ffi::SQLITE_CANTOPEN,
            },
            AuxFiles::Memory(fs) => {
                let name = name_of(z_name).unwrap_or_else(|| fs.temp_name());
                let Some(f) = fs.open(&name, flags & ffi::SQLITE_OPEN_CREATE != 0) else {
                    return ffi::SQLITE_CANTOPEN;
                };
                let state = Box::into_raw(Box::new(MemState {
                    file: f,
                    name,
                    kind: kind_of(flags),
                    delete_on_close: flags & ffi::SQLITE_OPEN_DELETEONCLOSE != 0,
                }));
                ptr::write(
                    file as *mut MemFileHandle,
                    MemFileHandle {
                        base: ffi::sqlite3_file {
                            pMethods: &MEM_METHODS,
                        },
                        shared: s,
                        state,
                    },
                );
                if !out_flags.is_null() {
                    *out_flags = flags;
                }
                ffi::SQLITE_OK
            }
        }
    }
}

unsafe extern "C" fn x_delete(
    vfs: *mut ffi::sqlite3_vfs,
    z_name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    // SAFETY: our VFS; `z_name` is a C string.
    unsafe {
        let s = shared_of(vfs);
        match &s.aux {
            AuxFiles::Dir(_) => match (*s.parent).xDelete {
                Some(del) => del(s.parent, z_name, sync_dir),
                None => ffi::SQLITE_IOERR_DELETE,
            },
            AuxFiles::Memory(fs) => {
                if let Some(n) = name_of(z_name) {
                    s.event(kind_of_name(&n), IoKind::Delete);
                    fs.remove(&n);
                }
                ffi::SQLITE_OK
            }
        }
    }
}

fn kind_of_name(name: &str) -> FileKind {
    if name.ends_with("-journal") {
        FileKind::Journal
    } else if name.ends_with("-wal") {
        FileKind::Wal
    } else {
        FileKind::Other
    }
}

unsafe extern "C" fn x_access(
    vfs: *mut ffi::sqlite3_vfs,
    z_name: *const c_char,
    flags: c_int,
    res: *mut c_int,
) -> c_int {
    // SAFETY: our VFS; `res` is writable.
    unsafe {
        let s = shared_of(vfs);
        match &s.aux {
            AuxFiles::Dir(_) => match (*s.parent).xAccess {
                Some(access) => access(s.parent, z_name, flags, res),
                None => ffi::SQLITE_IOERR_ACCESS,
            },
            AuxFiles::Memory(fs) => {
                *res = c_int::from(name_of(z_name).is_some_and(|n| fs.exists(&n)));
                ffi::SQLITE_OK
            }
        }
    }
}

unsafe extern "C" fn x_full_pathname(
    vfs: *mut ffi::sqlite3_vfs,
    z_name: *const c_char,
    n_out: c_int,
    z_out: *mut c_char,
) -> c_int {
    // SAFETY: our VFS; `z_out` has `n_out` writable bytes.
    unsafe {
        let s = shared_of(vfs);
        match &s.aux {
            AuxFiles::Dir(_) => match (*s.parent).xFullPathname {
                Some(full) => full(s.parent, z_name, n_out, z_out),
                None => ffi::SQLITE_CANTOPEN,
            },
            AuxFiles::Memory(_) => {
                let bytes = CStr::from_ptr(z_name).to_bytes_with_nul();
                if bytes.len() > n_out as usize {
                    return ffi::SQLITE_CANTOPEN;
                }
                ptr::copy_nonoverlapping(bytes.as_ptr() as *const c_char, z_out, bytes.len());
                ffi::SQLITE_OK
            }
        }
    }
}

unsafe extern "C" fn x_randomness(vfs: *mut ffi::sqlite3_vfs, n: c_int, out: *mut c_char) -> c_int {
    // SAFETY: delegated to the default VFS with the same arguments.
    unsafe {
        let p = shared_of(vfs).parent;
        (*p).xRandomness.map_or(0, |f| f(p, n, out))
    }
}

unsafe extern "C" fn x_sleep(vfs: *mut ffi::sqlite3_vfs, us: c_int) -> c_int {
    // SAFETY: delegated.
    unsafe {
        let p = shared_of(vfs).parent;
        (*p).xSleep.map_or(0, |f| f(p, us))
    }
}

unsafe extern "C" fn x_current_time(vfs: *mut ffi::sqlite3_vfs, out: *mut f64) -> c_int {
    // SAFETY: delegated.
    unsafe {
        let p = shared_of(vfs).parent;
        (*p).xCurrentTime.map_or(ffi::SQLITE_ERROR, |f| f(p, out))
    }
}

unsafe extern "C" fn x_get_last_error(
    vfs: *mut ffi::sqlite3_vfs,
    n: c_int,
    out: *mut c_char,
) -> c_int {
    // SAFETY: delegated.
    unsafe {
        let p = shared_of(vfs).parent;
        (*p).xGetLastError.map_or(0, |f| f(p, n, out))
    }
}

unsafe extern "C" fn x_current_time_int64(
    vfs: *mut ffi::sqlite3_vfs,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: delegated when the default VFS has it (version 2 and later).
    unsafe {
        let p = shared_of(vfs).parent;
        if (*p).iVersion >= 2 {
            if let Some(f) = (*p).xCurrentTimeInt64 {
                return f(p, out);
            }
        }
        let mut days = 0f64;
        let rc = x_current_time(vfs, &mut days);
        *out = (days * 86_400_000.0) as ffi::sqlite3_int64;
        rc
    }
}

// ---- the main database file ----

static MAIN_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(main_close),
    xRead: Some(main_read),
    xWrite: Some(main_write),
    xTruncate: Some(main_truncate),
    xSync: Some(main_sync),
    xFileSize: Some(main_file_size),
    xLock: Some(no_lock),
    xUnlock: Some(no_lock),
    xCheckReservedLock: Some(no_reserved_lock),
    xFileControl: Some(no_file_control),
    xSectorSize: Some(main_sector_size),
    xDeviceCharacteristics: Some(main_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

/// # Safety
/// `f` is a main file opened by `x_open`.
unsafe fn main_shared<'a>(f: *mut ffi::sqlite3_file) -> &'a Shared {
    // SAFETY: `x_open` wrote a `MainFile` there pointing to the live `Shared`.
    unsafe { &*(*(f as *mut MainFile)).shared }
}

/// Records `e` and returns `code` (or `SQLITE_IOERR_CORRUPTFS` for a page failing its
/// check).
fn fail(db: &FlashDb, what: &str, e: Error, code: c_int) -> c_int {
    let code = if is_corrupt(&e) {
        ffi::SQLITE_IOERR_CORRUPTFS
    } else {
        code
    };
    db.set_last_error(format!("{what}: {e}"));
    code
}

unsafe extern "C" fn main_close(f: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: a main file.
    let s = unsafe { main_shared(f) };
    s.main_open.store(false, Ordering::Release);
    ffi::SQLITE_OK
}

unsafe extern "C" fn main_read(
    f: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: a main file; `buf` has `amt` writable bytes.
    let (s, out) = unsafe {
        (
            main_shared(f),
            std::slice::from_raw_parts_mut(buf as *mut u8, amt as usize),
        )
    };
    match s.db.read(off as u64, out) {
        Ok(true) => ffi::SQLITE_OK,
        Ok(false) => ffi::SQLITE_IOERR_SHORT_READ,
        Err(e) => fail(
            &s.db,
            &format!("read of {amt} bytes at {off}"),
            e,
            ffi::SQLITE_IOERR_READ,
        ),
    }
}

unsafe extern "C" fn main_write(
    f: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: a main file; `buf` has `amt` readable bytes.
    let (s, data) = unsafe {
        (
            main_shared(f),
            std::slice::from_raw_parts(buf as *const u8, amt as usize),
        )
    };
    s.event(FileKind::Main, IoKind::Write);
    match s.db.write(off as u64, data) {
        Ok(()) => ffi::SQLITE_OK,
        Err(e) => fail(
            &s.db,
            &format!("write of {amt} bytes at {off}"),
            e,
            ffi::SQLITE_IOERR_WRITE,
        ),
    }
}

unsafe extern "C" fn main_truncate(f: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    // SAFETY: a main file.
    let s = unsafe { main_shared(f) };
    s.event(FileKind::Main, IoKind::Truncate);
    match s.db.truncate(size as u64) {
        Ok(()) => ffi::SQLITE_OK,
        Err(e) => fail(
            &s.db,
            &format!("truncation to {size}"),
            e,
            ffi::SQLITE_IOERR_TRUNCATE,
        ),
    }
}

unsafe extern "C" fn main_sync(f: *mut ffi::sqlite3_file, _flags: c_int) -> c_int {
    // SAFETY: a main file.
    let s = unsafe { main_shared(f) };
    s.event(FileKind::Main, IoKind::Sync);
    match s.db.sync() {
        Ok(()) => ffi::SQLITE_OK,
        Err(e) => fail(&s.db, "sync", e, ffi::SQLITE_IOERR_FSYNC),
    }
}

unsafe extern "C" fn main_file_size(
    f: *mut ffi::sqlite3_file,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: a main file; `out` writable.
    unsafe {
        *out = main_shared(f).db.file_size() as ffi::sqlite3_int64;
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn no_lock(_f: *mut ffi::sqlite3_file, _level: c_int) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn no_reserved_lock(_f: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    // SAFETY: `out` writable. Nobody else can hold a lock: one connection at a time.
    unsafe { *out = 0 };
    ffi::SQLITE_OK
}

unsafe extern "C" fn no_file_control(
    _f: *mut ffi::sqlite3_file,
    _op: c_int,
    _arg: *mut c_void,
) -> c_int {
    ffi::SQLITE_NOTFOUND
}

unsafe extern "C" fn main_sector_size(f: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: a main file.
    unsafe { main_shared(f).db.page_size() as c_int }
}

unsafe extern "C" fn main_characteristics(_f: *mut ffi::sqlite3_file) -> c_int {
    // Every store keeps pages it was not asked to write intact across a crash.
    ffi::SQLITE_IOCAP_POWERSAFE_OVERWRITE
}

// ---- MemFs files ----

static MEM_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(mem_close),
    xRead: Some(mem_read),
    xWrite: Some(mem_write),
    xTruncate: Some(mem_truncate),
    xSync: Some(mem_sync),
    xFileSize: Some(mem_file_size),
    xLock: Some(no_lock),
    xUnlock: Some(no_lock),
    xCheckReservedLock: Some(no_reserved_lock),
    xFileControl: Some(no_file_control),
    xSectorSize: Some(mem_sector_size),
    xDeviceCharacteristics: Some(mem_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

/// # Safety
/// `f` is a memory file opened by `x_open` and not closed.
unsafe fn mem_of<'a>(f: *mut ffi::sqlite3_file) -> (&'a Shared, &'a MemState) {
    // SAFETY: `x_open` wrote a `MemFileHandle` with a live state and `Shared`.
    unsafe {
        let h = &*(f as *mut MemFileHandle);
        (&*h.shared, &*h.state)
    }
}

unsafe extern "C" fn mem_close(f: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: a memory file; the state was boxed by `x_open` and is freed once, here.
    unsafe {
        let h = &mut *(f as *mut MemFileHandle);
        let st = Box::from_raw(h.state);
        h.state = ptr::null_mut();
        if st.delete_on_close {
            if let AuxFiles::Memory(fs) = &(*h.shared).aux {
                fs.remove(&st.name);
            }
        }
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn mem_read(
    f: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: a memory file; `buf` has `amt` writable bytes.
    let ((s, st), out) = unsafe {
        (
            mem_of(f),
            std::slice::from_raw_parts_mut(buf as *mut u8, amt as usize),
        )
    };
    match memfs::read(&st.file, off as u64, out) {
        Ok(true) => ffi::SQLITE_OK,
        Ok(false) => ffi::SQLITE_IOERR_SHORT_READ,
        Err(e) => fail(
            &s.db,
            &st.name,
            Error::Unsupported(e.to_string()),
            ffi::SQLITE_IOERR_READ,
        ),
    }
}

unsafe extern "C" fn mem_write(
    f: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: a memory file; `buf` has `amt` readable bytes.
    let ((s, st), data) = unsafe {
        (
            mem_of(f),
            std::slice::from_raw_parts(buf as *const u8, amt as usize),
        )
    };
    s.event(st.kind, IoKind::Write);
    match memfs::write(&st.file, off as u64, data) {
        Ok(()) => ffi::SQLITE_OK,
        Err(e) => fail(
            &s.db,
            &st.name,
            Error::Unsupported(e.to_string()),
            ffi::SQLITE_IOERR_WRITE,
        ),
    }
}

unsafe extern "C" fn mem_truncate(f: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    // SAFETY: a memory file.
    let (s, st) = unsafe { mem_of(f) };
    s.event(st.kind, IoKind::Truncate);
    use flashbuf_device::Device;
    match st.file.set_len(size as u64) {
        Ok(()) => ffi::SQLITE_OK,
        Err(e) => fail(
            &s.db,
            &st.name,
            Error::Unsupported(e.to_string()),
            ffi::SQLITE_IOERR_TRUNCATE,
        ),
    }
}

unsafe extern "C" fn mem_sync(f: *mut ffi::sqlite3_file, _flags: c_int) -> c_int {
    // SAFETY: a memory file.
    let (s, st) = unsafe { mem_of(f) };
    s.event(st.kind, IoKind::Sync);
    use flashbuf_device::Device;
    match st.file.sync() {
        Ok(()) => ffi::SQLITE_OK,
        Err(e) => fail(
            &s.db,
            &st.name,
            Error::Unsupported(e.to_string()),
            ffi::SQLITE_IOERR_FSYNC,
        ),
    }
}

unsafe extern "C" fn mem_file_size(
    f: *mut ffi::sqlite3_file,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    use flashbuf_device::Device;
    // SAFETY: a memory file; `out` writable.
    unsafe {
        let (_, st) = mem_of(f);
        *out = st.file.len() as ffi::sqlite3_int64;
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn mem_sector_size(_f: *mut ffi::sqlite3_file) -> c_int {
    4096
}

unsafe extern "C" fn mem_characteristics(_f: *mut ffi::sqlite3_file) -> c_int {
    0
}
