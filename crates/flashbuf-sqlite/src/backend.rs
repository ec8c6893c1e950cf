//! The two ways SQLite's pages reach the store: straight through (pass-through mode,
//! SQLite's own cache above), or through a flashbuf [`BufferPool`] whose policy decides
//! what stays in memory and when dirty pages are written (pool mode, SQLite's cache
//! small).

use crate::error::Error;
use flashbuf_core::page::{self, HEADER_BYTES};
use flashbuf_core::{AlignedBuf, DeviceStats, DirtyRanges, PageId};
use flashbuf_pool::policy::Policy;
use flashbuf_pool::{BufferPool, PageWriter, PoolError, PoolStats};
use flashbuf_store::{PageStore, StoreError, StoreStats};

/// The pool of pool mode: any store, boxed.
pub type StorePool = BufferPool<Box<dyn PageStore>>;

/// Where SQLite's page cache sits.
pub enum Cache {
    /// SQLite's own cache above the store; every page SQLite reads or writes is a store
    /// read or write.
    PassThrough,
    /// A flashbuf buffer pool of `frames` frames managed by `policy` between SQLite and
    /// the store (SQLite's own cache is then kept small, see
    /// [`crate::OpenOptions::sqlite_cache_pages`]).
    Pool {
        /// Frames of the pool (at least 4).
        frames: usize,
        /// The replacement policy, built for `frames` frames.
        policy: Box<dyn Policy>,
    },
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cache::PassThrough => f.write_str("PassThrough"),
            Cache::Pool { frames, policy } => f
                .debug_struct("Pool")
                .field("frames", frames)
                .field("policy", &policy.name())
                .finish(),
        }
    }
}

pub(crate) enum Backend {
    Store(Box<dyn PageStore>),
    Pool(Box<StorePool>),
}

/// Whether an error is a page failing its check (a torn write the store detected).
pub(crate) fn is_corrupt(e: &Error) -> bool {
    matches!(
        e,
        Error::Store(StoreError::Corrupt { .. })
            | Error::Pool(PoolError::Store(StoreError::Corrupt { .. }))
    )
}

impl Backend {
    pub(crate) fn new(store: Box<dyn PageStore>, cache: Cache) -> Result<Self, Error> {
        Ok(match cache {
            Cache::PassThrough => Backend::Store(store),
            Cache::Pool { frames, policy } => {
                if frames < 4 {
                    return Err(Error::Unsupported(format!(
                        "a pool of {frames} frames; the VFS needs at least 4 (two hold its record)"
                    )));
                }
                Backend::Pool(Box::new(BufferPool::new(store, frames, policy)?))
            }
        })
    }

    pub(crate) fn store(&self) -> &dyn PageStore {
        match self {
            Backend::Store(s) => s.as_ref(),
            Backend::Pool(p) => p.store().as_ref(),
        }
    }

    pub(crate) fn pool(&self) -> Option<&StorePool> {
        match self {
            Backend::Store(_) => None,
            Backend::Pool(p) => Some(p),
        }
    }

    /// Reads the payload (`page_size - 32` bytes) of `pid`; a page never written reads as
    /// zeros. `scratch` is a page-sized buffer.
    pub(crate) fn read_payload(
        &self,
        pid: PageId,
        payload: &mut [u8],
        scratch: &mut AlignedBuf,
    ) -> Result<(), Error> {
        match self {
            Backend::Store(s) => {
                s.read_page(pid, scratch)?;
                payload.copy_from_slice(&scratch[HEADER_BYTES..]);
            }
            Backend::Pool(p) => p.with_read(pid, |data| payload.copy_from_slice(data))?,
        }
        Ok(())
    }

    /// Writes the payload of `pid`. Pass-through seals the page with `version`; the pool
    /// writes only the byte runs that differ from the cached page (its dirty ranges are
    /// SQLite's real changes) and stamps versions itself. A page the pool cannot load
    /// because it fails its check (a torn write a crash left beyond SQLite's file end,
    /// which SQLite now overwrites whole) is written to the store directly with `version`.
    pub(crate) fn write_payload(
        &self,
        pid: PageId,
        payload: &[u8],
        version: u64,
        scratch: &mut AlignedBuf,
    ) -> Result<(), Error> {
        match self {
            Backend::Store(s) => write_sealed(s.as_ref(), pid, payload, version, scratch),
            Backend::Pool(p) => match p.with_write(pid, |w| write_changes(w, payload)) {
                Ok(()) => Ok(()),
                Err(e) => {
                    let e = Error::from(e);
                    if !is_corrupt(&e) {
                        return Err(e);
                    }
                    write_sealed(p.store().as_ref(), pid, payload, version, scratch)
                }
            },
        }
    }

    /// Makes every page written so far durable (the pool writes its dirty pages back
    /// first).
    pub(crate) fn sync(&self) -> Result<(), Error> {
        match self {
            Backend::Store(s) => s.sync()?,
            Backend::Pool(p) => p.sync()?,
        }
        Ok(())
    }

    pub(crate) fn store_stats(&self) -> StoreStats {
        self.store().stats()
    }

    pub(crate) fn device_stats(&self) -> DeviceStats {
        self.store().device_stats()
    }

    pub(crate) fn pool_stats(&self) -> Option<PoolStats> {
        self.pool().map(|p| p.stats())
    }

    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        match self {
            Backend::Store(s) => s.check_invariants(),
            Backend::Pool(p) => p.check_invariants(),
        }
    }
}

fn write_sealed(
    store: &dyn PageStore,
    pid: PageId,
    payload: &[u8],
    version: u64,
    scratch: &mut AlignedBuf,
) -> Result<(), Error> {
    scratch[HEADER_BYTES..].copy_from_slice(payload);
    page::seal(scratch, pid, version);
    store.write_page(pid, scratch, &DirtyRanges::full(scratch.len()))?;
    Ok(())
}

/// Byte runs closer than this are written as one (fewer, slightly longer ranges).
const RUN_GAP_BYTES: usize = 16;

/// Writes the runs of `new` that differ from the page's payload.
fn write_changes(w: &mut PageWriter<'_>, new: &[u8]) {
    let mut at = 0;
    while let Some((start, end)) = next_run(w.data(), new, at) {
        w.write(start, &new[start..end]);
        at = end;
    }
}

/// The next run of differing bytes at or after `from` (gaps shorter than
/// [`RUN_GAP_BYTES`] bridged): `(start, end)`.
fn next_run(old: &[u8], new: &[u8], from: usize) -> Option<(usize, usize)> {
    let start = from
        + old[from..]
            .iter()
            .zip(&new[from..])
            .position(|(a, b)| a != b)?;
    let mut last_diff = start;
    for i in start + 1..new.len() {
        if old[i] != new[i] {
            last_diff = i;
        } else if i - last_diff >= RUN_GAP_BYTES {
            break;
        }
    }
    Some((start, last_diff + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_cover_every_difference_and_bridge_small_gaps() {
        let old = vec![0u8; 200];
        let mut new = old.clone();
        new[3] = 1;
        new[10] = 1; // 6 equal bytes between: bridged
        new[100] = 1;
        new[101] = 1;
        let mut runs = Vec::new();
        let mut at = 0;
        while let Some((s, e)) = next_run(&old, &new, at) {
            runs.push((s, e));
            at = e;
        }
        assert_eq!(runs, vec![(3, 11), (100, 102)]);
        assert_eq!(next_run(&old, &old, 0), None);
    }
}
