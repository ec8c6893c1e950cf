//! A real file as a device: positional reads and writes, optional `O_DIRECT`, real fsync,
//! and an exclusive advisory lock so that a second opener is refused.

use crate::{check_range, counters::Counters, Device, DeviceError, IoOp};
use flashbuf_core::{AlignedBuf, DeviceStats};
use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Alignment used for `O_DIRECT` I/O (a safe multiple of every logical block size).
pub const DIRECT_ALIGN: usize = 4096;

/// How to open a [`FileDevice`].
#[derive(Debug, Clone, Copy)]
pub struct FileDeviceOptions {
    /// Create the file if it does not exist.
    pub create: bool,
    /// Bypass the page cache with `O_DIRECT` (Linux). Offsets and lengths must then be
    /// multiples of 4096 bytes (`DIRECT_ALIGN`); unaligned buffer *addresses* are bounced through an
    /// aligned copy.
    pub direct: bool,
    /// Take an exclusive advisory lock (`flock`) and refuse to open if it is held.
    pub lock: bool,
}

impl Default for FileDeviceOptions {
    fn default() -> Self {
        Self {
            create: true,
            direct: false,
            lock: true,
        }
    }
}

/// A device backed by a file.
///
/// Durability: [`Device::sync`] is `fsync` of the file; when this open created the file,
/// the first successful `sync` also fsyncs the parent directory, so the file's name is as
/// durable as its first synced bytes (POSIX makes no promise for a new directory entry
/// without it).
///
/// ```
/// use flashbuf_device::{Device, FileDevice, FileDeviceOptions};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("data");
/// let d = FileDevice::open(&path, FileDeviceOptions::default()).unwrap();
/// d.set_len(4096).unwrap();
/// d.write_at(0, &[7u8; 512]).unwrap();
/// d.sync().unwrap();
/// // A second opener is refused while the first holds the lock.
/// assert!(FileDevice::open(&path, FileDeviceOptions::default()).is_err());
/// ```
#[derive(Debug)]
pub struct FileDevice {
    file: File,
    path: PathBuf,
    direct: bool,
    len: AtomicU64,
    /// This open created the file and its directory has not been fsynced since.
    dir_unsynced: AtomicBool,
    counters: Counters,
}

impl FileDevice {
    /// Opens (and with `create`, creates) the file at `path`.
    pub fn open(path: &Path, opts: FileDeviceOptions) -> Result<Self, DeviceError> {
        let io_err = |source| DeviceError::Io {
            op: IoOp::Open,
            offset: 0,
            device: path.display().to_string(),
            source,
        };
        let mut oo = OpenOptions::new();
        oo.read(true).write(true).create(opts.create);
        if opts.direct {
            Self::add_direct_flag(&mut oo)?;
        }
        // Try to create the file first, to know whether its directory entry is new.
        let (file, created) = if opts.create {
            let mut new = oo.clone();
            new.create_new(true);
            match new.open(path) {
                Ok(f) => (f, true),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    (oo.open(path).map_err(io_err)?, false)
                }
                Err(e) => return Err(io_err(e)),
            }
        } else {
            (oo.open(path).map_err(io_err)?, false)
        };
        if opts.lock {
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    return Err(DeviceError::Locked {
                        path: path.display().to_string(),
                    })
                }
                Err(TryLockError::Error(e)) => return Err(io_err(e)),
            }
        }
        let len = file.metadata().map_err(io_err)?.len();
        Ok(Self {
            file,
            path: path.to_path_buf(),
            direct: opts.direct,
            len: AtomicU64::new(len),
            dir_unsynced: AtomicBool::new(created),
            counters: Counters::default(),
        })
    }

    /// Fsyncs the directory holding the file.
    fn sync_parent_dir(&self) -> std::io::Result<()> {
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        File::open(dir)?.sync_all()
    }

    #[cfg(target_os = "linux")]
    fn add_direct_flag(oo: &mut OpenOptions) -> Result<(), DeviceError> {
        use std::os::unix::fs::OpenOptionsExt;
        oo.custom_flags(libc::O_DIRECT);
        Ok(())
    }

    #[cfg(not(target_os = "linux"))]
    fn add_direct_flag(_oo: &mut OpenOptions) -> Result<(), DeviceError> {
        Err(DeviceError::Config(
            "O_DIRECT is only supported on Linux".to_string(),
        ))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file was opened with `O_DIRECT`.
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    fn check_align(&self, op: IoOp, offset: u64, len: usize) -> Result<(), DeviceError> {
        if self.direct
            && (!offset.is_multiple_of(DIRECT_ALIGN as u64) || !len.is_multiple_of(DIRECT_ALIGN))
        {
            return Err(DeviceError::Misaligned {
                op,
                offset,
                len: len as u64,
                align: DIRECT_ALIGN,
            });
        }
        Ok(())
    }

    fn needs_bounce(&self, ptr: *const u8) -> bool {
        self.direct && !(ptr as usize).is_multiple_of(DIRECT_ALIGN)
    }

    fn io_err(&self, op: IoOp, offset: u64, source: std::io::Error) -> DeviceError {
        DeviceError::Io {
            op,
            offset,
            device: self.describe(),
            source,
        }
    }
}

impl Device for FileDevice {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        check_range(IoOp::Read, offset, buf.len(), self.len())?;
        self.check_align(IoOp::Read, offset, buf.len())?;
        let t = Instant::now();
        let r = if self.needs_bounce(buf.as_ptr()) {
            let mut b = AlignedBuf::zeroed(buf.len(), DIRECT_ALIGN);
            let r = self.file.read_exact_at(&mut b, offset);
            buf.copy_from_slice(&b);
            r
        } else {
            self.file.read_exact_at(buf, offset)
        };
        self.counters.time_ns(t.elapsed().as_nanos() as u64);
        r.map_err(|e| self.io_err(IoOp::Read, offset, e))?;
        self.counters.read(buf.len());
        Ok(())
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        check_range(IoOp::Write, offset, buf.len(), self.len())?;
        self.check_align(IoOp::Write, offset, buf.len())?;
        let t = Instant::now();
        let r = if self.needs_bounce(buf.as_ptr()) {
            let mut b = AlignedBuf::zeroed(buf.len(), DIRECT_ALIGN);
            b.copy_from_slice(buf);
            self.file.write_all_at(&b, offset)
        } else {
            self.file.write_all_at(buf, offset)
        };
        self.counters.time_ns(t.elapsed().as_nanos() as u64);
        r.map_err(|e| self.io_err(IoOp::Write, offset, e))?;
        self.counters.write(buf.len());
        Ok(())
    }

    fn sync(&self) -> Result<(), DeviceError> {
        let t = Instant::now();
        let mut r = self.file.sync_all();
        if r.is_ok() && self.dir_unsynced.load(Ordering::Acquire) {
            r = self.sync_parent_dir();
            if r.is_ok() {
                self.dir_unsynced.store(false, Ordering::Release);
            }
        }
        self.counters.time_ns(t.elapsed().as_nanos() as u64);
        r.map_err(|e| self.io_err(IoOp::Sync, 0, e))?;
        self.counters.sync();
        Ok(())
    }

    fn len(&self) -> u64 {
        self.len.load(Ordering::Acquire)
    }

    fn set_len(&self, len: u64) -> Result<(), DeviceError> {
        if self.direct && !len.is_multiple_of(DIRECT_ALIGN as u64) {
            return Err(DeviceError::Misaligned {
                op: IoOp::SetLen,
                offset: len,
                len: 0,
                align: DIRECT_ALIGN,
            });
        }
        self.file
            .set_len(len)
            .map_err(|e| self.io_err(IoOp::SetLen, len, e))?;
        self.len.store(len, Ordering::Release);
        Ok(())
    }

    fn stats(&self) -> DeviceStats {
        self.counters.snapshot()
    }

    fn alignment(&self) -> usize {
        if self.direct {
            DIRECT_ALIGN
        } else {
            1
        }
    }

    fn describe(&self) -> String {
        format!("file:{}", self.path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first sync of a file this open created fsyncs its directory (seen here by
    /// removing the directory first: that sync fails, naming the device); a file that
    /// already existed syncs without touching the directory.
    #[test]
    fn first_sync_of_a_new_file_syncs_its_directory() {
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("d");
        std::fs::create_dir(&dir).unwrap();
        let path = dir.join("f");
        let d = FileDevice::open(&path, FileDeviceOptions::default()).unwrap();
        assert!(d.dir_unsynced.load(Ordering::Acquire));
        d.set_len(4096).unwrap();
        d.sync().unwrap();
        assert!(
            !d.dir_unsynced.load(Ordering::Acquire),
            "directory synced once"
        );
        drop(d);

        let reopened = FileDevice::open(&path, FileDeviceOptions::default()).unwrap();
        assert!(!reopened.dir_unsynced.load(Ordering::Acquire));
        std::fs::remove_file(&path).unwrap();
        std::fs::remove_dir(&dir).unwrap();
        reopened.sync().unwrap();

        std::fs::create_dir(&dir).unwrap();
        let created = FileDevice::open(&path, FileDeviceOptions::default()).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::fs::remove_dir(&dir).unwrap();
        let e = created.sync().unwrap_err();
        assert!(matches!(e, DeviceError::Io { op: IoOp::Sync, .. }), "{e}");
        assert!(created.dir_unsynced.load(Ordering::Acquire), "still owed");
    }

    #[test]
    fn roundtrip_and_persist_across_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        {
            let d = FileDevice::open(&path, FileDeviceOptions::default()).unwrap();
            d.set_len(8192).unwrap();
            d.write_at(4096, &[9u8; 4096]).unwrap();
            d.sync().unwrap();
            let s = d.stats();
            assert_eq!((s.writes, s.syncs, s.written_bytes), (1, 1, 4096));
        }
        let d = FileDevice::open(&path, FileDeviceOptions::default()).unwrap();
        assert_eq!(d.len(), 8192);
        let mut b = vec![0u8; 4096];
        d.read_at(4096, &mut b).unwrap();
        assert!(b.iter().all(|&x| x == 9));
    }

    #[test]
    fn out_of_range_is_an_error_not_a_short_read() {
        let dir = tempfile::tempdir().unwrap();
        let d = FileDevice::open(&dir.path().join("f"), FileDeviceOptions::default()).unwrap();
        d.set_len(100).unwrap();
        let mut b = [0u8; 10];
        assert!(matches!(
            d.read_at(95, &mut b),
            Err(DeviceError::OutOfRange { .. })
        ));
        assert!(d.write_at(95, &b).is_err());
    }

    #[test]
    fn second_opener_is_refused_with_locked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let _a = FileDevice::open(&path, FileDeviceOptions::default()).unwrap();
        let e = FileDevice::open(&path, FileDeviceOptions::default()).unwrap_err();
        assert!(matches!(e, DeviceError::Locked { .. }), "{e}");
        assert!(e.to_string().contains("in use by another process"));
    }

    #[test]
    fn missing_file_without_create_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nope");
        let opts = FileDeviceOptions {
            create: false,
            ..Default::default()
        };
        let e = FileDevice::open(&path, opts).unwrap_err();
        assert!(e.to_string().contains("nope"), "{e}");
    }

    /// O_DIRECT is not supported by every file system (tmpfs refuses it); where the
    /// temporary directory refuses it the test says so and checks nothing else.
    #[test]
    fn direct_io_with_aligned_and_unaligned_buffers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let opts = FileDeviceOptions {
            direct: true,
            ..Default::default()
        };
        let d = match FileDevice::open(&path, opts) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("O_DIRECT unsupported here, skipping: {e}");
                return;
            }
        };
        assert_eq!(d.alignment(), 4096);
        d.set_len(3 * 4096).unwrap();
        let mut a = AlignedBuf::zeroed(4096, 4096);
        a.fill(5);
        d.write_at(0, &a).unwrap();
        // An unaligned buffer address is bounced.
        let mut v = vec![0u8; 4096 + 1];
        v[1..].fill(6);
        d.write_at(4096, &v[1..]).unwrap();
        let mut r = vec![0u8; 4096 + 1];
        d.read_at(4096, &mut r[1..]).unwrap();
        assert!(r[1..].iter().all(|&x| x == 6));
        d.read_at(0, &mut a).unwrap();
        assert!(a.iter().all(|&x| x == 5));
        // Unaligned offsets are refused.
        assert!(matches!(
            d.write_at(100, &a),
            Err(DeviceError::Misaligned { .. })
        ));
        d.sync().unwrap();
    }
}
