//! Pin guards and the page writer: [`PageReadGuard`] (shared), [`PageWriteGuard`]
//! (exclusive, records modified ranges), [`PageWriter`] (the same recording for the
//! closure and `access_many` paths).
//!
//! Metadata only (`--data none`): a frame holds the head of its page
//! ([`flashbuf_core::METADATA_PAGE_BYTES`]), but its dirty ranges are those of the logical
//! page — a store that logs changed bytes (ICL) decides on them as with bytes. `touch`,
//! `touch_all` and [`PageWriter::data_mut_held`] record ranges of the logical payload
//! (beyond the head too); `data_mut_range` hands out bytes the frame holds.

use super::BufferPool;
use crate::frame::dirty_extent;
use flashbuf_core::page::{self, HEADER_BYTES};
use flashbuf_core::{DirtyRanges, FrameId, PageId};
use flashbuf_store::PageStore;
use std::sync::atomic::Ordering::{AcqRel, Relaxed, Release};

/// A shared pin on a page: the page stays resident and unmodified while held.
pub struct PageReadGuard<'a, S: PageStore> {
    pub(super) pool: &'a BufferPool<S>,
    pub(super) frame: FrameId,
}

impl<S: PageStore> PageReadGuard<'_, S> {
    /// The page id.
    pub fn page_id(&self) -> PageId {
        PageId(self.pool.frames[self.frame.index()].page_id.load(Relaxed))
    }
    /// The whole page, header included.
    pub fn page(&self) -> &[u8] {
        // SAFETY: the guard holds the latch shared.
        unsafe { self.pool.arena.page(self.frame) }
    }
    /// The payload (the bytes after the page header).
    pub fn data(&self) -> &[u8] {
        &self.page()[HEADER_BYTES..]
    }
    /// The page's version stamp (number of times it was written back).
    pub fn version(&self) -> u64 {
        page::version_of(self.page())
    }
}

impl<S: PageStore> Drop for PageReadGuard<'_, S> {
    fn drop(&mut self) {
        // SAFETY: the guard holds the latch shared.
        unsafe { self.pool.frames[self.frame.index()].unlock(false) };
        self.pool.unpin(self.frame, false);
    }
}

/// An exclusive pin on a page. Every byte range handed out for modification is recorded
/// and passed to the store on write-back (merged; see `DirtyRanges`).
pub struct PageWriteGuard<'a, S: PageStore> {
    pub(super) pool: &'a BufferPool<S>,
    pub(super) frame: FrameId,
}

impl<S: PageStore> PageWriteGuard<'_, S> {
    /// The page id.
    pub fn page_id(&self) -> PageId {
        PageId(self.pool.frames[self.frame.index()].page_id.load(Relaxed))
    }
    /// The whole page, header included.
    pub fn page(&self) -> &[u8] {
        // SAFETY: the guard holds the latch exclusively.
        unsafe { self.pool.arena.page(self.frame) }
    }
    /// The payload (the bytes after the page header).
    pub fn data(&self) -> &[u8] {
        &self.page()[HEADER_BYTES..]
    }
    /// The page's version stamp.
    pub fn version(&self) -> u64 {
        page::version_of(self.page())
    }
    /// Payload length in bytes.
    pub fn data_len(&self) -> usize {
        self.pool.page_size - HEADER_BYTES
    }
    /// A writer over the page: payload access that records modified ranges.
    pub fn writer(&mut self) -> PageWriter<'_> {
        let fr = &self.pool.frames[self.frame.index()];
        // SAFETY: the guard holds the latch exclusively for as long as the writer lives
        // (the writer borrows the guard mutably).
        unsafe { PageWriter::new(self.pool.arena.page_mut(self.frame), fr.dirty_mut()) }
    }
    /// Mutable payload bytes `offset..offset+len`, recorded as modified.
    ///
    /// # Panics
    /// If the range is outside the payload.
    pub fn data_mut_range(&mut self, offset: usize, len: usize) -> &mut [u8] {
        let fr = &self.pool.frames[self.frame.index()];
        // SAFETY: the guard holds the latch exclusively; the slice borrows the guard.
        let (page, dirty) = unsafe { (self.pool.arena.page_mut(self.frame), fr.dirty_mut()) };
        record(page, dirty, offset, len)
    }
    /// All payload bytes, recorded as modified.
    pub fn data_mut(&mut self) -> &mut [u8] {
        let n = self.data_len();
        self.data_mut_range(0, n)
    }
    /// Copies `src` into the payload at `offset`.
    pub fn write(&mut self, offset: usize, src: &[u8]) {
        self.data_mut_range(offset, src.len()).copy_from_slice(src);
    }
    /// Records payload bytes `offset..offset+len` as modified without handing them out;
    /// with a metadata-only frame, a range of the logical page (module docs).
    ///
    /// # Panics
    /// If the range is outside the (logical) payload.
    pub fn touch(&mut self, offset: usize, len: usize) {
        let fr = &self.pool.frames[self.frame.index()];
        // SAFETY: the guard holds the latch exclusively.
        touch(self.pool.page_size, unsafe { fr.dirty_mut() }, offset, len);
    }
    /// Records the whole (logical) payload as modified.
    pub fn touch_all(&mut self) {
        let n = dirty_extent(self.pool.page_size) - HEADER_BYTES;
        self.touch(0, n);
    }
}

/// Records payload bytes `offset..offset+len` of the page the dirty ranges describe (the
/// logical page of a metadata-only frame, [`dirty_extent`]) as modified.
fn touch(frame_bytes: usize, dirty: &mut DirtyRanges, offset: usize, len: usize) {
    let data_len = dirty_extent(frame_bytes) - HEADER_BYTES;
    assert!(
        offset + len <= data_len,
        "range {offset}+{len} beyond the payload of {data_len} bytes"
    );
    dirty.add(HEADER_BYTES + offset, len);
}

/// Records `offset..offset+len` of the payload as modified and returns it.
fn record<'p>(
    page: &'p mut [u8],
    dirty: &mut DirtyRanges,
    offset: usize,
    len: usize,
) -> &'p mut [u8] {
    let data_len = page.len() - HEADER_BYTES;
    assert!(
        offset + len <= data_len,
        "range {offset}+{len} beyond the payload of {data_len} bytes"
    );
    dirty.add(HEADER_BYTES + offset, len);
    &mut page[HEADER_BYTES + offset..HEADER_BYTES + offset + len]
}

/// Write access to one page's payload that records every range handed out for
/// modification (see [`BufferPool::with_write`] and [`PageWriteGuard::writer`]).
pub struct PageWriter<'a> {
    page: &'a mut [u8],
    dirty: &'a mut DirtyRanges,
}

impl<'a> PageWriter<'a> {
    /// # Safety
    /// The caller has exclusive access to the page bytes and its dirty ranges for `'a`.
    pub(super) unsafe fn new(page: &'a mut [u8], dirty: &'a mut DirtyRanges) -> Self {
        Self { page, dirty }
    }
    /// The payload.
    pub fn data(&self) -> &[u8] {
        &self.page[HEADER_BYTES..]
    }
    /// The page's version stamp.
    pub fn version(&self) -> u64 {
        page::version_of(self.page)
    }
    /// Mutable payload bytes `offset..offset+len`, recorded as modified.
    ///
    /// # Panics
    /// If the range is outside the payload.
    pub fn data_mut_range(&mut self, offset: usize, len: usize) -> &mut [u8] {
        record(self.page, self.dirty, offset, len)
    }
    /// Copies `src` into the payload at `offset`.
    pub fn write(&mut self, offset: usize, src: &[u8]) {
        self.data_mut_range(offset, src.len()).copy_from_slice(src);
    }
    /// Records payload bytes `offset..offset+len` as modified without handing them out;
    /// with a metadata-only frame, a range of the logical page (module docs).
    ///
    /// # Panics
    /// If the range is outside the (logical) payload.
    pub fn touch(&mut self, offset: usize, len: usize) {
        touch(self.page.len(), self.dirty, offset, len);
    }
    /// Records the whole (logical) payload as modified.
    pub fn touch_all(&mut self) {
        let n = dirty_extent(self.page.len()) - HEADER_BYTES;
        self.touch(0, n);
    }
    /// Records payload bytes `offset..offset+len` as modified (a range of the logical page
    /// with a metadata-only frame) and returns the part of them the frame holds: all of
    /// them with bytes, those in the head otherwise (possibly none).
    ///
    /// # Panics
    /// If the range is outside the (logical) payload.
    pub fn data_mut_held(&mut self, offset: usize, len: usize) -> &mut [u8] {
        touch(self.page.len(), self.dirty, offset, len);
        let held = self.page.len() - HEADER_BYTES;
        let (start, end) = (offset.min(held), (offset + len).min(held));
        &mut self.page[HEADER_BYTES + start..HEADER_BYTES + end]
    }
}

impl<S: PageStore> Drop for PageWriteGuard<'_, S> {
    fn drop(&mut self) {
        let fr = &self.pool.frames[self.frame.index()];
        // Release the writer count before the latch: a flusher that holds the latch next
        // sees every modification made under it.
        fr.writers.fetch_sub(1, AcqRel);
        // SAFETY: the guard holds the latch exclusively.
        unsafe { fr.unlock(true) };
        fr.pins.fetch_sub(1, Release);
    }
}

// SAFETY: guards only unlock latches they hold, which parking_lot allows from any thread
// (it does not track owners); moving a guard to another thread is therefore sound.
unsafe impl<S: PageStore> Send for PageReadGuard<'_, S> {}
// SAFETY: as above.
unsafe impl<S: PageStore> Send for PageWriteGuard<'_, S> {}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::policy::Lru;
    use crate::BufferPool;
    use flashbuf_core::{DataMode, PageId};
    use flashbuf_device::MemDevice;
    use flashbuf_store::icl::{IclConfig, IclStore};
    use flashbuf_store::PageStore;

    /// The same edits through a pool of 64-byte metadata frames and one of whole pages
    /// give ICL the same dirty ranges of the logical page: the same logs, merges and
    /// device requests.
    #[test]
    fn metadata_frames_track_the_logical_pages_dirty_ranges() {
        let run = |data: DataMode| {
            let cfg = IclConfig {
                data,
                wob_bytes: 8192,
                log_pages: 16,
                ..IclConfig::with_page_size(4096)
            };
            let store = IclStore::create(MemDevice::new(0), cfg).unwrap();
            let pool = BufferPool::new(store, 4, Box::new(Lru::new(4))).unwrap();
            for round in 0..40u64 {
                for pid in 0..6u64 {
                    pool.with_write(PageId(pid), |w| {
                        // Bytes in the head (the stamp) and ranges far beyond it.
                        w.write(0, &round.to_le_bytes());
                        w.touch(200 + (pid as usize * 300) % 3000, 60);
                        let held = w.data_mut_held(10 + round as usize % 900, 40);
                        held.iter_mut().for_each(|b| *b ^= 1);
                        if round % 17 == 5 {
                            w.touch_all();
                        }
                    })
                    .unwrap();
                }
                if round % 9 == 0 {
                    pool.sync().unwrap();
                }
            }
            pool.sync().unwrap();
            let s = pool.store();
            let mut c = s.icl_stats().counters();
            c.retain(|(k, _)| !k.ends_with("_memory_bytes"));
            (c, s.device_stats(), s.icl_stats())
        };
        let (cb, db, sb) = run(DataMode::Bytes);
        let (cm, dm, _) = run(DataMode::Metadata);
        assert_eq!(cb, cm);
        assert_eq!(db, dm);
        assert!(sb.log_writes > 0 && sb.data_writes_whole > 0, "{sb:?}");
    }

    #[test]
    #[should_panic(expected = "beyond the payload")]
    fn a_metadata_frame_refuses_ranges_beyond_the_largest_page() {
        let cfg = IclConfig {
            data: DataMode::Metadata,
            ..IclConfig::with_page_size(4096)
        };
        let store = IclStore::create(MemDevice::new(0), cfg).unwrap();
        let pool = BufferPool::new(store, 2, Box::new(Lru::new(2))).unwrap();
        let mut w = pool.write(PageId(1)).unwrap();
        assert_eq!(w.data().len(), 32);
        w.touch(65_000, 600);
    }
}
