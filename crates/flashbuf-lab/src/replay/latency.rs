//! Response time per reference on the device's clock: the device time spent between one
//! reference and the next (the miss's read, the write-backs its eviction caused, a
//! pass-through request's own I/O), read from the counting wrapper of the device chain.
//! Work a background thread does (StableBuffer's proactive flusher) is charged to the
//! reference during which it ran. Not kept on the clockless memory device.

use flashbuf_device::{CountingDevice, Device};
use hdrhistogram::Histogram;
use std::sync::Arc;

/// Largest time one reference may record (an hour; longer ones are clamped to it).
const MAX_NS: u64 = 3_600_000_000_000;

/// Per-reference device time, in a histogram of nanoseconds (3 significant digits).
pub(super) struct Latency {
    clock: Option<Arc<CountingDevice<Box<dyn Device>>>>,
    last_ns: u64,
    hist: Option<Histogram<u64>>,
}

impl Latency {
    /// A recorder reading `clock` (none: nothing is recorded).
    pub(super) fn new(clock: Option<Arc<CountingDevice<Box<dyn Device>>>>) -> Self {
        let hist = clock
            .as_ref()
            .and_then(|_| Histogram::<u64>::new_with_bounds(1, MAX_NS, 3).ok());
        let last_ns = clock.as_ref().map_or(0, |c| c.time_ns());
        Self {
            clock,
            last_ns,
            hist,
        }
    }

    /// Records the device time since the previous call as one reference's.
    #[inline(always)]
    pub(super) fn tick(&mut self) {
        // Called on every reference: the test inline, the recording out of line (the
        // clockless memory device never records).
        if self.hist.is_some() {
            self.record();
        }
    }

    #[inline(never)]
    fn record(&mut self) {
        if let (Some(c), Some(h)) = (&self.clock, &mut self.hist) {
            let now = c.time_ns();
            h.saturating_record(now.saturating_sub(self.last_ns));
            self.last_ns = now;
        }
    }

    /// Forgets what was recorded (the end of a warm-up) and returns the counting device's
    /// figures at this point, if there is one.
    pub(super) fn reset(&mut self) -> Option<flashbuf_device::IoCounts> {
        if let Some(h) = &mut self.hist {
            h.reset();
        }
        self.clock.as_ref().map(|c| c.counts())
    }

    /// The counting device's figures now, if there is one.
    pub(super) fn counts(&self) -> Option<flashbuf_device::IoCounts> {
        self.clock.as_ref().map(|c| c.counts())
    }

    /// Mean and 99th percentile in microseconds, if recorded.
    pub(super) fn summary_us(&self) -> Option<(f64, f64)> {
        let h = self.hist.as_ref().filter(|h| !h.is_empty())?;
        Some((h.mean() / 1000.0, h.value_at_quantile(0.99) as f64 / 1000.0))
    }
}
