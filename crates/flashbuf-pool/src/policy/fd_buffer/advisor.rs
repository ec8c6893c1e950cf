//! FD-Buffer's policy advisor inputs (On et al., IEEE TC 2014, §4.1, §4.4): the window
//! rule, the online asymmetry factor `R`, and the advisor's overhead accounting.
//!
//! - **Window** (§4.4): by default a fixed number of references (5,000, the paper's
//!   default). The paper also sizes the window so that the advisor's computation `Comp`
//!   stays below a fraction `q` of the window's I/O cost: with [`Window::CostBound`] a
//!   window closes at the first reference where its I/O cost reaches `Comp / q` (`Comp` of
//!   the previous advisor run), clamped to `min_refs..=max_refs`. `Comp` is measured with
//!   the injected clock if one is given ([`AdvisorClock`]), else estimated as one
//!   nanosecond per unit of advisor work (documented, deterministic). The window's I/O
//!   cost is the sum of observed device latencies when the policy observes I/O, else
//!   `reads · read_cost_us + writes · read_cost_us · R`.
//! - **R** (§4.2): "the ratio of the average latency of the previous m writes and the
//!   average latency of the previous m reads" (m = 32,768): [`RateEstimator`] keeps both
//!   windows as ring buffers with running sums. Until both kinds were observed, `R` is
//!   the configured initial value.

use std::sync::Arc;

/// A caller-provided monotonic clock in nanoseconds (the policy never reads the wall
/// clock itself).
pub type AdvisorClock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// How a workload-estimation window ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Window {
    /// A fixed number of references (paper default: 5,000).
    Refs(u64),
    /// Close when the window's I/O cost reaches `Comp / q`, within `min_refs..=max_refs`.
    CostBound {
        /// Overhead bound `q` (e.g. 0.01 for 1 %).
        q: f64,
        /// Fewest references per window.
        min_refs: u64,
        /// Most references per window.
        max_refs: u64,
    },
}

impl Default for Window {
    fn default() -> Self {
        Window::Refs(5_000)
    }
}

/// Where `R` comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Asymmetry {
    /// A constant `R` (from a device profile).
    Fixed(f64),
    /// Moving averages of the last `m` measured write and read latencies; `initial`
    /// until both kinds were observed.
    Online {
        /// Observations per moving average (paper: 32,768).
        m: usize,
        /// `R` before any measurement.
        initial: f64,
    },
}

impl Default for Asymmetry {
    fn default() -> Self {
        Asymmetry::Online {
            m: 32_768,
            initial: 1.0,
        }
    }
}

/// An `m`-point moving average.
#[derive(Debug, Clone)]
struct MovingAverage {
    ring: Vec<f64>,
    next: usize,
    filled: usize,
    sum: f64,
    since_resum: usize,
}

impl MovingAverage {
    fn new(m: usize) -> Self {
        Self {
            ring: vec![0.0; m.max(1)],
            next: 0,
            filled: 0,
            sum: 0.0,
            since_resum: 0,
        }
    }

    fn push(&mut self, v: f64) {
        let old = self.ring[self.next];
        self.ring[self.next] = v;
        self.next = (self.next + 1) % self.ring.len();
        if self.filled < self.ring.len() {
            self.filled += 1;
            self.sum += v;
        } else {
            self.sum += v - old;
        }
        self.since_resum += 1;
        if self.since_resum >= self.ring.len() {
            // Recompute now and then so rounding errors cannot accumulate.
            self.sum = self.ring[..self.filled].iter().sum();
            self.since_resum = 0;
        }
    }

    fn mean(&self) -> Option<f64> {
        (self.filled > 0).then(|| self.sum / self.filled as f64)
    }
}

/// Online `R`: moving averages of write and read latencies (§4.2).
#[derive(Debug, Clone)]
pub struct RateEstimator {
    reads: MovingAverage,
    writes: MovingAverage,
    initial: f64,
}

impl RateEstimator {
    /// Averages over the last `m` observations of each kind.
    pub fn new(m: usize, initial: f64) -> Self {
        Self {
            reads: MovingAverage::new(m),
            writes: MovingAverage::new(m),
            initial,
        }
    }

    /// Records a read latency.
    pub fn observe_read(&mut self, latency_us: f64) {
        self.reads.push(latency_us)
    }

    /// Records a write latency (per page).
    pub fn observe_write(&mut self, latency_us: f64) {
        self.writes.push(latency_us)
    }

    /// Mean read latency so far (over the last `m`).
    pub fn read_mean_us(&self) -> Option<f64> {
        self.reads.mean()
    }

    /// `R` = mean write latency / mean read latency, or the initial value.
    pub fn r(&self) -> f64 {
        match (self.writes.mean(), self.reads.mean()) {
            (Some(w), Some(r)) if r > 0.0 => w / r,
            _ => self.initial,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_is_the_ratio_of_moving_averages() {
        let mut e = RateEstimator::new(4, 7.0);
        assert_eq!(e.r(), 7.0);
        e.observe_read(10.0);
        assert_eq!(e.r(), 7.0);
        for _ in 0..4 {
            e.observe_write(1000.0);
        }
        assert_eq!(e.r(), 100.0);
        // Only the last 4 writes count.
        for _ in 0..4 {
            e.observe_write(500.0);
        }
        assert_eq!(e.r(), 50.0);
        for _ in 0..3 {
            e.observe_read(20.0);
        }
        assert_eq!(e.read_mean_us(), Some(17.5));
    }
}
