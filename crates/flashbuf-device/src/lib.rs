//! Devices: byte-addressed block devices behind one small trait.
//!
//! - [`Device`]: the trait (`read_at`, `write_at`, `write_batch`, `sync`, `len`, `set_len`,
//!   `stats`). Its contract is written on the trait.
//! - Implementations: [`FileDevice`] (pread/pwrite, optional `O_DIRECT`, fsync, exclusive
//!   file lock) and [`MemDevice`].
//! - Wrappers (decorators over any device): [`CountingDevice`] (counts requests by kind) and
//!   [`CostDevice`] (fixed per-read and per-write latency on a virtual clock). A wrapper
//!   writes only the methods it changes and forwards the rest with [`forward_device!`].
//! - Background queue: [`Device::background`] hands out a second queue of the same device
//!   for background work (a simulated device's background stream overlaps foreground I/O
//!   on its clock; [`Device::join_background`] waits for it); other devices have none.
//! - [`sim`]: simulated flash (NAND array, page-mapped / BAST / FAST FTLs) and disk devices
//!   on a virtual clock, with the papers' devices as named profiles ([`SimDevice`]).
//! - [`profile`]: a uFLIP-style profiler that measures any device ([`run_profile`]).
//! - [`registry`]: the device table ([`registry::DEVICES`]): every device the lab names,
//!   with typed options, an I/O-free `parse` and a `build` for a run.
//!
//! Devices are `Send + Sync`; every method takes `&self` so several threads can do I/O at
//! once. No device keeps global state or reads the wall clock, except that a real file
//! reports the wall time its calls took as `device_time_us`.

mod cost;
mod counters;
mod counting;
mod error;
pub mod fault;
mod file;
mod forward;
mod heads;
mod memory;
pub mod profile;
pub mod registry;
pub mod sim;

pub use cost::{CostDevice, LatencyModel};
pub use counting::{CountingDevice, IoCounts};
pub use error::{DeviceError, IoOp};
pub use file::{FileDevice, FileDeviceOptions};
pub use memory::{MemDevice, MEM_DEVICE_MAX_BYTES};
pub use profile::{run_profile, DeviceProfile, ProfileOptions};
pub use sim::{sim_profile_names, SimDevice, SimProfile};

pub use flashbuf_core::DeviceStats;
use std::sync::Arc;

/// One write of a batch: `data` goes to byte `offset`.
#[derive(Debug, Clone, Copy)]
pub struct WriteOp<'a> {
    /// Byte offset on the device.
    pub offset: u64,
    /// Bytes to write.
    pub data: &'a [u8],
}

/// One write of a metadata-only batch ([`Device::write_heads`]): `head` goes to byte
/// `offset`, the request is `len` bytes long.
#[derive(Debug, Clone, Copy)]
pub struct HeadWrite<'a> {
    /// Byte offset on the device.
    pub offset: u64,
    /// Length of the request in bytes (at least `head.len()`).
    pub len: usize,
    /// The bytes kept: the start of the range.
    pub head: &'a [u8],
}

/// A byte-addressed block device.
///
/// # Contract
/// - `read_at` fills all of `buf` from `offset`, or fails; reading beyond [`Device::len`]
///   is an error ([`DeviceError::OutOfRange`]), never a short read.
/// - `write_at` writes all of `buf` at `offset`, or fails; writing beyond `len` is an error
///   (grow the device with [`Device::set_len`] first). A write is *not* durable until a
///   later [`Device::sync`] returns `Ok`.
/// - `write_batch` writes every op, in order, as if by `write_at` calls; devices may serve
///   it more efficiently (one submission, one seek pattern, channel parallelism).
/// - `sync` makes every write that completed before the call durable. After a failed sync
///   the state of unsynced writes is unknown; callers must not retry it and carry on
///   (fail-stop: poison the store).
/// - Metadata-only requests (`--data none`, [`flashbuf_core::DataMode::Metadata`]):
///   `read_head` / `write_head` / `write_heads` are requests of `len` bytes — timed, counted
///   and checked exactly as `read_at` / `write_at` / `write_batch` of that length — that
///   carry only the range's first `head.len()` bytes. After a `write_head` the rest of the
///   range holds unspecified bytes; a `read_head` fills only `head`. The defaults move whole
///   zero-padded ranges through the byte methods (correct for every device); devices that
///   can skip the payload override them.
/// - Offsets and lengths must be multiples of [`Device::alignment`].
/// - Methods take `&self` and may be called from several threads; writes to overlapping
///   ranges from different threads without ordering are the caller's race.
pub trait Device: Send + Sync {
    /// Reads `buf.len()` bytes at `offset`.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError>;
    /// Writes `buf` at `offset`.
    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError>;
    /// Writes every op in order. The default issues them one by one.
    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        for op in ops {
            self.write_at(op.offset, op.data)?;
        }
        Ok(())
    }
    /// Reads the first `head.len()` bytes of the `len`-byte range at `offset` as one
    /// request of `len` bytes (see the contract).
    fn read_head(&self, offset: u64, len: usize, head: &mut [u8]) -> Result<(), DeviceError> {
        check_head(len, head.len())?;
        let mut buf = vec![0u8; len];
        self.read_at(offset, &mut buf)?;
        head.copy_from_slice(&buf[..head.len()]);
        Ok(())
    }
    /// Writes `head` at `offset` as one request of `len` bytes (see the contract).
    fn write_head(&self, offset: u64, len: usize, head: &[u8]) -> Result<(), DeviceError> {
        check_head(len, head.len())?;
        self.write_at(offset, &padded(len, head))
    }
    /// Writes every op in order, as [`Device::write_batch`] would the whole ranges.
    fn write_heads(&self, ops: &[HeadWrite<'_>]) -> Result<(), DeviceError> {
        for op in ops {
            check_head(op.len, op.head.len())?;
        }
        let bufs: Vec<Vec<u8>> = ops.iter().map(|op| padded(op.len, op.head)).collect();
        let whole: Vec<WriteOp<'_>> = ops
            .iter()
            .zip(&bufs)
            .map(|(op, data)| WriteOp {
                offset: op.offset,
                data,
            })
            .collect();
        self.write_batch(&whole)
    }
    /// A hint that the `len`-byte range at `offset` will be read soon (`fadvise`'s
    /// `WILLNEED`): the device may start moving it towards memory. It is not a request:
    /// it changes no byte, no counter and no clock, never fails, and may do nothing (the
    /// default; a range it does not hold is ignored).
    fn prefetch(&self, offset: u64, len: usize) {
        let _ = (offset, len);
    }
    /// Makes every completed write durable.
    fn sync(&self) -> Result<(), DeviceError>;
    /// Current size in bytes.
    fn len(&self) -> u64;
    /// Whether the device has no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Grows or shrinks the device to `len` bytes; new bytes read as zero.
    fn set_len(&self, len: u64) -> Result<(), DeviceError>;
    /// The largest length `set_len` accepts, if the device has a fixed capacity
    /// (simulated flash); `None` for devices that grow freely (files, memory).
    fn max_len(&self) -> Option<u64> {
        None
    }
    /// Counters since the device was opened.
    fn stats(&self) -> DeviceStats;
    /// Required alignment of offsets, lengths and buffer addresses (1 = none).
    fn alignment(&self) -> usize {
        1
    }
    /// A short description for reports (`memory`, `file:/path`, `sim:mtron`, ...).
    fn describe(&self) -> String;
    /// A handle for background work (a store's proactive flusher) whose requests are
    /// served on a second queue of this same device, or `None` (the default) if the
    /// device has no such queue.
    ///
    /// Contract of the handle: the same bytes, the same mapping and the same
    /// [`Device::stats`] as this device (its requests are counted and timed there); on a
    /// device with a clock, its requests run on their own clock, which never runs behind
    /// this device's (main) clock: a background request starts no earlier than the main
    /// clock when it is submitted, so background work *overlaps* foreground I/O in virtual
    /// time instead of adding to it. Every handle returned shares one background queue.
    /// The handle's own `background` is `None`. Data visibility is immediate (a read on
    /// either queue sees every write submitted before it); only time overlaps, so a
    /// caller that must not let a foreground request complete before earlier background
    /// work (reusing space that work freed) calls [`Device::join_background`] first.
    ///
    /// Wrappers either wrap the handle so their view stays complete (counting, metering)
    /// or return `None` (cost models with their own clock, fault injection: everything
    /// must pass through the one device they order and crash).
    fn background(&self) -> Option<Box<dyn Device>> {
        None
    }
    /// The main queue waits for the background queue ([`Device::background`]): its clock
    /// moves to the background clock if that is later, so the next foreground request
    /// starts after every background request submitted so far completed. A no-op (the
    /// default) on devices without a background queue.
    fn join_background(&self) -> Result<(), DeviceError> {
        Ok(())
    }
}

impl<D: Device + ?Sized> Device for Arc<D> {
    forward_device!(deref => read_at, write_at, write_batch, read_head, write_head,
                    write_heads, prefetch, sync, len, set_len, max_len, stats, alignment, describe,
                    background, join_background);
}

impl<D: Device + ?Sized> Device for Box<D> {
    forward_device!(deref => read_at, write_at, write_batch, read_head, write_head,
                    write_heads, prefetch, sync, len, set_len, max_len, stats, alignment, describe,
                    background, join_background);
}

/// `head` followed by zeros up to `len` bytes (the default metadata-only writes; the
/// caller checked `head.len() <= len`).
fn padded(len: usize, head: &[u8]) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    buf[..head.len()].copy_from_slice(head);
    buf
}

/// Refuses a metadata-only request whose kept bytes exceed its length.
pub fn check_head(len: usize, head_len: usize) -> Result<(), DeviceError> {
    if head_len > len {
        return Err(DeviceError::Config(format!(
            "a metadata-only request keeps {head_len} bytes of a {len}-byte range"
        )));
    }
    Ok(())
}

/// Checks that `offset..offset+len` lies within `dev_len`.
#[inline]
pub(crate) fn check_range(
    op: IoOp,
    offset: u64,
    len: usize,
    dev_len: u64,
) -> Result<(), DeviceError> {
    match offset.checked_add(len as u64) {
        Some(end) if end <= dev_len => Ok(()),
        _ => Err(DeviceError::OutOfRange {
            op,
            offset,
            len: len as u64,
            device_len: dev_len,
        }),
    }
}
