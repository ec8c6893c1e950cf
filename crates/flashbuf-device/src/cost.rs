//! A wrapper that charges a fixed latency per request on a virtual clock.

use crate::{Device, DeviceError, WriteOp};
use flashbuf_core::DeviceStats;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Fixed latencies of a [`CostDevice`], in microseconds per request.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyModel {
    /// Latency of one read request.
    pub latency_read_us: f64,
    /// Latency of one write request.
    pub latency_write_us: f64,
    /// Latency of one sync.
    pub latency_sync_us: f64,
}

impl LatencyModel {
    /// Read/write asymmetry `R = write latency / read latency`.
    pub fn asymmetry(&self) -> f64 {
        if self.latency_read_us > 0.0 {
            self.latency_write_us / self.latency_read_us
        } else {
            1.0
        }
    }
}

/// Charges each request a fixed latency on a virtual clock and forwards it to the inner
/// device (which stores the bytes). Its `stats().device_time_us` is the virtual time; the
/// other counters are the inner device's. Deterministic: no wall clock is read.
/// It has no background queue ([`Device::background`] is `None`): its one clock adds up
/// every request, so a second queue could only hide requests from it.
///
/// ```
/// use flashbuf_device::{CostDevice, Device, LatencyModel, MemDevice};
/// let m = LatencyModel { latency_read_us: 100.0, latency_write_us: 1000.0, latency_sync_us: 0.0 };
/// let d = CostDevice::new(MemDevice::new(8192), m);
/// d.write_at(0, &[1; 4096]).unwrap();
/// let mut b = [0u8; 4096];
/// d.read_at(0, &mut b).unwrap();
/// assert_eq!(d.stats().device_time_us, 1100.0);
/// ```
#[derive(Debug)]
pub struct CostDevice<D> {
    inner: D,
    model: LatencyModel,
    /// Virtual time in nanoseconds.
    clock_ns: AtomicU64,
}

impl<D: Device> CostDevice<D> {
    /// Wraps `inner` with the latencies of `model`.
    pub fn new(inner: D, model: LatencyModel) -> Self {
        Self {
            inner,
            model,
            clock_ns: AtomicU64::new(0),
        }
    }

    /// The latency model.
    pub fn model(&self) -> LatencyModel {
        self.model
    }

    /// Virtual time elapsed, in microseconds.
    pub fn clock_us(&self) -> f64 {
        self.clock_ns.load(Relaxed) as f64 / 1000.0
    }

    fn charge(&self, us: f64) {
        self.clock_ns
            .fetch_add((us * 1000.0).round() as u64, Relaxed);
    }
}

impl<D: Device> Device for CostDevice<D> {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.inner.read_at(offset, buf)?;
        self.charge(self.model.latency_read_us);
        Ok(())
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        self.inner.write_at(offset, buf)?;
        self.charge(self.model.latency_write_us);
        Ok(())
    }

    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        self.inner.write_batch(ops)?;
        self.charge(self.model.latency_write_us * ops.len() as f64);
        Ok(())
    }

    fn sync(&self) -> Result<(), DeviceError> {
        self.inner.sync()?;
        self.charge(self.model.latency_sync_us);
        Ok(())
    }

    crate::forward_device!(inner => prefetch, len, set_len, max_len, alignment);

    fn stats(&self) -> DeviceStats {
        DeviceStats {
            device_time_us: self.clock_us(),
            ..self.inner.stats()
        }
    }

    fn describe(&self) -> String {
        format!(
            "cost(read={}us,write={}us)",
            self.model.latency_read_us, self.model.latency_write_us
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemDevice;

    #[test]
    fn failed_requests_cost_nothing_and_batches_cost_per_op() {
        let m = LatencyModel {
            latency_read_us: 10.0,
            latency_write_us: 200.0,
            latency_sync_us: 5.0,
        };
        let d = CostDevice::new(MemDevice::new(1024), m);
        assert!(d.write_at(2000, &[0; 4]).is_err());
        assert_eq!(d.clock_us(), 0.0);
        d.write_batch(&[
            WriteOp {
                offset: 0,
                data: &[1; 4],
            },
            WriteOp {
                offset: 8,
                data: &[1; 4],
            },
        ])
        .unwrap();
        d.sync().unwrap();
        assert_eq!(d.stats().device_time_us, 405.0);
        assert_eq!(m.asymmetry(), 20.0);
    }
}
