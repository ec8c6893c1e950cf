//! Bounds on the offline optimum with distinct read and write-back costs (design.md §5).
//!
//! Cost of a run: `C_r · misses + C_w · write-backs` (plus `C_w · pages dirty at the end`
//! with `final_flush`). Minimising it offline is NP-complete (Beckmann, Gibbons, McGuffey,
//! "Writeback-Aware Caching", APOCS 2020), so we bracket it.
//!
//! **Lower bound** `C_r · MIN + C_w · W`, valid for every policy, online or offline:
//! - every miss is a read and no demand-paging policy misses less than Belady's MIN;
//! - `W` bounds the write-backs: follow any policy's set of dirty resident pages. It holds
//!   at most `M` pages; a write to a page outside it makes the page enter; a page leaves
//!   only by being written back (evicted dirty, or cleaned). That is a cache of capacity
//!   `M` over the subsequence of writes, with voluntary evictions allowed, so its entries
//!   are at least MIN's misses on the write subsequence, `MIN_w`, and its write-backs are
//!   entries minus the pages still in it at the end (at most `min(M, distinct written
//!   pages)`): `W = MIN_w − min(M, distinct written pages)` without a final flush, and
//!   `W = MIN_w` with one (every entry is eventually written).
//!
//! **Upper bound**: the cheapest of several write-aware offline heuristics, each a real
//! policy (so its cost is achievable and the optimum is no higher): Belady's MIN,
//! MIN preferring clean victims not reused within `k ∈ {M/4, M, 4M}` references, and the
//! cost-aware MIN variant (see [`super::belady`]). [`Bounds::best_rule`] names the winner;
//! replaying it through the pool with [`super::OfflinePolicy`] reproduces the bound.

use super::belady::{simulate, DenseTrace, OfflineResult, OfflineRule};

/// Costs of reads and write-backs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// Cost of one page read (a miss).
    pub read: f64,
    /// Cost of one page write-back.
    pub write: f64,
    /// Whether pages dirty at the end are written (and counted).
    pub final_flush: bool,
}

impl CostModel {
    /// Read cost 1, write cost `r`, no final flush.
    pub fn with_r(r: f64) -> Self {
        Self {
            read: 1.0,
            write: r,
            final_flush: false,
        }
    }

    /// Cost of `misses` reads and `writes` write-backs.
    pub fn cost(&self, misses: u64, writes: u64) -> f64 {
        self.read * misses as f64 + self.write * writes as f64
    }

    /// Cost of an offline run (final dirty pages included with `final_flush`).
    pub fn cost_of(&self, r: &OfflineResult) -> f64 {
        let w = r.write_backs + if self.final_flush { r.final_dirty } else { 0 };
        self.cost(r.misses, w)
    }
}

/// The two bounds and how they were reached.
#[derive(Debug, Clone, PartialEq)]
pub struct Bounds {
    /// Lower bound on any policy's cost.
    pub lower: f64,
    /// Upper bound on the optimum: the cheapest heuristic's cost.
    pub upper: f64,
    /// Belady's misses on the whole trace.
    pub min_misses: u64,
    /// Lower bound on write-backs (`W`).
    pub min_write_backs: u64,
    /// The heuristic achieving `upper`.
    pub best_rule: OfflineRule,
    /// Every heuristic tried, with its counts and cost.
    pub candidates: Vec<(OfflineRule, OfflineResult, f64)>,
}

impl Bounds {
    /// A policy's cost as ratios `(cost / lower, cost / upper)`.
    pub fn ratios(&self, cost: f64) -> (f64, f64) {
        (cost / self.lower, cost / self.upper)
    }
}

/// The heuristics the upper bound tries for `frames` frames.
pub fn heuristics(frames: usize, cost: CostModel) -> Vec<OfflineRule> {
    let m = frames as u32;
    vec![
        OfflineRule::Belady,
        OfflineRule::CleanBeyond { k: (m / 4).max(1) },
        OfflineRule::CleanBeyond { k: m },
        OfflineRule::CleanBeyond {
            k: m.saturating_mul(4),
        },
        OfflineRule::CostAware {
            read: cost.read,
            write: cost.write,
        },
    ]
}

/// Lower and upper bounds for `trace` with `frames` frames under `cost`.
pub fn bounds(trace: &[(bool, u64)], frames: usize, cost: CostModel) -> Bounds {
    let dense = DenseTrace::new(trace);
    let writes: Vec<(bool, u64)> = trace
        .iter()
        .filter(|r| r.0)
        .map(|&(_, p)| (false, p))
        .collect();
    let wd = DenseTrace::new(&writes);
    let min_w = simulate(&wd, frames, OfflineRule::Belady).misses;
    let min_write_backs = if cost.final_flush {
        min_w
    } else {
        min_w - min_w.min(frames.min(wd.distinct()) as u64)
    };
    let mut candidates = Vec::new();
    for rule in heuristics(frames, cost) {
        let r = simulate(&dense, frames, rule);
        candidates.push((rule, r, cost.cost_of(&r)));
    }
    let min_misses = candidates[0].1.misses;
    let mut best = 0;
    for (i, c) in candidates.iter().enumerate() {
        if c.2 < candidates[best].2 {
            best = i;
        }
    }
    Bounds {
        lower: cost.cost(min_misses, min_write_backs),
        upper: candidates[best].2,
        min_misses,
        min_write_backs,
        best_rule: candidates[best].0,
        candidates,
    }
}
