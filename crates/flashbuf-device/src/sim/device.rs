//! [`SimDevice`]: a simulated flash (or disk) device on a deterministic virtual clock.

use super::ftl::{Ftl, FtlStats};
use super::hdd::Hdd;
use super::nand::{Nand, NandGeometry, OpCost, WearSummary};
use super::profiles::{DeviceModel, FlashModel, SimProfile};
use crate::{check_range, Device, DeviceError, IoOp, WriteOp};
use flashbuf_core::DeviceStats;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

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
struct Flash {
    ftl: Box<dyn Ftl>,
    page_bytes: u64,
    read_overhead_ns: u64,
    write_overhead_ns: u64,
    host_ns_per_byte: f64,
    /// Time each channel becomes idle.
    channel_free: Vec<u64>,
    /// Write buffer: completion time of the flash work of each buffered page (ring).
    ring: Vec<u64>,
    ring_pos: usize,
    cost: OpCost,
}

#[derive(Debug)]
enum Backend {
    Flash(Box<Flash>),
    Hdd(Box<Hdd>),
}

#[derive(Debug)]
struct Inner {
    backend: Backend,
    image: Vec<u8>,
    /// End of the highest byte ever written to `image`: everything beyond is still zero
    /// (and, the image being allocated zeroed, not yet backed by memory).
    written_end: usize,
    len: u64,
    now_ns: u64,
    seq: u64,
    stats: DeviceStats,
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
///   [`FlashModel`]). Channels stay busy across requests, so a read queues behind
///   buffered writes. `stats().device_time_us` is the sum of the latencies: requests are
///   served one at a time (internal lock), as at queue depth one. Nothing reads the wall
///   clock; the seed only shuffles the initial free-block order (and the disk's spindle
///   phase), so the same profile, capacity, seed and requests give the same numbers.
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
    inner: Mutex<Inner>,
}

fn ns(x: f64) -> u64 {
    x.round().max(0.0) as u64
}

/// Largest logical capacity a simulated device accepts (the image lives in memory).
const MAX_CAPACITY: u64 = 64 << 30;

fn build_flash(f: &FlashModel, capacity: u64, seed: u64) -> Result<Flash, String> {
    let page = u64::from(f.page_bytes);
    if page == 0 || f.pages_per_block == 0 {
        return Err("page size and pages per block must be positive".into());
    }
    if !(0.0..=10.0).contains(&f.over_provisioning) {
        return Err(format!(
            "over-provisioning {} out of 0..=10",
            f.over_provisioning
        ));
    }
    let logical_pages = u32::try_from(capacity.div_ceil(page))
        .map_err(|_| format!("{capacity} bytes is too many {page}-byte pages"))?;
    let data_blocks = logical_pages.div_ceil(f.pages_per_block);
    let op_blocks = (f64::from(data_blocks) * f.over_provisioning).ceil() as u32;
    let extra = f.ftl.extra_blocks(op_blocks);
    let geo = NandGeometry {
        page_bytes: f.page_bytes,
        pages_per_block: f.pages_per_block,
        blocks: data_blocks
            .checked_add(extra)
            .ok_or_else(|| "too many blocks".to_string())?,
        channels: f.channels,
    };
    let nand = Nand::new(geo, f.timing)?;
    let ftl = f.ftl.build(nand, logical_pages, seed)?;
    Ok(Flash {
        ftl,
        page_bytes: page,
        read_overhead_ns: ns(f.read_overhead_us * 1e3),
        write_overhead_ns: ns(f.write_overhead_us * 1e3),
        host_ns_per_byte: f.host_ns_per_byte,
        channel_free: vec![0; f.channels as usize],
        ring: vec![0; f.write_buffer_pages as usize],
        ring_pos: 0,
        cost: OpCost::new(f.channels),
    })
}

impl Flash {
    #[inline]
    fn xfer(&self, len: u64) -> u64 {
        ns(len as f64 * self.host_ns_per_byte)
    }

    /// Schedules the recorded operations on their channels from `start`; returns when the
    /// last one ends (`start` if there were none).
    fn schedule(&mut self, start: u64) -> u64 {
        self.ftl.nand_mut().take_cost(&mut self.cost);
        let mut end = start;
        for (free, &busy) in self.channel_free.iter_mut().zip(&self.cost.channel_ns) {
            if busy > 0 {
                *free = (*free).max(start) + busy;
                end = end.max(*free);
            }
        }
        end
    }

    fn write(&mut self, off: u64, len: u64, now: u64, seq: &mut u64) -> u64 {
        let page = self.page_bytes;
        let first = off / page;
        let last = (off + len - 1) / page;
        let t_data = now + self.write_overhead_ns + self.xfer(len.min(page));
        let t_host = now + self.write_overhead_ns + self.xfer(len);
        for lpn in first..=last {
            let lpn32 = lpn as u32;
            let covered = off <= lpn * page && off + len >= (lpn + 1) * page;
            if !covered {
                // Read-modify-write of a partly written page.
                let _ = self.ftl.read(lpn32);
            }
            *seq += 1;
            self.ftl.write(lpn32, *seq);
        }
        let end = self.schedule(t_data);
        if self.ring.is_empty() {
            return t_host.max(end);
        }
        let mut done = t_host;
        for _ in first..=last {
            done = done.max(self.ring[self.ring_pos]);
            self.ring[self.ring_pos] = end;
            self.ring_pos = (self.ring_pos + 1) % self.ring.len();
        }
        done
    }

    fn read(&mut self, off: u64, len: u64, now: u64) -> u64 {
        let page = self.page_bytes;
        let t0 = now + self.read_overhead_ns;
        for lpn in off / page..=(off + len - 1) / page {
            let _ = self.ftl.read(lpn as u32);
        }
        let end = self.schedule(t0);
        (end + self.xfer(len.min(page))).max(t0 + self.xfer(len))
    }

    fn sync(&mut self, now: u64) -> u64 {
        self.channel_free.iter().copied().fold(now, u64::max)
    }
}

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
            inner: Mutex::new(Inner {
                backend,
                image: vec![0u8; image_len],
                written_end: 0,
                len: capacity_bytes,
                now_ns: 0,
                seq: 0,
                stats: DeviceStats::default(),
            }),
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

    /// Virtual time so far, microseconds (same as `stats().device_time_us`).
    pub fn clock_us(&self) -> f64 {
        self.inner.lock().now_ns as f64 / 1000.0
    }

    /// Verifies the FTL's invariants (map consistency, newest copies, valid-page counts,
    /// free-block accounting). O(physical pages).
    pub fn check_invariants(&self) -> Result<(), String> {
        match &self.inner.lock().backend {
            Backend::Flash(f) => f.ftl.check_invariants(),
            Backend::Hdd(_) => Ok(()),
        }
    }

    /// Puts the device in the state of a full, sequentially written drive without charging
    /// time or counting requests: every logical page is written once, in order (the bytes
    /// are unchanged). Counters and the clock are reset afterwards; wear is kept. Does
    /// nothing on the disk.
    pub fn precondition(&self) {
        let mut inner = self.inner.lock();
        let Inner {
            backend,
            seq,
            stats,
            now_ns,
            ..
        } = &mut *inner;
        if let Backend::Flash(f) = backend {
            for lpn in 0..f.ftl.logical_pages() {
                *seq += 1;
                f.ftl.write(lpn, *seq);
            }
            f.ftl.reset_stats();
            f.ftl.nand_mut().discard_cost();
            f.channel_free.iter_mut().for_each(|c| *c = 0);
            f.ring.iter_mut().for_each(|c| *c = 0);
        }
        *stats = DeviceStats::default();
        *now_ns = 0;
    }

    fn describe_name(&self) -> String {
        format!("sim:{}", self.profile.name)
    }
}

impl Inner {
    fn write_one(&mut self, offset: u64, data: &[u8]) {
        let len = data.len() as u64;
        if len == 0 {
            return;
        }
        let at = offset as usize;
        self.image[at..at + data.len()].copy_from_slice(data);
        self.written_end = self.written_end.max(at + data.len());
        let done = match &mut self.backend {
            Backend::Flash(f) => f.write(offset, len, self.now_ns, &mut self.seq),
            Backend::Hdd(h) => h.write(offset, len, self.now_ns),
        };
        debug_assert!(done >= self.now_ns);
        self.now_ns = done.max(self.now_ns);
        self.stats.writes += 1;
        self.stats.written_bytes += len;
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
        let mut inner = self.inner.lock();
        check_range(IoOp::Read, offset, buf.len(), inner.len)?;
        if buf.is_empty() {
            return Ok(());
        }
        let at = offset as usize;
        buf.copy_from_slice(&inner.image[at..at + buf.len()]);
        let now = inner.now_ns;
        let len = buf.len() as u64;
        let done = match &mut inner.backend {
            Backend::Flash(f) => f.read(offset, len, now),
            Backend::Hdd(h) => h.read(offset, len, now),
        };
        inner.now_ns = done.max(now);
        inner.stats.reads += 1;
        inner.stats.read_bytes += len;
        Ok(())
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        let mut inner = self.inner.lock();
        check_range(IoOp::Write, offset, buf.len(), inner.len)?;
        inner.write_one(offset, buf);
        Ok(())
    }

    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        let mut inner = self.inner.lock();
        for op in ops {
            check_range(IoOp::Write, op.offset, op.data.len(), inner.len)?;
        }
        for op in ops {
            inner.write_one(op.offset, op.data);
        }
        Ok(())
    }

    fn sync(&self) -> Result<(), DeviceError> {
        let mut inner = self.inner.lock();
        let now = inner.now_ns;
        let done = match &mut inner.backend {
            Backend::Flash(f) => f.sync(now),
            Backend::Hdd(h) => h.sync(now),
        };
        inner.now_ns = done.max(now);
        inner.stats.syncs += 1;
        Ok(())
    }

    fn len(&self) -> u64 {
        self.inner.lock().len
    }

    fn set_len(&self, len: u64) -> Result<(), DeviceError> {
        if len > self.capacity {
            return Err(DeviceError::NoSpace(format!(
                "{} holds at most {} bytes, {len} asked",
                self.describe_name(),
                self.capacity
            )));
        }
        let mut inner = self.inner.lock();
        if len < inner.len {
            // Zero only what was ever written: filling untouched zero pages would make the
            // kernel back the whole image with memory (a fresh 330 MB device formatted by
            // a store spent most of a reproduction's time in page faults).
            let from = len as usize;
            let to = (inner.len as usize).min(inner.written_end);
            if from < to {
                inner.image[from..to].fill(0);
            }
            inner.written_end = inner.written_end.min(from);
        }
        inner.len = len;
        Ok(())
    }

    fn max_len(&self) -> Option<u64> {
        Some(self.capacity)
    }

    fn stats(&self) -> DeviceStats {
        let mut inner = self.inner.lock();
        inner.refresh_flash_stats();
        DeviceStats {
            device_time_us: inner.now_ns as f64 / 1000.0,
            ..inner.stats
        }
    }

    fn describe(&self) -> String {
        self.describe_name()
    }
}
