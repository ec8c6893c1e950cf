//! Write-pattern recognition (paper §3.1), on-demand and incremental, with the readings of
//! design.md §4 (the text lost the pattern definitions and the selection formula):
//!
//! - **sequential**: a maximal run of staged pages with consecutive destinations; the
//!   candidate is the longest run (ties: the lowest start).
//! - **partitioned**: up to `P` sequential runs in distinct areas (uFLIP's partitioning;
//!   `P` = the profile's partitions, 4 by default). The candidate is the `P` longest runs of
//!   at least `max(2, ⌈θ_seq⌉)` pages (ties: lowest start), when there are at least two
//!   (one run is a sequential instance). uFLIP's partitions are sequential streams; a run
//!   shorter than θ_seq pages is not one (its writes are as costly as random ones), so it
//!   does not make a partition. (With 2-page partitions instead, the SD card of the
//!   reproduction flushed four scattered pairs per "partitioned" instance — four merges —
//!   and StableBuffer lost most of its gain there.)
//! - **focused**: pages whose destinations lie within one area no larger than the device's
//!   focused-area size `F` (in pages). On-demand recognition slides a window of `F` pages
//!   over the sorted destinations and takes the fullest window (ties: the lowest); the
//!   incremental method keeps a count per *aligned* area `[kF, (k+1)F)` and takes the
//!   fullest (ties: lowest `k`) — local information only, as the paper says of it, so its
//!   focused instances are never larger than the on-demand ones and at least half as large
//!   (a window overlaps at most two aligned areas).
//!
//! Selection: the instance with the highest score `m / T_x` (`m` pages, `T_x` the
//! pattern's time per page). The score is not "slots reclaimed per unit of flushing
//! time" — that is `m / (m · T_x) = 1 / T_x`, blind to the instance's size, and would
//! flush a one-page sequential run before a full focused area; `m / T_x` weighs both the
//! slots an instance frees and how cheap its pattern is per page (the text lost the
//! formula; this is our reading, design.md §4). Ties prefer sequential, then partitioned,
//! then focused. Thresholds for proactive
//! flushing: `θ_seq = θ_min / page size`, `θ_par = θ_seq · T_par / T_seq`,
//! `θ_focus = θ_seq · T_focus / T_seq`; an instance qualifies when `m ≥ θ_x` (it reaches the
//! size from which its writes perform stably).
//!
//! Costs: on-demand recognition sorts the staged destinations at each flush (O(n log n));
//! the incremental recognizer updates ordered sets on each insert and delete (O(log n))
//! and produces candidates in O(P log n + m).

use super::config::PatternCosts;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Shortest run that ever counts as one partition of a partitioned instance (the bound is
/// `⌈θ_seq⌉` when that is larger).
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
    /// Shortest run that counts as a partition: `max(2, ⌈θ_seq⌉)`.
    pub min_run: u64,
}

impl PatternParams {
    /// The parameters for `costs` and `page_size`.
    ///
    /// ```
    /// use flashbuf_store::stable_buffer::{PatternCosts, PatternParams};
    /// let p = PatternParams::new(&PatternCosts::default(), 4096);
    /// assert_eq!(p.theta, [8.0, 12.0, 16.0]); // the paper's Mtron example: θ_seq = 32 KB / 4 KB
    /// assert_eq!(p.focus_pages, 1024);
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
            min_run: (theta_seq.ceil() as u64).max(MIN_PARTITION_RUN),
        }
    }

    /// Selection score `m / T_x` of an instance.
    pub fn score(&self, i: &Instance) -> f64 {
        i.len() as f64 / self.t_us[i.pattern.index()]
    }

    /// Whether an instance reaches its threshold.
    pub fn qualifies(&self, i: &Instance) -> bool {
        i.len() as f64 >= self.theta[i.pattern.index()]
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
fn runs_of(sorted: &[u64]) -> Vec<(u64, u64)> {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &d in sorted {
        match runs.last_mut() {
            Some((s, l)) if *s + *l == d => *l += 1,
            _ => runs.push((d, 1)),
        }
    }
    runs
}

fn expand(runs: &[(u64, u64)]) -> Vec<u64> {
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
/// // Runs of at least θ_seq = 8 pages make partitions (60..62 does not).
/// let par: Vec<u64> = (10..20).chain(40..48).collect();
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

/// Incremental recognition: ordered sets updated on every insert and delete, O(log n).
#[derive(Debug, Clone)]
pub struct IncrementalRecognizer {
    focus_pages: u64,
    min_run: u64,
    partitions: usize,
    dests: BTreeSet<u64>,
    /// Runs: start → length.
    runs: BTreeMap<u64, u64>,
    /// Runs ordered by (length descending, start).
    by_len: BTreeSet<(Reverse<u64>, u64)>,
    /// Pages per aligned focused area.
    areas: HashMap<u64, u32>,
    /// Areas ordered by (count descending, area).
    by_count: BTreeSet<(Reverse<u32>, u64)>,
}

impl IncrementalRecognizer {
    /// An empty recognizer.
    pub fn new(params: &PatternParams) -> Self {
        Self {
            focus_pages: params.focus_pages,
            min_run: params.min_run,
            partitions: params.partitions,
            dests: BTreeSet::new(),
            runs: BTreeMap::new(),
            by_len: BTreeSet::new(),
            areas: HashMap::new(),
            by_count: BTreeSet::new(),
        }
    }

    /// Destinations held.
    pub fn len(&self) -> usize {
        self.dests.len()
    }

    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.dests.is_empty()
    }

    /// Whether `d` is held.
    pub fn contains(&self, d: u64) -> bool {
        self.dests.contains(&d)
    }

    fn add_run(&mut self, s: u64, l: u64) {
        self.runs.insert(s, l);
        self.by_len.insert((Reverse(l), s));
    }

    fn drop_run(&mut self, s: u64) -> u64 {
        let l = self.runs.remove(&s).unwrap_or(0);
        self.by_len.remove(&(Reverse(l), s));
        l
    }

    fn bump_area(&mut self, d: u64, up: bool) {
        let a = d / self.focus_pages;
        let c = self.areas.get(&a).copied().unwrap_or(0);
        if c > 0 {
            self.by_count.remove(&(Reverse(c), a));
        }
        let c2 = if up { c + 1 } else { c.saturating_sub(1) };
        if c2 > 0 {
            self.areas.insert(a, c2);
            self.by_count.insert((Reverse(c2), a));
        } else {
            self.areas.remove(&a);
        }
    }

    /// Adds destination `d` (no-op if present).
    pub fn insert(&mut self, d: u64) {
        if !self.dests.insert(d) {
            return;
        }
        self.bump_area(d, true);
        // The run ending at d - 1 and the run starting at d + 1 merge with d.
        let left = d
            .checked_sub(1)
            .and_then(|p| self.runs.range(..=p).next_back().map(|(&s, &l)| (s, l)))
            .filter(|&(s, l)| s + l == d);
        let right = d.checked_add(1).filter(|n| self.runs.contains_key(n));
        let mut start = d;
        let mut len = 1;
        if let Some((s, _)) = left {
            len += self.drop_run(s);
            start = s;
        }
        if let Some(r) = right {
            len += self.drop_run(r);
        }
        self.add_run(start, len);
    }

    /// Removes destination `d` (no-op if absent).
    pub fn remove(&mut self, d: u64) {
        if !self.dests.remove(&d) {
            return;
        }
        self.bump_area(d, false);
        let Some((s, l)) = self.runs.range(..=d).next_back().map(|(&s, &l)| (s, l)) else {
            debug_assert!(false, "staged destination {d} is in no run");
            return;
        };
        debug_assert!(d < s + l);
        self.drop_run(s);
        if d > s {
            self.add_run(s, d - s);
        }
        if d + 1 < s + l {
            self.add_run(d + 1, s + l - d - 1);
        }
    }

    /// The current candidates.
    pub fn candidates(&self) -> Candidates {
        let mut top = self.by_len.iter().map(|&(Reverse(l), s)| (s, l));
        let sequential = top.next().map(|r| Instance {
            pattern: Pattern::Sequential,
            pages: expand(&[r]),
        });
        let parts: Vec<(u64, u64)> = self
            .by_len
            .iter()
            .map(|&(Reverse(l), s)| (s, l))
            .take_while(|&(_, l)| l >= self.min_run)
            .take(self.partitions)
            .collect();
        let partitioned = (parts.len() >= 2).then(|| Instance {
            pattern: Pattern::Partitioned,
            pages: expand(&parts),
        });
        let focused = self.by_count.iter().next().map(|&(_, a)| {
            let lo = a * self.focus_pages;
            let hi = lo.saturating_add(self.focus_pages);
            Instance {
                pattern: Pattern::Focused,
                pages: self.dests.range(lo..hi).copied().collect(),
            }
        });
        Candidates {
            sequential,
            partitioned,
            focused,
        }
    }

    /// Approximate bytes of memory held (ordered-set nodes counted at 1.5× their payload).
    pub fn memory_bytes(&self) -> usize {
        let payload = self.dests.len() * 8
            + self.runs.len() * 16
            + self.by_len.len() * 16
            + self.areas.len() * 12
            + self.by_count.len() * 16;
        payload * 3 / 2
    }

    /// Checks that runs and area counts agree with the destinations held.
    pub fn check(&self) -> Result<(), String> {
        let sorted: Vec<u64> = self.dests.iter().copied().collect();
        let runs = runs_of(&sorted);
        let have: Vec<(u64, u64)> = self.runs.iter().map(|(&s, &l)| (s, l)).collect();
        if runs != have {
            return Err(format!("runs {have:?} but destinations give {runs:?}"));
        }
        if self.by_len.len() != self.runs.len()
            || self
                .runs
                .iter()
                .any(|(&s, &l)| !self.by_len.contains(&(Reverse(l), s)))
        {
            return Err("run length index disagrees with the runs".to_string());
        }
        let mut counts: HashMap<u64, u32> = HashMap::new();
        for &d in &sorted {
            *counts.entry(d / self.focus_pages).or_default() += 1;
        }
        if counts != self.areas || self.by_count.len() != self.areas.len() {
            return Err("area counts disagree with the destinations".to_string());
        }
        Ok(())
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
