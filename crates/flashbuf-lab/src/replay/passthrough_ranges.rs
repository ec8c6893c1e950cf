//! Pass-through replays with dirty ranges (`--dirty-bytes trace|empirical:FILE`): every
//! write hands the store a page that differs from the page's previous version exactly in
//! the write's ranges, with those ranges ([`crate::dirty`]); every read is checked whole
//! (header version and every payload byte) against what the writes left.

use super::epoch::EpochHooks;
use super::hook::ReplayHook;
use super::latency::Latency;
use super::passthrough::Passed;
use crate::dirty::{handed_ranges, DirtyStats, PageContent, RangeSource};
use crate::feed::{AddressMap, Feed};
use crate::oracle::Oracle;
use crate::LabError;
use flashbuf_core::page;
use flashbuf_core::{AlignedBuf, PageId};
use flashbuf_store::{PageStore, ReadOutcome, StoreError};
use flashbuf_trace::Op;
use indicatif::ProgressBar;

/// What the ranges added to a pass-through replay.
pub(super) struct RangesDone {
    pub(super) passed: Passed,
    pub(super) stats: DirtyStats,
    pub(super) content: PageContent,
}

/// Everything the loop touches per reference.
struct Bufs {
    rbuf: AlignedBuf,
    wbuf: AlignedBuf,
    scratch: Vec<u8>,
    ranges: Vec<(u32, u32)>,
}

/// Replays `feed` straight into `store` with the ranges of `source`.
#[allow(clippy::too_many_arguments)]
pub(super) fn replay_passthrough_ranges(
    store: &dyn PageStore,
    logical_page_size: usize,
    mut feed: Feed,
    source: &mut RangeSource,
    oracle: &mut Oracle,
    progress: &ProgressBar,
    epochs: &mut EpochHooks,
    latency: &mut Latency,
    hook: &mut dyn ReplayHook,
) -> Result<RangesDone, LabError> {
    // Buffers of the store's pages (heads in metadata mode); ranges of the logical page.
    let page_size = store.page_size();
    let mut content = PageContent::new(logical_page_size, oracle.capacity());
    let mut b = Bufs {
        rbuf: AlignedBuf::zeroed(page_size, 4096),
        wbuf: AlignedBuf::zeroed(page_size, 4096),
        scratch: vec![0u8; page_size],
        ranges: Vec::with_capacity(128),
    };
    // The feed's map is rebuilt here from the trace's own pages: the two must agree.
    let mut map = AddressMap::default();
    let mut stats = DirtyStats::default();
    let (mut reads, mut writes, mut pos) = (0u64, 0u64, 0u64);
    let active = epochs.active();
    while let Some(batch) = feed.next_batch()? {
        for r in &batch {
            if active && pos.is_multiple_of(epochs.epoch_refs) {
                let _ = epochs.enter(pos / epochs.epoch_refs);
            }
            pos += 1;
            let raw = source.next(r.op, logical_page_size, &mut b.ranges)?;
            if let Some(p) = raw.map(|p| map.map(PageId(p))).filter(|&p| p != r.page) {
                return Err(LabError::Usage(format!(
                    "dirty ranges: reference {pos} is page {} but its ranges are page {p}'s",
                    r.page
                )));
            }
            hook.before_ref(r.op);
            match r.op {
                Op::Read => {
                    read_one(store, r.page, &mut b, &content, oracle)?;
                    reads += 1;
                }
                Op::Write => {
                    let pid = r.page;
                    oracle.bump(pid);
                    content.apply(pid, &b.ranges);
                    content.fill(pid, &mut b.wbuf);
                    page::seal(&mut b.wbuf, pid, u64::from(oracle.expected(pid)));
                    let handed = handed_ranges(&b.ranges);
                    store.write_page(pid, &b.wbuf, &handed)?;
                    stats.count(&b.ranges, Some(&handed));
                    writes += 1;
                }
            }
            hook.after_ref(r.op, store);
            latency.tick();
        }
        progress.inc(batch.len() as u64);
        feed.recycle(batch);
    }
    epochs.writes = writes;
    Ok(RangesDone {
        passed: Passed {
            summary: feed.finish()?,
            reads,
            writes,
        },
        stats,
        content,
    })
}

/// Reads `pid` and checks it whole.
fn read_one(
    store: &dyn PageStore,
    pid: PageId,
    b: &mut Bufs,
    content: &PageContent,
    oracle: &mut Oracle,
) -> Result<(), LabError> {
    match store.read_page(pid, &mut b.rbuf) {
        Ok(ReadOutcome::Found | ReadOutcome::Unwritten) => {
            let diff = content.first_difference(pid, &b.rbuf, &mut b.scratch);
            oracle.check_content(pid, page::version_of(&b.rbuf), diff);
            Ok(())
        }
        Err(StoreError::Corrupt { pid, reason }) => {
            oracle.record_error(format!("{pid} corrupt: {reason}"));
            Err(StoreError::Corrupt { pid, reason }.into())
        }
        Err(e) => Err(e.into()),
    }
}

/// Reads every page the oracle saw written and checks it whole (`--paranoid`).
pub(super) fn verify_all_ranges(
    store: &dyn PageStore,
    oracle: &mut Oracle,
    content: &PageContent,
) -> Result<(), LabError> {
    let ps = store.page_size();
    let mut b = Bufs {
        rbuf: AlignedBuf::zeroed(ps, 4096),
        wbuf: AlignedBuf::zeroed(ps, 4096),
        scratch: vec![0u8; ps],
        ranges: Vec::new(),
    };
    // A page the store has never seen reads as version 0: an error for a written page.
    let written: Vec<PageId> = oracle.written().map(|(p, _)| p).collect();
    for pid in written {
        read_one(store, pid, &mut b, content, oracle)?;
    }
    Ok(())
}
