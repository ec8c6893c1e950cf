//! Incremental pattern recognition (paper §3.1, "Incremental Method"): ordered sets
//! updated on every insert and delete of the StableBuffer Translation Table, O(log n) each,
//! producing the same sequential and partitioned candidates as the on-demand scan
//! ([`super::patterns::on_demand`]) and the fullest *aligned* focused area (local
//! information only, as the paper says of it). Split out of `patterns.rs`.

use super::patterns::{expand, runs_of, Candidates, Instance, Pattern, PatternParams};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};

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
