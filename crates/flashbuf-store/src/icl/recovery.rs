//! Recovery: rebuild the mapping table by scanning the log space (issue 15, item 5; the
//! paper keeps the WOB and the mapping table in memory and says nothing of crashes).
//!
//! Steps at open:
//! 1. The generation: the valid generation record with the highest record number (the
//!    two are written alternately, so a torn one leaves the other). It also says how many
//!    log pages the last sync that flushed the WOB made durable.
//! 2. An unfinished log-space merge: if the double-write directory is valid and names the
//!    current generation, the merge that wrote it did not reach its generation switch;
//!    every slot whose image passes its page check and matches the directory's checksum
//!    is written home again (home writes of that merge began only after the slots were
//!    synced), the device is synced and the directory erased.
//! 3. The scan: the log pages of the current generation form a prefix `0..head` — each
//!    valid (checksum, salt), of this generation, in its own slot, and with a sequence
//!    number above its predecessor's. Pages after the first gap were written after it and
//!    not synced (a sync covers everything before it), so they are ignored; new log pages
//!    overwrite them, and their sequence numbers are below every new page's, so they never
//!    rejoin the prefix.
//! 4. Promised pages: every log page records how many slots a sync had made durable when
//!    it was written (`durable_upto`), and so does the generation record for the last
//!    sync. If either says a slot at or after the gap was durable, a log page a sync
//!    promised is damaged: the store
//!    refuses to open, naming it — the pages whose newest logs it held cannot be told
//!    apart, and serving their older versions would break the promise.
//! 5. The mapping table: every record of the prefix, per page newest first, to be picked
//!    at the page's first read, flush or merge (`read.rs`).

use super::layout::{DwDirectory, GenRecord};
use super::log_space::{parse_records, LogPageHeader};
use super::mapping::{Entry, LogRef};
use super::{IclStore, State};
use crate::page_requests;
use crate::StoreError;
use flashbuf_core::page::{self, PageState};
use flashbuf_core::{AlignedBuf, PageId};
use flashbuf_device::Device;
use std::collections::HashMap;

/// Log pages read per device read during the scan.
const SCAN_CHUNK_PAGES: u32 = 64;

impl<D: Device> IclStore<D> {
    /// Recovers the state of a store just opened (see the module docs).
    pub(super) fn recover(&self, st: &mut State) -> Result<(), StoreError> {
        let t0 = self.dev.stats().device_time_us;
        let rec = self.read_generation()?;
        st.gen = rec.gen;
        st.rseq = rec.rseq;
        st.recorded = rec.synced;
        self.finish_merge(st)?;
        let (head, max_seq) = self.scan(st, rec.synced)?;
        st.head = head;
        st.synced_head = head;
        st.next_seq = max_seq.max(rec.next_seq.saturating_sub(1)) + 1;
        // Recovered records hold synced data only (epoch 0 < the current epoch).
        st.epoch = 1;
        st.stats.recovery_device_us = (self.dev.stats().device_time_us - t0).max(0.0) as u64;
        Ok(())
    }

    fn read_generation(&self) -> Result<GenRecord, StoreError> {
        let mut best: Option<GenRecord> = None;
        let mut b = AlignedBuf::zeroed(self.cfg.page_size, 4096);
        for i in 0..2 {
            self.poison
                .guard(self.dev.read_at(self.layout.gen_record_offset(i), &mut b))?;
            if let Some(r) = GenRecord::decode(&b, self.salt) {
                if best.is_none_or(|x| r.rseq > x.rseq) {
                    best = Some(r);
                }
            }
        }
        best.ok_or_else(|| {
            StoreError::Format(
                "both ICL generation records are damaged: the log space cannot be read".to_string(),
            )
        })
    }

    /// Step 2: restores the home pages of a log-space merge that did not finish.
    fn finish_merge(&self, st: &mut State) -> Result<(), StoreError> {
        let ps = self.cfg.page_size;
        let mut dirbuf = AlignedBuf::zeroed(ps, 4096);
        self.poison
            .guard(self.dev.read_at(self.layout.dw_dir_offset, &mut dirbuf))?;
        let Some(dir) = DwDirectory::decode(&dirbuf, self.salt) else {
            return Ok(());
        };
        if dir.gen != st.gen || dir.entries.len() > self.layout.dw_pages as usize {
            return Ok(());
        }
        let data = self.cfg.data;
        let mut img = AlignedBuf::zeroed(self.cfg.image_bytes(), 4096);
        for (i, &(pid, crc)) in dir.entries.iter().enumerate() {
            let slot = self.layout.dw_slot_offset(i);
            let r = page_requests::read_page(&self.dev, data, ps, slot, &mut img);
            self.poison.guard(r)?;
            let intact =
                matches!(page::check(&img, pid), Ok(PageState::Sealed(h)) if h.checksum == crc);
            let Some(off) = self.layout.home_offset(pid) else {
                continue;
            };
            if !intact || crate::growth::check_fits(&self.dev, pid, off, ps).is_err() {
                continue;
            }
            self.grow.ensure(&self.dev, &self.poison, off + ps as u64)?;
            let r = page_requests::write_page(&self.dev, data, ps, off, &img);
            self.poison.guard(r)?;
            st.stats.data_writes_restore += 1;
        }
        self.sync_device(st)?;
        dirbuf.fill(0);
        self.poison
            .guard(self.dev.write_at(self.layout.dw_dir_offset, &dirbuf))?;
        st.stats.dw_writes += 1;
        self.sync_device(st)
    }

    /// Steps 3–5 (`recorded`: log pages the generation record says are durable); returns
    /// the head and the highest sequence number seen.
    fn scan(&self, st: &mut State, recorded: u32) -> Result<(u32, u64), StoreError> {
        let ps = self.cfg.page_size;
        let n = self.layout.log_pages;
        let mut head: Option<u32> = None;
        // (slots durable, who says so: a log page's slot, or n for the generation record)
        let mut promised = (recorded, n);
        let mut max_seq = 0u64;
        let mut prev_seq = 0u64;
        let mut cands: HashMap<PageId, Vec<LogRef>> = HashMap::new();
        let mut chunk = AlignedBuf::zeroed(ps * SCAN_CHUNK_PAGES.min(n) as usize, 4096);
        let mut first = 0u32;
        while first < n {
            let count = SCAN_CHUNK_PAGES.min(n - first);
            let bytes = count as usize * ps;
            self.poison.guard(
                self.dev
                    .read_at(self.layout.log_slot_offset(first), &mut chunk[..bytes]),
            )?;
            st.stats.log_reads_recovery += u64::from(count);
            for k in 0..count {
                let slot = first + k;
                let page = &chunk[k as usize * ps..(k as usize + 1) * ps];
                let h = LogPageHeader::open_image(page, self.salt, self.cfg.image_bytes());
                if let Some(h) = &h {
                    max_seq = max_seq.max(h.seq);
                    if h.gen == st.gen && h.durable_upto > promised.0 {
                        promised = (h.durable_upto, slot);
                    }
                }
                if head.is_some() {
                    continue;
                }
                match h {
                    Some(h) if h.gen == st.gen && h.slot == slot && h.seq > prev_seq => {
                        prev_seq = h.seq;
                        let kept = self.cfg.image_bytes();
                        let recs = parse_records(page, &h, ps, kept).map_err(|m| {
                            StoreError::Format(format!(
                                "ICL log page {slot} of generation {} passes its checksum but is malformed ({m}): the store is corrupt",
                                st.gen
                            ))
                        })?;
                        st.stats.recovered_log_pages += 1;
                        for (offset, r) in recs {
                            st.stats.recovered_records += 1;
                            cands.entry(r.pid).or_default().push(LogRef {
                                slot,
                                offset: offset as u16,
                                len: r.log.record_bytes() as u16,
                            });
                        }
                    }
                    _ => head = Some(slot),
                }
            }
            first += count;
        }
        let head = head.unwrap_or(n);
        if promised.0 > head {
            let who = if promised.1 == n {
                "the generation record".to_string()
            } else {
                format!("log page {}", promised.1)
            };
            return Err(StoreError::Format(format!(
                "ICL log page {head} of generation {} is damaged or missing, but {who} records that a sync made log pages 0..{} durable: the newest changes of the pages logged there are lost; refusing to open rather than serve older versions",
                st.gen, promised.0
            )));
        }
        for (pid, mut v) in cands {
            v.reverse();
            st.mapping.set(pid, Entry::Unresolved(v), 0);
        }
        Ok((head, max_seq))
    }
}
