//! CFDC, Clean-First Dirty-Clustered (Ou, Härder, Jin, DaMoN 2009, `cfdc.txt` §3), with the
//! readings of `design.md` §4.
//!
//! Two regions (§3.1, Fig. 2): the *working region* at the hot end, run by LRU, and the
//! *priority region*, `window` of the buffer (default 0.5). The priority region holds a
//! *clean queue* and a priority queue of *dirty clusters* (§3.2): a dirty page leaving the
//! working region joins its cluster (`page / cluster_size`, `MAX_CLUSTER_SIZE` = 64 by
//! default), a clean one the clean queue's head. On a fault the victim is the clean
//! queue's tail, or if the clean queue is empty the first page of the lowest-priority
//! cluster (Formula 1, §3.3), whose priority then drops to 0 so that it drains first. The
//! working region's LRU page then moves into the priority region and the new page enters
//! the working region. A hit in the priority region moves the page back to the working
//! region. The cluster machinery, Formula 1 and its exact O(log n) priority queue live in
//! [`super::clustering::ClusterSet`], whose documentation states the readings on ties,
//! globaltime/timestamp order (no cluster ever has age 0) and draining.
//!
//! # Readings of points the text leaves open
//! - Region sizes: the priority region's target is `round(window × frames)` and the
//!   working region holds at most the rest. Pages fill the working region first; when it
//!   is over its size (a new page, or a page promoted by a hit in the priority region),
//!   its LRU page moves to the priority region at once, so both regions keep their sizes
//!   between faults. `globaltime` ticks for every dirty page that moves, whatever the
//!   cause.
//! - The clean queue is FIFO in order of entering the priority region (victims from its
//!   tail).
//! - A dirty page of the priority region that the pool writes back without evicting it
//!   (a flush) leaves its cluster and enters the clean queue's head, as if it had just
//!   entered the region clean.
//! - Pinned pages are skipped: the first evictable page of the clean queue from its tail,
//!   else of the clusters in priority order, else (the whole priority region pinned or
//!   empty, e.g. window 0) the working region's LRU-most evictable page. With window 0 CFDC
//!   is LRU.
//!
//! # Cost, measured
//! No-bytes replay of the TPC-C trace at 3% buffer (829 frames, first 1 M references,
//! cachegrind, stop 30): the policy's functions ran 202 instructions per reference (LRU's:
//! 41.5), half of them in the kinetic tournament that then kept the clusters in order,
//! and 29 in `on_hit`. The clusters are now ordered only when a victim cluster is chosen
//! (`super::clustering`'s documentation: 18–30 % more references per second from the
//! binary page traces of OLTP t8, TPC-C w8 and pgbench s50).
//!
//! [`super::reference::NaiveCfdc`] is the version that recomputes every priority from the
//! formula at each decision; `tests/cfdc_differential.rs` checks they agree.

use super::cflru::{fraction_of, region_frames};
use super::clustering::{
    ClusterInfo, ClusterSet, ClusteringSpec, DEFAULT_CLUSTER_SIZE, MAX_CLUSTER_SIZE,
};
use super::list::{Links, List};
use super::reference::NaiveCfdc;
use super::registry::{PolicyContext, PolicyFactory};
use super::{Access, Policy, PolicyReport, Victim};
use flashbuf_core::config::{OptKind, OptionSpec, Options};
use flashbuf_core::{ConfigError, FrameId, PageId};

/// Options of [`Cfdc`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CfdcConfig {
    /// Priority window: the priority region's share of the buffer, in `0.0..=1.0`.
    pub window: f64,
    /// `MAX_CLUSTER_SIZE`: page numbers per cluster.
    pub cluster_size: u64,
}

impl Default for CfdcConfig {
    fn default() -> Self {
        Self {
            window: 0.5,
            cluster_size: DEFAULT_CLUSTER_SIZE,
        }
    }
}

const WORK: u8 = 0;
const CLEAN: u8 = 1;

/// Clean-First Dirty-Clustered replacement. See the module documentation.
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::{Access, Cfdc, Policy, Victim};
/// let mut p = Cfdc::new(4); // working region 2 frames, priority region 2
/// p.on_insert(FrameId(0), PageId(1), Access::Write);
/// p.on_insert(FrameId(1), PageId(2), Access::Read);
/// p.on_insert(FrameId(2), PageId(3), Access::Read); // 0 (dirty) moves to its cluster
/// p.on_insert(FrameId(3), PageId(4), Access::Read); // 1 (clean) to the clean queue
/// // The clean queue goes first, although frame 0 is older.
/// assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
/// ```
#[derive(Debug, Clone)]
pub struct Cfdc {
    links: Links,
    work: List,
    clean: List,
    clusters: ClusterSet,
    pid: Vec<u64>,
    dirty: Vec<bool>,
    work_frames: usize,
    window: f64,
}

impl Cfdc {
    /// CFDC for `frames_count` frames with the paper's settings (window 0.5, clusters of
    /// 64 pages).
    pub fn new(frames_count: usize) -> Self {
        let cfg = CfdcConfig::default();
        let priority = fraction_of(frames_count, cfg.window);
        match ClusterSet::new(frames_count, cfg.cluster_size) {
            Ok(clusters) => Self::build(frames_count, cfg.window, priority, clusters),
            Err(_) => unreachable!("the default cluster size is valid"),
        }
    }

    /// CFDC with explicit options; errors if the window is not a fraction or the cluster
    /// size is out of range.
    pub fn with_config(frames_count: usize, cfg: CfdcConfig) -> Result<Self, ConfigError> {
        let priority = region_frames(frames_count, cfg.window, "cfdc")?;
        let clusters = ClusterSet::new(frames_count, cfg.cluster_size)?;
        Ok(Self::build(frames_count, cfg.window, priority, clusters))
    }

    fn build(frames_count: usize, window: f64, priority: usize, clusters: ClusterSet) -> Self {
        Self {
            links: Links::new(frames_count),
            work: List::new(WORK),
            clean: List::new(CLEAN),
            clusters,
            pid: vec![0; frames_count],
            dirty: vec![false; frames_count],
            work_frames: frames_count - priority,
            window,
        }
    }

    /// Frames of the working region.
    pub fn working_region_frames(&self) -> usize {
        self.work_frames
    }

    /// Current globaltime.
    pub fn globaltime(&self) -> u64 {
        self.clusters.globaltime()
    }

    /// The cluster set of the priority region (for reports and tests).
    pub fn cluster_set(&self) -> &ClusterSet {
        &self.clusters
    }

    /// The dirty clusters of the priority region, lowest priority (next victim) first.
    pub fn dirty_clusters(&self) -> Vec<ClusterInfo> {
        self.clusters.clusters_by_priority()
    }

    /// Moves working-region LRU pages to the priority region while the working region is
    /// over its size.
    #[inline]
    fn fill(&mut self) {
        while self.work.len() > self.work_frames {
            let Some(t) = self.work.tail() else {
                break;
            };
            self.work.remove(&mut self.links, t);
            if self.dirty[t.index()] {
                self.clusters.push(t, PageId(self.pid[t.index()]));
            } else {
                self.clean.push_head(&mut self.links, t);
            }
        }
    }

    /// A hit in the priority region: the page goes back to the working region. Out of
    /// line, so that the common hit (in the working region) saves no registers for it.
    #[inline(never)]
    fn promote(&mut self, f: FrameId) {
        self.unlink(f);
        self.work.push_head(&mut self.links, f);
        self.fill();
    }

    #[inline]
    fn unlink(&mut self, f: FrameId) {
        match self.links.owner(f) {
            Some(WORK) => self.work.remove(&mut self.links, f),
            Some(CLEAN) => self.clean.remove(&mut self.links, f),
            _ => self.clusters.remove(f),
        }
    }
}

impl Policy for Cfdc {
    fn name(&self) -> &'static str {
        "cfdc"
    }

    fn frames_count(&self) -> usize {
        self.links.owner_len()
    }

    fn on_insert(&mut self, frame: FrameId, pid: PageId, access: Access) {
        self.pid[frame.index()] = pid.0;
        self.dirty[frame.index()] = access.is_write();
        self.work.push_head(&mut self.links, frame);
        self.fill();
    }

    fn on_hit(&mut self, frame: FrameId, access: Access) {
        if access.is_write() {
            self.dirty[frame.index()] = true;
        }
        if self.work.contains(&self.links, frame) {
            self.work.move_to_head(&mut self.links, frame);
        } else {
            self.promote(frame);
        }
    }

    fn on_clean(&mut self, frame: FrameId) {
        self.dirty[frame.index()] = false;
        if self.clusters.contains(frame) {
            self.clusters.remove(frame);
            self.clean.push_head(&mut self.links, frame);
        }
    }

    fn on_remove(&mut self, frame: FrameId) {
        self.unlink(frame);
        self.dirty[frame.index()] = false;
    }

    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        if let Some(f) = self
            .clean
            .iter_from_tail(&self.links)
            .find(|&f| evictable(f))
        {
            return Some(Victim::Evict(f));
        }
        if let Some(f) = self.clusters.first_in_order(evictable, false) {
            self.clusters.drain_cluster_of(f);
            return Some(Victim::Evict(f));
        }
        self.work
            .iter_from_tail(&self.links)
            .find(|&f| evictable(f))
            .map(Victim::Evict)
    }

    fn bytes_per_frame(&self) -> usize {
        Links::BYTES_PER_FRAME + ClusterSet::BYTES_PER_FRAME + 8 + 1
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.work.check(&self.links)?;
        self.clean.check(&self.links)?;
        self.clusters.check()?;
        if self.work.len() > self.work_frames {
            return Err(format!(
                "cfdc: working region holds {} pages, its size is {}",
                self.work.len(),
                self.work_frames
            ));
        }
        for f in self.clean.iter_from_tail(&self.links) {
            if self.dirty[f.index()] || self.clusters.contains(f) {
                return Err(format!(
                    "cfdc: {f} in the clean queue is dirty or clustered"
                ));
            }
        }
        for i in 0..self.dirty.len() {
            let f = FrameId(i as u32);
            if self.clusters.contains(f) && (!self.dirty[i] || self.links.owner(f).is_some()) {
                return Err(format!("cfdc: clustered {f} is clean or also in a list"));
            }
        }
        Ok(())
    }

    fn report(&self) -> PolicyReport {
        PolicyReport::figures(vec![
            ("window", self.window),
            ("working_region", self.work.len() as f64),
            ("clean_queue", self.clean.len() as f64),
            ("dirty_clusters", self.clusters.clusters() as f64),
            ("clustered_pages", self.clusters.len() as f64),
            ("globaltime", self.clusters.globaltime() as f64),
            ("priority_scans", self.clusters.scans() as f64),
        ])
    }
}

// ---- registration (`super::registry::POLICIES`; the clustering options are appended) ----

/// `cfdc`'s own options (its clusters are its own; the appended clustering options wrap
/// it like any other policy).
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "window",
        kind: OptKind::Float { min: 0.0, max: 1.0 },
        default: Some("0.5"),
        help: "priority window: the priority region's share of the buffer",
    },
    OptionSpec {
        key: "cluster_size",
        kind: OptKind::UInt {
            min: 1,
            max: MAX_CLUSTER_SIZE,
        },
        default: Some("64"),
        help: "MAX_CLUSTER_SIZE: page numbers per dirty cluster",
    },
];

/// Parses `cfdc`'s options.
pub fn parse(o: &Options) -> Result<Box<dyn PolicyFactory>, ConfigError> {
    let d = CfdcConfig::default();
    Ok(Box::new(CfdcFactory {
        cfg: CfdcConfig {
            window: o.f64("window").unwrap_or(d.window),
            cluster_size: o.u64("cluster_size").unwrap_or(d.cluster_size),
        },
        clustering: ClusteringSpec::parse(o)?,
    }))
}

#[derive(Debug)]
struct CfdcFactory {
    cfg: CfdcConfig,
    clustering: ClusteringSpec,
}

impl PolicyFactory for CfdcFactory {
    fn build(&self, ctx: &PolicyContext<'_>) -> Result<Box<dyn Policy>, ConfigError> {
        self.clustering
            .wrap(Cfdc::with_config(ctx.frames, self.cfg)?, ctx)
    }

    fn build_reference(
        &self,
        ctx: &PolicyContext<'_>,
    ) -> Option<Result<Box<dyn Policy>, ConfigError>> {
        Some(
            NaiveCfdc::new(ctx.frames, self.cfg)
                .and_then(|n| self.clustering.wrap_reference(n, ctx)),
        )
    }
}
