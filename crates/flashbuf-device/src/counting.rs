//! A wrapper that counts the requests passing through it.

use crate::{Device, DeviceError, HeadWrite, WriteOp};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// Requests seen by a [`CountingDevice`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct IoCounts {
    /// Read requests.
    pub reads: u64,
    /// Write requests (each op of a batch counts).
    pub writes: u64,
    /// `write_batch` calls.
    pub batches: u64,
    /// `sync` calls that succeeded.
    pub syncs: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub written_bytes: u64,
    /// Writes that started exactly where the previous write ended.
    pub sequential_writes: u64,
    /// Device time spent in reads, microseconds (from the inner device's clock).
    pub read_time_us: f64,
    /// Device time spent in writes and batches, microseconds.
    pub write_time_us: f64,
}

/// Counts every request it forwards to the inner device, and splits the inner device's
/// time (`stats().device_time_us`, sampled before and after each call) into read and write
/// time; `stats()` is the inner device's.
///
/// ```
/// use flashbuf_device::{CountingDevice, Device, MemDevice};
/// let d = CountingDevice::new(MemDevice::new(4096));
/// d.write_at(0, &[1; 512]).unwrap();
/// d.write_at(512, &[1; 512]).unwrap();
/// assert_eq!(d.counts().writes, 2);
/// assert_eq!(d.counts().sequential_writes, 1);
/// ```
#[derive(Debug)]
pub struct CountingDevice<D> {
    inner: D,
    /// Shared with the counting wrapper of the device's background handle.
    c: Arc<Counters>,
}

/// The counters of a [`CountingDevice`] (and of its background handle's wrapper).
#[derive(Debug)]
struct Counters {
    reads: AtomicU64,
    writes: AtomicU64,
    batches: AtomicU64,
    syncs: AtomicU64,
    read_bytes: AtomicU64,
    written_bytes: AtomicU64,
    sequential_writes: AtomicU64,
    last_write_end: AtomicU64,
    read_time_ns: AtomicU64,
    write_time_ns: AtomicU64,
}

impl<D: Device> CountingDevice<D> {
    /// Wraps `inner`.
    pub fn new(inner: D) -> Self {
        Self {
            inner,
            c: Arc::new(Counters {
                reads: AtomicU64::new(0),
                writes: AtomicU64::new(0),
                batches: AtomicU64::new(0),
                syncs: AtomicU64::new(0),
                read_bytes: AtomicU64::new(0),
                written_bytes: AtomicU64::new(0),
                sequential_writes: AtomicU64::new(0),
                last_write_end: AtomicU64::new(u64::MAX),
                read_time_ns: AtomicU64::new(0),
                write_time_ns: AtomicU64::new(0),
            }),
        }
    }

    fn clock_ns(&self) -> f64 {
        self.inner.stats().device_time_us * 1000.0
    }

    fn add_time(counter: &AtomicU64, before_ns: f64, after_ns: f64) {
        counter.fetch_add((after_ns - before_ns).max(0.0).round() as u64, Relaxed);
    }

    /// The wrapped device.
    pub fn inner(&self) -> &D {
        &self.inner
    }

    /// Device time of the reads and writes so far, nanoseconds (two relaxed loads: cheap
    /// enough to take once per request of a replay).
    #[inline]
    pub fn time_ns(&self) -> u64 {
        self.c.read_time_ns.load(Relaxed) + self.c.write_time_ns.load(Relaxed)
    }

    /// Counts so far.
    pub fn counts(&self) -> IoCounts {
        IoCounts {
            reads: self.c.reads.load(Relaxed),
            writes: self.c.writes.load(Relaxed),
            batches: self.c.batches.load(Relaxed),
            syncs: self.c.syncs.load(Relaxed),
            read_bytes: self.c.read_bytes.load(Relaxed),
            written_bytes: self.c.written_bytes.load(Relaxed),
            sequential_writes: self.c.sequential_writes.load(Relaxed),
            read_time_us: self.c.read_time_ns.load(Relaxed) as f64 / 1000.0,
            write_time_us: self.c.write_time_ns.load(Relaxed) as f64 / 1000.0,
        }
    }

    /// Runs read `f` of `len` bytes, adding its device time and counting it.
    fn timed_read(
        &self,
        len: usize,
        f: impl FnOnce() -> Result<(), DeviceError>,
    ) -> Result<(), DeviceError> {
        let t0 = self.clock_ns();
        f()?;
        Self::add_time(&self.c.read_time_ns, t0, self.clock_ns());
        self.c.reads.fetch_add(1, Relaxed);
        self.c.read_bytes.fetch_add(len as u64, Relaxed);
        Ok(())
    }

    /// Runs write `f`, adding its device time (the caller counts its writes).
    fn timed_write(&self, f: impl FnOnce() -> Result<(), DeviceError>) -> Result<(), DeviceError> {
        let t0 = self.clock_ns();
        f()?;
        Self::add_time(&self.c.write_time_ns, t0, self.clock_ns());
        Ok(())
    }

    /// Counts one batch of `(offset, length)` writes.
    fn count_batch(&self, ops: impl Iterator<Item = (u64, usize)>) {
        self.c.batches.fetch_add(1, Relaxed);
        for (offset, len) in ops {
            self.count_write(offset, len);
        }
    }

    fn count_write(&self, offset: u64, len: usize) {
        self.c.writes.fetch_add(1, Relaxed);
        self.c.written_bytes.fetch_add(len as u64, Relaxed);
        if self.c.last_write_end.swap(offset + len as u64, Relaxed) == offset {
            self.c.sequential_writes.fetch_add(1, Relaxed);
        }
    }
}

impl<D: Device> Device for CountingDevice<D> {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        let len = buf.len();
        self.timed_read(len, || self.inner.read_at(offset, buf))
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        self.timed_write(|| self.inner.write_at(offset, buf))?;
        self.count_write(offset, buf.len());
        Ok(())
    }

    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        self.timed_write(|| self.inner.write_batch(ops))?;
        self.count_batch(ops.iter().map(|op| (op.offset, op.data.len())));
        Ok(())
    }

    fn read_head(&self, offset: u64, len: usize, head: &mut [u8]) -> Result<(), DeviceError> {
        self.timed_read(len, || self.inner.read_head(offset, len, head))
    }

    fn write_head(&self, offset: u64, len: usize, head: &[u8]) -> Result<(), DeviceError> {
        self.timed_write(|| self.inner.write_head(offset, len, head))?;
        self.count_write(offset, len);
        Ok(())
    }

    fn write_heads(&self, ops: &[HeadWrite<'_>]) -> Result<(), DeviceError> {
        self.timed_write(|| self.inner.write_heads(ops))?;
        self.count_batch(ops.iter().map(|op| (op.offset, op.len)));
        Ok(())
    }

    fn sync(&self) -> Result<(), DeviceError> {
        self.inner.sync()?;
        self.c.syncs.fetch_add(1, Relaxed);
        Ok(())
    }

    /// The inner device's background handle, counted here too (same counters; its
    /// device time is the makespan it adds).
    fn background(&self) -> Option<Box<dyn Device>> {
        let inner = self.inner.background()?;
        Some(Box::new(CountingDevice {
            inner,
            c: Arc::clone(&self.c),
        }))
    }

    crate::forward_device!(inner => prefetch, len, set_len, max_len, stats, alignment, describe,
                           join_background);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemDevice;

    #[test]
    fn counts_batches_and_failed_requests_are_not_counted() {
        let d = CountingDevice::new(MemDevice::new(1024));
        d.write_batch(&[
            WriteOp {
                offset: 0,
                data: &[1; 100],
            },
            WriteOp {
                offset: 100,
                data: &[1; 100],
            },
        ])
        .unwrap();
        assert!(d.write_at(1000, &[0; 100]).is_err());
        let mut b = [0u8; 10];
        d.read_at(0, &mut b).unwrap();
        d.sync().unwrap();
        let c = d.counts();
        assert_eq!(
            (
                c.reads,
                c.writes,
                c.batches,
                c.syncs,
                c.written_bytes,
                c.sequential_writes
            ),
            (1, 2, 1, 1, 200, 1)
        );
    }

    #[test]
    fn splits_device_time_into_reads_and_writes() {
        use crate::{CostDevice, LatencyModel};
        let m = LatencyModel {
            latency_read_us: 10.0,
            latency_write_us: 300.0,
            latency_sync_us: 0.0,
        };
        let d = CountingDevice::new(CostDevice::new(MemDevice::new(1024), m));
        let mut b = [0u8; 8];
        d.read_at(0, &mut b).unwrap();
        d.write_at(0, &b).unwrap();
        d.write_batch(&[
            WriteOp {
                offset: 8,
                data: &b,
            },
            WriteOp {
                offset: 16,
                data: &b,
            },
        ])
        .unwrap();
        let c = d.counts();
        assert_eq!((c.read_time_us, c.write_time_us), (10.0, 900.0));
    }
}
