//! Write-pattern recognition (paper §3.1) and selection (§3.2), with the readings of
//! design.md §4 (the text lost the pattern definitions and the selection formula; they are
//! read from uFLIP, which the paper cites for them):
//!
//! - **sequential**: a maximal run of staged pages with consecutive destinations; the
//!   candidate is the longest run (ties: the lowest start). Written ascending.
//! - **partitioned**: up to `P` sequential runs in distinct areas (uFLIP's partitioned
//!   pattern; `P` = the profile's partitions, 4 by default), written round-robin across
//!   the partitions ([`super::order`]). The candidate is the `P` longest runs (ties: lowest
//!   start) of at least the minimum partition run, when there are at least two (one run is
//!   a sequential instance). As printed, a partition is any sequential run, and a run
//!   needs two consecutive pages to have an order at all: the minimum is 2 pages
//!   ([`MinRun::Pair`], the default). `min-run=theta` ([`MinRun::Theta`]) asks
//!   `max(2, ⌈θ_seq⌉)` pages instead — an extra rule of ours, not the paper's: a run
//!   shorter than θ_seq pages writes like random pages.
//! - **focused**: pages whose destinations lie within one area no larger than the device's
//!   focused-area size `F` (in pages), written in their own order (the order they were
//!   staged: [`super::order`]). On-demand recognition slides a window of `F` pages
//!   over the sorted destinations and takes the fullest window (ties: the lowest); the
//!   incremental method (`incremental.rs`) keeps a count per *aligned* area
//!   `[kF, (k+1)F)` and takes the fullest (ties: lowest `k`) — local information only, as
//!   the paper says of it, so its focused instances are never larger than the on-demand
//!   ones and at least half as large (a window overlaps at most two aligned areas).
//!
//! Selection: the instance with the highest score `m / T_x` (`m` pages, `T_x` the
//! pattern's time per page). The score is not "slots reclaimed per unit of flushing
//! time" — that is `m / (m · T_x) = 1 / T_x`, blind to the instance's size, and would
//! flush a one-page sequential run before a full focused area; `m / T_x` weighs both the
//! slots an instance frees and how cheap its pattern is per page (the text lost the
//! formula; this is our reading, design.md §4). Ties prefer sequential, then partitioned,
//! then focused. Thresholds for proactive
//! flushing: `θ_seq = θ_min / page size`, `θ_par = θ_seq · T_par / T_seq`,
//! `θ_focus = θ_seq · T_focus / T_seq`; an instance qualifies when `m > θ_x` (§3.2: "only
//! the instances with a size larger than θ_x are qualified for flushing", as printed).
//!
//! Costs: on-demand recognition sorts the staged destinations at each flush (O(n log n));
//! the incremental recognizer updates ordered sets on each insert and delete (O(log n))
//! and produces candidates in O(P log n + m).

use super::config::PatternCosts;
pub use super::incremental::IncrementalRecognizer;
use super::order::MinRun;
use std::cmp::Reverse;

/// Shortest run that ever counts as one partition of a partitioned instance: two
/// consecutive pages (with `min-run=theta`, `⌈θ_seq⌉` when that is larger).
pub const MIN_PARTITION_RUN: u64 = 2;

/// A write pattern of the paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pattern {
    /// Consecutive destinations.
    Sequential,
    /// Several sequential runs in distinct areas.
    Partitioned,
    /// Destinations within one focused area.
    Focused,
}

impl Pattern {
    /// Every pattern, in tie-breaking order.
    pub const ALL: [Pattern; 3] = [Pattern::Sequential, Pattern::Partitioned, Pattern::Focused];

    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Sequential => "sequential",
            Pattern::Partitioned => "partitioned",
            Pattern::Focused => "focused",
        }
    }

    /// Index in [`Pattern::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// An instance of a pattern: the destinations to flush, sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// Its pattern.
    pub pattern: Pattern,
    /// Destinations (page ids), ascending.
    pub pages: Vec<u64>,
}

impl Instance {
    /// Pages in the instance (`m`).
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Whether the instance is empty.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }
}

/// The numbers recognition and selection work from, derived from [`PatternCosts`].
#[derive(Debug, Clone, PartialEq)]
pub struct PatternParams {
    /// Time per page of each pattern, µs (`T_seq`, `T_par`, `T_focus`).
    pub t_us: [f64; 3],
    /// Thresholds θ_seq, θ_par, θ_focus in pages.
    pub theta: [f64; 3],
    /// Runs of the partitioned pattern (`P`).
    pub partitions: usize,
    /// Focused-area size in pages (`F`, at least 1).
    pub focus_pages: u64,
    /// Shortest run that counts as a partition: 2 pages ([`MinRun::Pair`], the default),
    /// or `max(2, ⌈θ_seq⌉)` ([`MinRun::Theta`]).
    pub min_run: u64,
}

impl PatternParams {
    /// The parameters for `costs` and `page_size`, with the paper's partition rule (any
    /// sequential run of at least [`MIN_PARTITION_RUN`] pages is a partition).
    ///
    /// ```
    /// use flashbuf_store::stable_buffer::{PatternCosts, PatternParams};
    /// let p = PatternParams::new(&PatternCosts::default(), 4096);
    /// assert_eq!(p.theta, [8.0, 12.0, 16.0]); // the paper's Mtron example: θ_seq = 32 KB / 4 KB
    /// assert_eq!(p.focus_pages, 1024);
    /// assert_eq!(p.min_run, 2);
    /// ```
    pub fn new(costs: &PatternCosts, page_size: usize) -> Self {
        let theta_seq = (costs.theta_min_bytes as f64 / page_size as f64).max(1.0);
        Self {
            t_us: [costs.t_seq_us, costs.t_par_us, costs.t_focus_us],
            theta: [
                theta_seq,
                theta_seq * costs.t_par_us / costs.t_seq_us,
                theta_seq * costs.t_focus_us / costs.t_seq_us,
            ],
            partitions: costs.partitions.max(1) as usize,
            focus_pages: (costs.focused_area_bytes / page_size as u64).max(1),
            min_run: MIN_PARTITION_RUN,
        }
    }

    /// The same parameters with the partition-run rule `rule`.
    ///
    /// ```
    /// use flashbuf_store::stable_buffer::{MinRun, PatternCosts, PatternParams};
    /// let p = PatternParams::new(&PatternCosts::default(), 4096).with_min_run(MinRun::Theta);
    /// assert_eq!(p.min_run, 8); // ⌈θ_seq⌉ = 8 pages of 4 KiB
    /// ```
    pub fn with_min_run(mut self, rule: MinRun) -> Self {
        self.min_run = rule.pages(self.theta[0]);
        self
    }

    /// Selection score `m / T_x` of an instance.
    pub fn score(&self, i: &Instance) -> f64 {
        i.len() as f64 / self.t_us[i.pattern.index()]
    }

    /// Whether an instance qualifies for proactive flushing: strictly larger than its
    /// threshold (`m > θ_x`, §3.2 as printed).
    pub fn qualifies(&self, i: &Instance) -> bool {
        i.len() as f64 > self.theta[i.pattern.index()]
    }
}

/// The best instance of each pattern at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Candidates {
    /// Longest sequential run.
    pub sequential: Option<Instance>,
    /// The longest runs, if at least two.
    pub partitioned: Option<Instance>,
    /// Fullest focused area.
    pub focused: Option<Instance>,
}

impl Candidates {
    fn all(&self) -> impl Iterator<Item = &Instance> {
        [&self.sequential, &self.partitioned, &self.focused]
            .into_iter()
            .flatten()
    }

    fn pick(self, params: &PatternParams, only_qualified: bool) -> Option<Instance> {
        let mut best: Option<(f64, Pattern)> = None;
        for i in self.all() {
            if i.is_empty() || (only_qualified && !params.qualifies(i)) {
                continue;
            }
            let s = params.score(i);
            if best.is_none_or(|(b, _)| s > b) {
                best = Some((s, i.pattern));
            }
        }
        let (_, p) = best?;
        match p {
            Pattern::Sequential => self.sequential,
            Pattern::Partitioned => self.partitioned,
            Pattern::Focused => self.focused,
        }
    }

    /// The instance with the highest score (passive flushing).
    pub fn best(self, params: &PatternParams) -> Option<Instance> {
        self.pick(params, false)
    }

    /// The highest-scoring instance among those reaching their thresholds (proactive).
    pub fn best_qualified(self, params: &PatternParams) -> Option<Instance> {
        self.pick(params, true)
    }
}

/// Maximal runs of consecutive values in a sorted, duplicate-free slice, as `(start, len)`.
pub(super) fn runs_of(sorted: &[u64]) -> Vec<(u64, u64)> {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &d in sorted {
        match runs.last_mut() {
            Some((s, l)) if *s + *l == d => *l += 1,
            _ => runs.push((d, 1)),
        }
    }
    runs
}

pub(super) fn expand(runs: &[(u64, u64)]) -> Vec<u64> {
    let mut v: Vec<u64> = runs.iter().flat_map(|&(s, l)| s..s + l).collect();
    v.sort_unstable();
    v
}

/// On-demand recognition: the candidates among `dests` (any order, no duplicates), by a
/// sorted scan. O(n log n).
///
/// ```
/// use flashbuf_store::stable_buffer::{on_demand, Pattern, PatternCosts, PatternParams};
/// // The paper's Mtron figures with 4 KiB pages: θ_seq = 8, F = 1024 pages.
/// let params = PatternParams::new(&PatternCosts::default(), 4096);
/// let mut staged: Vec<u64> = (10..20).chain(40..48).chain([60, 61, 900, 5000]).collect();
/// let c = on_demand(&mut staged, &params);
/// assert_eq!(c.sequential.unwrap().pages, (10..20).collect::<Vec<u64>>());
/// // The four longest runs of at least two pages make the partitions.
/// let par: Vec<u64> = (10..20).chain(40..48).chain([60, 61]).collect();
/// assert_eq!(c.partitioned.unwrap().pages, par);
/// // Everything but 5000 lies within one window of 1024 pages.
/// assert_eq!(c.focused.unwrap().len(), 21);
/// ```
pub fn on_demand(dests: &mut [u64], params: &PatternParams) -> Candidates {
    dests.sort_unstable();
    debug_assert!(
        dests.windows(2).all(|w| w[0] < w[1]),
        "duplicate destinations"
    );
    if dests.is_empty() {
        return Candidates::default();
    }
    let runs = runs_of(dests);
    // Runs by length descending, start ascending.
    let mut order: Vec<(u64, u64)> = runs.clone();
    order.sort_unstable_by_key(|&(s, l)| (Reverse(l), s));
    let sequential = order.first().map(|&r| Instance {
        pattern: Pattern::Sequential,
        pages: expand(&[r]),
    });
    let parts: Vec<(u64, u64)> = order
        .iter()
        .copied()
        .filter(|&(_, l)| l >= params.min_run)
        .take(params.partitions)
        .collect();
    let partitioned = (parts.len() >= 2).then(|| Instance {
        pattern: Pattern::Partitioned,
        pages: expand(&parts),
    });
    // Fullest window [d_i, d_i + F).
    let f = params.focus_pages;
    let (mut best_i, mut best_n, mut j) = (0usize, 0usize, 0usize);
    for i in 0..dests.len() {
        j = j.max(i);
        while j < dests.len() && dests[j] - dests[i] < f {
            j += 1;
        }
        if j - i > best_n {
            (best_i, best_n) = (i, j - i);
        }
    }
    let focused = Some(Instance {
        pattern: Pattern::Focused,
        pages: dests[best_i..best_i + best_n].to_vec(),
    });
    Candidates {
        sequential,
        partitioned,
        focused,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(focus_pages: u64) -> PatternParams {
        PatternParams {
            t_us: [1.0, 1.5, 2.0],
            theta: [4.0, 6.0, 8.0],
            partitions: 2,
            focus_pages,
            min_run: 2,
        }
    }

    #[test]
    fn incremental_merges_and_splits_runs() {
        let p = params(100);
        let mut r = IncrementalRecognizer::new(&p);
        for d in [5, 7, 6, 1, 2, 9] {
            r.insert(d);
            r.check().unwrap();
        }
        assert_eq!(r.candidates().sequential.unwrap().pages, vec![5, 6, 7]);
        r.remove(6);
        r.check().unwrap();
        assert_eq!(r.candidates().sequential.unwrap().pages, vec![1, 2]);
        assert_eq!(
            r.candidates().partitioned,
            None,
            "only one run of two or more pages left"
        );
        r.insert(6);
        assert_eq!(
            r.candidates().partitioned.unwrap().pages,
            vec![1, 2, 5, 6, 7]
        );
    }

    #[test]
    fn selection_uses_score_and_thresholds() {
        let p = params(100);
        // A run of 3 (score 3) against a focused area of 7 (score 3.5).
        let mut d = vec![1, 2, 3, 20, 40, 60, 80];
        let c = on_demand(&mut d, &p);
        assert_eq!(c.clone().best(&p).unwrap().pattern, Pattern::Focused);
        // Neither reaches its threshold (4 and 8).
        assert_eq!(c.best_qualified(&p), None);
    }
}
