//! The cleaner's clock: ticks of the configured [`TimeBase`], continued across reopens
//! (the checkpoint records the time it was taken; a reopened store starts from there).

use crate::StoreError;
use flashbuf_device::Device;
use std::time::Instant;

/// The clock the cleaner's knobs (cleaning interval, protection period) and the segments'
/// ages are measured on. One tick is a microsecond for `Device` and `Wall`, one caller page
/// write for `Writes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeBase {
    /// The device's own time (`DeviceStats::device_time_us`): the virtual clock of a
    /// simulated device, measured I/O time of a file.
    Device,
    /// Monotonic wall time since the store was opened (continued across reopens through
    /// the checkpoint). The choice for file devices.
    Wall,
    /// Pages written by callers (a logical clock: deterministic on any device).
    Writes,
}

impl TimeBase {
    /// The option value.
    pub fn name(self) -> &'static str {
        match self {
            TimeBase::Device => "device",
            TimeBase::Wall => "wall",
            TimeBase::Writes => "writes",
        }
    }

    /// Parses an option value; the error lists the valid ones.
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "device" => Ok(TimeBase::Device),
            "wall" => Ok(TimeBase::Wall),
            "writes" => Ok(TimeBase::Writes),
            _ => Err(StoreError::Invalid(format!(
                "unknown time base '{s}'; valid: device, wall, writes"
            ))),
        }
    }
}

/// Ticks of a [`TimeBase`], monotonic across reopens.
#[derive(Debug)]
pub(crate) struct Clock {
    base: TimeBase,
    /// Ticks at the moment the store was opened.
    origin: f64,
    /// The device's time when the store was opened (`Device`).
    device_start_us: f64,
    /// When the store was opened (`Wall`).
    wall_start: Instant,
}

impl Clock {
    /// A clock of `base` that reads `origin` now.
    pub(crate) fn new<D: Device + ?Sized>(base: TimeBase, origin: f64, dev: &D) -> Self {
        Self {
            base,
            origin,
            device_start_us: dev.stats().device_time_us,
            wall_start: Instant::now(),
        }
    }

    /// Restarts the clock at `origin` ticks (recovery found the store's last time).
    pub(crate) fn restart_at<D: Device + ?Sized>(&mut self, origin: f64, dev: &D) {
        *self = Self::new(self.base, origin, dev);
    }

    /// Ticks now; `user_writes` is the store's count of caller page writes (the `Writes`
    /// base, which is persisted and needs no origin).
    pub(crate) fn now<D: Device + ?Sized>(&self, dev: &D, user_writes: u64) -> f64 {
        match self.base {
            TimeBase::Device => {
                self.origin + (dev.stats().device_time_us - self.device_start_us).max(0.0)
            }
            TimeBase::Wall => self.origin + self.wall_start.elapsed().as_secs_f64() * 1e6,
            TimeBase::Writes => user_writes as f64,
        }
    }
}
