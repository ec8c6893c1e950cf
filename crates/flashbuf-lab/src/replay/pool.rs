//! Replaying through the buffer pool: every reference checks the page's stamp through
//! the pool's `access_many`; writes stamp it anew.

use super::epoch::EpochHooks;
use super::latency::Latency;
use crate::feed::{Feed, FeedSummary};
use crate::oracle::Oracle;
use crate::LabError;
use flashbuf_core::DeviceStats;
use flashbuf_device::IoCounts;
use flashbuf_pool::policy::Access;
use flashbuf_pool::{BufferPool, PageAccess, PoolError, PoolStats};
use flashbuf_store::{PageStore, StoreError};
use flashbuf_trace::PageRef;
use indicatif::ProgressBar;

/// The figures at the end of a warm-up (`RunConfig::warmup_refs`), to subtract.
pub(super) struct Warm {
    pub(super) refs: u64,
    pub(super) pool: PoolStats,
    pub(super) dev: DeviceStats,
    pub(super) io: Option<IoCounts>,
}

/// Replays `feed` through `pool`, switching epochs at their boundaries; with `paranoid`,
/// checks the pool's invariants every 16 batches. After `warmup` references (if any
/// remain) the figures are taken and the latency histogram restarts.
#[allow(clippy::too_many_arguments)]
pub(super) fn replay_pool<S: PageStore>(
    pool: &BufferPool<S>,
    mut feed: Feed,
    oracle: &mut Oracle,
    progress: &ProgressBar,
    paranoid: bool,
    hooks: &mut EpochHooks,
    latency: &mut Latency,
    warmup: u64,
) -> Result<(FeedSummary, Option<Warm>), LabError> {
    let mut batches = 0u64;
    let mut pos = 0u64;
    let mut warm = None;
    while let Some(mut batch) = feed.next_batch()? {
        if warm.is_none() && warmup > 0 && pos + batch.len() as u64 > warmup {
            // Split the batch at the warm-up's end.
            let cut = (warmup - pos) as usize;
            let rest = batch.split_off(cut);
            pos = replay_batch(pool, &batch, oracle, hooks, latency, pos)?;
            warm = Some(Warm {
                refs: pos,
                pool: pool.stats(),
                dev: pool.store().device_stats(),
                io: latency.reset(),
            });
            batch = rest;
        }
        pos = replay_batch(pool, &batch, oracle, hooks, latency, pos)?;
        progress.inc(batch.len() as u64);
        feed.recycle(batch);
        batches += 1;
        if paranoid && batches.is_multiple_of(16) {
            pool.check_invariants().map_err(LabError::Invariant)?;
        }
    }
    Ok((feed.finish()?, warm))
}

/// One batch of references from position `pos`, split at epoch boundaries; returns the
/// position after it.
fn replay_batch<S: PageStore>(
    pool: &BufferPool<S>,
    batch: &[PageRef],
    oracle: &mut Oracle,
    hooks: &mut EpochHooks,
    latency: &mut Latency,
    mut pos: u64,
) -> Result<u64, LabError> {
    let e = hooks.epoch_refs;
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
            access_all(pool, &batch[i..end], oracle, latency)?;
            pos += (end - i) as u64;
            i = end;
        }
    } else {
        access_all(pool, batch, oracle, latency)?;
        pos += batch.len() as u64;
    }
    Ok(pos)
}

/// Fixes every reference of `refs` in order through the pool, with the oracle.
fn access_all<S: PageStore>(
    pool: &BufferPool<S>,
    refs: &[PageRef],
    oracle: &mut Oracle,
    latency: &mut Latency,
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
        latency.tick();
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
