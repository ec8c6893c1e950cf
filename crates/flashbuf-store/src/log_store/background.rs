//! Background cleaning on the device's background queue (`cleaner_queue=background`, the
//! default; [`Device::background`]) and the rule that keeps the foreground from
//! overtaking it.
//!
//! # The queue
//! When the device offers a background queue and background cleaning is on, every request
//! of a background pass (`cleaner`: the victims' summary and block reads, the copies'
//! writes, the summaries of the segments they seal, and a checkpoint the copies may need
//! for room, with its syncs) goes to the background handle; foreground cleaning
//! (`make_room`) and everything else stay on the main handle. On a simulated device the
//! pass's time then overlaps the caller's I/O instead of adding to it, which is what a
//! cleaning daemon (NILFS2's `nilfs_cleanerd`, NIPU paper §4.6) buys on a device that
//! serves requests in parallel. Bytes are never at stake: both handles serve the same
//! image in submission order, and the pass ends by writing its queued copies on the
//! background handle (so no copy rides in the caller's next request); otherwise the
//! requests are those of `cleaner_queue=main`, in the same order. `cleaner_queue=main`,
//! or a device without a queue (memory, files, cost models, the fault injector of the
//! crash suites), runs the pass on the main handle. The daemon wakes where it does on the
//! main queue (before a caller's write or sync): a pass woken by a caller's sync is
//! joined by that sync at once (rule 3), so only passes woken by writes overlap. (Waking
//! it after the sync instead was tried: it moves the pass's copies behind the sync, which
//! changes what the device's write buffer and FTL see, and on the `nvme` profile it cost
//! more than the overlap saved.)
//!
//! # What the foreground must wait for
//! A background request starts no earlier than the main clock at its submission, so it
//! never overtakes the foreground; the foreground may overtake it. Each background pass
//! bumps a generation and stamps the segments it wrote a block or a summary into and the
//! segments a checkpoint of the pass freed. Before a foreground request that depends on
//! background work, the main queue joins ([`Device::join_background`]: its clock moves to
//! the background clock) and records that every generation so far is joined; a request
//! that depends on nothing unjoined does not wait, so the overlap is kept:
//! 1. **A write into a segment a background checkpoint freed** (a block or a summary,
//!    whoever opened the segment: a later pass may have opened it, the foreground then
//!    appends to it): the checkpoint that lets the segment be rewritten (rule 1 of the
//!    store) must be durable first, and the pass's reads of it complete.
//! 2. **A read of a block in a segment a background pass wrote** (a caller's read of a
//!    copy, foreground cleaning reading a victim full of copies): a read must not overtake
//!    the write of what it reads.
//! 3. **A sync on the main queue** (a caller's sync, a foreground checkpoint's syncs): it
//!    makes every block written so far durable and records that horizon (in later blocks'
//!    stamps, the promise record, the checkpoint's map), so the background copies must
//!    have completed. A foreground checkpoint also depends on a background one (the slots
//!    alternate) through its first sync.
//!
//! A sync inside a background pass (its checkpoint's) does not raise the durable horizon
//! the foreground stamps into its blocks: a foreground block could complete before that
//! sync does and claim blocks durable that are not yet. The horizon it reached is taken
//! over at the next join. (A lower horizon only claims less: always safe.)
//!
//! Writes into a segment the background pass is filling need no join (other blocks; a
//! summary covers entries already submitted), nor do foreground requests of segments the
//! pass did not touch.

use super::state::{Ctx, Lane, State};
use super::LogStore;
use crate::StoreError;
use flashbuf_device::Device;
use parking_lot::RwLockReadGuard;

/// Where background cleaning passes issue their requests (`cleaner_queue=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CleanerQueue {
    /// On the device's background queue when it offers one (else on the main handle).
    #[default]
    Background,
    /// On the main handle: the pass's time adds to the foreground's.
    Main,
}

impl CleanerQueue {
    /// The queue named `s` (`background` or `main`).
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "background" => Ok(Self::Background),
            "main" => Ok(Self::Main),
            _ => Err(StoreError::Invalid(format!(
                "unknown cleaner_queue '{s}'; valid: background, main"
            ))),
        }
    }
}

/// The device's background handle.
pub(crate) struct Queue(pub(crate) Box<dyn Device>);

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Queue({})", self.0.describe())
    }
}

/// What the reuse rule remembers (under the store's lock).
#[derive(Debug, Clone, Default)]
pub(crate) struct Stamps {
    /// Background passes so far.
    generation: u64,
    /// Every pass up to this generation was joined.
    joined: u64,
    /// Per segment: the last pass that wrote into it.
    written: Vec<u64>,
    /// Per segment: the last pass whose checkpoint freed it.
    freed: Vec<u64>,
    /// The durable horizon a background sync reached (taken over at the next join).
    durable_seq: u64,
}

impl Stamps {
    /// The rule's state for `segments` segments (16 bytes each).
    pub fn new(segments: u32) -> Self {
        Self {
            written: vec![0; segments as usize],
            freed: vec![0; segments as usize],
            ..Self::default()
        }
    }

    fn pending(&self, v: &[u64], seg: u32) -> bool {
        v.get(seg as usize).is_some_and(|&g| g > self.joined)
    }

    /// Whether a read in segment `seg` must wait for background work.
    pub fn read_pending(&self, seg: u32) -> bool {
        self.pending(&self.written, seg)
    }
}

impl State {
    /// A background pass on `queue` (`victims` chosen by the daemon): every request on
    /// the background handle, its queued copies written before it returns.
    pub(super) fn clean_on_queue<D: Device + ?Sized>(
        &mut self,
        cx: &Ctx<'_, D>,
        queue: &dyn Device,
        victims: &[super::layout::SegmentId],
    ) -> Result<(), StoreError> {
        self.flush_queue(cx)?;
        let bcx = Ctx {
            dev: queue,
            layout: cx.layout,
            cfg: cx.cfg,
            salt: cx.salt,
            poison: cx.poison,
            lane: Lane::Background,
        };
        self.bg.generation += 1;
        let t0 = queue.stats().device_time_us;
        self.clean_segments(&bcx, victims, false)?;
        self.flush_queue(&bcx)?;
        self.stats.background_queue_time_us += queue.stats().device_time_us - t0;
        Ok(())
    }

    /// Before a block or a summary is written into segment `seg`: a background pass
    /// stamps it, the main queue joins if a background checkpoint freed it (rule 1).
    pub(super) fn writing_into<D: Device + ?Sized>(
        &mut self,
        cx: &Ctx<'_, D>,
        seg: u32,
    ) -> Result<(), StoreError> {
        if matches!(cx.lane, Lane::Background) {
            if let Some(g) = self.bg.written.get_mut(seg as usize) {
                *g = self.bg.generation;
            }
            return Ok(());
        }
        self.join_for(cx, Some((seg, true)))
    }

    /// Records that a checkpoint of the running background pass frees the pre-free
    /// segments (before they are released).
    pub(super) fn stamp_freed<D: Device + ?Sized>(&mut self, cx: &Ctx<'_, D>) {
        if matches!(cx.lane, Lane::Background) {
            for s in self.usage.prefree_segments() {
                if let Some(g) = self.bg.freed.get_mut(s as usize) {
                    *g = self.bg.generation;
                }
            }
        }
    }

    /// After a sync that made every block below `upto` durable: the horizon the
    /// foreground stamps (a background sync's is held back until the next join).
    pub(super) fn synced_upto<D: Device + ?Sized>(&mut self, cx: &Ctx<'_, D>, upto: u64) {
        match cx.lane {
            Lane::Background => self.bg.durable_seq = self.bg.durable_seq.max(upto),
            Lane::Main(_) => self.durable_seq = upto,
        }
    }

    /// The main queue joins if a request on it is about to depend on background work:
    /// `seg` read (`Some((seg, false))`), `seg` opened for writing (`Some((seg, true))`),
    /// or a sync (`None`; any unjoined pass). A no-op on the background lane or without
    /// a queue.
    pub(super) fn join_for<D: Device + ?Sized>(
        &mut self,
        cx: &Ctx<'_, D>,
        on: Option<(u32, bool)>,
    ) -> Result<(), StoreError> {
        if !matches!(cx.lane, Lane::Main(Some(_))) {
            return Ok(());
        }
        let b = &self.bg;
        let needed = match on {
            Some((seg, false)) => b.pending(&b.written, seg),
            Some((seg, true)) => b.pending(&b.freed, seg),
            None => b.generation > b.joined,
        };
        if !needed {
            return Ok(());
        }
        cx.poison.guard(cx.dev.join_background())?;
        self.bg.joined = self.bg.generation;
        self.durable_seq = self.durable_seq.max(self.bg.durable_seq);
        self.stats.background_joins += 1;
        Ok(())
    }
}

impl<D: Device> LogStore<D> {
    /// The state, read-locked, once reading page `pid` depends on no unjoined background
    /// pass (joining first if it did: rule 2 of the module docs).
    pub(super) fn state_for_read(
        &self,
        pid: u64,
    ) -> Result<RwLockReadGuard<'_, State>, StoreError> {
        loop {
            let st = self.state.read();
            let seg = st.map.get(pid).map(|a| self.layout.split(a).0 .0);
            if !seg.is_some_and(|s| st.bg.read_pending(s)) {
                return Ok(st);
            }
            drop(st);
            let mut st = self.state.write();
            if let Some(a) = st.map.get(pid) {
                st.join_for(&self.ctx(), Some((self.layout.split(a).0 .0, false)))?;
            }
        }
    }

    /// The device's background handle when background passes run on it.
    pub(super) fn background_queue(dev: &D, cfg: &super::LogStoreConfig) -> Option<Queue> {
        let c = &cfg.cleaner;
        (c.background && c.queue == CleanerQueue::Background)
            .then(|| dev.background())
            .flatten()
            .map(Queue)
    }

    /// Whether background cleaning passes run on the device's background queue.
    pub fn cleans_on_background_queue(&self) -> bool {
        self.background.is_some()
    }
}

#[cfg(test)]
#[path = "background_tests.rs"]
mod tests;
