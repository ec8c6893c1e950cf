//! [`SimDevice`]: a simulated flash (or disk) device on a deterministic virtual clock.

use super::flash::{build_flash, Flash};
use super::ftl::FtlStats;
use super::hdd::Hdd;
use super::nand::{NandGeometry, WearSummary};
use super::profiles::{DeviceModel, SimProfile};
use super::queue::{Queues, StreamId};
use super::steady::{precondition_ftl, preconditioned, Precondition, SteadyReport};
use crate::heads::{Got, Heads};
use crate::{Device, DeviceError, HeadWrite, WriteOp};
use flashbuf_core::DeviceStats;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What a simulated device is made of (for reports).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimInfo {
    /// Profile name.
    pub profile: String,
    /// Logical capacity, bytes.
    pub capacity_bytes: u64,
    /// FTL name (`page-mapped`, `bast`, `fast`) or `none` for the disk.
    pub ftl: String,
    /// NAND geometry (flash only).
    pub geometry: Option<NandGeometry>,
    /// The seed.
    pub seed: u64,
}

#[derive(Debug)]
pub(super) enum Backend {
    Flash(Box<Flash>),
    Hdd(Box<Hdd>),
}

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) backend: Backend,
    pub(super) image: Vec<u8>,
    /// Heads of metadata-only writes, in front of `image` ([`crate::heads`]).
    pub(super) heads: Heads,
    /// End of the highest byte ever written to `image`: everything beyond is still zero
    /// (and, the image being allocated zeroed, not yet backed by memory).
    pub(super) written_end: usize,
    pub(super) len: u64,
    /// Stream clocks (see [`super::queue`]).
    pub(super) q: Queues,
    pub(super) seq: u64,
    pub(super) stats: DeviceStats,
    /// What preconditioning did (`None`: never preconditioned).
    preconditioned: Option<SteadyReport>,
}

/// A simulated device built from a [`SimProfile`]: a NAND array behind an FTL (or a disk
/// model), timed on a deterministic virtual clock.
///
/// - **Bytes**: kept in a flat logical image, so reads return what was written; the FTL
///   models only mapping, flash operations and timing (each physical page carries a stamp
///   of the logical page and write sequence it holds, which
///   [`check_invariants`](SimDevice::check_invariants) uses to prove the mapping returns the
///   newest copy). A write that covers part of a flash page reads the old page first.
/// - **Time**: a request's latency is the time its flash operations take, operations on
///   different channels overlapping, plus command overhead and host transfer (see
///   [`FlashModel`](super::FlashModel)). Channels stay busy across requests, so a read queues behind
///   buffered writes. The [`Device`] methods serve one request at a time on one clock (queue
///   depth one): `stats().device_time_us` is the sum of the latencies. Explicit streams
///   and `qd=N` batches overlap requests ([`super::queue`]). Nothing reads the wall
///   clock; the seed only shuffles the initial free-block order, the pages preconditioning
///   overwrites (and the disk's spindle phase), so the same profile, capacity, seed,
///   preconditioning and requests give the same numbers.
/// - **State**: a device built here is fresh (never written); [`Self::precondition_as`]
///   ages it (the registry's `sim:` devices start in steady state, see [`super::steady`]).
/// - **Size**: [`Device::len`] starts at the capacity; [`Device::set_len`] may shrink and
///   regrow it within the capacity (bytes beyond a shrink read as zero again).
///
/// ```
/// use flashbuf_device::{Device, sim::{SimDevice, SimProfile}};
/// let dev = SimDevice::new(SimProfile::by_name("nipu-ssd")?, 64 << 20, 7)?;
/// dev.write_at(0, &[7u8; 4096])?;
/// let mut buf = [0u8; 4096];
/// dev.read_at(0, &mut buf)?;
/// assert_eq!(buf, [7u8; 4096]);
/// let s = dev.stats();
/// assert!(s.device_time_us > 0.0);
/// assert_eq!((s.host_programs, s.flash_reads), (1, 1));
/// dev.check_invariants().map_err(flashbuf_device::DeviceError::Config)?;
/// # Ok::<(), flashbuf_device::DeviceError>(())
/// ```
#[derive(Debug)]
pub struct SimDevice {
    profile: SimProfile,
    capacity: u64,
    seed: u64,
    pub(super) inner: Arc<Mutex<Inner>>,
}

/// Largest logical capacity a simulated device accepts (the image lives in memory).
const MAX_CAPACITY: u64 = 64 << 30;

impl SimDevice {
    /// A device of `capacity_bytes` logical bytes built from `profile`: the NAND array gets
    /// the blocks the capacity needs plus the FTL's log blocks and the profile's
    /// over-provisioning. `seed` shuffles the initial free-block order (and the disk's
    /// spindle phase). The bytes live in memory (allocated lazily by the OS).
    pub fn new(
        profile: SimProfile,
        capacity_bytes: u64,
        seed: u64,
    ) -> Result<SimDevice, DeviceError> {
        if capacity_bytes == 0 || capacity_bytes > MAX_CAPACITY {
            return Err(DeviceError::Config(format!(
                "simulated device capacity {capacity_bytes} bytes: must be 1..={MAX_CAPACITY}"
            )));
        }
        let backend = match &profile.model {
            DeviceModel::Flash(f) => Backend::Flash(Box::new(
                build_flash(f, capacity_bytes, seed)
                    .map_err(|e| DeviceError::Config(format!("sim:{}: {e}", profile.name)))?,
            )),
            DeviceModel::Hdd(h) => Backend::Hdd(Box::new(
                Hdd::new(h, capacity_bytes, seed)
                    .map_err(|e| DeviceError::Config(format!("sim:{}: {e}", profile.name)))?,
            )),
        };
        let image_len = usize::try_from(capacity_bytes).map_err(|_| {
            DeviceError::Config(format!("{capacity_bytes} bytes do not fit in memory"))
        })?;
        Ok(SimDevice {
            profile,
            capacity: capacity_bytes,
            seed,
            inner: Arc::new(Mutex::new(Inner {
                backend,
                image: vec![0u8; image_len],
                heads: Heads::default(),
                written_end: 0,
                len: capacity_bytes,
                q: Queues::new(),
                seq: 0,
                stats: DeviceStats::default(),
                preconditioned: None,
            })),
        })
    }

    /// Shorthand for [`SimProfile::by_name`] then [`SimDevice::new`].
    pub fn by_name(name: &str, capacity_bytes: u64, seed: u64) -> Result<SimDevice, DeviceError> {
        Self::new(SimProfile::by_name(name)?, capacity_bytes, seed)
    }

    /// The profile the device was built from.
    pub fn profile(&self) -> &SimProfile {
        &self.profile
    }

    /// Logical capacity in bytes (the most [`Device::set_len`] accepts).
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// What the device is made of.
    pub fn info(&self) -> SimInfo {
        let inner = self.inner.lock();
        let (ftl, geometry) = match &inner.backend {
            Backend::Flash(f) => (f.ftl.name().to_string(), Some(f.ftl.nand().geometry())),
            Backend::Hdd(_) => ("none".to_string(), None),
        };
        SimInfo {
            profile: self.profile.name.clone(),
            capacity_bytes: self.capacity,
            ftl,
            geometry,
            seed: self.seed,
        }
    }

    /// The FTL's counters (merges by kind, copies, ...); `None` for the disk.
    pub fn ftl_stats(&self) -> Option<FtlStats> {
        match &self.inner.lock().backend {
            Backend::Flash(f) => Some(f.ftl.stats()),
            Backend::Hdd(_) => None,
        }
    }

    /// Erase counts across blocks; `None` for the disk.
    pub fn wear(&self) -> Option<WearSummary> {
        match &self.inner.lock().backend {
            Backend::Flash(f) => Some(f.ftl.nand().wear()),
            Backend::Hdd(_) => None,
        }
    }

    /// Virtual time so far, microseconds: the makespan of the streams (same as
    /// `stats().device_time_us`).
    pub fn clock_us(&self) -> f64 {
        self.inner.lock().q.makespan_ns() as f64 / 1000.0
    }

    /// Verifies the FTL's invariants (map consistency, newest copies, valid-page counts,
    /// free-block accounting). O(physical pages).
    pub fn check_invariants(&self) -> Result<(), String> {
        match &self.inner.lock().backend {
            Backend::Flash(f) => f.ftl.check_invariants(),
            Backend::Hdd(_) => Ok(()),
        }
    }

    /// Puts the device in the state of a full, sequentially written drive:
    /// [`Self::precondition_as`] with [`Precondition::Sequential`].
    pub fn precondition(&self) {
        self.precondition_as(Precondition::Sequential);
    }

    /// Preconditions the device as `mode` says (see [`super::steady`]) without charging
    /// time or counting requests: the bytes are unchanged, counters and the clock are
    /// reset afterwards, wear is kept. A device never written takes the state from the
    /// process-wide cache (computed once per flash model, capacity, seed and mode); one
    /// already written is preconditioned in place. Returns what preconditioning did;
    /// `None` on the disk (nothing to age) and for [`Precondition::Fresh`].
    pub fn precondition_as(&self, mode: Precondition) -> Option<SteadyReport> {
        self.precondition_with(mode, true)
    }

    /// [`Self::precondition_as`] the slow way, always in place (tests, timing).
    pub fn precondition_uncached(&self, mode: Precondition) -> Option<SteadyReport> {
        self.precondition_with(mode, false)
    }

    /// What the last preconditioning did (`None`: never preconditioned).
    pub fn precondition_report(&self) -> Option<SteadyReport> {
        self.inner.lock().preconditioned.clone()
    }

    fn precondition_with(&self, mode: Precondition, cached: bool) -> Option<SteadyReport> {
        if mode == Precondition::Fresh {
            return None;
        }
        let mut inner = self.inner.lock();
        let Inner {
            backend,
            seq,
            stats,
            q,
            preconditioned: done,
            ..
        } = &mut *inner;
        let (Backend::Flash(f), DeviceModel::Flash(model)) = (backend, &self.profile.model) else {
            return None;
        };
        let report = if cached && *seq == 0 {
            let state = preconditioned(model, f.ftl.as_ref(), mode, self.seed);
            f.ftl = state.ftl;
            *seq = state.seq;
            state.report
        } else {
            precondition_ftl(f.ftl.as_mut(), seq, mode, self.seed)
        };
        f.ftl.reset_stats();
        f.ftl.nand_mut().discard_cost();
        f.reset_channels();
        f.ring.iter_mut().for_each(|c| *c = 0);
        *stats = DeviceStats::default();
        q.reset();
        *done = Some(report.clone());
        Some(report)
    }

    fn describe_name(&self) -> String {
        match self.inner.lock().q.depth() {
            1 => format!("sim:{}", self.profile.name),
            qd => format!("sim:{}:qd={qd}", self.profile.name),
        }
    }
}

/// Copies `bytes` into the image at byte `offset`, moving the end of what was written.
fn put_image(image: &mut [u8], written_end: &mut usize, offset: u64, bytes: &[u8]) {
    let at = offset as usize;
    image[at..at + bytes.len()].copy_from_slice(bytes);
    *written_end = (*written_end).max(at + bytes.len());
}

impl Inner {
    /// Writes `data` into the image at `offset` (range checked by the caller).
    pub(super) fn write_image(&mut self, offset: u64, data: &[u8]) {
        let Inner {
            image,
            heads,
            written_end,
            ..
        } = self;
        let mut put = |o: u64, b: &[u8]| put_image(image, written_end, o, b);
        heads.before_byte_write(offset, data.len(), &mut put);
        put(offset, data);
    }

    /// Keeps the head of a metadata-only write of `len` bytes at `offset`.
    pub(super) fn write_image_head(&mut self, offset: u64, len: usize, head: &[u8]) {
        if !self.heads.put(offset, len, head) {
            self.write_image(offset, head);
        }
    }

    /// Fills `head` with the first bytes of the `len`-byte range at `offset`.
    pub(super) fn read_image_head(&self, offset: u64, len: usize, head: &mut [u8]) {
        if self.heads.get(offset, len, head) != Got::Head {
            let at = offset as usize;
            head.copy_from_slice(&self.image[at..at + head.len()]);
            self.heads.overlay(offset, head);
        }
    }

    /// Before a shrink to `len`: heads beyond it leave (module `heads`).
    fn truncate_heads(&mut self, len: u64) {
        let Inner {
            image,
            heads,
            written_end,
            ..
        } = self;
        heads.truncate(len, |o, b| put_image(image, written_end, o, b));
    }

    /// [`Device::set_len`] within `capacity` (`name` for the error).
    pub(super) fn set_len(
        &mut self,
        len: u64,
        capacity: u64,
        name: &str,
    ) -> Result<(), DeviceError> {
        if len > capacity {
            return Err(DeviceError::NoSpace(format!(
                "{name} holds at most {capacity} bytes, {len} asked"
            )));
        }
        if len < self.len {
            self.truncate_heads(len);
            // Zero only what was ever written: filling untouched zero pages would make the
            // kernel back the whole image with memory (a fresh 330 MB device formatted by
            // a store spent most of a reproduction's time in page faults).
            let from = len as usize;
            let to = (self.len as usize).min(self.written_end);
            if from < to {
                self.image[from..to].fill(0);
            }
            self.written_end = self.written_end.min(from);
        }
        self.len = len;
        Ok(())
    }

    /// [`Device::stats`]: the counters, the makespan as device time.
    pub(super) fn device_stats(&mut self) -> DeviceStats {
        self.refresh_flash_stats();
        DeviceStats {
            device_time_us: self.q.makespan_ns() as f64 / 1000.0,
            ..self.stats
        }
    }

    fn refresh_flash_stats(&mut self) {
        if let Backend::Flash(f) = &self.backend {
            let s = f.ftl.stats();
            self.stats.erases = s.erases;
            self.stats.flash_programs = s.flash_programs;
            self.stats.flash_reads = s.flash_reads;
            self.stats.host_programs = s.host_programs;
        }
    }
}

impl Device for SimDevice {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.inner.lock().read_on(StreamId::MAIN, offset, buf)
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        self.inner.lock().write_on(StreamId::MAIN, offset, buf)
    }

    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        self.inner.lock().write_batch_queued(ops)
    }

    fn read_head(&self, offset: u64, len: usize, head: &mut [u8]) -> Result<(), DeviceError> {
        self.inner
            .lock()
            .read_head_on(StreamId::MAIN, offset, len, head)
    }

    fn write_head(&self, offset: u64, len: usize, head: &[u8]) -> Result<(), DeviceError> {
        self.inner
            .lock()
            .write_head_on(StreamId::MAIN, offset, len, head)
    }

    fn write_heads(&self, ops: &[HeadWrite<'_>]) -> Result<(), DeviceError> {
        self.inner.lock().write_heads_queued(ops)
    }

    fn sync(&self) -> Result<(), DeviceError> {
        self.inner.lock().sync_on(StreamId::MAIN)
    }

    fn len(&self) -> u64 {
        self.inner.lock().len
    }

    fn set_len(&self, len: u64) -> Result<(), DeviceError> {
        let name = self.describe_name();
        self.inner.lock().set_len(len, self.capacity, &name)
    }

    fn max_len(&self) -> Option<u64> {
        Some(self.capacity)
    }

    fn stats(&self) -> DeviceStats {
        self.inner.lock().device_stats()
    }

    fn describe(&self) -> String {
        self.describe_name()
    }

    fn background(&self) -> Option<Box<dyn Device>> {
        Some(Box::new(super::background::SimBackground::new(
            Arc::clone(&self.inner),
            self.capacity,
            self.describe_name(),
        )))
    }

    fn join_background(&self) -> Result<(), DeviceError> {
        self.inner.lock().join_background();
        Ok(())
    }
}
