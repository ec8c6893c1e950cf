//! The Flush Manager (paper §2.3, §3.2): pick an instance (passive: the best; proactive:
//! the best of those larger than their thresholds), read its pages out of their slots,
//! write them home in the pattern's order ([`super::order`]: sequential ascending,
//! partitioned round-robin, focused in staging order; or sorted with `order=sorted`), and
//! free the slots once the home copies are durable.
//! Also the background flusher thread of proactive flushing (`flusher=thread`, or a
//! device without a background queue; the inline flusher is [`super::background`]).

use super::layout::{decode_slot, restore_page};
use super::order::arrange;
use super::patterns::{on_demand, Pattern};
use super::{Inner, State};
use crate::StoreError;
use flashbuf_core::PageId;
use flashbuf_device::Device;

/// A flush taken out of the state: pages marked `flushing` and out of the recognizer.
#[derive(Debug)]
pub(super) struct FlushJob {
    pattern: Pattern,
    /// (destination, slot), in the order they are written home.
    items: Vec<(u64, u32)>,
    /// Some page was staged after the last sync began: sync before writing home.
    pre_sync: bool,
}

impl FlushJob {
    /// (destination, slot) of each page, in write order.
    pub(super) fn items(&self) -> &[(u64, u32)] {
        &self.items
    }
}

impl<D: Device> Inner<D> {
    /// Chooses an instance and marks it. `proactive`: only instances reaching their
    /// thresholds. `None` if there is nothing (eligible) to flush.
    pub(super) fn begin_flush(&self, st: &mut State, proactive: bool) -> Option<FlushJob> {
        let candidates = match &st.recognizer {
            Some(r) => r.candidates(),
            None => {
                let mut dests: Vec<u64> = st
                    .sbtt
                    .iter()
                    .filter(|&(_, s)| !st.bits.flushing(s) && !st.bits.busy(s))
                    .map(|(d, _)| d)
                    .collect();
                on_demand(&mut dests, &self.params)
            }
        };
        let inst = if proactive {
            candidates.best_qualified(&self.params)?
        } else {
            candidates.best(&self.params)?
        };
        let mut items = Vec::with_capacity(inst.len());
        let mut pre_sync = st.syncs_in_flight > 0;
        for &d in &inst.pages {
            let Some(s) = st.sbtt.get(d) else {
                debug_assert!(false, "instance page {d} is not staged");
                continue;
            };
            if st.bits.busy(s) || st.bits.flushing(s) {
                continue;
            }
            pre_sync |= st.bits.fresh(s);
            items.push((d, s));
        }
        if items.is_empty() {
            return None;
        }
        arrange(inst.pattern, self.cfg.order, &mut items, |s| {
            st.meta[s as usize].seq
        });
        for &(d, s) in &items {
            st.bits.set_flushing(s, true);
            if let Some(r) = st.recognizer.as_mut() {
                r.remove(d);
            }
        }
        st.flushes_in_flight += 1;
        st.home_write_gen += 1;
        let k = inst.pattern.index();
        st.stats.flushes[k] += 1;
        st.stats.flushed_pages[k] += items.len() as u64;
        if proactive {
            st.stats.proactive_flushes += 1;
        } else {
            st.stats.passive_flushes += 1;
        }
        Some(FlushJob {
            pattern: inst.pattern,
            items,
            pre_sync,
        })
    }

    /// Runs a flush taken by [`Inner::begin_flush`] on the device. On error the store is
    /// poisoned.
    pub(super) fn execute_flush(&self, job: FlushJob) -> Result<(), StoreError> {
        self.execute_flush_on(job, None)
    }

    /// Runs a flush on `background` (the device's background queue) if given, else on the
    /// device; a background flush stamps what it freed ([`super::background`]).
    pub(super) fn execute_flush_on(
        &self,
        job: FlushJob,
        background: Option<&dyn Device>,
    ) -> Result<(), StoreError> {
        let r = match background {
            Some(bg) => self.flush_io(&job, bg),
            None => self
                .join_for_homes(&job)
                .and_then(|()| self.flush_io(&job, &self.dev)),
        };
        if let Err(e) = &r {
            // Its pages stay marked as flushing: the store cannot go on (fail-stop).
            self.poison.poison(&format!("flush failed: {e}"));
        }
        let mut st = self.state.lock();
        st.flushes_in_flight -= 1;
        if r.is_ok() {
            for &(d, s) in &job.items {
                if st.sbtt.get(d) == Some(s) {
                    st.sbtt.remove(d);
                }
                st.bits.free(s);
            }
        }
        let r = match (r, background) {
            (Ok(()), Some(_)) => self.stamp_background(&mut st, &job),
            (r, _) => r,
        };
        self.changed.notify_all();
        if r.is_err() {
            self.flusher_wake.notify_all();
        }
        r
    }

    /// Reads the job's pages out of their slots (into a reused buffer, every byte read
    /// before use), checks them, and writes them home.
    fn flush_io(&self, job: &FlushJob, dev: &dyn Device) -> Result<(), StoreError> {
        let ps = self.buf_bytes();
        let mut bufs = self.scratch.take(ps * job.items.len());
        let mut end = 0u64;
        let mut homes = Vec::with_capacity(job.items.len());
        for (k, &(d, s)) in job.items.iter().enumerate() {
            let buf = &mut bufs[k * ps..(k + 1) * ps];
            self.read_page_on(dev, self.layout.slot_offset(s), buf)?;
            match decode_slot(buf, self.salt, s) {
                Ok(h) if h.dest.0 == d => restore_page(buf),
                _ => {
                    // Staged data that no longer checks: the device lost it. Fail-stop.
                    let reason = self.slot_error(buf, s);
                    let pid = PageId(d);
                    self.poison.poison(&format!(
                        "staged copy of {pid} in slot {s} is corrupt: {reason}"
                    ));
                    return Err(StoreError::Corrupt { pid, reason });
                }
            }
            let home = self.layout.home_offset(PageId(d)).ok_or_else(|| {
                StoreError::Invalid(format!("page {d} is beyond the addressable range"))
            })?;
            end = end.max(home + self.cfg.page_size as u64);
            homes.push(home);
        }
        let ops: Vec<(u64, &[u8])> = homes
            .iter()
            .enumerate()
            .map(|(k, &offset)| (offset, &bufs[k * ps..(k + 1) * ps]))
            .collect();
        if job.pre_sync {
            self.sync_on(dev, false)?;
        }
        self.grow.ensure(&self.dev, &self.poison, end)?;
        self.write_pages_on(dev, &ops)?;
        self.sync_on(dev, false)?;
        debug_assert!(Pattern::ALL.contains(&job.pattern));
        Ok(())
    }

    /// Flushes until nothing is staged, then syncs.
    pub(super) fn flush_all(&self) -> Result<(), StoreError> {
        loop {
            self.poison.check()?;
            let mut st = self.state.lock();
            if st.sbtt.is_empty() {
                break;
            }
            match self.begin_flush(&mut st, false) {
                Some(job) => {
                    drop(st);
                    self.execute_flush(job)?;
                }
                // Everything left is being written or flushed by someone else.
                None => self.changed.wait(&mut st),
            }
        }
        self.sync_device(true)
    }

    /// The background flusher of proactive flushing: flushes qualified instances as they
    /// appear, until shutdown or failure.
    pub(super) fn flusher_loop(&self) {
        loop {
            let job = {
                let mut st = self.state.lock();
                loop {
                    if st.shutdown || self.poison.is_poisoned() {
                        return;
                    }
                    if let Some(job) = self.begin_flush(&mut st, true) {
                        break job;
                    }
                    self.flusher_wake.wait(&mut st);
                }
            };
            if self.execute_flush(job).is_err() {
                // Poisoned; waiters were woken and will see it.
                self.wake_all();
                return;
            }
        }
    }
}
