//! FD-Buffer's constructors: the options checked, the pools, estimators, clusters and
//! the variant's model built.

use super::{FdBuffer, FrameState};
use crate::policy::fd_buffer::cluster::Clusters;
use crate::policy::fd_buffer::clustered_cost::ClusteredCost;
use crate::policy::fd_buffer::cost::Curves;
use crate::policy::fd_buffer::moves::Savings;
use crate::policy::fd_buffer::two_stack::TwoStack;
use crate::policy::fd_buffer::window::WindowStats;
use crate::policy::fd_buffer::{
    initial_m_c, AdvisorStats, Asymmetry, ClusterVictim, FdBufferOptions, LruOrder, MissRates,
    PoolOrder, RateEstimator,
};
use flashbuf_core::ConfigError;

impl FdBuffer<LruOrder, LruOrder> {
    /// FD-Buffer with LRU in both pools (the paper's setting).
    pub fn new(frames_count: usize, opts: FdBufferOptions) -> Result<Self, ConfigError> {
        let d = dirty_order_frames(frames_count, &opts);
        Self::with_orders(
            frames_count,
            opts,
            LruOrder::new(frames_count),
            LruOrder::new(d),
        )
    }
}

impl FdBuffer<Box<dyn PoolOrder>, Box<dyn PoolOrder>> {
    /// FD-Buffer with the inner policy named in `opts.inner` for both pools.
    pub fn from_options(frames_count: usize, opts: FdBufferOptions) -> Result<Self, ConfigError> {
        let (k, d) = (opts.inner, dirty_order_frames(frames_count, &opts));
        Self::with_orders(frames_count, opts, k.build(frames_count), k.build(d))
    }
}

/// Whether the dirty pool's inner ordering is read: not when clusters choose its victims
/// by CFDC's priority (then every dirty victim comes from the clusters).
fn orders_dirty(opts: &FdBufferOptions) -> bool {
    opts.clustering.cluster_pages().is_none() || opts.cluster_victim != ClusterVictim::Priority
}

/// Frames the dirty pool's ordering is built for: none when it is never read.
fn dirty_order_frames(frames_count: usize, opts: &FdBufferOptions) -> usize {
    if orders_dirty(opts) {
        frames_count
    } else {
        0
    }
}

impl<C: PoolOrder, D: PoolOrder> FdBuffer<C, D> {
    /// FD-Buffer with the given (empty) orderings for the clean and the dirty pool.
    pub fn with_orders(
        frames_count: usize,
        opts: FdBufferOptions,
        clean: C,
        dirty: D,
    ) -> Result<Self, ConfigError> {
        opts.validate(frames_count)?;
        if !clean.is_empty() || !dirty.is_empty() {
            return Err(ConfigError::invalid(
                "fd-buffer",
                "pool orderings must start empty",
            ));
        }
        let m = frames_count;
        let m_c = initial_m_c(m, opts.initial_clean_ratio);
        let (rate, fixed_r) = match opts.asymmetry {
            Asymmetry::Online { m, initial } => (Some(RateEstimator::new(m, initial)), initial),
            Asymmetry::Fixed(r) => (None, r),
        };
        let clusters = opts
            .clustering
            .cluster_pages()
            .map(|n| Clusters::new(frames_count, n));
        let clustered_cost = match (opts.clustered_cost, opts.clustering.cluster_pages()) {
            (Some(s), Some(n)) => Some(
                ClusteredCost::new(n, s, opts.recent_span.then_some(m))
                    .with_calibration(opts.calibrate),
            ),
            _ => None,
        };
        let refs_check = Self::refs_check(&opts.window);
        let ordered_dirty = orders_dirty(&opts);
        Ok(Self {
            m,
            clustered_cost,
            est: TwoStack::for_owner(m, opts.group_size, opts.present_conditions),
            stream: None,
            shadow: opts
                .track_accuracy
                .then(|| TwoStack::new(m, opts.group_size, false)),
            opts,
            clean,
            dirty,
            d_len: 0,
            ordered_dirty,
            fr: vec![FrameState::FREE; m],
            m_c,
            win: WindowStats::default(),
            refs_check,
            rate,
            last_comp_ns: 0.0,
            last_est: MissRates::default(),
            curves: Curves::default(),
            savings: Savings::default(),
            clusters,
            batch: Vec::new(),
            next_access: None,
            fixed_r,
            records: Vec::new(),
            stats: AdvisorStats::default(),
        })
    }
}
