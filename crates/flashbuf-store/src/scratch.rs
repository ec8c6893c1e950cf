//! Reused I/O buffers: the buffers a store needs for one operation (a staged write's
//! slot image, a flush's pages) are taken from here and come back when dropped, instead
//! of a fresh zeroed allocation each time. Before this, StableBuffer allocated, zeroed and
//! freed a page per write-back and all of a flush's pages per flush: the zeroing alone
//! was 0.7 % and 1.0 % of a full-bytes replay's samples (TPC-C, `perf`), 16.5 KB
//! allocated per 8 KB write (`tests/regression_stable_buffer_buffers.rs`). ICL takes
//! from its own pool the log page a read finds its page's log in and a WOB flush's log
//! pages (10.3 KB allocated per write-and-read step before, 2.1 KB after:
//! `tests/regression_icl_log_store_buffers.rs`).
//!
//! A buffer's contents when taken are whatever its last user left: a caller writes every
//! byte it uses before reading it (a copy of the page, a device read of the whole range).

use flashbuf_core::AlignedBuf;
use parking_lot::Mutex;
use std::ops::{Deref, DerefMut};

/// Alignment of every buffer (O_DIRECT's and a page's).
const ALIGN: usize = 4096;

/// Free buffers, at most `keep` of them.
#[derive(Debug)]
pub(crate) struct Scratch {
    free: Mutex<Vec<AlignedBuf>>,
    keep: usize,
}

impl Scratch {
    /// A pool that keeps up to `keep` free buffers (about as many as operations that run
    /// at once; more are allocated when needed and dropped when given back).
    pub(crate) fn new(keep: usize) -> Self {
        Self {
            free: Mutex::new(Vec::with_capacity(keep)),
            keep,
        }
    }

    /// A buffer of `len` bytes, 4 KiB-aligned, contents unspecified (module docs): the
    /// smallest free one at least that large (a page-sized request does not take a
    /// flush's buffer), else a new one (then the smallest free one is dropped, so that a
    /// growing size does not leave small buffers behind).
    pub(crate) fn take(&self, len: usize) -> ScratchBuf<'_> {
        let mut free = self.free.lock();
        let fit = (0..free.len())
            .filter(|&i| free[i].len() >= len)
            .min_by_key(|&i| free[i].len());
        let buf = match fit {
            Some(i) => free.swap_remove(i),
            None => {
                if let Some(i) = (0..free.len()).min_by_key(|&i| free[i].len()) {
                    free.swap_remove(i);
                }
                drop(free);
                AlignedBuf::zeroed(len, ALIGN)
            }
        };
        ScratchBuf {
            buf: Some(buf),
            len,
            home: self,
        }
    }

    /// Bytes of the free buffers held.
    pub(crate) fn held_bytes(&self) -> usize {
        self.free.lock().iter().map(|b| b.len()).sum()
    }

    /// Free buffers held (for tests).
    #[cfg(test)]
    fn free_count(&self) -> usize {
        self.free.lock().len()
    }
}

/// A buffer taken from a [`Scratch`]; its first `len` bytes are the caller's, and it goes
/// back to the pool when dropped.
#[derive(Debug)]
pub(crate) struct ScratchBuf<'a> {
    /// Always `Some` until dropped.
    buf: Option<AlignedBuf>,
    len: usize,
    home: &'a Scratch,
}

impl Deref for ScratchBuf<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.buf.as_deref().map_or(&[], |b| &b[..self.len])
    }
}

impl DerefMut for ScratchBuf<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        let len = self.len;
        self.buf.as_deref_mut().map_or(&mut [], |b| &mut b[..len])
    }
}

impl Drop for ScratchBuf<'_> {
    fn drop(&mut self) {
        let Some(buf) = self.buf.take() else { return };
        let mut free = self.home.free.lock();
        if free.len() < self.home.keep {
            free.push(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_given_back_is_reused_for_a_request_it_fits() {
        let s = Scratch::new(2);
        let first = {
            let mut b = s.take(8192);
            assert_eq!(b.len(), 8192);
            assert_eq!(b.as_ptr() as usize % ALIGN, 0);
            b.fill(7);
            b.as_ptr() as usize
        };
        assert_eq!(s.free_count(), 1);
        let b = s.take(4096);
        assert_eq!(b.len(), 4096, "only the requested length is visible");
        assert_eq!(b.as_ptr() as usize, first, "the same allocation");
        assert_eq!(s.free_count(), 0);
    }

    #[test]
    fn a_larger_request_allocates_and_drops_the_smallest_free_buffer() {
        let s = Scratch::new(2);
        drop((s.take(4096), s.take(8192)));
        assert_eq!(s.free_count(), 2);
        let big = s.take(3 * 8192);
        assert_eq!(big.len(), 3 * 8192);
        assert_eq!(s.free_count(), 1, "the 4 KiB buffer was dropped");
        let kept = s.take(8192);
        assert!(kept.len() == 8192);
        drop((big, kept));
        assert_eq!(s.free_count(), 2);
        assert_eq!(s.held_bytes(), 4 * 8192);
    }

    #[test]
    fn a_request_takes_the_smallest_buffer_it_fits() {
        let s = Scratch::new(2);
        let (big, small) = (s.take(64 * 8192), s.take(8192));
        let small_at = small.as_ptr() as usize;
        drop((big, small));
        let page = s.take(4096);
        assert_eq!(
            page.as_ptr() as usize,
            small_at,
            "not the flush-sized buffer"
        );
        let flush = s.take(32 * 8192);
        assert_eq!(flush.len(), 32 * 8192);
        assert_eq!(s.free_count(), 0, "both in use, nothing allocated");
    }

    #[test]
    fn at_most_keep_buffers_stay_free() {
        let s = Scratch::new(1);
        let (a, b, c) = (s.take(512), s.take(512), s.take(512));
        drop((a, b, c));
        assert_eq!(s.free_count(), 1);
        let s0 = Scratch::new(0);
        drop(s0.take(512));
        assert_eq!(s0.free_count(), 0);
    }
}
