//! CASA, Cost-Aware Self-Adaptive replacement (Ou, Härder, "Clean first or dirty first? A
//! cost-aware self-adaptive buffer replacement policy", IDEAS 2010). The paper's text is
//! not in `../shared/papers/`; this is the reading of `design.md` §4.
//!
//! The buffer of `B` frames is split into a clean list `C` and a dirty list `D`, each in
//! LRU order, and a *target size* `τ` of `C`, starting at `B/2`, adapts to the workload
//! weighted by the device's read and write costs:
//! - a **read hit in `C`** (a page that would have cost a read had `C` been smaller):
//!   `τ ← min(τ + C_r·|D|/|C|, B)`;
//! - a **write hit in `D`** (a page that would have cost a write-back and a read had `D` been
//!   smaller): `τ ← max(τ − C_w·|C|/|D|, 0)`;
//! - the **victim** is `C`'s LRU page if `C` is non-empty and `|C| ≥ τ`, else `D`'s LRU page
//!   (or `C`'s if `D` is empty).
//!
//! # Readings of points the text leaves open
//! - `C_r` and `C_w` are normalized so that `C_r + C_w = 1`: `C_r = r/(r+w)`,
//!   `C_w = w/(r+w)` for device read cost `r` and write cost `w` (any unit). Only their
//!   ratio matters for the decisions, and the normalization bounds each step by the ratio
//!   of the list sizes.
//! - Other hits (a read hit in `D`, a write hit in `C`, which moves the page to `D`) move
//!   the page to the MRU end of its (new) list and leave `τ` alone. `|C|` and `|D|` in the
//!   formulas are the sizes at the hit, before the page moves.
//! - A miss does not change `τ`.
//! - A dirty page the pool writes back without evicting it (a flush, a cluster write-back)
//!   moves to `C` at its place in recency order.
//! - Pinned pages are skipped: the LRU-most evictable page of the chosen list, else of the
//!   other list.
//! - Cost updates ([`Policy::update_costs`], e.g. per epoch of an asymmetry model): with
//!   static costs, `C_r` and `C_w` are recomputed from the new `read_us` and `write_us`
//!   (`τ` stays where it is; costs given as options hold until the first update); with
//!   online costs the update is ignored, the measured latencies already follow the device.
//! - Online costs ([`CasaConfig::learn_costs`]): `r` and `w` are the moving averages
//!   (exponential, weight `1/learn_window` after a plain mean over the first
//!   `learn_window` samples) of the device latencies the pool measures per page read and
//!   per page written; until both have a sample, or while either is 0 (devices without a
//!   clock), the configured costs stay in force.
//!
//! # Structure
//! Two intrusive lists, O(1) per operation. A page cleaned by the pool belongs in the
//! middle of `C`; it is parked in a heap keyed by its last-reference stamp
//! ([`FrameHeap`]) and `C`'s LRU page is the older of the list's tail and the heap's
//! minimum. [`super::reference::NaiveCasa`] is the scanning version.

use super::clustering::ClusteringSpec;
use super::heap::FrameHeap;
use super::list::{Links, List};
use super::reference::NaiveCasa;
use super::registry::{PolicyContext, PolicyFactory};
use super::{Access, IoKind, Policy, PolicyReport, Victim};
use flashbuf_core::config::{OptKind, OptionSpec, Options};
use flashbuf_core::{ConfigError, DeviceFacts, FrameId, PageId};

/// Options of [`Casa`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CasaConfig {
    /// Device cost of a page read (any unit, > 0).
    pub read_cost: f64,
    /// Device cost of a page write (same unit, > 0).
    pub write_cost: f64,
    /// Learn the costs online from the latencies the pool measures.
    pub learn_costs: bool,
    /// Samples in the moving averages of online costs.
    pub learn_window: u32,
}

impl Default for CasaConfig {
    fn default() -> Self {
        Self {
            read_cost: 1.0,
            write_cost: 1.0,
            learn_costs: false,
            learn_window: 32_768,
        }
    }
}

/// Refuses costs that are not finite and positive.
pub(crate) fn check_costs(read_cost: f64, write_cost: f64) -> Result<(), ConfigError> {
    let ok = |c: f64| c.is_finite() && c > 0.0;
    if !ok(read_cost) || !ok(write_cost) {
        return Err(ConfigError::invalid(
            "casa",
            format!("costs must be positive: read {read_cost}, write {write_cost}"),
        ));
    }
    Ok(())
}

/// `(C_r, C_w)` normalized to sum to 1.
#[inline]
pub(crate) fn normalized_costs(read_cost: f64, write_cost: f64) -> (f64, f64) {
    let s = read_cost + write_cost;
    (read_cost / s, write_cost / s)
}

/// A moving average: a plain mean over the first `window` samples, then exponential with
/// weight `1/window`.
#[derive(Debug, Clone, Copy, Default)]
struct MovingAverage {
    mean: f64,
    samples: u64,
}

impl MovingAverage {
    fn add(&mut self, x: f64, window: u32) {
        self.samples += 1;
        let n = self.samples.min(u64::from(window.max(1)));
        self.mean += (x - self.mean) / n as f64;
    }
}

const CLEAN: u8 = 0;
const DIRTY: u8 = 1;

/// Cost-aware self-adaptive replacement. See the module documentation.
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::{Access, Casa, Policy, Victim};
/// // Writes cost 3× reads: C_r = 0.25, C_w = 0.75. τ starts at 2.
/// let mut p = Casa::new(4, 1.0, 3.0).unwrap();
/// p.on_insert(FrameId(0), PageId(1), Access::Read);
/// p.on_insert(FrameId(1), PageId(2), Access::Write);
/// p.on_insert(FrameId(2), PageId(3), Access::Write);
/// p.on_insert(FrameId(3), PageId(4), Access::Read);
/// p.on_hit(FrameId(1), Access::Write); // τ -= 0.75 · |C|/|D| = 0.75 → 1.25
/// assert!((p.target_clean() - 1.25).abs() < 1e-12);
/// // |C| = 2 ≥ τ: the clean list's LRU page goes.
/// assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
/// ```
#[derive(Debug, Clone)]
pub struct Casa {
    links: Links,
    clean: List,
    dirty: List,
    clean_late: FrameHeap,
    stamp: Vec<u64>,
    clock: u64,
    tau: f64,
    cr: f64,
    cw: f64,
    cfg: CasaConfig,
    read_avg: MovingAverage,
    write_avg: MovingAverage,
}

impl Casa {
    /// CASA with fixed device costs `read_cost` and `write_cost` (any unit, > 0).
    pub fn new(frames_count: usize, read_cost: f64, write_cost: f64) -> Result<Self, ConfigError> {
        Self::with_config(
            frames_count,
            CasaConfig {
                read_cost,
                write_cost,
                ..CasaConfig::default()
            },
        )
    }

    /// CASA with explicit options; errors on non-positive or non-finite costs.
    pub fn with_config(frames_count: usize, cfg: CasaConfig) -> Result<Self, ConfigError> {
        check_costs(cfg.read_cost, cfg.write_cost)?;
        let (cr, cw) = normalized_costs(cfg.read_cost, cfg.write_cost);
        Ok(Self {
            links: Links::new(frames_count),
            clean: List::new(CLEAN),
            dirty: List::new(DIRTY),
            clean_late: FrameHeap::new(frames_count),
            stamp: vec![0; frames_count],
            clock: 0,
            tau: frames_count as f64 / 2.0,
            cr,
            cw,
            cfg,
            read_avg: MovingAverage::default(),
            write_avg: MovingAverage::default(),
        })
    }

    /// The current target size `τ` of the clean list.
    pub fn target_clean(&self) -> f64 {
        self.tau
    }

    /// The normalized costs `(C_r, C_w)` in force.
    pub fn costs(&self) -> (f64, f64) {
        (self.cr, self.cw)
    }

    #[inline]
    fn clean_len(&self) -> usize {
        self.clean.len() + self.clean_late.len()
    }

    #[inline]
    fn in_clean(&self, f: FrameId) -> bool {
        self.clean.contains(&self.links, f) || self.clean_late.contains(f)
    }

    #[inline]
    fn remove_clean(&mut self, f: FrameId) {
        if self.clean.contains(&self.links, f) {
            self.clean.remove(&mut self.links, f);
        } else {
            self.clean_late.remove(f);
        }
    }

    #[inline]
    fn touch(&mut self, f: FrameId) {
        self.stamp[f.index()] = self.clock;
        self.clock += 1;
    }

    /// The LRU-most evictable clean page.
    fn clean_victim(&self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let older = |a: Option<FrameId>, b: Option<FrameId>| match (a, b) {
            (Some(a), Some(b)) => Some(if self.stamp[a.index()] < self.stamp[b.index()] {
                a
            } else {
                b
            }),
            (a, b) => a.or(b),
        };
        let fast = older(self.clean.tail(), self.clean_late.peek().map(|(f, _)| f))?;
        if evictable(fast) {
            return Some(fast);
        }
        let a = self
            .clean
            .iter_from_tail(&self.links)
            .find(|&f| evictable(f));
        let b = self
            .clean_late
            .iter()
            .filter(|&(f, _)| evictable(f))
            .min_by_key(|&(_, k)| k)
            .map(|(f, _)| f);
        older(a, b)
    }

    fn dirty_victim(&self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        self.dirty
            .iter_from_tail(&self.links)
            .find(|&f| evictable(f))
    }

    fn relearn(&mut self) {
        let (r, w) = (self.read_avg.mean, self.write_avg.mean);
        if self.read_avg.samples > 0 && self.write_avg.samples > 0 && r > 0.0 && w > 0.0 {
            (self.cr, self.cw) = normalized_costs(r, w);
        }
    }
}

impl Policy for Casa {
    fn name(&self) -> &'static str {
        "casa"
    }

    fn frames_count(&self) -> usize {
        self.links.owner_len()
    }

    fn on_insert(&mut self, frame: FrameId, _pid: PageId, access: Access) {
        self.touch(frame);
        if access.is_write() {
            self.dirty.push_head(&mut self.links, frame);
        } else {
            self.clean.push_head(&mut self.links, frame);
        }
    }

    fn on_hit(&mut self, frame: FrameId, access: Access) {
        self.touch(frame);
        let (c, d) = (self.clean_len() as f64, self.dirty.len() as f64);
        if self.in_clean(frame) {
            self.remove_clean(frame);
            if access.is_write() {
                self.dirty.push_head(&mut self.links, frame);
            } else {
                self.tau = (self.tau + self.cr * d / c).min(self.frames_count() as f64);
                self.clean.push_head(&mut self.links, frame);
            }
        } else {
            if access.is_write() {
                self.tau = (self.tau - self.cw * c / d).max(0.0);
            }
            self.dirty.move_to_head(&mut self.links, frame);
        }
    }

    fn on_clean(&mut self, frame: FrameId) {
        if self.dirty.contains(&self.links, frame) {
            self.dirty.remove(&mut self.links, frame);
            self.clean_late.push(frame, self.stamp[frame.index()]);
        }
    }

    fn on_remove(&mut self, frame: FrameId) {
        if self.dirty.contains(&self.links, frame) {
            self.dirty.remove(&mut self.links, frame);
        } else {
            self.remove_clean(frame);
        }
    }

    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let c = self.clean_len();
        let v = if c > 0 && c as f64 >= self.tau {
            self.clean_victim(evictable)
                .or_else(|| self.dirty_victim(evictable))
        } else {
            self.dirty_victim(evictable)
                .or_else(|| self.clean_victim(evictable))
        };
        v.map(Victim::Evict)
    }

    fn bytes_per_frame(&self) -> usize {
        Links::BYTES_PER_FRAME + FrameHeap::BYTES_PER_FRAME + 8
    }

    fn wants_io_observations(&self) -> bool {
        self.cfg.learn_costs
    }

    fn observe_io(&mut self, kind: IoKind, latency_us: f64) {
        if !self.cfg.learn_costs || !latency_us.is_finite() || latency_us < 0.0 {
            return;
        }
        match kind {
            IoKind::Read => self.read_avg.add(latency_us, self.cfg.learn_window),
            IoKind::Write => self.write_avg.add(latency_us, self.cfg.learn_window),
        }
        self.relearn();
    }

    fn update_costs(&mut self, costs: &DeviceFacts) {
        // Learned costs follow the device through the measured latencies already.
        if !self.cfg.learn_costs && check_costs(costs.read_us, costs.write_us).is_ok() {
            (self.cr, self.cw) = normalized_costs(costs.read_us, costs.write_us);
        }
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.clean.check(&self.links)?;
        self.dirty.check(&self.links)?;
        self.clean_late.check()?;
        if !(0.0..=self.frames_count() as f64).contains(&self.tau) {
            return Err(format!("casa: τ = {} outside 0..=B", self.tau));
        }
        for l in [&self.clean, &self.dirty] {
            let mut last = None;
            for f in l.iter_from_tail(&self.links) {
                let s = self.stamp[f.index()];
                if last.is_some_and(|l| l >= s) || s >= self.clock {
                    return Err(format!("casa: list out of recency order at {f}"));
                }
                last = Some(s);
            }
        }
        for (f, k) in self.clean_late.iter() {
            if self.links.owner(f).is_some() || self.stamp[f.index()] != k {
                return Err(format!(
                    "casa: parked {f} is also listed or has a stale key"
                ));
            }
        }
        Ok(())
    }

    fn report(&self) -> PolicyReport {
        PolicyReport::figures(vec![
            ("tau", self.tau),
            ("clean", self.clean_len() as f64),
            ("dirty", self.dirty.len() as f64),
            ("cost_read", self.cr),
            ("cost_write", self.cw),
        ])
    }
}

// ---- registration (`super::registry::POLICIES`; the clustering options are appended) ----

/// Costs accepted by the options (any unit; the device's are microseconds).
const COST: OptKind = OptKind::Float {
    min: 0.0,
    max: 1e12,
};

/// `casa`'s own options.
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "read_cost",
        kind: COST,
        default: None,
        help: "cost of a page read, > 0 (default: the device's read_us)",
    },
    OptionSpec {
        key: "write_cost",
        kind: COST,
        default: None,
        help: "cost of a page write, > 0 (default: the device's write_us)",
    },
    OptionSpec {
        key: "learn",
        kind: OptKind::Bool,
        default: Some("false"),
        help: "learn the costs online from the measured latencies (moving averages)",
    },
];

/// Parses `casa`'s options; costs given must be positive.
pub fn parse(o: &Options) -> Result<Box<dyn PolicyFactory>, ConfigError> {
    for key in ["read_cost", "write_cost"] {
        if o.f64(key).is_some_and(|c| c <= 0.0) {
            return Err(o.invalid(format!("{key} must be positive")));
        }
    }
    Ok(Box::new(CasaFactory {
        read_cost: o.f64("read_cost"),
        write_cost: o.f64("write_cost"),
        learn: o.bool("learn").unwrap_or(false),
        clustering: ClusteringSpec::parse(o)?,
    }))
}

/// CASA's typed options; costs not given come from the device when built.
#[derive(Debug)]
struct CasaFactory {
    read_cost: Option<f64>,
    write_cost: Option<f64>,
    learn: bool,
    clustering: ClusteringSpec,
}

impl CasaFactory {
    fn config(&self, ctx: &PolicyContext<'_>) -> CasaConfig {
        CasaConfig {
            read_cost: self.read_cost.unwrap_or(ctx.facts.read_us),
            write_cost: self.write_cost.unwrap_or(ctx.facts.write_us),
            learn_costs: self.learn,
            ..CasaConfig::default()
        }
    }
}

impl PolicyFactory for CasaFactory {
    fn build(&self, ctx: &PolicyContext<'_>) -> Result<Box<dyn Policy>, ConfigError> {
        let casa = Casa::with_config(ctx.frames, self.config(ctx))?;
        self.clustering.wrap(casa, ctx)
    }

    /// The naive version models static costs only.
    fn build_reference(
        &self,
        ctx: &PolicyContext<'_>,
    ) -> Option<Result<Box<dyn Policy>, ConfigError>> {
        (!self.learn).then(|| {
            NaiveCasa::new(ctx.frames, self.config(ctx))
                .and_then(|n| self.clustering.wrap_reference(n, ctx))
        })
    }
}
