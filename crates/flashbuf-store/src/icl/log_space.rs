//! The log space: log pages on the device, and the WOB flush that fills them with
//! incremented (ICL) logs.
//!
//! Paper (ICL paper, §2 *InCremental Logging*, Figure 3 (b)): "whenever the WOB flushes its
//! logs to a new log-page, it copies the former logs of the DBMS-pages that the current
//! logs belong to, from the previously written log-pages. Then the WOB writes the current
//! logs and previous logs together into a new log-page", so that reading a page takes at
//! most one log page; "the additional read cost caused by the copy operations is limited
//! to log-page reads as many as the total number of the new logs flushed by the WOB".
//!
//! # Readings
//! - Log pages are written in order, `0, 1, 2, …`, within a *generation* of the log space;
//!   a log-space merge (`merge.rs`) starts the next generation at page 0. Copies left
//!   behind by copy-forward stay in their old pages until then ("the log-pages can be
//!   merely logically invalidated", §2 *ICL merge*).
//! - A flush packs the records first-fit decreasing into as few log pages as possible,
//!   writes them as one sequential batch, and reads each previous log page once.
//! - If the flush does not fit the pages left, the log space is merged first (the paper's
//!   Figure 4: "no log page is left"); a WOB larger than the whole log space is written
//!   in parts, merging between them.
//!
//! The log pages' layout and the records' placement are in `log_page.rs`.

use super::log::{Ident, Log, Span};
pub use super::log_page::{parse_records, view_at, LogPageHeader, LOG_HEADER_BYTES};
use super::mapping::{Entry, LogRef, Mapping};
use super::record::{encode_tombstone, RecordView};
use super::wob::WobEntry;
use super::{IclStats, IclStore, State};
use crate::StoreError;
use flashbuf_core::{AlignedBuf, DataMode, PageId};
use flashbuf_device::{Device, HeadWrite, WriteOp};
use std::collections::HashMap;

/// A record a flush writes.
#[derive(Debug)]
struct Outgoing {
    pid: PageId,
    target: Ident,
    /// `None`: a tombstone.
    log: Option<Log>,
    bytes: usize,
}

/// A record a flush placed: its page, and its location and ranges (`None`: a tombstone).
type Placed<'a> = (PageId, Option<(LogRef, &'a [Span])>);

/// Which counter a log-page read goes to.
#[derive(Debug, Clone, Copy)]
pub enum LogRead {
    /// The read path.
    Read,
    /// Copy-forward at a flush.
    Copy,
    /// A log-space merge.
    Merge,
    /// Picking a recovered page's record.
    Resolve,
}

/// Log pages read during one flush or merge, each read once. A WOB flush's cache is kept
/// in the store between flushes (`LogCache::clear`): its page buffers (and its table)
/// are reused, not allocated and zeroed anew for every log page a flush reads (they were
/// 1 KB of the 1.8 KB a write-and-read step allocated in
/// `tests/regression_icl_log_store_buffers.rs`).
#[derive(Debug, Default)]
pub struct LogCache {
    pages: HashMap<u32, AlignedBuf>,
    /// Buffers of earlier uses, contents unspecified (a read fills one whole).
    spare: Vec<AlignedBuf>,
}

impl LogCache {
    /// Forgets the pages read, keeping their buffers for the next use, up to `max_bytes`
    /// in all.
    pub(super) fn clear(&mut self, max_bytes: usize) {
        self.spare.extend(self.pages.drain().map(|(_, b)| b));
        let mut held = 0;
        self.spare.retain(|b| {
            held += b.len();
            held <= max_bytes
        });
    }

    /// Bytes of the buffers it holds.
    pub(super) fn held_bytes(&self) -> usize {
        self.pages
            .values()
            .chain(&self.spare)
            .map(|b| b.len())
            .sum()
    }
}

/// Packs record sizes first-fit decreasing into bins of `capacity`; returns the bins as
/// indices into `sizes`.
fn pack(sizes: &[usize], capacity: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]).then(a.cmp(&b)));
    let mut bins: Vec<(usize, Vec<usize>)> = Vec::new();
    for i in order {
        match bins
            .iter_mut()
            .find(|(used, _)| used + sizes[i] <= capacity)
        {
            Some((used, items)) => {
                *used += sizes[i];
                items.push(i);
            }
            None => bins.push((sizes[i], vec![i])),
        }
    }
    bins.into_iter()
        .map(|(_, mut items)| {
            items.sort_unstable();
            items
        })
        .collect()
}

impl<D: Device> IclStore<D> {
    /// Reads log page `slot` into `buf`, a page's length, and counts the read as `kind`:
    /// every byte of `buf` is filled (a whole-page read; in metadata mode a head read of
    /// the whole buffer), so a reused buffer's old contents never show. The page's checks
    /// are [`IclStore::read_record`]'s.
    pub(super) fn read_log_page(
        &self,
        stats: &mut IclStats,
        slot: u32,
        kind: LogRead,
        buf: &mut [u8],
    ) -> Result<(), StoreError> {
        let ps = self.cfg.page_size;
        let off = self.layout.log_slot_offset(slot);
        self.poison.guard(match self.cfg.data {
            DataMode::Bytes => self.dev.read_at(off, buf),
            DataMode::Metadata => self.dev.read_head(off, ps, buf),
        })?;
        let s = stats;
        match kind {
            LogRead::Read => s.log_reads += 1,
            LogRead::Copy => s.log_reads_copy += 1,
            LogRead::Merge => s.log_reads_merge += 1,
            LogRead::Resolve => s.log_reads_resolve += 1,
        }
        Ok(())
    }

    /// The record `at` of `pid`, from `cache` (read into it if missing) or read anew,
    /// given to `f` decoded in place: its content borrowed from the log page (a read
    /// applies it there: no copy, no allocation; [`RecordView::into_record`] owns it).
    /// A log page that fails its check is [`StoreError::DamagedLog`]: the page's newest
    /// changes are unreadable, and an older version is never served instead.
    pub(super) fn read_record<R>(
        &self,
        st: &mut State,
        pid: PageId,
        at: &LogRef,
        cache: Option<&mut LogCache>,
        kind: LogRead,
        f: impl FnOnce(RecordView<'_>) -> R,
    ) -> Result<R, StoreError> {
        self.read_record_in(&mut st.stats, st.gen, pid, at, cache, kind, f)
    }

    /// [`IclStore::read_record`] given the parts of the state it uses (the counters and
    /// the generation), so that `f` may borrow the rest (the WOB).
    #[allow(
        clippy::too_many_arguments,
        reason = "read_record's, with the state split"
    )]
    fn read_record_in<R>(
        &self,
        stats: &mut IclStats,
        gen: u64,
        pid: PageId,
        at: &LogRef,
        cache: Option<&mut LogCache>,
        kind: LogRead,
        f: impl FnOnce(RecordView<'_>) -> R,
    ) -> Result<R, StoreError> {
        let mut fresh;
        let page: &[u8] = match cache {
            Some(c) => match c.pages.entry(at.slot) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    // Every buffer the cache holds is a page long.
                    let ps = self.cfg.page_size;
                    let mut buf = c
                        .spare
                        .pop()
                        .unwrap_or_else(|| AlignedBuf::zeroed(ps, 4096));
                    self.read_log_page(stats, at.slot, kind, &mut buf)?;
                    e.insert(buf)
                }
            },
            None => {
                fresh = self.scratch.take(self.cfg.page_size);
                self.read_log_page(stats, at.slot, kind, &mut fresh)?;
                &fresh
            }
        };
        let damaged = |detail: String| StoreError::DamagedLog {
            pid,
            slot: at.slot,
            detail,
        };
        let h = LogPageHeader::open_image(page, self.salt, self.cfg.image_bytes())
            .ok_or_else(|| damaged("fails its checksum (or is not a log page)".to_string()))?;
        if h.gen != gen || h.slot != at.slot {
            return Err(damaged(format!(
                "holds slot {} of generation {}, expected slot {} of generation {}",
                h.slot, h.gen, at.slot, gen
            )));
        }
        let sizes = (self.cfg.page_size, self.cfg.image_bytes());
        view_at(page, &h, at, pid, sizes).map(f).map_err(damaged)
    }

    /// Flushes the WOB into log pages (copying each page's previous ICL log forward);
    /// merges the log space first when it runs short. Pending home writes must have been
    /// written.
    pub(super) fn flush_wob(&self, st: &mut State) -> Result<(), StoreError> {
        if st.wob.is_empty() {
            return Ok(());
        }
        st.stats.flushes += 1;
        while !st.wob.is_empty() {
            let out = self.outgoing(st)?;
            let capacity = self.cfg.page_size - LOG_HEADER_BYTES;
            let sizes: Vec<usize> = out.iter().map(|o| o.bytes).collect();
            let bins = pack(&sizes, capacity);
            let free = (self.layout.log_pages - st.head) as usize;
            if bins.len() > free && st.head > 0 {
                self.merge_log_space(st)?;
                continue;
            }
            let k = bins.len().min(free);
            self.write_log_pages(st, &out, &bins[..k])?;
            for i in bins[..k].iter().flatten() {
                st.wob.remove(out[*i].pid);
            }
            if k == bins.len() {
                // Entries that made no record (nothing to copy forward) go too.
                for pid in st.wob.pids() {
                    st.wob.remove(pid);
                }
            }
            // The logs written (copies forward among them) leave their content buffers.
            for o in out {
                if let Some(log) = o.log {
                    st.wob.give_back(log.into_bytes());
                }
            }
        }
        Ok(())
    }

    /// The records of every WOB entry: tombstones, and logs with the page's previous ICL
    /// log copied forward (reading each previous log page once). A WOB entry's log is
    /// copied only when the page has no previous log (with one, the copy forward makes a
    /// new log from both: the entry is read in place).
    fn outgoing(&self, st: &mut State) -> Result<Vec<Outgoing>, StoreError> {
        let mut cache = std::mem::take(&mut st.log_cache);
        let mut out = Vec::with_capacity(st.wob.len());
        for pid in st.wob.pids() {
            match st.wob.get(pid) {
                // A tombstone supersedes records only where the page has some.
                Some(&WobEntry::Tombstone { target }) if st.mapping.get(pid).is_some() => {
                    out.push(Outgoing {
                        pid,
                        target,
                        log: None,
                        bytes: super::record::RECORD_HEADER_BYTES,
                    });
                }
                None | Some(WobEntry::Tombstone { .. }) => {}
                Some(WobEntry::Log { .. }) => {
                    let Some((log, target)) = self.outgoing_log(st, pid, &mut cache)? else {
                        continue;
                    };
                    if !log.is_empty() {
                        let bytes = log.record_bytes();
                        out.push(Outgoing {
                            pid,
                            target,
                            log: Some(log),
                            bytes,
                        });
                    }
                }
            }
        }
        // Kept for the next flush: as many page buffers as the WOB's capacity in pages.
        cache.clear(st.wob.capacity().max(self.cfg.page_size));
        st.log_cache = cache;
        Ok(out)
    }

    /// The log `pid`'s WOB entry (a log) makes at a flush, and its target: the entry's
    /// log over the page's previous ICL log in the log space (copied forward), the
    /// previous log alone if the entry's is empty, else the entry's. The previous log is
    /// merged as it lies in its log page (decoded in place, not copied out first); a
    /// recovered page is resolved first.
    fn outgoing_log(
        &self,
        st: &mut State,
        pid: PageId,
        cache: &mut LogCache,
    ) -> Result<Option<(Log, Ident)>, StoreError> {
        /// What the mapping says of the page's previous record (without a copy of its
        /// spans).
        enum Previous {
            At(LogRef),
            Unresolved,
            None,
        }
        let kept = self.cfg.image_bytes();
        // A recovered page is resolved first: the mapping then names its record, if any
        // (a tombstone leaves none), and the cache holds its log page.
        let state = |m: &Mapping| {
            m.get(pid).map(|e| match e.state {
                Entry::Log { at, .. } => Previous::At(at),
                Entry::Unresolved(_) => Previous::Unresolved,
                Entry::Home => Previous::None,
            })
        };
        if let Some(Previous::Unresolved) = state(&st.mapping) {
            self.resolve_reading_home(st, pid, cache)?;
        }
        // (log, target, whether it is a copy forward)
        let made = match state(&st.mapping) {
            Some(Previous::At(at)) => {
                // A copy forward's content goes into a buffer the WOB let go of.
                let merging =
                    matches!(st.wob.get(pid), Some(WobEntry::Log { log, .. }) if !log.is_empty());
                let content = if merging {
                    st.wob.content_buffer()
                } else {
                    Default::default()
                };
                let wob = &st.wob;
                let kind = LogRead::Copy;
                let (stats, gen) = (&mut st.stats, st.gen);
                self.read_record_in(stats, gen, pid, &at, Some(cache), kind, |v| {
                    match wob.get(pid) {
                        Some(WobEntry::Log { log, .. }) if log.is_empty() => {
                            let r = v.into_record();
                            Some((r.log, r.target, false))
                        }
                        Some(WobEntry::Log { log, target }) => {
                            Some((v.under(log, kept, content), *target, true))
                        }
                        _ => None,
                    }
                })?
            }
            _ => match st.wob.get(pid) {
                Some(WobEntry::Log { log, target }) => Some((log.clone(), *target, false)),
                _ => None,
            },
        };
        Ok(made.map(|(log, target, forward)| {
            if forward {
                st.stats.copy_forwards += 1;
            }
            (log, target)
        }))
    }

    /// Writes `bins` of `out` as log pages at the head, one sequential batch, and points
    /// the mapping table at the new records.
    fn write_log_pages(
        &self,
        st: &mut State,
        out: &[Outgoing],
        bins: &[Vec<usize>],
    ) -> Result<(), StoreError> {
        let ps = self.cfg.page_size;
        let mut bufs = self.scratch.take(ps * bins.len());
        let mut used = Vec::with_capacity(bins.len());
        let mut placed: Vec<Placed<'_>> = Vec::new();
        let mut body: Vec<u8> = Vec::with_capacity(ps);
        for (b, items) in bins.iter().enumerate() {
            let slot = st.head + b as u32;
            body.clear();
            // Records are placed by their logical lengths (the stored ones with bytes).
            let mut logical = LOG_HEADER_BYTES;
            for &i in items {
                let o = &out[i];
                let at = LogRef {
                    slot,
                    offset: logical as u16,
                    len: o.bytes as u16,
                };
                logical += o.bytes;
                match &o.log {
                    Some(log) => {
                        log.encode_record(o.pid, o.target, &mut body);
                        placed.push((o.pid, Some((at, log.spans()))));
                    }
                    None => {
                        encode_tombstone(o.pid, o.target, &mut body);
                        st.stats.tombstones_written += 1;
                        placed.push((o.pid, None));
                    }
                }
            }
            let page = &mut bufs[b * ps..(b + 1) * ps];
            // A reused buffer: nothing of its last use may reach the device.
            page.fill(0);
            page[LOG_HEADER_BYTES..LOG_HEADER_BYTES + body.len()].copy_from_slice(&body);
            let h = LogPageHeader {
                records: items.len() as u16,
                slot,
                gen: st.gen,
                seq: st.next_seq + b as u64,
                durable_upto: st.synced_head,
                used: (LOG_HEADER_BYTES + body.len()) as u32,
            };
            let n = h.used as usize;
            match self.cfg.data {
                DataMode::Bytes => h.seal(page, self.salt),
                DataMode::Metadata => h.seal(&mut page[..n], self.salt),
            }
            used.push(n);
        }
        let offset = |b: usize| self.layout.log_slot_offset(st.head + b as u32);
        let written = match self.cfg.data {
            DataMode::Bytes => {
                let ops: Vec<WriteOp<'_>> = (0..bins.len())
                    .map(|b| WriteOp {
                        offset: offset(b),
                        data: &bufs[b * ps..(b + 1) * ps],
                    })
                    .collect();
                self.dev.write_batch(&ops)
            }
            DataMode::Metadata => {
                let ops: Vec<HeadWrite<'_>> = (0..bins.len())
                    .map(|b| HeadWrite {
                        offset: offset(b),
                        len: ps,
                        head: &bufs[b * ps..b * ps + used[b]],
                    })
                    .collect();
                self.dev.write_heads(&ops)
            }
        };
        self.poison.guard(written)?;
        st.head += bins.len() as u32;
        st.next_seq += bins.len() as u64;
        st.stats.log_writes += bins.len() as u64;
        st.stats.records_written += placed.len() as u64;
        for (pid, record) in placed {
            match record {
                Some((at, spans)) => st.mapping.set_log(pid, at, spans, st.epoch),
                None => st.mapping.set(pid, Entry::Home, st.epoch),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_decreasing_packs_and_keeps_every_record() {
        let bins = pack(&[300, 200, 250, 100, 90, 60], 500);
        let mut all: Vec<usize> = bins.iter().flatten().copied().collect();
        all.sort_unstable();
        assert_eq!(all, vec![0, 1, 2, 3, 4, 5]);
        for b in &bins {
            let used: usize = b.iter().map(|&i| [300, 200, 250, 100, 90, 60][i]).sum();
            assert!(used <= 500);
        }
        assert_eq!(bins.len(), 2);
        assert!(pack(&[], 10).is_empty());
    }
}
