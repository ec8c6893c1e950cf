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
//! # Log page layout (little-endian)
//! | bytes | field |
//! |---|---|
//! | 0..4 | CRC32C of bytes `4..page_size` |
//! | 4..8 | magic `FBIL` |
//! | 8..10 | format ([`super::layout::ICL_FORMAT`]) |
//! | 10..12 | number of records |
//! | 12..16 | slot (its position in the log space) |
//! | 16..24 | generation |
//! | 24..32 | sequence number (counts every log page the store wrote) |
//! | 32..40 | the store's salt |
//! | 40..44 | `durable_upto`: slots below it were made durable by a sync before this page was written |
//! | 44..48 | bytes used (header and records); the rest is zero |
//! | 48.. | records (`log.rs`) |
//!
//! Metadata only (`--data none`): a log page is written as a metadata-only request of the
//! whole page that keeps its first `used` bytes — the header and the records as stored,
//! without their content beyond the page head ([`Log::encoded_bytes`]) — and the checksum
//! covers bytes `4..used`. Records are *placed* (their offsets in the mapping table, the
//! packing) by their logical lengths, exactly as with bytes; a record is found by walking
//! the stored ones and adding up those lengths.

use super::layout::ICL_FORMAT;
use super::log::{decode_record, encode_tombstone, u16_at, u32_at, u64_at, Ident, Log, Record};
use super::mapping::{self, Entry, LogRef};
use super::wob::WobEntry;
use super::{IclStore, State};
use crate::StoreError;
use flashbuf_core::page::crc32c;
use flashbuf_core::{AlignedBuf, DataMode, PageId};
use flashbuf_device::{Device, HeadWrite, WriteOp};
use std::collections::HashMap;

/// Bytes of a log page's header.
pub const LOG_HEADER_BYTES: usize = 48;
const LOG_MAGIC: [u8; 4] = *b"FBIL";

/// The header of a log page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogPageHeader {
    /// Records in the page.
    pub records: u16,
    /// Its slot.
    pub slot: u32,
    /// Its generation.
    pub gen: u64,
    /// Its sequence number.
    pub seq: u64,
    /// Slots below this were durable when it was written.
    pub durable_upto: u32,
    /// Bytes used.
    pub used: u32,
}

impl LogPageHeader {
    /// Writes the header into `page` (whose records are in place) and seals it.
    pub fn seal(&self, page: &mut [u8], salt: u64) {
        page[4..8].copy_from_slice(&LOG_MAGIC);
        page[8..10].copy_from_slice(&ICL_FORMAT.to_le_bytes());
        page[10..12].copy_from_slice(&self.records.to_le_bytes());
        page[12..16].copy_from_slice(&self.slot.to_le_bytes());
        page[16..24].copy_from_slice(&self.gen.to_le_bytes());
        page[24..32].copy_from_slice(&self.seq.to_le_bytes());
        page[32..40].copy_from_slice(&salt.to_le_bytes());
        page[40..44].copy_from_slice(&self.durable_upto.to_le_bytes());
        page[44..48].copy_from_slice(&self.used.to_le_bytes());
        let c = crc32c(&page[4..]);
        page[0..4].copy_from_slice(&c.to_le_bytes());
    }

    /// The header of `page` if it is a valid log page of this store (checksum, magic,
    /// format, salt, size); `None` for anything else (never written, torn, foreign).
    pub fn open(page: &[u8], salt: u64) -> Option<Self> {
        if page.len() < LOG_HEADER_BYTES
            || page[4..8] != LOG_MAGIC
            || u16_at(page, 8) != ICL_FORMAT
            || u64_at(page, 32) != salt
            || u32_at(page, 0) != crc32c(&page[4..])
        {
            return None;
        }
        let h = Self {
            records: u16_at(page, 10),
            slot: u32_at(page, 12),
            gen: u64_at(page, 16),
            seq: u64_at(page, 24),
            durable_upto: u32_at(page, 40),
            used: u32_at(page, 44),
        };
        let used = h.used as usize;
        (LOG_HEADER_BYTES..=page.len()).contains(&used).then_some(h)
    }

    /// [`LogPageHeader::open`] of a log page read whole (`page_size` bytes) in the store's
    /// mode: with `kept < page_size` (metadata only) the checksum covers the bytes used.
    pub fn open_image(page: &[u8], salt: u64, kept: usize) -> Option<Self> {
        if kept >= page.len() {
            return Self::open(page, salt);
        }
        let used = (page.len() >= LOG_HEADER_BYTES).then(|| u32_at(page, 44) as usize)?;
        (LOG_HEADER_BYTES..=page.len())
            .contains(&used)
            .then(|| Self::open(&page[..used], salt))
            .flatten()
    }
}

/// Every record of a valid log page with its byte offset in the logical log page (pages of
/// `page_size` held as `kept`-byte images: the stored offset with bytes); a malformed
/// record is an error.
pub fn parse_records(
    page: &[u8],
    h: &LogPageHeader,
    page_size: usize,
    kept: usize,
) -> Result<Vec<(u32, Record)>, String> {
    let used = h.used as usize;
    let (mut at, mut logical) = (LOG_HEADER_BYTES, LOG_HEADER_BYTES);
    let mut out = Vec::with_capacity(h.records as usize);
    for i in 0..h.records {
        let (r, n) = decode_record(&page[at..used], page_size, kept)
            .map_err(|m| format!("record {i} at byte {at}: {m}"))?;
        let len = r.log.record_bytes();
        out.push((logical as u32, r));
        at += n;
        logical += len;
    }
    if at != used || logical > page_size {
        return Err(format!(
            "records end at byte {at} (logical {logical}), the header says {used}"
        ));
    }
    Ok(out)
}

/// The record `at` names in `page` (header `h`), checked to be `pid`'s and of `at`'s
/// length; pages of `page_size` held as `kept`-byte images (module docs).
pub fn record_at(
    page: &[u8],
    h: &LogPageHeader,
    at: &LogRef,
    pid: PageId,
    (page_size, kept): (usize, usize),
) -> Result<Record, String> {
    if kept < page_size {
        let found = parse_records(page, h, page_size, kept)?
            .into_iter()
            .find(|(o, _)| *o == u32::from(at.offset));
        return match found {
            Some((_, r)) if r.pid == pid && r.log.record_bytes() == usize::from(at.len) => Ok(r),
            Some((_, r)) => Err(format!(
                "holds a record of {} ({} bytes) where one of {pid} ({} bytes) was written",
                r.pid,
                r.log.record_bytes(),
                at.len
            )),
            None => Err(format!("holds no record at byte {}", at.offset)),
        };
    }
    let start = usize::from(at.offset);
    let end = start + usize::from(at.len);
    if end > page.len() || start < LOG_HEADER_BYTES {
        return Err(format!(
            "record at bytes {start}..{end} lies outside the page"
        ));
    }
    let (r, n) = decode_record(&page[start..end], page_size, kept)?;
    if r.pid != pid || n != usize::from(at.len) {
        return Err(format!(
            "holds a record of {} ({n} bytes) where one of {pid} ({} bytes) was written",
            r.pid, at.len
        ));
    }
    Ok(r)
}

/// A record a flush writes.
#[derive(Debug)]
struct Outgoing {
    pid: PageId,
    target: Ident,
    /// `None`: a tombstone.
    log: Option<Log>,
    bytes: usize,
}

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

/// Log pages read during one flush or merge, each read once.
#[derive(Debug, Default)]
pub struct LogCache {
    pages: HashMap<u32, AlignedBuf>,
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
    /// Reads log page `slot` and checks it is a valid log page of the current generation.
    pub(super) fn read_log_page(
        &self,
        st: &mut State,
        slot: u32,
        kind: LogRead,
    ) -> Result<AlignedBuf, StoreError> {
        let ps = self.cfg.page_size;
        let mut buf = AlignedBuf::zeroed(ps, 4096);
        let off = self.layout.log_slot_offset(slot);
        self.poison.guard(match self.cfg.data {
            DataMode::Bytes => self.dev.read_at(off, &mut buf),
            DataMode::Metadata => self.dev.read_head(off, ps, &mut buf),
        })?;
        let s = &mut st.stats;
        match kind {
            LogRead::Read => s.log_reads += 1,
            LogRead::Copy => s.log_reads_copy += 1,
            LogRead::Merge => s.log_reads_merge += 1,
            LogRead::Resolve => s.log_reads_resolve += 1,
        }
        Ok(buf)
    }

    /// The record `at` of `pid`, from `cache` (read into it if missing) or read anew.
    /// A log page that fails its check is [`StoreError::DamagedLog`]: the page's newest
    /// changes are unreadable, and an older version is never served instead.
    pub(super) fn read_record(
        &self,
        st: &mut State,
        pid: PageId,
        at: &LogRef,
        cache: Option<&mut LogCache>,
        kind: LogRead,
    ) -> Result<Record, StoreError> {
        let fresh;
        let page: &AlignedBuf = match cache {
            Some(c) => match c.pages.entry(at.slot) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(self.read_log_page(st, at.slot, kind)?)
                }
            },
            None => {
                fresh = self.read_log_page(st, at.slot, kind)?;
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
        if h.gen != st.gen || h.slot != at.slot {
            return Err(damaged(format!(
                "holds slot {} of generation {}, expected slot {} of generation {}",
                h.slot, h.gen, at.slot, st.gen
            )));
        }
        let sizes = (self.cfg.page_size, self.cfg.image_bytes());
        record_at(page, &h, at, pid, sizes).map_err(damaged)
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
        }
        Ok(())
    }

    /// The records of every WOB entry: tombstones, and logs with the page's previous ICL
    /// log copied forward (reading each previous log page once).
    fn outgoing(&self, st: &mut State) -> Result<Vec<Outgoing>, StoreError> {
        let mut cache = LogCache::default();
        let mut out = Vec::with_capacity(st.wob.len());
        for pid in st.wob.pids() {
            let Some(entry) = st.wob.get(pid).cloned() else {
                continue;
            };
            match entry {
                WobEntry::Tombstone { target } => {
                    if st.mapping.get(pid).is_some() {
                        out.push(Outgoing {
                            pid,
                            target,
                            log: None,
                            bytes: super::log::RECORD_HEADER_BYTES,
                        });
                    }
                }
                WobEntry::Log { log, target } => {
                    let prev = self.current_record(st, pid, &mut cache)?;
                    let (log, target) = match prev {
                        Some(p) if log.is_empty() => (p.log, p.target),
                        Some(p) => {
                            st.stats.copy_forwards += 1;
                            (Log::newer_over(&p.log, &log, self.cfg.image_bytes()), target)
                        }
                        None => (log, target),
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
        Ok(out)
    }

    /// `pid`'s ICL log in the log space that applies to its home page, if any (resolving
    /// a recovered page first).
    fn current_record(
        &self,
        st: &mut State,
        pid: PageId,
        cache: &mut LogCache,
    ) -> Result<Option<Record>, StoreError> {
        let state = st.mapping.get(pid).map(|e| e.state.clone());
        match state {
            Some(Entry::Log { at, .. }) => self
                .read_record(st, pid, &at, Some(cache), LogRead::Copy)
                .map(Some),
            Some(Entry::Unresolved(_)) => self.resolve_reading_home(st, pid, cache),
            Some(Entry::Home) | None => Ok(None),
        }
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
        let mut bufs = AlignedBuf::zeroed(ps * bins.len(), 4096);
        let mut used = Vec::with_capacity(bins.len());
        let mut placed: Vec<(PageId, Entry)> = Vec::new();
        for (b, items) in bins.iter().enumerate() {
            let slot = st.head + b as u32;
            let mut body: Vec<u8> = Vec::with_capacity(ps);
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
                        let spans = mapping::pack(log.spans());
                        placed.push((o.pid, Entry::Log { at, spans }));
                    }
                    None => {
                        encode_tombstone(o.pid, o.target, &mut body);
                        st.stats.tombstones_written += 1;
                        placed.push((o.pid, Entry::Home));
                    }
                }
            }
            let page = &mut bufs[b * ps..(b + 1) * ps];
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
        for (pid, e) in placed {
            st.mapping.set(pid, e, st.epoch);
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

    #[test]
    fn headers_roundtrip_and_refuse_damage() {
        let mut p = vec![0u8; 512];
        let h = LogPageHeader {
            records: 0,
            slot: 3,
            gen: 2,
            seq: 17,
            durable_upto: 3,
            used: LOG_HEADER_BYTES as u32,
        };
        h.seal(&mut p, 9);
        assert_eq!(LogPageHeader::open(&p, 9), Some(h));
        assert_eq!(LogPageHeader::open(&p, 8), None);
        assert_eq!(parse_records(&p, &h, 512, 512).unwrap(), vec![]);
        p[200] = 1;
        assert_eq!(LogPageHeader::open(&p, 9), None);
        assert_eq!(LogPageHeader::open(&[0u8; 512], 0), None);
    }
}
