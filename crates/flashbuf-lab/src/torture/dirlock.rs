//! The directory lock of `flashbuf torture` and `flashbuf check` (issue 11, bug A).
//!
//! Every command that creates, renames or removes files in a torture directory holds an
//! exclusive `flock` on `DIR/.flashbuf.lock` first, for as long as it runs. The store
//! file's own lock (taken by the file device) is not enough: a second run could remove or
//! rename the *name* of a file another run has locked and is writing. The lock file is
//! never removed (removing a lock file races with the next opener); the kernel drops the
//! lock when the process ends, however it ends.

use crate::LabError;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// Name of the lock file in a torture directory.
pub const LOCK_FILE: &str = ".flashbuf.lock";

/// An exclusive lock on a directory, held until dropped.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
    path: PathBuf,
}

impl DirLock {
    /// Takes the lock of `dir` (which must exist), or refuses at once, naming the lock
    /// file, if another process holds it.
    pub fn acquire(dir: &Path) -> Result<Self, LabError> {
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| {
                LabError::io(format!("cannot open the lock file {}", path.display()), e)
            })?;
        match file.try_lock() {
            Ok(()) => Ok(Self { _file: file, path }),
            Err(TryLockError::WouldBlock) => Err(LabError::Usage(format!(
                "{} is in use by another flashbuf process (it holds {}); wait for it to end or choose another --path",
                dir.display(),
                path.display()
            ))),
            Err(TryLockError::Error(e)) => Err(LabError::io(
                format!("cannot lock {}", path.display()),
                e,
            )),
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_drops() {
        let d = tempfile::tempdir().unwrap();
        let a = DirLock::acquire(d.path()).unwrap();
        let e = DirLock::acquire(d.path()).unwrap_err().to_string();
        assert!(e.contains("in use by another flashbuf process"), "{e}");
        assert!(e.contains(LOCK_FILE), "{e}");
        assert!(a.path().ends_with(LOCK_FILE));
        drop(a);
        DirLock::acquire(d.path()).unwrap();
        let e = DirLock::acquire(&d.path().join("missing"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot open the lock file"), "{e}");
    }
}
