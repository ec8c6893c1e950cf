//! Naive CFDC: vectors for the regions and clusters, every priority recomputed from
//! Formula 1 at every decision and the clusters sorted by it.

use crate::policy::cfdc::CfdcConfig;
use crate::policy::cflru::region_frames;
use crate::policy::clustering::check_cluster_size;
use crate::policy::{Access, Policy, Victim};
use flashbuf_core::{ConfigError, FrameId, PageId};

/// A cluster: its number, its pages in entering order, its timestamp, whether draining.
#[derive(Debug, Clone)]
pub(crate) struct NaiveCluster {
    pub(crate) number: u64,
    pub(crate) pages: Vec<FrameId>,
    pub(crate) timestamp: u64,
    pub(crate) draining: bool,
}

/// Formula 1 as an exact fraction `(numerator, denominator)`; 0 for a draining cluster.
pub(crate) fn priority(c: &NaiveCluster, pid: &[u64], globaltime: u64) -> (u128, u128) {
    if c.draining {
        return (0, 1);
    }
    let n = c.pages.len() as u128;
    let dividend = if c.pages.len() == 1 {
        1
    } else {
        let mut sum = 0u128;
        for i in 1..c.pages.len() {
            sum += u128::from(pid[c.pages[i].index()].abs_diff(pid[c.pages[i - 1].index()]));
        }
        sum
    };
    (dividend, n * n * u128::from(globaltime - c.timestamp))
}

/// Indices of `clusters` ordered by (priority, timestamp, number).
pub(crate) fn cluster_order(clusters: &[NaiveCluster], pid: &[u64], globaltime: u64) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..clusters.len()).collect();
    idx.sort_by(|&a, &b| {
        let (na, da) = priority(&clusters[a], pid, globaltime);
        let (nb, db) = priority(&clusters[b], pid, globaltime);
        (na * db).cmp(&(nb * da)).then_with(|| {
            (clusters[a].timestamp, clusters[a].number)
                .cmp(&(clusters[b].timestamp, clusters[b].number))
        })
    });
    idx
}

/// Removes `f` from whichever cluster holds it (dropping an emptied cluster); whether it
/// was there.
pub(crate) fn remove_from_clusters(clusters: &mut Vec<NaiveCluster>, f: FrameId) -> bool {
    for i in 0..clusters.len() {
        if let Some(j) = clusters[i].pages.iter().position(|&x| x == f) {
            clusters[i].pages.remove(j);
            if clusters[i].pages.is_empty() {
                clusters.remove(i);
            }
            return true;
        }
    }
    false
}

/// CFDC with plain vectors (index 0 = least recent / oldest).
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::reference::NaiveCfdc;
/// use flashbuf_pool::policy::{Access, CfdcConfig, Policy, Victim};
/// let cfg = CfdcConfig { window: 1.0, cluster_size: 64 };
/// let mut p = NaiveCfdc::new(2, cfg).unwrap();
/// p.on_insert(FrameId(0), PageId(1), Access::Write); // cluster 0, stamped 0
/// p.on_insert(FrameId(1), PageId(70), Access::Write); // cluster 1, stamped 1
/// // globaltime 2: P(0) = 1/2, P(1) = 1/1: cluster 0 goes first.
/// assert_eq!(p.priorities(), vec![(0, 1, 2), (1, 1, 1)]);
/// assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
/// ```
#[derive(Debug, Clone)]
pub struct NaiveCfdc {
    frames_count: usize,
    work_frames: usize,
    cluster_size: u64,
    pid: Vec<u64>,
    dirty: Vec<bool>,
    work: Vec<FrameId>,
    clean: Vec<FrameId>,
    clusters: Vec<NaiveCluster>,
    globaltime: u64,
}

impl NaiveCfdc {
    /// A naive CFDC with the same options as [`crate::policy::Cfdc::with_config`].
    pub fn new(frames_count: usize, cfg: CfdcConfig) -> Result<Self, ConfigError> {
        check_cluster_size(cfg.cluster_size)?;
        let priority = region_frames(frames_count, cfg.window, "cfdc")?;
        Ok(Self {
            frames_count,
            work_frames: frames_count - priority,
            cluster_size: cfg.cluster_size,
            pid: vec![0; frames_count],
            dirty: vec![false; frames_count],
            work: Vec::new(),
            clean: Vec::new(),
            clusters: Vec::new(),
            globaltime: 0,
        })
    }

    /// `(cluster number, numerator, denominator)` of every cluster, next victim first.
    pub fn priorities(&self) -> Vec<(u64, u128, u128)> {
        cluster_order(&self.clusters, &self.pid, self.globaltime)
            .into_iter()
            .map(|i| {
                let (n, d) = priority(&self.clusters[i], &self.pid, self.globaltime);
                (self.clusters[i].number, n, d)
            })
            .collect()
    }

    fn fill(&mut self) {
        while self.work.len() > self.work_frames {
            let t = self.work.remove(0);
            if self.dirty[t.index()] {
                let number = self.pid[t.index()] / self.cluster_size;
                match self.clusters.iter_mut().find(|c| c.number == number) {
                    Some(c) => c.pages.push(t),
                    None => self.clusters.push(NaiveCluster {
                        number,
                        pages: vec![t],
                        timestamp: self.globaltime,
                        draining: false,
                    }),
                }
                self.globaltime += 1;
            } else {
                self.clean.push(t);
            }
        }
    }

    fn remove_anywhere(&mut self, f: FrameId) {
        if let Some(i) = self.work.iter().position(|&x| x == f) {
            self.work.remove(i);
        } else if let Some(i) = self.clean.iter().position(|&x| x == f) {
            self.clean.remove(i);
        } else {
            remove_from_clusters(&mut self.clusters, f);
        }
    }
}

impl Policy for NaiveCfdc {
    fn name(&self) -> &'static str {
        "naive-cfdc"
    }
    fn frames_count(&self) -> usize {
        self.frames_count
    }
    fn on_insert(&mut self, frame: FrameId, pid: PageId, access: Access) {
        self.pid[frame.index()] = pid.0;
        self.dirty[frame.index()] = access.is_write();
        self.work.push(frame);
        self.fill();
    }
    fn on_hit(&mut self, frame: FrameId, access: Access) {
        if access.is_write() {
            self.dirty[frame.index()] = true;
        }
        self.remove_anywhere(frame);
        self.work.push(frame);
        self.fill();
    }
    fn on_clean(&mut self, frame: FrameId) {
        self.dirty[frame.index()] = false;
        if remove_from_clusters(&mut self.clusters, frame) {
            self.clean.push(frame);
        }
    }
    fn on_remove(&mut self, frame: FrameId) {
        self.remove_anywhere(frame);
        self.dirty[frame.index()] = false;
    }
    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        if let Some(&f) = self.clean.iter().find(|&&f| evictable(f)) {
            return Some(Victim::Evict(f));
        }
        for i in cluster_order(&self.clusters, &self.pid, self.globaltime) {
            if let Some(&f) = self.clusters[i].pages.iter().find(|&&f| evictable(f)) {
                self.clusters[i].draining = true;
                return Some(Victim::Evict(f));
            }
        }
        self.work
            .iter()
            .copied()
            .find(|&f| evictable(f))
            .map(Victim::Evict)
    }
    fn bytes_per_frame(&self) -> usize {
        17
    }
}
