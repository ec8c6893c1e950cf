//! Dirty pages per write cluster, measured from the write stream (On et al., "FD-Buffer",
//! IEEE TC 2014, §5.3, Fig. 6: "the average number of dirty pages in a write cluster").
//!
//! [`ClusterRunStore`] wraps any [`PageStore`] and watches the pages written through it, in
//! order, across calls (`write_page` and `write_pages` alike). A *write run* is a maximal
//! sequence of consecutive page writes whose pages fall in the same cluster
//! (`page / cluster_pages`); the figure is pages written / write runs. Reads between two
//! writes do not end a run (a policy draining a cluster one page per fault, with clean
//! evictions in between, writes one run); a write to another cluster does. The same
//! definition holds for every policy, clustering or not: LRU's write-backs land in the
//! same cluster only by chance, a drained cluster is one run.

use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_store::{forward_store, PageStore, PageWrite, StoreError};
use parking_lot::Mutex;
use std::sync::Arc;

/// Write runs counted so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClusterRuns {
    /// Pages written.
    pub pages: u64,
    /// Maximal runs of consecutive writes within one cluster.
    pub runs: u64,
}

impl ClusterRuns {
    /// Mean pages per write run (`None` before any write).
    pub fn pages_per_run(&self) -> Option<f64> {
        (self.runs > 0).then(|| self.pages as f64 / self.runs as f64)
    }
}

impl std::ops::Sub for ClusterRuns {
    type Output = ClusterRuns;
    /// Counted between two snapshots (`later - earlier`).
    fn sub(self, o: ClusterRuns) -> ClusterRuns {
        ClusterRuns {
            pages: self.pages.saturating_sub(o.pages),
            runs: self.runs.saturating_sub(o.runs),
        }
    }
}

/// The counter shared by a [`ClusterRunStore`] and whoever reads it.
#[derive(Debug)]
pub struct ClusterRunTally {
    cluster_pages: u64,
    state: Mutex<(Option<u64>, ClusterRuns)>,
}

impl ClusterRunTally {
    /// A tally over clusters of `cluster_pages` pages (at least 1).
    pub fn new(cluster_pages: u64) -> Self {
        Self {
            cluster_pages: cluster_pages.max(1),
            state: Mutex::new((None, ClusterRuns::default())),
        }
    }

    /// Counts a write of `pid`.
    pub fn record(&self, pid: PageId) {
        let cluster = pid.0 / self.cluster_pages;
        let mut g = self.state.lock();
        if g.0 != Some(cluster) {
            g.1.runs += 1;
            g.0 = Some(cluster);
        }
        g.1.pages += 1;
    }

    /// The counts so far.
    pub fn snapshot(&self) -> ClusterRuns {
        self.state.lock().1
    }

    /// Cluster size in pages.
    pub fn cluster_pages(&self) -> u64 {
        self.cluster_pages
    }
}

/// A store that counts write runs ([`ClusterRunTally`]) and forwards everything.
pub struct ClusterRunStore<S> {
    inner: S,
    tally: Arc<ClusterRunTally>,
}

impl<S: PageStore> ClusterRunStore<S> {
    /// Wraps `inner`, counting into `tally`.
    pub fn new(inner: S, tally: Arc<ClusterRunTally>) -> Self {
        Self { inner, tally }
    }
}

impl<S: PageStore> PageStore for ClusterRunStore<S> {
    fn write_page(&self, pid: PageId, page: &[u8], dirty: &DirtyRanges) -> Result<(), StoreError> {
        self.inner.write_page(pid, page, dirty)?;
        self.tally.record(pid);
        Ok(())
    }
    fn write_pages(&self, batch: &[PageWrite<'_>]) -> Result<(), StoreError> {
        self.inner.write_pages(batch)?;
        batch.iter().for_each(|w| self.tally.record(w.pid));
        Ok(())
    }
    forward_store!(inner => name, page_size, read_page, prefetch_page, sync, stats, device_stats,
                   check_invariants, report);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use flashbuf_device::MemDevice;
    use flashbuf_store::{DirectStore, DirectStoreConfig};

    #[test]
    fn runs_of_consecutive_writes_within_one_cluster() {
        let tally = Arc::new(ClusterRunTally::new(4));
        let inner = DirectStore::create(MemDevice::new(0), DirectStoreConfig::with_page_size(4096))
            .unwrap();
        let store = ClusterRunStore::new(inner, tally.clone());
        let page = |pid: u64| {
            let mut b = vec![0u8; 4096];
            flashbuf_core::page::seal(&mut b, PageId(pid), 1);
            b
        };
        let all = DirtyRanges::new();
        // Clusters of 4: pages 0-3 | 4-7 | 8-11.
        for pid in [0u64, 3, 1] {
            store.write_page(PageId(pid), &page(pid), &all).unwrap();
        }
        // A read does not end the run.
        let mut buf = vec![0u8; 4096];
        store.read_page(PageId(9), &mut buf).unwrap();
        store.write_page(PageId(2), &page(2), &all).unwrap();
        assert_eq!(tally.snapshot(), ClusterRuns { pages: 4, runs: 1 });
        // Another cluster, then back: two more runs.
        store.write_page(PageId(5), &page(5), &all).unwrap();
        let (p8, p9) = (page(8), page(9));
        let batch = [
            PageWrite {
                pid: PageId(8),
                page: &p8,
                dirty: all,
            },
            PageWrite {
                pid: PageId(9),
                page: &p9,
                dirty: all,
            },
        ];
        store.write_pages(&batch).unwrap();
        let c = tally.snapshot();
        assert_eq!(c, ClusterRuns { pages: 7, runs: 3 });
        assert_eq!(c.pages_per_run(), Some(7.0 / 3.0));
        let d = c - ClusterRuns { pages: 4, runs: 1 };
        assert_eq!(d.pages_per_run(), Some(1.5));
        assert_eq!(ClusterRuns::default().pages_per_run(), None);
        assert_eq!(store.stats().page_writes, 7);
    }
}
