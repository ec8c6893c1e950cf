//! Crash recovery (paper §2.2, "Recovery"): scan the slots, keep the newest valid copy per
//! destination, compare its version stamp with the home page's, and rebuild the SBTT;
//! copies already home (or superseded) free their slots.

use super::layout::decode_slot;
use super::Inner;
use crate::StoreError;
use flashbuf_core::page::{self, PageState};
use flashbuf_core::{AlignedBuf, PageId};
use flashbuf_device::Device;
use std::collections::HashMap;

/// Bytes read per request while scanning the staging area.
const SCAN_CHUNK_BYTES: usize = 1 << 20;

/// The newest valid copy of a destination found by the scan.
#[derive(Debug, Clone, Copy)]
struct Copy {
    seq: u64,
    slot: u32,
    version: u64,
}

impl<D: Device> Inner<D> {
    /// The version of `pid`'s home copy: `Some(0)` if never written, `None` if it fails
    /// its check (a torn flush; any staged copy is newer).
    fn home_version(&self, pid: PageId, buf: &mut [u8]) -> Result<Option<u64>, StoreError> {
        let Some(off) = self.layout.home_offset(pid) else {
            return Ok(Some(0));
        };
        if off + buf.len() as u64 > self.dev.len() {
            return Ok(Some(0));
        }
        self.poison.guard(self.dev.read_at(off, buf))?;
        Ok(match page::check(buf, pid) {
            Ok(PageState::Sealed(h)) => Some(h.version),
            Ok(PageState::Unwritten) => Some(0),
            Err(_) => None,
        })
    }

    /// Rebuilds the in-memory state from the device (called by `open` before any other
    /// access).
    pub(super) fn recover(&self) -> Result<(), StoreError> {
        let ps = self.cfg.page_size;
        let n = self.layout.slots;
        let staging_end = self.layout.staging_offset + self.layout.staging_bytes();
        if self.dev.len() < staging_end {
            return Err(StoreError::Format(format!(
                "device holds {} bytes, less than the staging area's end ({staging_end})",
                self.dev.len()
            )));
        }
        let per_chunk = (SCAN_CHUNK_BYTES / ps).max(1) as u32;
        let mut chunk = AlignedBuf::zeroed(per_chunk as usize * ps, 4096);
        let mut newest: HashMap<u64, Copy> = HashMap::new();
        let mut valid = 0u64;
        let mut max_seq = 0u64;
        let mut first = 0u32;
        while first < n {
            let count = per_chunk.min(n - first);
            let bytes = &mut chunk[..count as usize * ps];
            self.poison
                .guard(self.dev.read_at(self.layout.slot_offset(first), bytes))?;
            for k in 0..count {
                let slot = first + k;
                let img = &bytes[k as usize * ps..(k as usize + 1) * ps];
                let Ok(h) = decode_slot(img, self.salt, slot) else {
                    continue;
                };
                valid += 1;
                max_seq = max_seq.max(h.seq);
                let c = Copy {
                    seq: h.seq,
                    slot,
                    version: h.version,
                };
                newest
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
        let mut found: Vec<(u64, Copy)> = newest.into_iter().collect();
        found.sort_unstable_by_key(|&(d, _)| d);
        let mut home = AlignedBuf::zeroed(ps, 4096);
        let mut staged = 0u64;
        {
            // Home reads happen without the lock; nobody else runs during recovery.
            let mut keep = Vec::new();
            for &(d, c) in &found {
                let newer = match self.home_version(PageId(d), &mut home)? {
                    Some(v) => c.version > v,
                    None => true,
                };
                if newer {
                    keep.push((d, c.slot));
                }
            }
            let mut st = self.state.lock();
            for (d, slot) in keep {
                st.sbtt.insert(d, slot);
                st.bits.mark_used(slot);
                if let Some(r) = st.recognizer.as_mut() {
                    r.insert(d);
                }
                staged += 1;
            }
            st.next_seq = max_seq + 1;
            st.stats.recovered_staged = staged;
            st.stats.recovered_freed = valid - staged;
            st.stats.max_staged = staged;
        }
        // What recovery relied on (home copies, staged copies) must be durable before any
        // slot is reused.
        self.sync_device(true)
    }
}
