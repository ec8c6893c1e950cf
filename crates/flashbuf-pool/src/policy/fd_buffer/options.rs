//! [`FdBufferOptions`]: FD-Buffer's options as a program sets them (chained setters), and
//! their checks. The lab's names for them (`window=`, `r=`, ...) are in [`super::spec`].

use super::{AdvisorClock, Asymmetry, Calibrate, ClusterVictim, Clustering, OrderKind, Window};
use flashbuf_core::ConfigError;

/// FD-Buffer's options. Build with the chained setters from [`Default`].
///
/// ```
/// use flashbuf_pool::policy::fd_buffer::{Clustering, FdBufferOptions, OrderKind};
/// let o = FdBufferOptions::default()
///     .window_refs(5_000)
///     .group_size(64)
///     .fixed_r(136.0)
///     .clustering(Clustering::Drain { cluster_pages: 64 })
///     .inner(OrderKind::Lru);
/// assert_eq!(o.group_size, 64);
/// ```
#[derive(Clone)]
pub struct FdBufferOptions {
    /// When a workload-estimation window closes (default 5,000 references).
    pub window: Window,
    /// Group size of the group-based stacks (default 64; 1 = exact stacks).
    pub group_size: usize,
    /// Where `R` comes from (default online, m = 32,768, initial 1).
    pub asymmetry: Asymmetry,
    /// Write clustering in the dirty pool (default off).
    pub clustering: Clustering,
    /// How a new victim cluster is chosen (default CFDC's priority, the paper's).
    pub cluster_victim: ClusterVictim,
    /// Inner policy of both pools (for [`FdBuffer::from_options`](super::FdBuffer::from_options); default LRU).
    pub inner: OrderKind,
    /// Use present conditions (default true; false = the "w/o PR" estimator).
    pub present_conditions: bool,
    /// Keep per-window estimated vs measured rates (Table 5); costs a second estimator.
    pub track_accuracy: bool,
    /// `M_c` before the first advisor run, as a fraction of `M` (default 0.5).
    pub initial_clean_ratio: f64,
    /// Read cost in µs for [`Window::CostBound`] when no I/O is observed (default 100).
    pub read_cost_us: f64,
    /// The clustered-cost variant ([`super::clustered_cost`], not the paper's): `Some(s)`
    /// with `s = w_seq / w_rand`; needs clustering. `None`: Eq. (3) as printed.
    pub clustered_cost: Option<f64>,
    /// The advisor counts misses and write-backs per access ([`super::cost::Curves::best_m_c_io_by`])
    /// instead of Eq. (3) (a variant; default false).
    pub io_count: bool,
    /// With `io_count`: the advisor charges the move from the current `M_c`
    /// ([`super::cost::Curves::best_m_c_io_from`]; a variant; default false).
    pub paid_moves: bool,
    /// With `paid_moves`: a move is paid out of the savings summed since the last move
    /// ([`super::moves`], `moves=cusum`; a variant; default false) instead of one
    /// window's.
    pub cusum_moves: bool,
    /// With the clustered-cost variant: `k(m)` from the recent writes back to `M`
    /// distinct pages, across windows, instead of the last window's writes
    /// ([`super::clustered_cost`]).
    pub recent_span: bool,
    /// With the clustered-cost variant: `k(m)` scaled each window to the mean size of
    /// the clusters the dirty pool drained ([`super::calibration`]; default none).
    pub calibrate: Calibrate,
    /// Clock for measuring the advisor's CPU time (default none: work units only).
    pub clock: Option<AdvisorClock>,
}

impl Default for FdBufferOptions {
    fn default() -> Self {
        Self {
            window: Window::default(),
            group_size: 64,
            asymmetry: Asymmetry::default(),
            clustering: Clustering::Off,
            cluster_victim: ClusterVictim::Priority,
            inner: OrderKind::Lru,
            present_conditions: true,
            track_accuracy: false,
            initial_clean_ratio: 0.5,
            read_cost_us: 100.0,
            clustered_cost: None,
            io_count: false,
            paid_moves: false,
            cusum_moves: false,
            recent_span: false,
            calibrate: Calibrate::None,
            clock: None,
        }
    }
}

impl std::fmt::Debug for FdBufferOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FdBufferOptions")
            .field("window", &self.window)
            .field("group_size", &self.group_size)
            .field("asymmetry", &self.asymmetry)
            .field("clustering", &self.clustering)
            .field("cluster_victim", &self.cluster_victim)
            .field("inner", &self.inner)
            .field("present_conditions", &self.present_conditions)
            .field("track_accuracy", &self.track_accuracy)
            .field("initial_clean_ratio", &self.initial_clean_ratio)
            .field("read_cost_us", &self.read_cost_us)
            .field("clustered_cost", &self.clustered_cost)
            .field("io_count", &self.io_count)
            .field("paid_moves", &self.paid_moves)
            .field("cusum_moves", &self.cusum_moves)
            .field("recent_span", &self.recent_span)
            .field("calibrate", &self.calibrate)
            .field("clock", &self.clock.is_some())
            .finish()
    }
}

impl FdBufferOptions {
    /// Fixed windows of `refs` references.
    pub fn window_refs(mut self, refs: u64) -> Self {
        self.window = Window::Refs(refs);
        self
    }
    /// Windows sized so that the advisor's time stays below `q` of the window's I/O cost
    /// (§4.4), between `min_refs` and `max_refs` references.
    pub fn overhead_bound(mut self, q: f64, min_refs: u64, max_refs: u64) -> Self {
        self.window = Window::CostBound {
            q,
            min_refs,
            max_refs,
        };
        self
    }
    /// Group size of the stacks.
    pub fn group_size(mut self, z: usize) -> Self {
        self.group_size = z;
        self
    }
    /// A fixed `R` (from a device profile).
    pub fn fixed_r(mut self, r: f64) -> Self {
        self.asymmetry = Asymmetry::Fixed(r);
        self
    }
    /// Online `R` over the last `m` observations of each kind, `initial` before that.
    pub fn online_r(mut self, m: usize, initial: f64) -> Self {
        self.asymmetry = Asymmetry::Online { m, initial };
        self
    }
    /// Write clustering mode.
    pub fn clustering(mut self, c: Clustering) -> Self {
        self.clustering = c;
        self
    }
    /// How a new victim cluster is chosen.
    pub fn cluster_victim(mut self, c: ClusterVictim) -> Self {
        self.cluster_victim = c;
        self
    }
    /// Inner policy of both pools.
    pub fn inner(mut self, k: OrderKind) -> Self {
        self.inner = k;
        self
    }
    /// Present conditions on or off.
    pub fn present_conditions(mut self, on: bool) -> Self {
        self.present_conditions = on;
        self
    }
    /// Per-window accuracy records on or off.
    pub fn track_accuracy(mut self, on: bool) -> Self {
        self.track_accuracy = on;
        self
    }
    /// Initial `M_c / M`.
    pub fn initial_clean_ratio(mut self, ratio: f64) -> Self {
        self.initial_clean_ratio = ratio;
        self
    }
    /// Read cost in µs used by cost-bound windows without I/O observations.
    pub fn read_cost_us(mut self, us: f64) -> Self {
        self.read_cost_us = us;
        self
    }
    /// The clustered-cost advisor with sequential/random write-cost ratio `seq_ratio`
    /// (a variant, [`super::clustered_cost`]).
    pub fn clustered_cost(mut self, seq_ratio: f64) -> Self {
        self.clustered_cost = Some(seq_ratio);
        self
    }
    /// The advisor's cost counted per access (misses + write-backs), not Eq. (3).
    pub fn io_count(mut self, on: bool) -> Self {
        self.io_count = on;
        self
    }
    /// With `io_count`, moves of `M_c` charged to the advisor's cost.
    pub fn paid_moves(mut self, on: bool) -> Self {
        self.paid_moves = on;
        self
    }

    /// With `paid_moves`, moves paid out of the savings summed since the last move.
    pub fn cusum_moves(mut self, on: bool) -> Self {
        self.cusum_moves = on;
        self
    }

    /// With the clustered-cost variant, reads `k(m)` off the recent writes across
    /// windows (`span=recent`).
    pub fn recent_span(mut self, on: bool) -> Self {
        self.recent_span = on;
        self
    }
    /// With the clustered-cost variant, calibrates `k(m)` in `mode` (`calibrate=`).
    pub fn calibrate(mut self, mode: Calibrate) -> Self {
        self.calibrate = mode;
        self
    }
    /// A clock (ns) to time the advisor with.
    pub fn clock(mut self, clock: AdvisorClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Checks the options for `frames_count` frames.
    pub fn validate(&self, frames_count: usize) -> Result<(), ConfigError> {
        let bad = |s: String| Err(ConfigError::invalid("fd-buffer", s));
        if frames_count == 0 {
            return bad("zero frames".into());
        }
        if self.group_size == 0 {
            return bad("group_size must be at least 1".into());
        }
        match self.window {
            Window::Refs(0) => return bad("window of 0 references".into()),
            Window::CostBound {
                q,
                min_refs,
                max_refs,
            } if q.is_nan() || q <= 0.0 || min_refs == 0 || max_refs < min_refs => {
                return bad(format!(
                    "bad overhead bound q={q}, refs {min_refs}..={max_refs}"
                ))
            }
            _ => {}
        }
        match self.asymmetry {
            Asymmetry::Fixed(r) if !(r.is_finite() && r >= 0.0) => return bad(format!("R = {r}")),
            Asymmetry::Online { m, initial }
                if m == 0 || !(initial.is_finite() && initial >= 0.0) =>
            {
                return bad(format!("online R with m = {m}, initial {initial}"))
            }
            _ => {}
        }
        if self.clustering.cluster_pages() == Some(0) {
            return bad("cluster of 0 pages".into());
        }
        if let Some(s) = self.clustered_cost {
            if self.clustering.cluster_pages().is_none() {
                return bad("the clustered cost model needs clustering (drain or batch)".into());
            }
            if !(s.is_finite() && s > 0.0 && s <= 1.0) {
                return bad(format!(
                    "sequential/random write-cost ratio {s}: must be in (0, 1]"
                ));
            }
        }
        if self.calibrate != Calibrate::None && self.clustered_cost.is_none() {
            return bad("calibrating k needs the clustered cost model".into());
        }
        if !(0.0..=1.0).contains(&self.initial_clean_ratio) {
            return bad(format!("initial_clean_ratio {}", self.initial_clean_ratio));
        }
        Ok(())
    }
}
