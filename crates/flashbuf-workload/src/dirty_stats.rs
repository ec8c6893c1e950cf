//! Dirty-range statistics of the pool's write-backs, counted by a store wrapper.
//!
//! [`WriteBackStats`] sits between the pool and its store and looks at every page the
//! pool writes back: the [`DirtyRanges`] the pool recorded (header included; at most
//! [`DirtyRanges::CAPACITY`] ranges, neighbours merged beyond that) and, optionally, the
//! *exact* runs of bytes that differ from the page's previous image in the store (kept in
//! a shadow copy, filled from the store's reads and the wrapper's writes) — the measure of
//! the PostgreSQL range trace in `../shared/traces/` (`op,page,ranges,new`), where two
//! runs one equal byte apart are two runs.
//!
//! Only overwrites are counted in the histograms, as in that trace's summary: a page's
//! first write (never read back as written, never written before through the wrapper) is
//! counted in [`WriteBackSnapshot::first_writes`] only.

use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_store::{forward_store, PageStore, PageWrite, ReadOutcome, StoreError};
use parking_lot::Mutex;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// Counts of write-backs by bytes changed and by runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirtyHistogram {
    /// `bytes[b]`: write-backs that changed `b` bytes.
    bytes: Vec<u64>,
    /// `runs[r]`: write-backs with `r` runs.
    runs: Vec<u64>,
}

fn bump(v: &mut Vec<u64>, i: usize) {
    if v.len() <= i {
        v.resize(i + 1, 0);
    }
    v[i] += 1;
}

/// The nearest-rank `q`-quantile (`0 < q <= 1`) of a histogram.
fn quantile(h: &[u64], q: f64) -> u64 {
    let n: u64 = h.iter().sum();
    if n == 0 {
        return 0;
    }
    let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
    let mut seen = 0;
    for (v, &c) in h.iter().enumerate() {
        seen += c;
        if seen >= rank {
            return v as u64;
        }
    }
    (h.len() - 1) as u64
}

fn mean(h: &[u64]) -> f64 {
    let n: u64 = h.iter().sum();
    if n == 0 {
        return 0.0;
    }
    let s: f64 = h
        .iter()
        .enumerate()
        .map(|(v, &c)| v as f64 * c as f64)
        .sum();
    s / n as f64
}

fn sub(a: &[u64], b: &[u64]) -> Vec<u64> {
    (0..a.len())
        .map(|i| a[i] - b.get(i).copied().unwrap_or(0))
        .collect()
}

impl DirtyHistogram {
    /// Adds one write-back that changed `bytes` bytes in `runs` runs.
    pub fn add(&mut self, bytes: usize, runs: usize) {
        bump(&mut self.bytes, bytes);
        bump(&mut self.runs, runs);
    }

    /// Write-backs counted.
    pub fn count(&self) -> u64 {
        self.bytes.iter().sum()
    }

    /// What was added since `earlier` (a snapshot of the same histogram).
    pub fn since(&self, earlier: &DirtyHistogram) -> DirtyHistogram {
        DirtyHistogram {
            bytes: sub(&self.bytes, &earlier.bytes),
            runs: sub(&self.runs, &earlier.runs),
        }
    }

    /// Mean, median, p90 and p99 of bytes and runs.
    pub fn summary(&self) -> DirtySummary {
        let n = self.count();
        let small: u64 = self.bytes.iter().take(513).sum();
        DirtySummary {
            write_backs: n,
            bytes_mean: mean(&self.bytes),
            bytes_p50: quantile(&self.bytes, 0.5),
            bytes_p90: quantile(&self.bytes, 0.9),
            bytes_p99: quantile(&self.bytes, 0.99),
            runs_mean: mean(&self.runs),
            runs_p50: quantile(&self.runs, 0.5),
            runs_p90: quantile(&self.runs, 0.9),
            runs_p99: quantile(&self.runs, 0.99),
            share_le_512_bytes: if n == 0 { 0.0 } else { small as f64 / n as f64 },
        }
    }
}

/// Bytes changed and runs per write-back: mean and nearest-rank percentiles.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DirtySummary {
    /// Write-backs counted.
    pub write_backs: u64,
    /// Mean bytes changed per write-back.
    pub bytes_mean: f64,
    /// Median bytes changed.
    pub bytes_p50: u64,
    /// 90th percentile of bytes changed.
    pub bytes_p90: u64,
    /// 99th percentile of bytes changed.
    pub bytes_p99: u64,
    /// Mean runs (separate ranges) per write-back.
    pub runs_mean: f64,
    /// Median runs.
    pub runs_p50: u64,
    /// 90th percentile of runs.
    pub runs_p90: u64,
    /// 99th percentile of runs.
    pub runs_p99: u64,
    /// Share of write-backs that changed at most 512 bytes.
    pub share_le_512_bytes: f64,
}

/// The runs of bytes that differ between `old` and `new` (maximal runs).
pub fn diff_runs(old: &[u8], new: &[u8]) -> (usize, usize) {
    let (mut bytes, mut runs, mut inside) = (0, 0, false);
    for (a, b) in old.iter().zip(new) {
        if a != b {
            bytes += 1;
            if !inside {
                runs += 1;
                inside = true;
            }
        } else {
            inside = false;
        }
    }
    (bytes, runs)
}

/// What a [`WriteBackStats`] has seen so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBackSnapshot {
    /// Overwrites by the pool's recorded dirty ranges.
    pub recorded: DirtyHistogram,
    /// Overwrites by the exact difference from the previous image (when enabled).
    pub exact: Option<DirtyHistogram>,
    /// First writes of pages (not counted above).
    pub first_writes: u64,
}

impl WriteBackSnapshot {
    /// What happened since `earlier`.
    pub fn since(&self, earlier: &WriteBackSnapshot) -> WriteBackSnapshot {
        WriteBackSnapshot {
            recorded: self.recorded.since(&earlier.recorded),
            exact: match (&self.exact, &earlier.exact) {
                (Some(a), Some(b)) => Some(a.since(b)),
                (a, _) => a.clone(),
            },
            first_writes: self.first_writes - earlier.first_writes,
        }
    }
}

#[derive(Default)]
struct State {
    snap: WriteBackSnapshot,
    /// Pages the store holds a written image of.
    known: HashSet<PageId>,
    /// Previous images (exact mode only).
    shadow: HashMap<PageId, Box<[u8]>>,
}

/// A store wrapper that counts the dirty ranges of every page written through it.
pub struct WriteBackStats<S> {
    inner: S,
    exact: bool,
    state: Mutex<State>,
}

impl<S: PageStore> WriteBackStats<S> {
    /// Counts the pool's recorded ranges only.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            exact: false,
            state: Mutex::new(State::default()),
        }
    }

    /// Also diffs every write against the page's previous image, kept in memory (one copy
    /// of every page read or written: as much memory as the data).
    pub fn with_exact_diff(inner: S) -> Self {
        let s = Self::new(inner);
        s.state.lock().snap.exact = Some(DirtyHistogram::default());
        Self { exact: true, ..s }
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The counts so far.
    pub fn snapshot(&self) -> WriteBackSnapshot {
        self.state.lock().snap.clone()
    }

    fn record(&self, pid: PageId, page: &[u8], dirty: &DirtyRanges) {
        let mut st = self.state.lock();
        let st = &mut *st;
        let first = st.known.insert(pid);
        if first {
            st.snap.first_writes += 1;
        } else {
            st.snap.recorded.add(dirty.total_bytes(), dirty.count());
        }
        if self.exact {
            if let (Some(old), Some(h)) = (st.shadow.get(&pid), st.snap.exact.as_mut()) {
                let (b, r) = diff_runs(old, page);
                h.add(b, r);
            }
            st.shadow.insert(pid, page.into());
        }
    }
}

impl<S: PageStore> PageStore for WriteBackStats<S> {
    fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
        let r = self.inner.read_page(pid, buf)?;
        if r == ReadOutcome::Found {
            let mut st = self.state.lock();
            if st.known.insert(pid) && self.exact {
                st.shadow.insert(pid, buf.into());
            }
        }
        Ok(r)
    }
    fn write_page(&self, pid: PageId, page: &[u8], dirty: &DirtyRanges) -> Result<(), StoreError> {
        self.inner.write_page(pid, page, dirty)?;
        self.record(pid, page, dirty);
        Ok(())
    }
    fn write_pages(&self, batch: &[PageWrite<'_>]) -> Result<(), StoreError> {
        self.inner.write_pages(batch)?;
        for w in batch {
            self.record(w.pid, w.page, &w.dirty);
        }
        Ok(())
    }
    forward_store!(inner => name, page_size, prefetch_page, sync, stats, device_stats, report,
                   check_invariants);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_and_means() {
        let mut h = DirtyHistogram::default();
        for b in 1..=100 {
            h.add(b, 1 + b / 50);
        }
        let s = h.summary();
        assert_eq!(s.write_backs, 100);
        assert_eq!((s.bytes_p50, s.bytes_p90, s.bytes_p99), (50, 90, 99));
        assert!((s.bytes_mean - 50.5).abs() < 1e-9);
        assert_eq!(s.runs_p50, 2);
        assert!((s.share_le_512_bytes - 1.0).abs() < 1e-12);
        let mut later = h.clone();
        later.add(4096, 3);
        let d = later.since(&h);
        assert_eq!(d.count(), 1);
        assert_eq!(d.summary().bytes_p50, 4096);
    }

    #[test]
    fn runs_are_maximal() {
        let old = [0u8; 10];
        let new = [0, 1, 1, 0, 1, 0, 0, 0, 0, 1];
        assert_eq!(diff_runs(&old, &new), (4, 3));
    }
}
