//! Counting the resident clean and dirty frames: the measurement behind FD-Buffer's
//! Figs. 4 and 5 (On et al., "FD-Buffer", IEEE TC 2014, §5.3: the number of clean pages
//! during TPC-C, and on average per algorithm).

use super::BufferPool;
use crate::frame::{DIRTY, VALID};
use flashbuf_core::PageId;
use flashbuf_store::PageStore;
use serde::Serialize;
use std::sync::atomic::Ordering::Acquire;

/// The resident frames of a pool at one moment, by state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ResidentCounts {
    /// Frames holding a valid page with no modification pending.
    pub clean_frames: usize,
    /// Frames holding a valid page with modifications not yet written back.
    pub dirty_frames: usize,
}

impl ResidentCounts {
    /// Frames holding a valid page.
    pub fn resident_frames(&self) -> usize {
        self.clean_frames + self.dirty_frames
    }
}

impl<S: PageStore> BufferPool<S> {
    /// Counts the resident frames by state, scanning every frame's flags under the pool
    /// lock (O(frames); a snapshot: a frame latched by another thread for writing may
    /// become dirty right after). Frames being loaded are not valid yet and not counted.
    pub fn resident_counts(&self) -> ResidentCounts {
        let _g = self.inner.lock();
        let mut c = ResidentCounts::default();
        for fr in self.frames.iter() {
            let flags = fr.flags.load(Acquire);
            if flags & VALID == 0 {
                continue;
            }
            if flags & DIRTY != 0 {
                c.dirty_frames += 1;
            } else {
                c.clean_frames += 1;
            }
        }
        c
    }

    /// Whether resident page `pid` is dirty (`None`: not resident). A snapshot, as
    /// [`BufferPool::resident_counts`].
    pub fn page_dirty(&self, pid: PageId) -> Option<bool> {
        let g = self.inner.lock();
        let f = self.lookup(&g, pid)?;
        let flags = self.frames.get(f.0 as usize)?.flags.load(Acquire);
        (flags & VALID != 0).then_some(flags & DIRTY != 0)
    }
}
