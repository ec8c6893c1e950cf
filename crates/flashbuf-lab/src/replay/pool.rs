//! Replaying through the buffer pool: every reference checks the page's stamp through
//! the pool's `access_many`; writes stamp it anew.

use super::epoch::EpochHooks;
use crate::feed::{Feed, FeedSummary};
use crate::oracle::Oracle;
use crate::LabError;
use flashbuf_pool::policy::Access;
use flashbuf_pool::{BufferPool, PageAccess, PoolError};
use flashbuf_store::{PageStore, StoreError};
use flashbuf_trace::PageRef;
use indicatif::ProgressBar;

/// Replays `feed` through `pool`, switching epochs at their boundaries; with `paranoid`,
/// checks the pool's invariants every 16 batches.
pub(super) fn replay_pool<S: PageStore>(
    pool: &BufferPool<S>,
    mut feed: Feed,
    oracle: &mut Oracle,
    progress: &ProgressBar,
    paranoid: bool,
    hooks: &mut EpochHooks,
) -> Result<FeedSummary, LabError> {
    let mut batches = 0u64;
    let mut pos = 0u64;
    let e = hooks.epoch_refs;
    while let Some(batch) = feed.next_batch()? {
        hooks.writes += batch.iter().filter(|r| r.op.is_write()).count() as u64;
        if hooks.active() {
            // Split at epoch boundaries so each epoch runs under its own settings.
            let mut i = 0;
            while i < batch.len() {
                let left = (e - pos % e) as usize;
                let end = batch.len().min(i + left);
                if let Some(costs) = hooks.enter(pos / e) {
                    pool.update_costs(&costs);
                }
                access_all(pool, &batch[i..end], oracle)?;
                pos += (end - i) as u64;
                i = end;
            }
        } else {
            access_all(pool, &batch, oracle)?;
            pos += batch.len() as u64;
        }
        progress.inc(batch.len() as u64);
        feed.recycle(batch);
        batches += 1;
        if paranoid && batches.is_multiple_of(16) {
            pool.check_invariants().map_err(LabError::Invariant)?;
        }
    }
    feed.finish()
}

/// Fixes every reference of `refs` in order through the pool, with the oracle.
fn access_all<S: PageStore>(
    pool: &BufferPool<S>,
    refs: &[PageRef],
    oracle: &mut Oracle,
) -> Result<(), LabError> {
    let key = |i: usize| {
        let r = refs[i];
        let access = if r.op.is_write() {
            Access::Write
        } else {
            Access::Read
        };
        (r.page, access)
    };
    let result = pool.access_many(refs.len(), key, |i, page| {
        let pid = refs[i].page;
        match page {
            PageAccess::Read(data) => oracle.check(pid, data),
            PageAccess::Write(mut w) => {
                oracle.check(pid, w.data());
                let s = oracle.bump(pid);
                w.write(0, &s);
            }
        }
    });
    match result {
        Ok(()) => Ok(()),
        Err((_, e)) => Err(corrupt_or(e, oracle)),
    }
}

fn corrupt_or(e: PoolError, oracle: &mut Oracle) -> LabError {
    if let PoolError::Store(StoreError::Corrupt { pid, reason }) = &e {
        oracle.record_error(format!("{pid} corrupt: {reason}"));
    }
    e.into()
}
