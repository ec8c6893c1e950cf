//! The I/O methods of the main database file (a [`FlashDb`]) and of [`MemFs`] files.
//!
//! [`MemFs`]: crate::MemFs

use super::methods::{MainFile, MemFileHandle, MemState};
use super::{AuxFiles, FileKind, IoKind, Shared};
use crate::backend::is_corrupt;
use crate::db::FlashDb;
use crate::error::Error;
use crate::memfs;
use rusqlite::ffi;
use std::ffi::{c_int, c_void};
use std::ptr;
use std::sync::atomic::Ordering;

pub(super) static MAIN_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
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

pub(super) static MEM_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
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
