//! Proactive flushing on the device's background queue (`flusher=queue`, the default;
//! [`Device::background`]).
//!
//! When the device offers a background queue, no flusher thread runs: the writer whose
//! staging write makes instances qualify (paper §3.2: "the flush manager is triggered
//! whenever there is a change to any write pattern instance") flushes them at once,
//! inline, with every request of the flush (slot reads, home writes, its syncs) on the
//! background handle. The order of requests is then a function of the calls alone
//! (deterministic), and on a simulated device the flush's time overlaps the foreground's
//! instead of adding to it, which is what the paper's proactive method buys on a device
//! that serves parallel writes (its Fig. 5).
//!
//! # Slot reuse
//! An inline flush frees its slots as soon as its requests are *submitted*; on the
//! device's clock they complete later (the background clock runs ahead of the main one).
//! A foreground request must not overtake the flush that made it possible: rewriting a
//! freed slot before the flush's home copies are durable would, on a real device, race
//! the flush's slot reads and leave no durable copy. The rule: each background flush bumps
//! a generation and stamps the slots it frees (and the pages it wrote home) with it; a
//! writer that takes a slot stamped later than the last *join*, a reader about to read
//! a home copy so stamped, or a foreground (passive) flush about to write such a page
//! home, first joins ([`Device::join_background`]: the main clock moves
//! to the background clock), then records that everything up to the current generation
//! is joined. Joining only then (not before every foreground request) keeps the overlap
//! wherever the foreground does not depend on the background work: a writer taking a
//! slot freed by a passive flush, or one the background flush did not touch, waits for
//! nothing. (A "not before" time per slot would be as exact, but the store cannot read
//! a device's clocks through [`Device`]; the join is one trait call and needs none.)
//! Bytes are never at stake: both queues serve the same image in submission order.

use super::flush::FlushJob;
use super::{Inner, State};
use crate::StoreError;
use flashbuf_device::Device;
use std::collections::HashMap;

/// The device's background handle.
pub(super) struct BackgroundQueue(pub(super) Box<dyn Device>);

impl std::fmt::Debug for BackgroundQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BackgroundQueue({})", self.0.describe())
    }
}

/// What the reuse rule remembers (under the state mutex).
#[derive(Debug, Default)]
pub(super) struct Joins {
    /// Background flushes completed (submitted) so far.
    generation: u64,
    /// Every background flush up to this generation was joined.
    joined: u64,
    /// Per slot: the generation of the background flush that last freed it (empty
    /// without a background queue).
    freed: Vec<u64>,
    /// Pages a background flush wrote home since the last join, with its generation.
    homes: HashMap<u64, u64>,
    /// Joins done.
    pub(super) count: u64,
}

impl Joins {
    /// The rule's state for `slots` slots (`queue`: the store has a background queue).
    pub(super) fn new(slots: u32, queue: bool) -> Self {
        Self {
            freed: if queue {
                vec![0; slots as usize]
            } else {
                Vec::new()
            },
            ..Self::default()
        }
    }

    /// Whether reusing `slot` must wait for background work.
    pub(super) fn slot_pending(&self, slot: u32) -> bool {
        self.freed
            .get(slot as usize)
            .is_some_and(|&g| g > self.joined)
    }

    /// Whether reading page `dest` at home must wait for background work.
    pub(super) fn home_pending(&self, dest: u64) -> bool {
        self.homes.get(&dest).is_some_and(|&g| g > self.joined)
    }

    /// Background flushes still unjoined.
    pub(super) fn unjoined(&self) -> u64 {
        self.generation - self.joined
    }
}

impl<D: Device> Inner<D> {
    /// Flushes every qualified instance inline on the background queue (no-op without
    /// one). Called by a writer after its staging write committed.
    pub(super) fn flush_proactively_inline(&self) -> Result<(), StoreError> {
        let Some(bg) = &self.background else {
            return Ok(());
        };
        loop {
            let job = {
                let mut st = self.state.lock();
                self.poison.check()?;
                match self.begin_flush(&mut st, true) {
                    Some(job) => job,
                    None => return Ok(()),
                }
            };
            self.execute_flush_on(job, Some(bg.0.as_ref()))?;
        }
    }

    /// Records that a background flush freed the slots and wrote home the pages of `job`.
    pub(super) fn stamp_background(
        &self,
        st: &mut State,
        job: &FlushJob,
    ) -> Result<(), StoreError> {
        let j = &mut st.joins;
        j.generation += 1;
        for &(d, s) in job.items() {
            if let Some(g) = j.freed.get_mut(s as usize) {
                *g = j.generation;
            }
            j.homes.insert(d, j.generation);
        }
        if j.homes.len() > j.freed.len().max(1024) {
            // Bounded memory: forget what an early join makes moot.
            self.join(st)?;
        }
        Ok(())
    }

    /// Before a foreground flush writes `job`'s pages home: the main queue joins if a
    /// background flush wrote one of them home since the last join (a home write must not
    /// overtake an earlier one of the same page).
    pub(super) fn join_for_homes(&self, job: &FlushJob) -> Result<(), StoreError> {
        if self.background.is_none() {
            return Ok(());
        }
        let mut st = self.state.lock();
        if job.items().iter().any(|&(d, _)| st.joins.home_pending(d)) {
            self.join(&mut st)?;
        }
        Ok(())
    }

    /// The main queue waits for every background request submitted so far (under the
    /// state mutex, so that the generation joined is exact).
    pub(super) fn join(&self, st: &mut State) -> Result<(), StoreError> {
        if st.joins.unjoined() == 0 {
            return Ok(());
        }
        self.poison.guard(self.dev.join_background())?;
        st.joins.joined = st.joins.generation;
        st.joins.homes.clear();
        st.joins.count += 1;
        Ok(())
    }
}
