//! The miss path: a frame from `super::evict`, the old page written back, the new page
//! read into the frame with it latched exclusively; on failure the frame goes back.

use super::BufferPool;
use super::Inner;
use crate::frame::{DIRTY, VALID};
use crate::policy::{Access, IoKind};
use crate::PoolError;
use flashbuf_core::page;
use flashbuf_core::{DirtyRanges, FrameId, PageId};
use flashbuf_store::{PageStore, ReadOutcome, StoreError};
use parking_lot::MutexGuard;
use std::sync::atomic::Ordering::{Relaxed, Release};

impl<S: PageStore> BufferPool<S> {
    /// Miss path: secure a frame, write back what it held, read `pid` into it.
    pub(super) fn load(
        &self,
        mut g: MutexGuard<'_, Inner>,
        pid: PageId,
        access: Access,
    ) -> Result<FrameId, PoolError> {
        let write = access.is_write();
        g.policy.prepare_miss(pid, access);
        let taken = self.take_frame(&mut g)?;
        g.stats.misses += 1;
        let f = taken.frame;
        let fr = &self.frames[f.index()];
        fr.page_id.store(pid.0, Relaxed);
        fr.flags.store(0, Relaxed);
        fr.pins.store(1, Relaxed);
        fr.writers.store(u16::from(write), Relaxed);
        self.table_insert(&mut g, pid, f);
        g.policy.on_insert(f, pid, access);
        let observe = g.observe_io;
        let has_batch = !g.batch.is_empty();
        drop(g);

        // Write back the old page (and the policy's cluster) with the frame latched.
        if taken.old_dirty.is_some() || has_batch {
            if let Err(e) = self.write_back_victim(f, taken.old_dirty, observe) {
                self.abandon(f, pid, write, taken.old_dirty);
                return Err(e);
            }
        }

        // SAFETY: `take_frame` latched the frame exclusively for us.
        let buf = unsafe { self.arena.page_mut(f) };
        let t0 = observe.then(|| self.store.device_stats().device_time_us);
        let outcome = match self.store.read_page(pid, buf) {
            Ok(o) => o,
            Err(e) => {
                self.abandon(f, pid, write, None);
                // A corrupt page or a bad request concerns that page only; a device error
                // (or a store already poisoned) stops the pool.
                if matches!(e, StoreError::Device(_) | StoreError::Poisoned(_)) {
                    self.poison(&format!("read of {pid}"), &e);
                }
                return Err(e.into());
            }
        };
        if let Some(t0) = t0 {
            let dt = self.store.device_stats().device_time_us - t0;
            self.inner.lock().policy.observe_io(IoKind::Read, dt);
        }
        // SAFETY: exclusive latch held.
        let dirty = unsafe { fr.dirty_mut() };
        if outcome == ReadOutcome::Unwritten {
            page::init_fresh(buf, pid);
            // The store has nothing of this page: all of it is new.
            *dirty = DirtyRanges::full(crate::frame::dirty_extent(self.page_size));
        } else {
            dirty.clear();
        }
        fr.flags
            .store(VALID | if write { DIRTY } else { 0 }, Release);
        self.io.page_reads.fetch_add(1, Relaxed);
        if outcome == ReadOutcome::Unwritten {
            self.io.unwritten_reads.fetch_add(1, Relaxed);
        }
        if !write {
            // SAFETY: held exclusively; readers may now share it.
            unsafe { fr.downgrade() };
        }
        Ok(f)
    }

    /// Gives back a frame whose load failed: out of the table and the policy, onto the free
    /// list, latch released. Threads waiting on it see it invalid and retry.
    pub(super) fn abandon(&self, f: FrameId, pid: PageId, write: bool, old_dirty: Option<PageId>) {
        let fr = &self.frames[f.index()];
        self.io.failed_loads.fetch_add(1, Relaxed);
        let mut g = self.inner.lock();
        self.table_remove(&mut g, pid, f);
        g.policy.on_remove(f);
        fr.flags.store(0, Release);
        g.free.push(f);
        if let Some(old) = old_dirty {
            g.evicting.retain(|p| *p != old);
            self.evicted.notify_all();
        }
        drop(g);
        // SAFETY: latched exclusively by this thread since take_frame.
        unsafe { fr.unlock(true) };
        self.unpin(f, write);
    }
}
