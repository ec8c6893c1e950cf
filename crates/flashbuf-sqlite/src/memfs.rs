//! [`MemFs`]: SQLite's other files (rollback journal, WAL, temporary files) in memory, each
//! on a [`FaultDevice`], so that a test can take the image a power cut would leave of them
//! together with the database's store.
//!
//! Data writes follow the fault device's model: not durable until the file's `xSync`,
//! and a crash may keep any subset of the unsynced writes, each whole or torn at sector
//! boundaries ([`MemFs::crash_image`]). Creating, deleting and truncating a file are
//! durable at once — as on a journaling file system whose directory SQLite syncs
//! (`synchronous=EXTRA` syncs the directory after deleting a rollback journal; the unix
//! VFS syncs it after creating a journal or WAL). Production use puts these files on
//! plain files instead ([`crate::AuxFiles::Dir`]).

use flashbuf_device::fault::{CrashMode, FaultDevice};
use flashbuf_device::{Device, DeviceError};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// One in-memory file.
pub type MemFile = Arc<FaultDevice>;

/// In-memory files by name (cheap to clone: clones share the files).
#[derive(Clone, Default)]
pub struct MemFs {
    files: Arc<Mutex<BTreeMap<String, MemFile>>>,
    temp: Arc<AtomicU64>,
}

impl std::fmt::Debug for MemFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemFs")
            .field("files", &self.names())
            .finish()
    }
}

impl MemFs {
    /// An empty file system.
    pub fn new() -> Self {
        Self::default()
    }

    /// The file `name`, created empty if `create` and missing; `None` if missing.
    pub fn open(&self, name: &str, create: bool) -> Option<MemFile> {
        let mut files = self.files.lock();
        if let Some(f) = files.get(name) {
            return Some(f.clone());
        }
        if !create {
            return None;
        }
        let f = Arc::new(FaultDevice::new(0));
        files.insert(name.to_string(), f.clone());
        Some(f)
    }

    /// A fresh name for a temporary file.
    pub fn temp_name(&self) -> String {
        format!("temp-{}", self.temp.fetch_add(1, Relaxed))
    }

    /// Removes `name` (no error if missing).
    pub fn remove(&self, name: &str) {
        self.files.lock().remove(name);
    }

    /// Whether `name` exists with at least one byte (SQLite's `xAccess` test, as the unix
    /// VFS does it).
    pub fn exists(&self, name: &str) -> bool {
        self.files.lock().get(name).is_some_and(|f| f.len() > 0)
    }

    /// The names of the files.
    pub fn names(&self) -> Vec<String> {
        self.files.lock().keys().cloned().collect()
    }

    /// The files a power cut now would leave: each file's durable bytes plus the unsynced
    /// writes `mode(name, pending)` keeps (a separate file system; this one is unchanged).
    pub fn crash_image(&self, mut mode: impl FnMut(&str, usize) -> CrashMode) -> MemFs {
        let files = self.files.lock();
        let out = MemFs::new();
        {
            let mut o = out.files.lock();
            for (name, f) in files.iter() {
                let img = f.crash_image(mode(name, f.pending_writes()));
                o.insert(name.clone(), Arc::new(FaultDevice::from_image(img)));
            }
        }
        out
    }
}

/// Reads `buf.len()` bytes at `offset` of `f`; bytes past its end read as zeros. Returns
/// `false` for a short read.
pub(crate) fn read(f: &FaultDevice, offset: u64, buf: &mut [u8]) -> Result<bool, DeviceError> {
    let len = f.len();
    let avail = len.saturating_sub(offset).min(buf.len() as u64) as usize;
    if avail > 0 {
        f.read_at(offset, &mut buf[..avail])?;
    }
    buf[avail..].fill(0);
    Ok(avail == buf.len())
}

/// Writes `data` at `offset` of `f`, growing it first if needed.
pub(crate) fn write(f: &FaultDevice, offset: u64, data: &[u8]) -> Result<(), DeviceError> {
    let end = offset + data.len() as u64;
    if end > f.len() {
        f.set_len(end)?;
    }
    f.write_at(offset, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsynced_writes_are_lost_by_a_crash_and_synced_ones_kept() {
        let fs = MemFs::new();
        let f = fs.open("j", true).unwrap();
        write(&f, 0, b"synced").unwrap();
        f.sync().unwrap();
        write(&f, 6, b"later").unwrap();
        assert!(fs.exists("j"));
        let lost = fs.crash_image(|_, _| CrashMode::LoseUnsynced);
        let g = lost.open("j", false).unwrap();
        let mut b = [0u8; 11];
        // The size change is durable at once; the bytes are not.
        assert!(read(&g, 0, &mut b).unwrap());
        assert_eq!(&b, b"synced\0\0\0\0\0");
        let kept = fs.crash_image(|_, _| CrashMode::KeepAll);
        read(&kept.open("j", false).unwrap(), 0, &mut b).unwrap();
        assert_eq!(&b, b"syncedlater");
        assert!(!read(&g, 8, &mut b).unwrap(), "past the end is short");
        fs.remove("j");
        assert!(!fs.exists("j") && fs.open("j", false).is_none());
        assert_ne!(fs.temp_name(), fs.temp_name());
    }
}
