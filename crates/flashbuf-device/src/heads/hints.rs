//! Where the head table's memory is, readable without the device's lock: a miss's
//! [`Device::prefetch`](crate::Device::prefetch) hint reads it instead of taking the
//! memory device's shared lock (two atomic read-modify-writes per miss: 4.6 % of a
//! no-bytes LRU replay's `perf` samples went to the hint while it held the lock).
//!
//! The table publishes its granule, the address and length of its length bytes and the
//! address of each chunk whenever one of them changes (under the device's write lock). A
//! hint reads them with relaxed loads and only prefetches: an address it reads may be
//! stale (a chunk just dropped, length bytes just moved), and prefetching it is harmless —
//! the instruction cannot fault and changes no result; nothing here is ever dereferenced.

use super::{slot_of, Slot, CHUNK_SLOTS, MAX_SLOTS};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

/// The published addresses (module docs).
#[derive(Debug)]
pub(crate) struct HeadHints {
    granule: AtomicU64,
    lens_addr: AtomicUsize,
    lens_len: AtomicUsize,
    /// The first slot's address of each chunk, 0 where there is none.
    chunk_addr: Box<[AtomicUsize]>,
    /// Chunks published.
    chunks: AtomicUsize,
}

impl Default for HeadHints {
    fn default() -> Self {
        Self {
            granule: AtomicU64::new(0),
            lens_addr: AtomicUsize::new(0),
            lens_len: AtomicUsize::new(0),
            chunk_addr: (0..MAX_SLOTS as usize / CHUNK_SLOTS)
                .map(|_| AtomicUsize::new(0))
                .collect(),
            chunks: AtomicUsize::new(0),
        }
    }
}

impl HeadHints {
    /// Publishes the granule.
    pub(super) fn publish_granule(&self, granule: u64) {
        self.granule.store(granule, Relaxed);
    }

    /// Publishes the length bytes' place.
    pub(super) fn publish_lens(&self, lens: &[u8]) {
        self.lens_addr.store(lens.as_ptr() as usize, Relaxed);
        self.lens_len.store(lens.len(), Relaxed);
    }

    /// Publishes the chunks' places (after a chunk was added or chunks dropped).
    pub(super) fn publish_chunks(&self, chunks: &[Box<[Slot]>]) {
        let n = chunks.len().min(self.chunk_addr.len());
        let before = self.chunks.swap(n, Relaxed);
        for (i, a) in self.chunk_addr.iter().enumerate().take(n.max(before)) {
            a.store(chunks.get(i).map_or(0, |c| c.as_ptr() as usize), Relaxed);
        }
    }

    /// Hints the length byte and the slot of the head of request `(offset, len)`;
    /// `false`: the table does not serve the request, or has no slot for it yet.
    #[inline]
    pub(crate) fn prefetch(&self, offset: u64, len: usize) -> bool {
        let Some(i) = slot_of(self.granule.load(Relaxed), offset, len) else {
            return false;
        };
        if i >= self.lens_len.load(Relaxed) {
            return false;
        }
        flashbuf_core::prefetch::prefetch_address(self.lens_addr.load(Relaxed) + i);
        let chunk = self.chunk_addr[i / CHUNK_SLOTS].load(Relaxed);
        if chunk != 0 {
            let slot = chunk + (i % CHUNK_SLOTS) * std::mem::size_of::<Slot>();
            flashbuf_core::prefetch::prefetch_address(slot);
        }
        true
    }

    /// The published address of chunk `c`'s first slot (0: none), for tests.
    #[cfg(test)]
    pub(super) fn chunk_address(&self, c: usize) -> usize {
        self.chunk_addr[c].load(Relaxed)
    }
}
