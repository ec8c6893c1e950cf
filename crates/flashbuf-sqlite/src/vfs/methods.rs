//! The VFS-level methods: open (the main database file, or another file through the
//! default VFS or a [`MemFs`]), delete, access, full path name, and the rest delegated to
//! the default VFS.

use super::files::{MAIN_METHODS, MEM_METHODS};
use super::{AuxFiles, FileKind, IoKind, Shared};
use crate::memfs::MemFile;
use rusqlite::ffi;
use std::ffi::{c_char, c_int, CStr};
use std::ptr;
use std::sync::atomic::Ordering;

/// The main database file as SQLite allocates it (`szOsFile` bytes, `base` first).
#[repr(C)]
pub(super) struct MainFile {
    pub(super) base: ffi::sqlite3_file,
    pub(super) shared: *const Shared,
}

/// A [`MemFs`] file.
#[repr(C)]
pub(super) struct MemFileHandle {
    pub(super) base: ffi::sqlite3_file,
    pub(super) shared: *const Shared,
    /// `Box::into_raw` of the open file's state, freed by `xClose`.
    pub(super) state: *mut MemState,
}

pub(super) struct MemState {
    pub(super) file: MemFile,
    pub(super) name: String,
    pub(super) kind: FileKind,
    pub(super) delete_on_close: bool,
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

pub(super) unsafe extern "C" fn x_open(
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

pub(super) unsafe extern "C" fn x_delete(
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

pub(super) unsafe extern "C" fn x_access(
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

pub(super) unsafe extern "C" fn x_full_pathname(
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

pub(super) unsafe extern "C" fn x_randomness(
    vfs: *mut ffi::sqlite3_vfs,
    n: c_int,
    out: *mut c_char,
) -> c_int {
    // SAFETY: delegated to the default VFS with the same arguments.
    unsafe {
        let p = shared_of(vfs).parent;
        (*p).xRandomness.map_or(0, |f| f(p, n, out))
    }
}

pub(super) unsafe extern "C" fn x_sleep(vfs: *mut ffi::sqlite3_vfs, us: c_int) -> c_int {
    // SAFETY: delegated.
    unsafe {
        let p = shared_of(vfs).parent;
        (*p).xSleep.map_or(0, |f| f(p, us))
    }
}

pub(super) unsafe extern "C" fn x_current_time(vfs: *mut ffi::sqlite3_vfs, out: *mut f64) -> c_int {
    // SAFETY: delegated.
    unsafe {
        let p = shared_of(vfs).parent;
        (*p).xCurrentTime.map_or(ffi::SQLITE_ERROR, |f| f(p, out))
    }
}

pub(super) unsafe extern "C" fn x_get_last_error(
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

pub(super) unsafe extern "C" fn x_current_time_int64(
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
