//! The miss path: a frame from `super::evict`, the old page written back, the new page
//! read into the frame with it latched exclusively; on failure the frame goes back.
//!
//! Two ways through it, one set of steps (`start_load`, the write-back, `read_into`):
//! `load` releases the pool lock for the store's I/O (the guards' path: other threads
//! go on fixing pages meanwhile); `load_locked` keeps it (`access_many`'s path, for a
//! replay: no lock is dropped and taken again, no pin or downgrade is published — the
//! atomics a single replay thread does not need). Both make the same policy calls in the
//! same order with the same arguments, so decisions cannot differ between them
//! (`tests/lru_differential.rs` replays through both).

use super::{BufferPool, Inner, Taken};
use crate::frame::{DIRTY, VALID};
use crate::policy::{Access, IoKind};
use crate::sync::MutexGuard;
use crate::PoolError;
use flashbuf_core::page;
use flashbuf_core::{DirtyRanges, FrameId, PageId};
use flashbuf_store::{PageStore, ReadOutcome, StoreError};
use std::sync::atomic::Ordering::{Relaxed, Release};

impl<S: PageStore> BufferPool<S> {
    /// Miss path: secure a frame, write back what it held, read `pid` into it. Returns the
    /// frame pinned and latched (shared for a read, exclusively for a write).
    pub(super) fn load(
        &self,
        mut g: MutexGuard<'_, Inner>,
        pid: PageId,
        access: Access,
    ) -> Result<FrameId, PoolError> {
        let write = access.is_write();
        // The read is certain: its copy moves towards the cache meanwhile.
        self.store.prefetch_page(pid);
        let taken = self.start_load(&mut g, pid, access, true)?;
        let f = taken.frame;
        let observe = g.observe_io;
        // The batch members leave `Inner::batch` now: the next miss refills it.
        let members = std::mem::take(&mut g.batch);
        drop(g);

        // Write back the old page (and the policy's cluster) with the frame latched.
        if taken.old_dirty.is_some() || !members.is_empty() {
            if let Err(e) = self.write_back_victim(f, taken.old_dirty, observe, &members) {
                self.abandon(f, pid, write, taken.old_dirty);
                return Err(e);
            }
        }

        let t0 = observe.then(|| self.store.device_stats().device_time_us);
        match self.read_into(f, pid, write) {
            Ok(outcome) => {
                // Outside the pool lock: the shared counters.
                self.io.page_reads.fetch_add(1, Relaxed);
                if outcome == ReadOutcome::Unwritten {
                    self.io.unwritten_reads.fetch_add(1, Relaxed);
                }
            }
            Err(e) => {
                self.abandon(f, pid, write, None);
                if poisons(&e) {
                    self.poison(&format!("read of {pid}"), &e);
                }
                return Err(e.into());
            }
        }
        if let Some(t0) = t0 {
            let dt = self.store.device_stats().device_time_us - t0;
            self.inner.lock().policy.observe_io(IoKind::Read, dt);
        }
        if !write {
            // SAFETY: held exclusively; readers may now share it.
            unsafe { self.frames[f.index()].downgrade() };
        }
        Ok(f)
    }

    /// The miss path under the pool lock held all along (`g`): the same steps as `load`.
    /// Returns the frame unpinned with its latch free; while the caller holds the lock
    /// nobody can pin it, so the caller has exclusive access to it (as after a hit).
    pub(super) fn load_locked(
        &self,
        g: &mut Inner,
        pid: PageId,
        access: Access,
    ) -> Result<FrameId, PoolError> {
        let write = access.is_write();
        // The read is certain: its copy moves towards the cache while the victim is chosen
        // and written back.
        self.store.prefetch_page(pid);
        // The pool lock is held until the frame is given back: no latch (`Frame::claim`).
        let taken = self.start_load(g, pid, access, false)?;
        let f = taken.frame;
        if taken.old_dirty.is_some() || !g.batch.is_empty() {
            // The member list leaves `g` for the write and comes back (no allocation).
            let members = std::mem::take(&mut g.batch);
            let t0 = g
                .observe_io
                .then(|| self.store.device_stats().device_time_us);
            let result = self.write_members(f, taken.old_dirty, &members);
            let dt = t0.map(|t0| self.store.device_stats().device_time_us - t0);
            self.end_write_back(g, f, taken.old_dirty, &members, &result, dt);
            g.batch = members;
            g.batch.clear();
            if let Err(e) = result {
                self.abandon_locked(g, f, pid, taken.old_dirty);
                return Err(e.into());
            }
        }
        let t0 = g
            .observe_io
            .then(|| self.store.device_stats().device_time_us);
        match self.read_into(f, pid, write) {
            Ok(outcome) => {
                // Under the pool lock: its counters, no atomics.
                g.stats.page_reads += 1;
                g.stats.unwritten_reads += u64::from(outcome == ReadOutcome::Unwritten);
            }
            Err(e) => {
                self.abandon_locked(g, f, pid, None);
                if poisons(&e) {
                    g.poison(&format!("read of {pid}"), &e);
                }
                return Err(e.into());
            }
        }
        if let Some(t0) = t0 {
            let dt = self.store.device_stats().device_time_us - t0;
            g.policy.observe_io(IoKind::Read, dt);
        }
        self.release_locked(f);
        Ok(f)
    }

    /// Under the pool lock: the policy's victim (or a free frame) for `pid`, counted as a
    /// miss, installed in the table and the policy; the frame pinned once and latched
    /// exclusively (without `latch`, claimed for a caller that keeps the pool lock), not
    /// yet valid.
    fn start_load(
        &self,
        g: &mut Inner,
        pid: PageId,
        access: Access,
        latch: bool,
    ) -> Result<Taken, PoolError> {
        g.policy.prepare_miss(pid, access);
        let taken = self.take_frame(g, latch)?;
        g.stats.misses += 1;
        let f = taken.frame;
        let fr = &self.frames[f.index()];
        fr.page_id.store(pid.0, Relaxed);
        fr.flags.store(0, Relaxed);
        fr.pins.store(1, Relaxed);
        fr.writers.store(u16::from(access.is_write()), Relaxed);
        self.table_insert(g, pid, f);
        g.policy.on_insert(f, pid, access);
        Ok(taken)
    }

    /// Reads `pid` into frame `f` (latched exclusively by the caller, or claimed under the
    /// pool lock) and makes it valid
    /// (and dirty for a write); the caller counts the read.
    fn read_into(&self, f: FrameId, pid: PageId, write: bool) -> Result<ReadOutcome, StoreError> {
        let fr = &self.frames[f.index()];
        // SAFETY: the caller latched the frame exclusively or claimed it under the pool lock
        // (`take_frame`): nobody else touches it.
        let buf = unsafe { self.arena.page_mut(f) };
        let outcome = self.store.read_page(pid, buf)?;
        // SAFETY: as above.
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
        Ok(outcome)
    }

    /// Gives back a frame whose load failed: out of the table and the policy, onto the free
    /// list, latch released. Threads waiting on it see it invalid and retry.
    pub(super) fn abandon(&self, f: FrameId, pid: PageId, write: bool, old_dirty: Option<PageId>) {
        let mut g = self.inner.lock();
        self.forget_frame(&mut g, f, pid, old_dirty);
        drop(g);
        // SAFETY: latched exclusively by this thread since take_frame.
        unsafe { self.frames[f.index()].unlock(true) };
        self.unpin(f, write);
    }

    /// `abandon` under the pool lock held all along.
    fn abandon_locked(&self, g: &mut Inner, f: FrameId, pid: PageId, old_dirty: Option<PageId>) {
        self.forget_frame(g, f, pid, old_dirty);
        self.release_locked(f);
    }

    /// Under the pool lock: a failed load's frame out of the table and the policy, onto
    /// the free list; the write-back of `old_dirty` (if any) no longer in flight.
    fn forget_frame(&self, g: &mut Inner, f: FrameId, pid: PageId, old_dirty: Option<PageId>) {
        g.stats.failed_loads += 1;
        self.table_remove(g, pid, f);
        g.policy.on_remove(f);
        self.frames[f.index()].flags.store(0, Release);
        g.free.push(f);
        if let Some(old) = old_dirty {
            g.evicting.retain(|p| *p != old);
            self.evicted.notify_all();
        }
    }

    /// Under the pool lock held since `start_load`: drops the pin `start_load` took (the
    /// frame was claimed without its latch). No other thread saw the pin (pins are taken
    /// under the lock), so plain stores suffice for the counts.
    fn release_locked(&self, f: FrameId) {
        let fr = &self.frames[f.index()];
        fr.writers.store(0, Relaxed);
        fr.pins.store(0, Relaxed);
    }
}

/// Whether a failed read stops the pool: a corrupt page or a bad request concerns that
/// page only; a device error (or a store already poisoned) stops it.
fn poisons(e: &StoreError) -> bool {
    matches!(e, StoreError::Device(_) | StoreError::Poisoned(_))
}
