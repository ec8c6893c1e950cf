//! The Writer (paper §2.3, Algorithm 2): update a staged page in place or take a free
//! slot, invoking the Flush Manager when none is free.
//!
//! An in-place update is taken only for a *fresh* slot (written since the last promise
//! sync began) and only while no promise sync is fencing (see [`super::promise`]); it is
//! counted in `in_place_in_flight` until its device write returns, so that a promise sync
//! waits for it instead of promising the copy it overwrites (issue 11, bug C).

use super::layout::{encode_slot, reserved_is_zero, SEQ_MAX};
use super::{FlushMode, Inner};
use crate::growth::check_fits;
use crate::StoreError;
use flashbuf_core::page::{self, PageState};
use flashbuf_core::PageId;
use flashbuf_device::Device;

/// Where a write goes.
enum Target {
    /// Overwrite the page's own (fresh) slot.
    InPlace(u32),
    /// A newly taken slot.
    NewSlot(u32),
}

impl<D: Device> Inner<D> {
    fn check_sealed(&self, pid: PageId, page: &[u8]) -> Result<u64, StoreError> {
        self.check_buf(page.len())?;
        match page::check(page, pid) {
            Ok(PageState::Sealed(h)) if reserved_is_zero(page) => Ok(h.version),
            Ok(PageState::Sealed(_)) => Err(StoreError::Invalid(format!(
                "{pid} has non-zero reserved header bytes (26..32); seal it with page::seal"
            ))),
            Ok(PageState::Unwritten) => Err(StoreError::Invalid(format!(
                "write of {pid} with an all-zero (unsealed) page"
            ))),
            Err(e) => Err(StoreError::Invalid(format!(
                "write of {pid} with a page that fails its check: {e}"
            ))),
        }
    }

    /// Stages `page` (sealed for `pid`).
    ///
    /// (Longer than most: choosing the slot under the lock, writing it outside, and
    /// committing under the lock again form one retry loop; the busy marks and the sync
    /// fence it maintains are checked more easily in one place than across helpers.)
    pub(super) fn write(&self, pid: PageId, page: &[u8]) -> Result<(), StoreError> {
        self.poison.check()?;
        let version = self.check_sealed(pid, page)?;
        let home = self
            .layout
            .home_offset(pid)
            .ok_or_else(|| StoreError::Invalid(format!("{pid} is beyond the addressable range")))?;
        check_fits(&self.dev, pid, home, self.cfg.page_size)?;
        let d = pid.0;
        let mut buf = self.scratch.take(self.buf_bytes());
        buf.copy_from_slice(page);
        loop {
            let mut st = self.state.lock();
            self.poison.check()?;
            if st.next_seq > SEQ_MAX {
                return Err(StoreError::Full(
                    "staging sequence numbers exhausted (2^48 writes); reformat".to_string(),
                ));
            }
            let cur = st.sbtt.get(d);
            let target = match cur {
                Some(a)
                    if st.bits.fresh(a)
                        && !st.bits.busy(a)
                        && !st.bits.flushing(a)
                        && !st.promise_fence =>
                {
                    st.bits.set_busy(a, true);
                    st.in_place_in_flight += 1;
                    Some(Target::InPlace(a))
                }
                _ => st.bits.alloc().map(Target::NewSlot),
            };
            if let Some(Target::NewSlot(s)) = target {
                if st.joins.slot_pending(s) {
                    // A background flush freed it and may not have completed yet.
                    if let Err(e) = self.join(&mut st) {
                        st.bits.free(s);
                        return Err(e);
                    }
                }
            }
            let Some(target) = target else {
                // No free slot: flush (Algorithm 2's Flush Manager call), release held
                // slots with a sync, or wait for a flush or write in flight.
                if st.flushes_in_flight == 0 {
                    if let Some(job) = self.begin_flush(&mut st, false) {
                        drop(st);
                        self.execute_flush(job)?;
                        continue;
                    }
                    if st.bits.held_count() > 0 && st.syncs_in_flight == 0 {
                        drop(st);
                        self.sync_device(true)?;
                        continue;
                    }
                }
                self.changed.wait(&mut st);
                continue;
            };
            let seq = st.next_seq;
            st.next_seq += 1;
            st.seqs_in_flight.insert(seq);
            st.slot_write_gen += 1;
            drop(st);
            let slot = match target {
                Target::InPlace(s) | Target::NewSlot(s) => s,
            };
            encode_slot(&mut buf, self.salt, slot, seq);
            let r = self.write_page_at(self.layout.slot_offset(slot), &buf);
            let mut st = self.state.lock();
            st.seqs_in_flight.remove(&seq);
            if let Target::InPlace(_) = target {
                st.in_place_in_flight -= 1;
            }
            if let Err(e) = r {
                match target {
                    Target::InPlace(s) => st.bits.set_busy(s, false),
                    Target::NewSlot(s) => st.bits.free(s),
                }
                self.changed.notify_all();
                self.flusher_wake.notify_all();
                return Err(e);
            }
            match target {
                Target::InPlace(s) => {
                    st.bits.set_busy(s, false);
                    st.stats.in_place_updates += 1;
                }
                Target::NewSlot(b) => {
                    match st.sbtt.get(d) {
                        Some(a) => {
                            st.sbtt.replace(d, b);
                            if st.bits.flushing(a) {
                                // The flush frees `a`; the page is eligible again.
                                if let Some(r) = st.recognizer.as_mut() {
                                    r.insert(d);
                                }
                            } else {
                                st.bits.hold(a);
                            }
                            st.stats.out_of_place_updates += 1;
                        }
                        None => {
                            st.sbtt.insert(d, b);
                            if let Some(r) = st.recognizer.as_mut() {
                                r.insert(d);
                            }
                            // A lost page is repaired by its new version.
                            st.lost.remove(&d);
                            st.stats.new_stagings += 1;
                        }
                    }
                    let staged = st.sbtt.len() as u64;
                    st.stats.max_staged = st.stats.max_staged.max(staged);
                }
            }
            st.bits.set_fresh(slot, true);
            st.meta[slot as usize] = super::SlotMeta { seq, version };
            self.changed.notify_all();
            if self.cfg.flush == FlushMode::Proactive {
                if self.background.is_some() {
                    drop(st);
                    return self.flush_proactively_inline();
                }
                self.flusher_wake.notify_one();
            }
            return Ok(());
        }
    }
}
