//! The page counters every store keeps ([`StoreStats`]), in one place.

use crate::StoreStats;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Callers' page reads, writes, batches and syncs, counted without a lock.
#[derive(Debug, Default)]
pub(crate) struct StoreCounters {
    page_reads: AtomicU64,
    unwritten_reads: AtomicU64,
    page_writes: AtomicU64,
    batches: AtomicU64,
    syncs: AtomicU64,
}

impl StoreCounters {
    /// A page read.
    #[inline]
    pub(crate) fn read(&self) {
        self.page_reads.fetch_add(1, Relaxed);
    }

    /// A read found the page never written.
    #[inline]
    pub(crate) fn unwritten(&self) {
        self.unwritten_reads.fetch_add(1, Relaxed);
    }

    /// `pages` pages written.
    #[inline]
    pub(crate) fn wrote(&self, pages: u64) {
        self.page_writes.fetch_add(pages, Relaxed);
    }

    /// A batch written.
    #[inline]
    pub(crate) fn batch(&self) {
        self.batches.fetch_add(1, Relaxed);
    }

    /// A sync completed.
    #[inline]
    pub(crate) fn synced(&self) {
        self.syncs.fetch_add(1, Relaxed);
    }

    /// The counters now.
    pub(crate) fn stats(&self) -> StoreStats {
        StoreStats {
            page_reads: self.page_reads.load(Relaxed),
            unwritten_reads: self.unwritten_reads.load(Relaxed),
            page_writes: self.page_writes.load(Relaxed),
            batches: self.batches.load(Relaxed),
            syncs: self.syncs.load(Relaxed),
        }
    }
}
