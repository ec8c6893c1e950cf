//! Pass-through replays: every reference goes straight to the store (I/O traces captured
//! below a buffer), with the caller's per-reference hook around each store call.

use super::epoch::EpochHooks;
use super::hook::ReplayHook;
use super::latency::Latency;
use crate::feed::{Feed, FeedSummary};
use crate::oracle::Oracle;
use crate::LabError;
use flashbuf_core::page::{self, HEADER_BYTES};
use flashbuf_core::{AlignedBuf, DirtyRanges};
use flashbuf_store::{PageStore, StoreError};
use flashbuf_trace::Op;
use indicatif::ProgressBar;

/// What a pass-through replay did.
pub(super) struct Passed {
    pub(super) summary: FeedSummary,
    pub(super) reads: u64,
    pub(super) writes: u64,
}

/// Replays `feed` straight into `store` (pages of `logical_page_size`, held whole or as
/// their heads). Reads are checked against the oracle; writes carry the next stamp in an
/// otherwise zero page, sealed, as whole-page writes.
#[allow(clippy::too_many_arguments)]
pub(super) fn replay_passthrough(
    store: &dyn PageStore,
    logical_page_size: usize,
    mut feed: Feed,
    oracle: &mut Oracle,
    progress: &ProgressBar,
    epochs: &mut EpochHooks,
    latency: &mut Latency,
    hook: &mut dyn ReplayHook,
) -> Result<Passed, LabError> {
    let page_size = store.page_size();
    let mut rbuf = AlignedBuf::zeroed(page_size, 4096);
    // The write buffer stays zero apart from header and stamp, so nothing else leaks in.
    let mut wbuf = AlignedBuf::zeroed(page_size, 4096);
    let full = DirtyRanges::full(logical_page_size);
    let (mut reads, mut writes) = (0u64, 0u64);
    let mut pos = 0u64;
    let active = epochs.active();
    while let Some(batch) = feed.next_batch()? {
        for r in &batch {
            if active && pos.is_multiple_of(epochs.epoch_refs) {
                // No policy here: only the device's clock matters.
                let _ = epochs.enter(pos / epochs.epoch_refs);
            }
            pos += 1;
            let pid = r.page;
            match r.op {
                Op::Read => {
                    hook.before_ref(r.op);
                    let read = store.read_page(pid, &mut rbuf);
                    if read.is_ok() {
                        hook.after_ref(r.op, store);
                    }
                    latency.tick();
                    match read {
                        Ok(_) => oracle.check(pid, &rbuf[HEADER_BYTES..]),
                        Err(StoreError::Corrupt { pid, reason }) => {
                            oracle.record_error(format!("{pid} corrupt: {reason}"));
                            return Err(StoreError::Corrupt { pid, reason }.into());
                        }
                        Err(e) => return Err(e.into()),
                    }
                    reads += 1;
                }
                Op::Write => {
                    let s = oracle.bump(pid);
                    wbuf[HEADER_BYTES..HEADER_BYTES + s.len()].copy_from_slice(&s);
                    page::seal(&mut wbuf, pid, u64::from(oracle.expected(pid)));
                    hook.before_ref(r.op);
                    store.write_page(pid, &wbuf, &full)?;
                    hook.after_ref(r.op, store);
                    latency.tick();
                    writes += 1;
                }
            }
        }
        progress.inc(batch.len() as u64);
        feed.recycle(batch);
    }
    epochs.writes = writes;
    Ok(Passed {
        summary: feed.finish()?,
        reads,
        writes,
    })
}
