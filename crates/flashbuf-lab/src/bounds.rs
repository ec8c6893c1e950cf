//! Offline cost bounds for a run (design.md §5): the lower and the upper bound of the
//! read/write cost of the offline optimum for the run's (mapped, transformed) trace, its
//! buffer and a cost model, and the run's own cost as ratios to them.
//!
//! The cost of a run is `page_reads · C_r + page_writes · C_w` (pool reads and write-backs;
//! the final flush after the replay is not counted, as the bounds count no final flush).
//! `C_r`, `C_w` are the device facts' random page read and write latencies in µs
//! ([`BoundsCost::Device`], the default), or `1` and `R` ([`BoundsCost::R`]), or given
//! ([`BoundsCost::Costs`]). The bounds come from
//! [`flashbuf_pool::policy::offline::bounds()`]: lower = `C_r · MIN misses + C_w · W` with `W`
//! the write-backs no policy can avoid; upper = the cheapest of several write-aware
//! offline heuristics (each a real policy, so the optimum is no dearer). Every policy's
//! cost is at least the lower bound; online policies usually cost more than the upper
//! bound too (it bounds the *optimum*), and replaying `offline:rule=best` reproduces it.
//!
//! The bounds are computed on the trace the run replayed (after `--limit` and any workload
//! transform); the cost model is static, so under an asymmetry model (`--asymmetry`) it
//! prices every epoch with the device's base costs.
//!
//! Computing the bounds holds the trace in memory (16 bytes per reference, plus the
//! dense copies of the offline simulation, about 9 bytes per reference) and runs six
//! offline simulations of `O(n log M)` each: a few seconds for the 5.1 M references of
//! the TPC-C trace.

pub use crate::config::BoundsCost;
use crate::result::RunResult;
use flashbuf_pool::policy::offline::{bounds, CostModel, OfflineRule};

/// The bounds of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunBounds {
    /// Cost of a page read in the model.
    pub read_cost: f64,
    /// Cost of a page write in the model.
    pub write_cost: f64,
    /// Lower bound on any policy's cost.
    pub lower: f64,
    /// Upper bound on the offline optimum.
    pub upper: f64,
    /// The heuristic achieving `upper`.
    pub rule: String,
    /// Belady's misses.
    pub min_misses: u64,
    /// Write-backs no policy avoids.
    pub min_write_backs: u64,
}

/// The name of an offline rule as the `offline` policy takes it.
pub fn rule_name(rule: OfflineRule) -> String {
    match rule {
        OfflineRule::Belady => "belady".into(),
        OfflineRule::CleanBeyond { k } => format!("clean-beyond:k={k}"),
        OfflineRule::CostAware { .. } => "cost-aware".into(),
    }
}

/// Computes the bounds of `trace` (`(is_write, page)` in order) for `frames` frames.
pub fn compute(trace: &[(bool, u64)], frames: usize, model: CostModel) -> RunBounds {
    let b = bounds(trace, frames, model);
    RunBounds {
        read_cost: model.read,
        write_cost: model.write,
        lower: b.lower,
        upper: b.upper,
        rule: rule_name(b.best_rule),
        min_misses: b.min_misses,
        min_write_backs: b.min_write_backs,
    }
}

/// Writes the bounds and the run's cost under the same model into `r`.
pub fn annotate(r: &mut RunResult, b: &RunBounds) {
    let cost = r.page_reads as f64 * b.read_cost + r.page_writes as f64 * b.write_cost;
    let ratio = |bound: f64| {
        if bound > 0.0 {
            cost / bound
        } else if cost == 0.0 {
            1.0
        } else {
            f64::INFINITY
        }
    };
    r.cost = Some(cost);
    r.cost_lower_bound = Some(b.lower);
    r.cost_upper_bound = Some(b.upper);
    r.bound_rule = Some(b.rule.clone());
    r.ratio_to_lower = Some(ratio(b.lower));
    r.ratio_to_upper = Some(ratio(b.upper));
    r.bound_read_cost = Some(b.read_cost);
    r.bound_write_cost = Some(b.write_cost);
    r.bound_min_misses = Some(b.min_misses);
    r.bound_min_write_backs = Some(b.min_write_backs);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cost_specs() {
        assert_eq!(BoundsCost::parse("").ok(), Some(BoundsCost::Device));
        assert_eq!(BoundsCost::parse("r=136").ok(), Some(BoundsCost::R(136.0)));
        assert_eq!(
            BoundsCost::parse("read=1,write=25").ok(),
            Some(BoundsCost::Costs {
                read: 1.0,
                write: 25.0
            })
        );
        assert!(BoundsCost::parse("read=1").is_err());
        assert!(BoundsCost::parse("x=1").is_err());
        assert!(BoundsCost::parse("r=-1").is_err());
    }
}
