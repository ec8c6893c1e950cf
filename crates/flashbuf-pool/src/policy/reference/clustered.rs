//! Naive write-clustering decorator: clusters as vectors, priorities recomputed from
//! Formula 1 and sorted at each decision.

use super::cfdc::{cluster_order, remove_from_clusters, NaiveCluster};
use crate::policy::clustering::{check_cluster_size, ClusterChoice, ClusterMode, ClusteringConfig};
use crate::policy::{Access, IoKind, Policy, Victim};
use flashbuf_core::{ConfigError, DeviceFacts, FrameId, PageId};

/// [`crate::policy::Clustered`] with plain vectors.
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::reference::{NaiveClustered, NaiveLru};
/// use flashbuf_pool::policy::{Access, ClusteringConfig, Policy, Victim};
/// let mut p = NaiveClustered::new(NaiveLru::new(2), ClusteringConfig::batch(64)).unwrap();
/// p.on_insert(FrameId(0), PageId(9), Access::Write);
/// p.on_insert(FrameId(1), PageId(3), Access::Write);
/// assert_eq!(
///     p.choose_victim(&|_| true),
///     Some(Victim::Batch { evict: FrameId(0), write_back: &[FrameId(1), FrameId(0)] })
/// );
/// ```
#[derive(Debug, Clone)]
pub struct NaiveClustered<P> {
    inner: P,
    cfg: ClusteringConfig,
    pid: Vec<u64>,
    clusters: Vec<NaiveCluster>,
    globaltime: u64,
    batch: Vec<FrameId>,
}

impl<P: Policy> NaiveClustered<P> {
    /// Wraps `inner` with the same options as [`crate::policy::Clustered::new`].
    pub fn new(inner: P, cfg: ClusteringConfig) -> Result<Self, ConfigError> {
        check_cluster_size(cfg.cluster_size)?;
        Ok(Self {
            pid: vec![0; inner.frames_count()],
            inner,
            cfg,
            clusters: Vec::new(),
            globaltime: 0,
            batch: Vec::new(),
        })
    }

    fn cluster_index(&self, f: FrameId) -> Option<usize> {
        self.clusters.iter().position(|c| c.pages.contains(&f))
    }

    fn make_dirty(&mut self, f: FrameId) {
        if self.cluster_index(f).is_some() {
            return;
        }
        let number = self.pid[f.index()] / self.cfg.cluster_size;
        match self.clusters.iter_mut().find(|c| c.number == number) {
            Some(c) => c.pages.push(f),
            None => self.clusters.push(NaiveCluster {
                number,
                pages: vec![f],
                timestamp: self.globaltime,
                draining: false,
            }),
        }
        self.globaltime += 1;
    }

    /// The first evictable dirty page in cluster order (optionally draining clusters only).
    fn first_in_order(
        &self,
        evictable: &dyn Fn(FrameId) -> bool,
        only_draining: bool,
    ) -> Option<FrameId> {
        for i in cluster_order(&self.clusters, &self.pid, self.globaltime) {
            let c = &self.clusters[i];
            if only_draining && !c.draining {
                continue;
            }
            if let Some(&f) = c.pages.iter().find(|&&f| evictable(f)) {
                return Some(f);
            }
        }
        None
    }

    fn set_draining(&mut self, f: FrameId) {
        if let Some(i) = self.cluster_index(f) {
            self.clusters[i].draining = true;
        }
    }

    fn batch_of(&mut self, e: FrameId, evictable: &dyn Fn(FrameId) -> bool) -> Victim<'_> {
        let Some(i) = self.cluster_index(e) else {
            return Victim::Evict(e);
        };
        let mut members: Vec<FrameId> = self.clusters[i]
            .pages
            .iter()
            .copied()
            .filter(|&f| evictable(f))
            .collect();
        if members.len() <= 1 {
            return Victim::Evict(e);
        }
        members.sort_by_key(|f| self.pid[f.index()]);
        self.batch = members;
        Victim::Batch {
            evict: e,
            write_back: &self.batch,
        }
    }
}

impl<P: Policy> Policy for NaiveClustered<P> {
    fn name(&self) -> &'static str {
        "naive-clustered"
    }
    fn frames_count(&self) -> usize {
        self.inner.frames_count()
    }
    fn on_insert(&mut self, frame: FrameId, pid: PageId, access: Access) {
        self.pid[frame.index()] = pid.0;
        if access.is_write() {
            self.make_dirty(frame);
        }
        self.inner.on_insert(frame, pid, access);
    }
    fn on_hit(&mut self, frame: FrameId, access: Access) {
        if access.is_write() {
            self.make_dirty(frame);
        }
        self.inner.on_hit(frame, access);
    }
    fn on_clean(&mut self, frame: FrameId) {
        remove_from_clusters(&mut self.clusters, frame);
        self.inner.on_clean(frame);
    }
    fn on_remove(&mut self, frame: FrameId) {
        remove_from_clusters(&mut self.clusters, frame);
        self.inner.on_remove(frame);
    }
    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let v = match self.inner.choose_victim(evictable)? {
            Victim::Evict(f) => f,
            Victim::Batch { evict, write_back } => {
                self.batch = write_back.to_vec();
                return Some(Victim::Batch {
                    evict,
                    write_back: &self.batch,
                });
            }
        };
        if self.cluster_index(v).is_none() {
            return Some(Victim::Evict(v));
        }
        Some(match (self.cfg.mode, self.cfg.choice) {
            (ClusterMode::Batch, ClusterChoice::Victim) => self.batch_of(v, evictable),
            (ClusterMode::Batch, ClusterChoice::Metric) => {
                let e = self.first_in_order(evictable, false).unwrap_or(v);
                self.batch_of(e, evictable)
            }
            (ClusterMode::Drain, ClusterChoice::Victim) => {
                match self.first_in_order(evictable, true) {
                    Some(m) => Victim::Evict(m),
                    None => {
                        self.set_draining(v);
                        Victim::Evict(v)
                    }
                }
            }
            (ClusterMode::Drain, ClusterChoice::Metric) => {
                let e = self.first_in_order(evictable, false).unwrap_or(v);
                self.set_draining(e);
                Victim::Evict(e)
            }
        })
    }
    fn bytes_per_frame(&self) -> usize {
        self.inner.bytes_per_frame() + 16
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
    fn prepare_miss(&mut self, pid: PageId, access: Access) {
        self.inner.prepare_miss(pid, access)
    }
}
