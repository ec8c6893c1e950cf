//! Frame headers and the page arena.

use crate::sync::{AtomicU16, AtomicU64, Latch};
use flashbuf_core::page::MAX_PAGE_SIZE;
use flashbuf_core::{AlignedBuf, DirtyRanges, FrameId, METADATA_PAGE_BYTES};
use std::cell::UnsafeCell;

/// The frame holds a loaded, valid page.
pub(crate) const VALID: u16 = 1;
/// The page has modifications not yet written back.
pub(crate) const DIRTY: u16 = 2;

/// Bytes of the page the dirty ranges of a frame of `frame_bytes` describe: the frame's
/// page itself, or — for a metadata-only frame (`--data none`, [`METADATA_PAGE_BYTES`]),
/// which holds the head of a larger logical page — the logical page, of any size up to
/// [`MAX_PAGE_SIZE`]. Such a frame records its ranges in the logical page's offsets, and a
/// range that reaches [`MAX_PAGE_SIZE`] runs to the end of whatever page the store keeps
/// (stores clip ranges to their page), so a whole-page mark needs no page size.
#[inline]
pub(crate) fn dirty_extent(frame_bytes: usize) -> usize {
    if frame_bytes == METADATA_PAGE_BYTES {
        MAX_PAGE_SIZE
    } else {
        frame_bytes
    }
}

/// Per-frame metadata (40 bytes). Protection:
/// - `page_id`, `pins` and `writers` change only under the pool lock (pins and writers are
///   also decremented by guards without it, after releasing the latch);
/// - `flags` and `dirty` are read and written only by the holder of the latch
///   (exclusive for writes), or under the pool lock while the frame is unpinned.
pub(crate) struct Frame {
    pub(crate) latch: Latch,
    pub(crate) page_id: AtomicU64,
    pub(crate) pins: AtomicU16,
    pub(crate) writers: AtomicU16,
    pub(crate) flags: AtomicU16,
    pub(crate) dirty: UnsafeCell<DirtyRanges>,
}

// Shuttle's primitives (feature `shuttle`, schedule tests only) are larger.
#[cfg(not(feature = "shuttle"))]
const _: () = assert!(std::mem::size_of::<Frame>() <= 40);

impl Frame {
    pub(crate) fn new() -> Self {
        Self {
            latch: Latch::new(),
            page_id: AtomicU64::new(u64::MAX),
            pins: AtomicU16::new(0),
            writers: AtomicU16::new(0),
            flags: AtomicU16::new(0),
            dirty: UnsafeCell::new(DirtyRanges::new()),
        }
    }

    #[inline]
    pub(crate) fn lock(&self, exclusive: bool) {
        // No guard: the frame's pin protocol says who unlocks.
        if exclusive {
            self.latch.lock_exclusive();
        } else {
            self.latch.lock_shared();
        }
    }

    /// # Safety
    /// The caller holds the latch in the given mode.
    #[inline]
    pub(crate) unsafe fn unlock(&self, exclusive: bool) {
        // SAFETY: per the contract the latch is held in this mode.
        unsafe {
            if exclusive {
                self.latch.unlock_exclusive()
            } else {
                self.latch.unlock_shared()
            }
        }
    }

    #[inline]
    pub(crate) fn try_lock_exclusive(&self) -> bool {
        self.latch.try_lock_exclusive()
    }

    /// `try_lock_exclusive` when `latch`; otherwise only whether it would succeed (the
    /// latch is free), for a caller that holds the pool lock on an unpinned frame all the
    /// while it uses the frame: nobody can take the latch meanwhile (it takes a pin under
    /// the pool lock first), so the caller has exclusive access without it.
    #[inline]
    pub(crate) fn claim(&self, latch: bool) -> bool {
        if latch {
            self.try_lock_exclusive()
        } else {
            !self.latch.is_locked()
        }
    }

    /// # Safety
    /// The caller holds the latch exclusively.
    #[inline]
    pub(crate) unsafe fn downgrade(&self) {
        // SAFETY: per the contract.
        unsafe { self.latch.downgrade() };
    }

    /// # Safety
    /// The caller holds the latch exclusively.
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn dirty_mut(&self) -> &mut DirtyRanges {
        // SAFETY: the exclusive latch gives exclusive access.
        unsafe { &mut *self.dirty.get() }
    }
}

// SAFETY: every field is either atomic or guarded by the latch (see the struct docs).
unsafe impl Sync for Frame {}

/// The page bytes of every frame, in one aligned allocation.
pub(crate) struct Arena {
    /// Owns the allocation; never accessed through after construction.
    _buf: AlignedBuf,
    /// Base pointer taken once from the owned buffer; all page slices derive from it.
    base: std::ptr::NonNull<u8>,
    page_size: usize,
    frames_count: usize,
}

// SAFETY: access to each page's bytes is serialised by that frame's latch.
unsafe impl Sync for Arena {}
// SAFETY: the arena owns its allocation.
unsafe impl Send for Arena {}

impl Arena {
    pub(crate) fn new(frames_count: usize, page_size: usize) -> Self {
        let mut buf = AlignedBuf::zeroed(frames_count * page_size, 4096);
        let base = std::ptr::NonNull::new(buf.as_mut_ptr())
            .unwrap_or_else(|| unreachable!("AlignedBuf pointers are never null"));
        Self {
            _buf: buf,
            base,
            page_size,
            frames_count,
        }
    }

    /// # Safety
    /// The caller holds frame `f`'s latch (shared or exclusive) for the life of the slice.
    #[inline]
    pub(crate) unsafe fn page(&self, f: FrameId) -> &[u8] {
        debug_assert!(f.index() < self.frames_count);
        let at = f.index() * self.page_size;
        // SAFETY: in bounds; no exclusive reference exists while the latch is held.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr().add(at), self.page_size) }
    }

    /// # Safety
    /// The caller holds frame `f`'s latch exclusively for the life of the slice.
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn page_mut(&self, f: FrameId) -> &mut [u8] {
        debug_assert!(f.index() < self.frames_count);
        let at = f.index() * self.page_size;
        // SAFETY: in bounds; the exclusive latch makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr().add(at), self.page_size) }
    }
}
