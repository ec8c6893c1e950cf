//! Replaying through the buffer pool: every reference checks the page's stamp through
//! the pool's `access_many`; writes stamp it anew.

use super::epoch::EpochHooks;
use super::latency::Latency;
use super::windows::Windows;
use crate::config::Warmup;
use crate::dirty::{DirtyStats, RangeSource};
use crate::feed::{AddressMap, PageBits};
use crate::feed::{Feed, FeedSummary};
use crate::oracle::Oracle;
use crate::LabError;
use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::DeviceStats;
use flashbuf_core::PageId;
use flashbuf_device::IoCounts;
use flashbuf_pool::policy::Access;
use flashbuf_pool::{BufferPool, PageAccess, PageWriter, PoolError, PoolStats};
use flashbuf_store::{PageStore, StoreError};
use flashbuf_trace::{Op, PageRef};
use indicatif::ProgressBar;

/// What a write reference changes through the pool ([`crate::dirty`]): the whole payload,
/// or the ranges of a source (each byte flipped, so it really changes), then the stamp.
/// Through a pool a page's ranges merge until it is written back: the store sees the
/// union of the bytes changed since it last saw the page.
pub(super) struct PoolWrites<'a> {
    /// `None`: the whole page.
    pub(super) source: Option<&'a mut RangeSource>,
    pub(super) ranges: Vec<(u32, u32)>,
    pub(super) stats: DirtyStats,
    /// The first error of the source (out of step, a range beyond the page).
    pub(super) error: Option<LabError>,
    /// The trace's pages mapped as the feed maps them (to check the lockstep).
    pub(super) map: AddressMap,
    /// The logical page size the ranges are in (a metadata-only frame holds its head).
    pub(super) page_size: usize,
}

impl PoolWrites<'_> {
    /// Takes the ranges of the next reference (`op` of dense page `pid`) from the source.
    fn advance(&mut self, op: Op, pid: PageId, page_size: usize) {
        let Some(src) = self.source.as_deref_mut() else {
            return;
        };
        match src.next(op, page_size, &mut self.ranges) {
            Ok(Some(raw)) if self.map.map(PageId(raw)) != pid => {
                self.error.get_or_insert(LabError::Usage(format!(
                    "dirty ranges: a reference to {pid} met the ranges of trace page {raw}"
                )));
            }
            Ok(_) => {}
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
    }

    /// Changes the page behind `w` as the model says (before the stamp is written): the
    /// ranges of the logical page are recorded, the bytes the frame holds flipped.
    fn change(&mut self, w: &mut PageWriter<'_>) {
        if self.source.is_none() {
            w.touch_all();
            return;
        }
        for &(o, l) in &self.ranges {
            let bytes = w.data_mut_held(o as usize - HEADER_BYTES, l as usize);
            bytes.iter_mut().for_each(|b| *b ^= 0xFF);
        }
        self.stats.count(&self.ranges, None);
    }
}

/// The figures at the end of a warm-up (`RunConfig::warmup_refs`), to subtract.
pub(super) struct Warm {
    pub(super) refs: u64,
    pub(super) pool: PoolStats,
    pub(super) dev: DeviceStats,
    pub(super) io: Option<IoCounts>,
}

/// Where the warm-up ends ([`crate::config::Warmup`]), followed reference by reference.
pub(super) enum WarmupEnd {
    /// No warm-up.
    Never,
    /// After this many references (if any remain after them).
    Refs(u64),
    /// After the reference that brings the distinct pages seen to `frames`.
    Fill {
        frames: u64,
        seen: PageBits,
        distinct: u64,
    },
}

impl WarmupEnd {
    pub(super) fn new(w: Warmup, frames: usize) -> Self {
        match w {
            Warmup::None | Warmup::Refs(0) => WarmupEnd::Never,
            Warmup::Refs(n) => WarmupEnd::Refs(n),
            Warmup::Fill => WarmupEnd::Fill {
                frames: frames as u64,
                seen: PageBits::default(),
                distinct: 0,
            },
        }
    }

    /// How many references of `batch` (starting at position `pos`) belong to the
    /// warm-up, if it ends within the batch.
    fn cut(&mut self, batch: &[PageRef], pos: u64) -> Option<usize> {
        match self {
            WarmupEnd::Never => None,
            WarmupEnd::Refs(n) => (pos + batch.len() as u64 > *n).then(|| (*n - pos) as usize),
            WarmupEnd::Fill {
                frames,
                seen,
                distinct,
            } => batch
                .iter()
                .position(|r| {
                    let new = seen.insert(r.page.0);
                    *distinct += u64::from(new);
                    new && *distinct == *frames
                })
                .map(|i| i + 1),
        }
    }
}

/// Replays `feed` through `pool`, switching epochs at their boundaries; with `paranoid`,
/// checks the pool's invariants every 16 batches. When the warm-up ends (if it does) the
/// figures are taken and the latency histogram restarts; `windows` samples the measured
/// part.
#[allow(clippy::too_many_arguments)]
pub(super) fn replay_pool<S: PageStore>(
    pool: &BufferPool<S>,
    mut feed: Feed,
    oracle: &mut Oracle,
    progress: &ProgressBar,
    paranoid: bool,
    hooks: &mut EpochHooks,
    latency: &mut Latency,
    mut warmup: WarmupEnd,
    writes: &mut PoolWrites<'_>,
    windows: &mut Windows,
) -> Result<(FeedSummary, Option<Warm>), LabError> {
    let mut batches = 0u64;
    let mut pos = 0u64;
    let mut warm = None;
    if matches!(warmup, WarmupEnd::Never) {
        windows.start(0, latency.counts());
    }
    while let Some(mut batch) = feed.next_batch()? {
        // The stream model's outputs before the references that follow them.
        pool.stream_outputs(feed.outputs());
        if let Some(cut) = warm.is_none().then(|| warmup.cut(&batch, pos)).flatten() {
            // Split the batch at the warm-up's end.
            let rest = batch.split_off(cut);
            pos = replay_batch(pool, &batch, oracle, hooks, latency, writes, pos)?;
            let io = latency.reset();
            windows.start(pos, io);
            warm = Some(Warm {
                refs: pos,
                pool: pool.stats(),
                dev: pool.store().device_stats(),
                io,
            });
            batch = rest;
        }
        let mut rest = &batch[..];
        while !rest.is_empty() {
            // Split at the sample windows' ends.
            let n = windows.until_next(pos).min(rest.len());
            pos = replay_batch(pool, &rest[..n], oracle, hooks, latency, writes, pos)?;
            windows.at(pos, pool, latency.counts());
            rest = &rest[n..];
        }
        progress.inc(batch.len() as u64);
        feed.recycle(batch);
        batches += 1;
        if paranoid && batches.is_multiple_of(16) {
            pool.check_invariants().map_err(LabError::Invariant)?;
        }
    }
    pool.stream_outputs(feed.outputs());
    windows.end();
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
    writes: &mut PoolWrites<'_>,
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
            access_all(pool, &batch[i..end], oracle, latency, writes)?;
            pos += (end - i) as u64;
            i = end;
        }
    } else {
        access_all(pool, batch, oracle, latency, writes)?;
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
    writes: &mut PoolWrites<'_>,
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
    let result = if writes.source.is_none() {
        // Whole-page writes (no range source): nothing to take per reference.
        pool.access_many(refs.len(), key, |i, page| {
            latency.tick();
            check_and_stamp(oracle, refs[i].page, page, |w| w.touch_all());
        })
    } else {
        access_ranges(pool, refs, key, oracle, latency, writes)
    };
    if let Some(e) = writes.error.take() {
        return Err(e);
    }
    match result {
        Ok(()) => Ok(()),
        Err((_, e)) => Err(corrupt_or(e, oracle)),
    }
}

/// The oracle's work for one reference to `pid`: check the stamp; for a write, `change`
/// the page as the model says, then stamp it anew.
#[inline(always)]
fn check_and_stamp(
    oracle: &mut Oracle,
    pid: PageId,
    page: PageAccess<'_>,
    change: impl FnOnce(&mut PageWriter<'_>),
) {
    match page {
        PageAccess::Read(data) => oracle.check(pid, data),
        PageAccess::Write(w) => write_and_stamp(oracle, pid, w, change),
    }
}

/// `check_and_stamp`'s write path, out of line: the read path alone is small enough for
/// the compiler to inline the replay's closure into the pool's loop (cachegrind, 2 M
/// references: the closure's call and register saves were ≈ 18 instructions per reference).
#[inline(never)]
fn write_and_stamp(
    oracle: &mut Oracle,
    pid: PageId,
    mut w: PageWriter<'_>,
    change: impl FnOnce(&mut PageWriter<'_>),
) {
    oracle.check(pid, w.data());
    change(&mut w);
    let s = oracle.bump(pid);
    w.write(0, &s);
}

/// `access_all` with the ranges of a source applied to every write.
fn access_ranges<S: PageStore>(
    pool: &BufferPool<S>,
    refs: &[PageRef],
    key: impl FnMut(usize) -> (PageId, Access),
    oracle: &mut Oracle,
    latency: &mut Latency,
    writes: &mut PoolWrites<'_>,
) -> Result<(), (usize, PoolError)> {
    let page_size = writes.page_size;
    pool.access_many(refs.len(), key, |i, page| {
        let pid = refs[i].page;
        writes.advance(refs[i].op, pid, page_size);
        latency.tick();
        check_and_stamp(oracle, pid, page, |w| writes.change(w));
    })
}

fn corrupt_or(e: PoolError, oracle: &mut Oracle) -> LabError {
    if let PoolError::Store(StoreError::Corrupt { pid, reason }) = &e {
        oracle.record_error(format!("{pid} corrupt: {reason}"));
    }
    e.into()
}
