//! The [`Clustered`] decorator: write clustering around any policy, in batch or drain
//! mode, with the victim's or the metric's cluster (see the module documentation of
//! [`super`]).

use super::{ClusterInfo, ClusterSet};
use crate::policy::{Access, IoKind, Policy, PolicyReport, Victim};
use flashbuf_core::{ConfigError, DeviceFacts, FrameId, PageId};

/// How dirty victims leave: see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterMode {
    /// The whole cluster is written back in one batch with the victim.
    Batch,
    /// The victim leaves alone; the following dirty victims come from its cluster.
    Drain,
}

/// Which cluster a dirty victim comes from: see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterChoice {
    /// The inner policy's victim's cluster.
    Victim,
    /// The cluster with the lowest CFDC priority among all resident dirty pages.
    Metric,
}

/// Options of [`Clustered`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusteringConfig {
    /// Batch or drain.
    pub mode: ClusterMode,
    /// Pages per cluster (erase block / page size), `1..=MAX_CLUSTER_SIZE`.
    pub cluster_size: u64,
    /// How the cluster is chosen.
    pub choice: ClusterChoice,
}

impl ClusteringConfig {
    /// Batch mode, victim's cluster.
    pub fn batch(cluster_size: u64) -> Self {
        Self {
            mode: ClusterMode::Batch,
            cluster_size,
            choice: ClusterChoice::Victim,
        }
    }

    /// Drain mode, victim's cluster.
    pub fn drain(cluster_size: u64) -> Self {
        Self {
            mode: ClusterMode::Drain,
            cluster_size,
            choice: ClusterChoice::Victim,
        }
    }

    /// The same options with another cluster choice.
    pub fn with_choice(self, choice: ClusterChoice) -> Self {
        Self { choice, ..self }
    }

    /// Cluster size from the device geometry: erase block bytes / page bytes.
    pub fn cluster_size_of(erase_block_bytes: u64, page_size: usize) -> Result<u64, ConfigError> {
        let ps = page_size as u64;
        if ps == 0 || erase_block_bytes < ps || !erase_block_bytes.is_multiple_of(ps) {
            return Err(ConfigError::invalid(
                "clustering",
                format!(
                    "erase block of {erase_block_bytes} bytes is not a multiple of the \
                     {page_size}-byte page"
                ),
            ));
        }
        Ok(erase_block_bytes / ps)
    }
}

/// Write clustering around any policy. See the module documentation.
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::{Access, Clustered, ClusteringConfig, Lru, Policy, Victim};
/// let mut p = Clustered::new(Lru::new(4), ClusteringConfig::batch(64)).unwrap();
/// p.on_insert(FrameId(0), PageId(9), Access::Write); // LRU victim, cluster 0
/// p.on_insert(FrameId(1), PageId(200), Access::Write); // cluster 3
/// p.on_insert(FrameId(2), PageId(3), Access::Write); // cluster 0
/// p.on_insert(FrameId(3), PageId(5), Access::Read); // cluster 0, clean
/// // Frame 0 goes; the dirty pages of its cluster are written with it, by page number.
/// assert_eq!(
///     p.choose_victim(&|_| true),
///     Some(Victim::Batch { evict: FrameId(0), write_back: &[FrameId(2), FrameId(0)] })
/// );
/// ```
#[derive(Debug, Clone)]
pub struct Clustered<P> {
    inner: P,
    cfg: ClusteringConfig,
    pid: Vec<u64>,
    dirty: ClusterSet,
    batch: Vec<FrameId>,
    sort: Vec<(u64, FrameId)>,
}

impl<P: Policy> Clustered<P> {
    /// Wraps `inner`; errors on a bad cluster size.
    pub fn new(inner: P, cfg: ClusteringConfig) -> Result<Self, ConfigError> {
        let n = inner.frames_count();
        let size = usize::try_from(cfg.cluster_size)
            .unwrap_or(usize::MAX)
            .min(n);
        Ok(Self {
            dirty: ClusterSet::new(n, cfg.cluster_size)?,
            inner,
            cfg,
            pid: vec![0; n],
            batch: Vec::with_capacity(size),
            sort: Vec::with_capacity(size),
        })
    }

    /// The wrapped policy.
    pub fn inner(&self) -> &P {
        &self.inner
    }

    /// The options.
    pub fn config(&self) -> ClusteringConfig {
        self.cfg
    }

    /// The resident dirty pages' clusters, lowest CFDC priority first.
    pub fn dirty_clusters(&self) -> Vec<ClusterInfo> {
        self.dirty.clusters_by_priority()
    }

    /// `Batch` of the evictable dirty pages of `e`'s cluster, by page number.
    fn batch_of(&mut self, e: FrameId, evictable: &dyn Fn(FrameId) -> bool) -> Victim<'_> {
        self.sort.clear();
        self.sort.extend(
            self.dirty
                .cluster_members(e)
                .filter(|&(f, _)| evictable(f))
                .map(|(f, p)| (p.0, f)),
        );
        if self.sort.len() <= 1 {
            return Victim::Evict(e);
        }
        self.sort.sort_unstable();
        self.batch.clear();
        self.batch.extend(self.sort.iter().map(|&(_, f)| f));
        Victim::Batch {
            evict: e,
            write_back: &self.batch,
        }
    }
}

impl<P: Policy> Policy for Clustered<P> {
    fn name(&self) -> &'static str {
        match self.cfg.mode {
            ClusterMode::Batch => "clustered-batch",
            ClusterMode::Drain => "clustered-drain",
        }
    }

    fn frames_count(&self) -> usize {
        self.inner.frames_count()
    }

    fn on_insert(&mut self, frame: FrameId, pid: PageId, access: Access) {
        self.pid[frame.index()] = pid.0;
        if access.is_write() {
            self.dirty.push(frame, pid);
        }
        self.inner.on_insert(frame, pid, access);
    }

    fn on_hit(&mut self, frame: FrameId, access: Access) {
        if access.is_write() && !self.dirty.contains(frame) {
            self.dirty.push(frame, PageId(self.pid[frame.index()]));
        }
        self.inner.on_hit(frame, access);
    }

    fn on_clean(&mut self, frame: FrameId) {
        if self.dirty.contains(frame) {
            self.dirty.remove(frame);
        }
        self.inner.on_clean(frame);
    }

    fn on_remove(&mut self, frame: FrameId) {
        if self.dirty.contains(frame) {
            self.dirty.remove(frame);
        }
        self.inner.on_remove(frame);
    }

    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let v = match self.inner.choose_victim(evictable)? {
            Victim::Evict(f) => f,
            Victim::Batch { evict, write_back } => {
                // The inner policy clusters by itself: pass its batch through.
                self.batch.clear();
                self.batch.extend_from_slice(write_back);
                return Some(Victim::Batch {
                    evict,
                    write_back: &self.batch,
                });
            }
        };
        if !self.dirty.contains(v) {
            return Some(Victim::Evict(v));
        }
        Some(match (self.cfg.mode, self.cfg.choice) {
            (ClusterMode::Batch, ClusterChoice::Victim) => self.batch_of(v, evictable),
            (ClusterMode::Batch, ClusterChoice::Metric) => {
                let e = self.dirty.first_in_order(evictable, false).unwrap_or(v);
                self.batch_of(e, evictable)
            }
            (ClusterMode::Drain, ClusterChoice::Victim) => {
                match self.dirty.first_in_order(evictable, true) {
                    Some(m) => Victim::Evict(m),
                    None => {
                        self.dirty.drain_cluster_of(v);
                        Victim::Evict(v)
                    }
                }
            }
            (ClusterMode::Drain, ClusterChoice::Metric) => {
                let e = self.dirty.first_in_order(evictable, false).unwrap_or(v);
                self.dirty.drain_cluster_of(e);
                Victim::Evict(e)
            }
        })
    }

    fn bytes_per_frame(&self) -> usize {
        self.inner.bytes_per_frame() + 8 + ClusterSet::BYTES_PER_FRAME
    }

    fn prepare_miss(&mut self, pid: PageId, access: Access) {
        self.inner.prepare_miss(pid, access)
    }

    fn wants_io_observations(&self) -> bool {
        self.inner.wants_io_observations()
    }

    fn observe_io(&mut self, kind: IoKind, latency_us: f64) {
        self.inner.observe_io(kind, latency_us)
    }

    fn update_costs(&mut self, costs: &DeviceFacts) {
        self.inner.update_costs(costs)
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.dirty.check()?;
        self.inner.check_invariants()
    }

    fn report(&self) -> PolicyReport {
        let mut r = self.inner.report();
        r.push("cluster_size", self.cfg.cluster_size as f64);
        r.push("dirty_clusters", self.dirty.clusters() as f64);
        r.push("dirty_pages", self.dirty.len() as f64);
        r
    }
}
