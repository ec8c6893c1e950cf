//! Crash recovery (paper §2.2, "Recovery"): scan the slots, keep the newest valid copy per
//! destination, compare its version stamp with the home page's, and rebuild the SBTT;
//! copies already home (or superseded) free their slots. Beyond the paper (issue 11): the
//! durable promise record decides which valid slots may be served at all, and which pages
//! lost a promised version (see [`super::promise`] for the rules and why).

use super::layout::decode_slot;
use super::promise::{is_candidate, judge, Candidate, Entry, PromiseRecord, Verdict, NO_SLOT};
use super::{Inner, Lost, SlotMeta};
use crate::StoreError;
use flashbuf_core::page::{self, PageState};
use flashbuf_core::{AlignedBuf, PageId};
use flashbuf_device::Device;
use std::collections::{BTreeSet, HashMap};

/// Bytes read per request while scanning the staging area.
const SCAN_CHUNK_BYTES: usize = 1 << 20;

/// What the scan of the staging area found.
#[derive(Debug, Default)]
struct Scan {
    /// The newest candidate copy per destination.
    newest: HashMap<u64, Candidate>,
    /// Valid slots (candidates or not).
    valid: u64,
    /// Highest sequence number seen in a valid slot.
    max_seq: u64,
}

impl<D: Device> Inner<D> {
    /// The version of `pid`'s home copy: `Some(0)` if never written, `None` if it fails
    /// its check (a torn flush; any staged copy is newer).
    fn home_version(&self, pid: PageId, buf: &mut [u8]) -> Result<Option<u64>, StoreError> {
        let Some(off) = self.layout.home_offset(pid) else {
            return Ok(Some(0));
        };
        if off + self.cfg.page_size as u64 > self.dev.len() {
            return Ok(Some(0));
        }
        self.read_page_at(off, buf)?;
        Ok(match page::check(buf, pid) {
            Ok(PageState::Sealed(h)) => Some(h.version),
            Ok(PageState::Unwritten) => Some(0),
            Err(_) => None,
        })
    }

    /// Reads every slot; valid slots that are candidates under `record` (see
    /// [`super::promise`]) compete per destination by sequence number.
    fn scan_slots(&self, record: &PromiseRecord) -> Result<Scan, StoreError> {
        let ps = self.cfg.page_size;
        let n = self.layout.slots;
        let listed: HashMap<u32, Entry> = record
            .entries
            .iter()
            .filter(|e| e.slot != NO_SLOT)
            .map(|e| (e.slot, *e))
            .collect();
        let per_chunk = (SCAN_CHUNK_BYTES / ps).max(1) as u32;
        let mut chunk = AlignedBuf::zeroed(per_chunk as usize * ps, 4096);
        let mut scan = Scan::default();
        let mut first = 0u32;
        while first < n {
            let count = per_chunk.min(n - first);
            let bytes = &mut chunk[..count as usize * ps];
            self.poison
                .guard(self.dev.read_at(self.layout.slot_offset(first), bytes))?;
            for k in 0..count {
                let slot = first + k;
                // A slot's image is its first `buf_bytes` (all of it with whole pages).
                let at = k as usize * ps;
                let img = &bytes[at..at + self.buf_bytes()];
                let Ok(h) = decode_slot(img, self.salt, slot) else {
                    continue;
                };
                scan.valid += 1;
                scan.max_seq = scan.max_seq.max(h.seq);
                if !is_candidate(record, &listed, slot, h.seq, h.dest.0, h.version) {
                    continue; // dead: superseded or flushed before the promise
                }
                let c = Candidate {
                    slot,
                    seq: h.seq,
                    version: h.version,
                };
                scan.newest
                    .entry(h.dest.0)
                    .and_modify(|old| {
                        if c.seq > old.seq {
                            *old = c;
                        }
                    })
                    .or_insert(c);
            }
            first += count;
        }
        Ok(scan)
    }

    /// Rebuilds the in-memory state from the device (called by `open` before any other
    /// access).
    pub(super) fn recover(&self) -> Result<(), StoreError> {
        let staging_end = self.layout.staging_offset + self.layout.staging_bytes();
        if self.dev.len() < staging_end {
            return Err(StoreError::Format(format!(
                "device holds {} bytes, less than the staging area's end ({staging_end})",
                self.dev.len()
            )));
        }
        let payload = self.state_area.record().payload;
        let record =
            PromiseRecord::decode(super::promise::split_payload(&payload).0, self.layout.slots)?;
        let scan = self.scan_slots(&record)?;
        let promised: HashMap<u64, Entry> = record.entries.iter().map(|e| (e.dest, *e)).collect();
        let dests: BTreeSet<u64> = scan.newest.keys().chain(promised.keys()).copied().collect();
        let mut home = AlignedBuf::zeroed(self.buf_bytes(), 4096);
        // Home reads happen without the lock; nobody else runs during recovery.
        let mut keep = Vec::new();
        let mut lost = Vec::new();
        for d in dests {
            let home_v = self.home_version(PageId(d), &mut home)?;
            match judge(
                scan.newest.get(&d).copied(),
                promised.get(&d).copied(),
                home_v,
            ) {
                Verdict::Stage { slot, seq, version } => {
                    keep.push((d, slot, SlotMeta { seq, version }))
                }
                Verdict::Home => {}
                Verdict::Lost { promised, found } => lost.push((d, Lost { promised, found })),
            }
        }
        if lost.len() > self.layout.slots as usize {
            return Err(StoreError::Format(format!(
                "{} pages lost a version a sync promised (more than the {} the promise record can carry): the store is badly damaged",
                lost.len(),
                self.layout.slots
            )));
        }
        let mut st = self.state.lock();
        let staged = keep.len() as u64;
        for (d, slot, meta) in keep {
            st.sbtt.insert(d, slot);
            st.bits.mark_used(slot);
            st.meta[slot as usize] = meta;
            if let Some(r) = st.recognizer.as_mut() {
                r.insert(d);
            }
        }
        st.stats.recovered_lost = lost.len() as u64;
        st.lost = lost.into_iter().collect();
        st.next_seq = scan.max_seq.max(record.hwm) + 1;
        st.stats.recovered_staged = staged;
        st.stats.recovered_freed = scan.valid.saturating_sub(staged);
        st.stats.max_staged = staged;
        drop(st);
        // What recovery relied on (home copies, staged copies) must be durable, and the
        // new promise record (the staged copies, the lost pages) committed, before any
        // slot is reused.
        self.sync_device(true)
    }
}
