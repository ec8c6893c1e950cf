//! Asymmetry dynamics as a run option (FD-Buffer paper §5.1).
//!
//! - **Asymmetry models** `rm1`/`rm2` ([`super::models::AsymmetryModel`]) change
//!   the device's read/write asymmetry per epoch: [`AsymmetryDevice`] wraps the run's device
//!   and adds latency on its clock, as the paper did ("we intentionally add latency to the
//!   read or write operations"). With the model's factor `f_i = R_i / R_0`: for `f_i ≥ 1`
//!   each write takes `f_i` times the latency the device charged for it (the wrapper
//!   adds `(f_i − 1)` times that latency); for `f_i < 1` (RM2's odd epochs) each read
//!   takes `1/f_i` times its latency. The ratio of the device's write and read latencies
//!   is thus exactly `f_i` times what it would have been, whatever the writes' pattern
//!   (clustered writes stay cheaper than random ones). The replay tells
//!   the wrapper the epoch before each epoch's references ([`EpochClock`]), and tells the
//!   pool the device's costs in that epoch ([`epoch_costs`]: the base latencies stretched
//!   the same way) through `BufferPool::update_costs`, which forwards them to the policy
//!   under the pool lock (no side channel). Policies whose costs are static inputs follow
//!   them: FD-Buffer with a fixed `R` takes `R_i = write_us / read_us` (`R_0` times the
//!   factor), CASA with static costs takes its `C_r`, `C_w` from them. Policies that learn
//!   costs online (FD-Buffer `r=online`, CASA `learn=true`) ignore the update and see the
//!   change through their I/O observations; the others use no costs.

use super::models::AsymmetryModel;
use flashbuf_core::{ConfigError, DeviceFacts, DeviceStats};
use flashbuf_device::{Device, DeviceError, HeadWrite, WriteOp};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// Parses `rm1` or `rm2`.
pub fn parse_asymmetry(s: &str) -> Result<AsymmetryModel, ConfigError> {
    match s.trim().to_ascii_lowercase().as_str() {
        "rm1" => Ok(AsymmetryModel::Rm1),
        "rm2" => Ok(AsymmetryModel::Rm2),
        other => Err(ConfigError::Syntax(format!(
            "unknown asymmetry model '{other}'; valid: rm1, rm2"
        ))),
    }
}

/// The name of an asymmetry model (`rm1`, `rm2`).
pub fn asymmetry_name(m: AsymmetryModel) -> &'static str {
    match m {
        AsymmetryModel::Rm1 => "rm1",
        AsymmetryModel::Rm2 => "rm2",
    }
}

/// How much longer reads take under the factor `f = R_i / R_0`: `1/f` when `f < 1`.
fn read_scale(f: f64) -> f64 {
    if f > 0.0 && f < 1.0 {
        1.0 / f
    } else {
        1.0
    }
}

/// How much longer writes take under the factor `f`: `f` when `f > 1`.
fn write_scale(f: f64) -> f64 {
    f.max(1.0)
}

/// The device's costs in `epoch` of `model`, from its costs without the model (`base`):
/// the latencies [`AsymmetryDevice`] charges, so that `write_us / read_us` is the base
/// ratio times the epoch's factor `f_i = R_i / R_0`.
///
/// ```
/// use flashbuf_core::DeviceFacts;
/// use flashbuf_workload::dynamics::{epoch_costs, AsymmetryModel};
/// let base = DeviceFacts { erase_block_bytes: None, read_us: 100.0, write_us: 1_000.0, seq_write_us: None };
/// let c = epoch_costs(AsymmetryModel::Rm1, &base, 10); // f = 2: writes twice as dear
/// assert_eq!((c.read_us, c.write_us), (100.0, 2_000.0));
/// let c = epoch_costs(AsymmetryModel::Rm2, &base, 1); // f = 0.95: reads dearer
/// assert!((c.r() - 9.5).abs() < 1e-12);
/// ```
pub fn epoch_costs(model: AsymmetryModel, base: &DeviceFacts, epoch: u64) -> DeviceFacts {
    let f = model.r(1.0, epoch);
    DeviceFacts {
        read_us: base.read_us * read_scale(f),
        write_us: base.write_us * write_scale(f),
        seq_write_us: base.seq_write_us.map(|w| w * write_scale(f)),
        ..*base
    }
}

/// The epoch a replay is in, shared between the replay loop and [`AsymmetryDevice`].
#[derive(Debug, Clone, Default)]
pub struct EpochClock(Arc<AtomicU64>);

impl EpochClock {
    /// Sets the current epoch.
    pub fn set(&self, epoch: u64) {
        self.0.store(epoch, Relaxed);
    }

    /// The current epoch.
    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// A device wrapper that changes the read/write asymmetry per epoch by adding latency to
/// the inner device's clock (see the module documentation). `stats().device_time_us`
/// includes the added time; everything else is the inner device's.
#[derive(Debug)]
pub struct AsymmetryDevice<D> {
    inner: D,
    model: AsymmetryModel,
    epoch: EpochClock,
    extra_ns: AtomicU64,
}

impl<D: Device> AsymmetryDevice<D> {
    /// Wraps `inner`.
    pub fn new(inner: D, model: AsymmetryModel) -> Self {
        Self {
            inner,
            model,
            epoch: EpochClock::default(),
            extra_ns: AtomicU64::new(0),
        }
    }

    /// The clock the replay advances.
    pub fn clock(&self) -> EpochClock {
        self.epoch.clone()
    }

    /// The factor `f_i = R_i / R_0` of the current epoch.
    pub fn factor(&self) -> f64 {
        self.model.r(1.0, self.epoch.get())
    }

    /// Latency added so far, microseconds.
    pub fn extra_us(&self) -> f64 {
        self.extra_ns.load(Relaxed) as f64 / 1000.0
    }

    fn clock_us(&self) -> f64 {
        self.inner.stats().device_time_us
    }

    /// Adds `scale − 1` times the latency the inner device just charged (`t0` = its clock
    /// before the call), when `scale > 1`.
    fn stretch(&self, t0: f64, scale: f64) {
        if scale > 1.0 {
            let dt = (self.clock_us() - t0).max(0.0);
            let extra = dt * (scale - 1.0);
            self.extra_ns
                .fetch_add((extra * 1000.0).round() as u64, Relaxed);
        }
    }

    /// Runs request `f` on the inner device, stretching its latency by `scale`.
    fn stretched(
        &self,
        scale: f64,
        f: impl FnOnce() -> Result<(), DeviceError>,
    ) -> Result<(), DeviceError> {
        let t0 = self.clock_us();
        f()?;
        self.stretch(t0, scale);
        Ok(())
    }

    /// Read latencies are stretched by `1/f` when `f < 1`.
    fn read_scale(&self) -> f64 {
        read_scale(self.factor())
    }

    /// Write latencies are stretched by `f` when `f > 1`.
    fn write_scale(&self) -> f64 {
        write_scale(self.factor())
    }
}

impl<D: Device> Device for AsymmetryDevice<D> {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.stretched(self.read_scale(), || self.inner.read_at(offset, buf))
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        self.stretched(self.write_scale(), || self.inner.write_at(offset, buf))
    }
    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        self.stretched(self.write_scale(), || self.inner.write_batch(ops))
    }
    fn read_head(&self, offset: u64, len: usize, head: &mut [u8]) -> Result<(), DeviceError> {
        self.stretched(self.read_scale(), || {
            self.inner.read_head(offset, len, head)
        })
    }
    fn write_head(&self, offset: u64, len: usize, head: &[u8]) -> Result<(), DeviceError> {
        self.stretched(self.write_scale(), || {
            self.inner.write_head(offset, len, head)
        })
    }
    fn write_heads(&self, ops: &[HeadWrite<'_>]) -> Result<(), DeviceError> {
        self.stretched(self.write_scale(), || self.inner.write_heads(ops))
    }
    flashbuf_device::forward_device!(inner => prefetch, sync, len, set_len, max_len, alignment);
    fn stats(&self) -> DeviceStats {
        let mut s = self.inner.stats();
        s.device_time_us += self.extra_us();
        s
    }
    fn describe(&self) -> String {
        format!("{}+{}", self.inner.describe(), asymmetry_name(self.model))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_device::{CostDevice, LatencyModel, MemDevice};

    #[test]
    fn parses() {
        assert!(parse_asymmetry("rm2").is_ok());
        assert!(parse_asymmetry("rm3").is_err());
    }

    #[test]
    fn asymmetry_device_stretches_latencies_per_epoch() -> Result<(), DeviceError> {
        let lat = LatencyModel {
            latency_read_us: 10.0,
            latency_write_us: 100.0,
            latency_sync_us: 0.0,
        };
        let d = AsymmetryDevice::new(
            CostDevice::new(MemDevice::new(1 << 16), lat),
            AsymmetryModel::Rm1,
        );
        let clock = d.clock();
        let mut buf = [0u8; 512];
        d.write_at(0, &buf)?;
        assert_eq!(d.extra_us(), 0.0);
        clock.set(10); // f = 2: writes take twice as long, reads as before
        d.write_at(0, &buf)?;
        d.read_at(0, &mut buf)?;
        assert!((d.extra_us() - 100.0).abs() < 1e-6);
        assert!((d.stats().device_time_us - 310.0).abs() < 1e-6);
        let rm2 = AsymmetryDevice::new(
            CostDevice::new(MemDevice::new(1 << 16), lat),
            AsymmetryModel::Rm2,
        );
        rm2.clock().set(1); // f = 0.95: reads take 1/0.95 as long, writes as before
        rm2.read_at(0, &mut buf)?;
        rm2.write_at(0, &buf)?;
        assert!((rm2.extra_us() - 10.0 * (1.0 / 0.95 - 1.0)).abs() < 1e-3);
        Ok(())
    }
}
