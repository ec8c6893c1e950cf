//! Write-back without eviction: `flush_all` (one pin and one latch at a time, waiting for
//! in-flight eviction write-backs) and `sync`.

use super::BufferPool;
use crate::frame::{DIRTY, VALID};
use crate::PoolError;
use flashbuf_core::{FrameId, PageId};
use flashbuf_store::PageStore;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

impl<S: PageStore> BufferPool<S> {
    /// Writes back one resident dirty frame (pinned by the caller) and tells the policy.
    pub(super) fn flush_frame(&self, f: FrameId) -> Result<bool, PoolError> {
        let fr = &self.frames[f.index()];
        fr.lock(true);
        let flags = fr.flags.load(Acquire);
        if flags & VALID == 0 || flags & DIRTY == 0 {
            // SAFETY: locked above.
            unsafe { fr.unlock(true) };
            return Ok(false);
        }
        let pid = PageId(fr.page_id.load(Relaxed));
        // SAFETY: latched exclusively.
        let dirty = unsafe { self.seal(f, pid) };
        // SAFETY: latched exclusively.
        let r = self
            .store
            .write_page(pid, unsafe { self.arena.page(f) }, &dirty);
        if r.is_ok() {
            fr.flags.fetch_and(!DIRTY, Relaxed);
            self.io.page_writes.fetch_add(1, Relaxed);
            let mut g = self.inner.lock();
            // Our own pin is not a writer; any pending writer will re-dirty the page.
            if fr.writers.load(Acquire) == 0 {
                g.policy.on_clean(f);
            }
        } else {
            // SAFETY: exclusive latch held; restore the ranges so nothing is forgotten.
            unsafe { fr.dirty_mut().union(&dirty) };
            if let Err(e) = &r {
                self.poison(&format!("write-back of {pid}"), e);
            }
        }
        // SAFETY: locked above.
        unsafe { fr.unlock(true) };
        r.map(|()| true).map_err(PoolError::from)
    }

    /// Writes back every dirty page (in page-id order, one pin and one latch at a time);
    /// returns how many pages were written. Pages stay resident and become clean. Pages
    /// that an eviction is writing back concurrently are waited for, so every page dirty
    /// when the call started has reached the store when it returns (regression tests
    /// `regression_pool_sync_waits_for_eviction`, `regression_pool_flush_pins_one_frame`).
    pub fn flush_all(&self) -> Result<usize, PoolError> {
        // Dirty (or being modified) pages now, and pages whose eviction write-back is in
        // flight. Nothing is pinned yet: pinning every dirty frame while waiting for each
        // latch in turn would starve concurrent misses.
        let (mut todo, mut wait_for): (Vec<(PageId, FrameId)>, Vec<PageId>) = {
            let g = self.inner.lock();
            g.check_poison()?;
            let mut v = Vec::new();
            for (i, fr) in self.frames.iter().enumerate() {
                if fr.flags.load(Relaxed) & (VALID | DIRTY) == VALID | DIRTY
                    || fr.writers.load(Relaxed) > 0
                {
                    let pid = PageId(fr.page_id.load(Relaxed));
                    if self.lookup(&g, pid) == Some(FrameId(i as u32)) {
                        v.push((pid, FrameId(i as u32)));
                    }
                }
            }
            (v, g.evicting.clone())
        };
        todo.sort_unstable();
        let mut written = 0;
        for &(pid, f) in &todo {
            {
                let g = self.inner.lock();
                g.check_poison()?;
                if self.lookup(&g, pid) != Some(f) {
                    // Evicted since: its write-back is done or in flight; wait for it below.
                    wait_for.push(pid);
                    continue;
                }
                self.frames[f.index()].pins.fetch_add(1, Relaxed);
            }
            let r = self.flush_frame(f);
            self.frames[f.index()].pins.fetch_sub(1, Release);
            if r? {
                written += 1;
            }
        }
        let mut g = self.inner.lock();
        while wait_for.iter().any(|p| g.evicting.contains(p)) {
            self.evicted.wait(&mut g);
        }
        g.check_poison()?;
        Ok(written)
    }

    /// Writes back every dirty page and syncs the store: everything modified before the
    /// call is durable when it returns `Ok`.
    pub fn sync(&self) -> Result<(), PoolError> {
        self.flush_all()?;
        if let Err(e) = self.store.sync() {
            self.poison("store sync", &e);
            return Err(e.into());
        }
        Ok(())
    }
}
