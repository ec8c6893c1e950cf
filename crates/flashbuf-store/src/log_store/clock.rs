//! The cleaner's clock: ticks of the configured [`TimeBase`], continued across reopens
//! (the checkpoint records the time it was taken; a reopened store starts from there).

use super::config::TimeBase;
use flashbuf_device::Device;
use std::time::Instant;

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
