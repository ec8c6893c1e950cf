//! Eviction: a free frame or the policy's victim (and the batch members it names, for
//! write clustering), and the write-back of the victim's old page with its batch in one
//! store call.

use super::{BufferPool, Inner, Taken};
use crate::frame::{DIRTY, VALID};
use crate::policy::{IoKind, Victim};
use crate::PoolError;
use flashbuf_core::page::{self, HEADER_BYTES};
use flashbuf_core::{DirtyRanges, FrameId, PageId};
use flashbuf_store::{PageStore, PageWrite, StoreError};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

impl<S: PageStore> BufferPool<S> {
    /// Under the pool lock: a free frame, or the policy's victim (removed from the table
    /// and the policy). The frame comes back latched exclusively (with `latch`; without,
    /// its latch free, for a caller that keeps the pool lock while it uses the frame, see
    /// `Frame::claim`). Batch members chosen by the policy are left in `g.batch`, each
    /// pinned and latched exclusively.
    pub(super) fn take_frame(&self, g: &mut Inner, latch: bool) -> Result<Taken, PoolError> {
        g.batch.clear();
        // A frame whose load failed may still carry the pin of a thread about to retry;
        // take a free frame nobody pins.
        if let Some(i) = g
            .free
            .iter()
            .rposition(|f| self.frames[f.index()].pins.load(Acquire) == 0)
        {
            let f = g.free.swap_remove(i);
            if self.frames[f.index()].claim(latch) {
                return Ok(Taken {
                    frame: f,
                    old_dirty: None,
                });
            }
            g.free.push(f);
        }
        let frames = &self.frames;
        let evictable = |f: FrameId| {
            let fr = &frames[f.index()];
            fr.pins.load(Acquire) == 0 && fr.flags.load(Relaxed) & VALID != 0
        };
        let inner = g;
        let victim = match inner.policy.choose_victim(&evictable) {
            Some(v) => v,
            None => {
                return Err(PoolError::AllPinned {
                    frames_count: self.frames.len(),
                })
            }
        };
        let v = victim.evicted();
        if let Victim::Batch { write_back, .. } = victim {
            inner.batch.extend_from_slice(write_back);
        }
        if v.index() >= self.frames.len() || !evictable(v) {
            return Err(PoolError::Policy {
                policy: inner.policy.name(),
                detail: format!("chose {v}, which is pinned, free or unknown"),
            });
        }
        let fr = &self.frames[v.index()];
        if !fr.claim(latch) {
            return Err(PoolError::Policy {
                policy: inner.policy.name(),
                detail: format!("chose {v}, whose latch is held"),
            });
        }
        let old = PageId(fr.page_id.load(Relaxed));
        let dirty = fr.flags.load(Relaxed) & DIRTY != 0;
        if dirty {
            // Its write-back follows: hint the store, so the cache miss on where the page
            // goes overlaps the rest of the eviction.
            self.store.prefetch_page(old);
        }
        self.table_remove(inner, old, v);
        inner.policy.on_remove(v);
        inner.stats.evictions += 1;
        if dirty {
            inner.stats.dirty_evictions += 1;
            inner.evicting.push(old);
        }
        // Secure the batch members: unpinned, valid, dirty, and latch free right now.
        let mut k = 0;
        for i in 0..inner.batch.len() {
            let m = inner.batch[i];
            if m == v {
                inner.batch[k] = m;
                k += 1;
                continue;
            }
            let Some(mf) = self.frames.get(m.index()) else {
                continue;
            };
            let flags = mf.flags.load(Relaxed);
            if mf.pins.load(Acquire) == 0
                && flags & VALID != 0
                && flags & DIRTY != 0
                && mf.try_lock_exclusive()
            {
                mf.pins.store(1, Relaxed);
                inner.batch[k] = m;
                k += 1;
            }
        }
        inner.batch.truncate(k);
        // A batch of the victim alone is a plain eviction.
        if inner.batch.len() == 1 && inner.batch[0] == v {
            inner.batch.clear();
        }
        Ok(Taken {
            frame: v,
            old_dirty: dirty.then_some(old),
        })
    }

    /// Seals the page in frame `f` (latched exclusively) for writing as `pid`, and returns
    /// its dirty ranges (header included) after clearing them.
    ///
    /// # Safety
    /// The caller holds `f`'s latch exclusively, or the pool lock with `f` unpinned (as
    /// `load_locked` does, see `Frame::claim`).
    pub(super) unsafe fn seal(&self, f: FrameId, pid: PageId) -> DirtyRanges {
        // SAFETY: per the contract.
        let (buf, dirty) = unsafe { (self.arena.page_mut(f), self.frames[f.index()].dirty_mut()) };
        let version = page::version_of(buf) + 1;
        page::seal(buf, pid, version);
        let mut d = *dirty;
        d.add(0, HEADER_BYTES);
        dirty.clear();
        d
    }

    /// Writes back the evicted frame's old page (if dirty) and the batch `members` (taken
    /// out of `Inner::batch` under the lock by the caller, so another miss cannot replace
    /// them meanwhile), in the policy's order, as one store call, with the pool lock
    /// released (taken again to record the outcome). Frame `f` holds the old page's bytes.
    pub(super) fn write_back_victim(
        &self,
        f: FrameId,
        old_dirty: Option<PageId>,
        observe: bool,
        members: &[FrameId],
    ) -> Result<(), PoolError> {
        let t0 = observe.then(|| self.store.device_stats().device_time_us);
        let result = self.write_members(f, old_dirty, members);
        let dt = t0.map(|t0| self.store.device_stats().device_time_us - t0);
        let mut g = self.inner.lock();
        self.end_write_back(&mut g, f, old_dirty, members, &result, dt);
        drop(g);
        result.map(|_| ()).map_err(PoolError::from)
    }

    /// The store call of a write-back: `old_dirty` from frame `f` and the batch `members`
    /// (every one latched exclusively by the caller, and `f` too, or the pool lock held
    /// throughout with `f` claimed without its latch); returns the pages written.
    pub(super) fn write_members(
        &self,
        f: FrameId,
        old_dirty: Option<PageId>,
        members: &[FrameId],
    ) -> Result<u64, StoreError> {
        if members.is_empty() {
            let old = old_dirty.unwrap_or_else(|| unreachable!("no write-back requested"));
            // SAFETY: f is latched exclusively by this thread.
            let dirty = unsafe { self.seal(f, old) };
            // SAFETY: as above.
            let bytes = unsafe { self.arena.page(f) };
            return self.store.write_page(old, bytes, &dirty).map(|()| 1);
        }
        let mut writes = Vec::with_capacity(members.len() + 1);
        let mut victim_in_batch = false;
        for &m in members {
            let pid = if m == f {
                victim_in_batch = true;
                match old_dirty {
                    Some(p) => p,
                    None => continue, // a clean victim needs no write
                }
            } else {
                PageId(self.frames[m.index()].page_id.load(Relaxed))
            };
            // SAFETY: every member (and f) is latched exclusively by this thread.
            let dirty = unsafe { self.seal(m, pid) };
            writes.push((m, pid, dirty));
        }
        if let (Some(old), false) = (old_dirty, victim_in_batch) {
            // SAFETY: as above.
            let dirty = unsafe { self.seal(f, old) };
            writes.push((f, old, dirty));
        }
        let batch: Vec<PageWrite<'_>> = writes
            .iter()
            .map(|&(m, pid, dirty)| PageWrite {
                pid,
                // SAFETY: latched exclusively; no one else writes these bytes.
                page: unsafe { self.arena.page(m) },
                dirty,
            })
            .collect();
        let n = batch.len() as u64;
        self.store.write_pages(&batch).map(|()| n)
    }

    /// Under the pool lock, after `write_members`: poisons the pool on failure; counts the
    /// pages, tells the policy the time per page (`dt_us`, if observed) and which members
    /// became clean; releases the members (not `f`); ends the in-flight write-back of
    /// `old_dirty` on success.
    pub(super) fn end_write_back(
        &self,
        g: &mut Inner,
        f: FrameId,
        old_dirty: Option<PageId>,
        members: &[FrameId],
        result: &Result<u64, StoreError>,
        dt_us: Option<f64>,
    ) {
        let ok = result.is_ok();
        if let Err(e) = result {
            g.poison("write-back of an evicted page", e);
        }
        if let Ok(n) = *result {
            g.stats.page_writes += n;
            if !members.is_empty() {
                g.stats.write_batches += 1;
            }
            if let Some(dt) = dt_us {
                g.policy.observe_io(IoKind::Write, dt / n.max(1) as f64);
            }
        }
        for &m in members {
            if m == f {
                continue;
            }
            let mf = &self.frames[m.index()];
            if ok {
                mf.flags.fetch_and(!DIRTY, Relaxed);
                if mf.writers.load(Acquire) == 0 {
                    g.policy.on_clean(m);
                }
            }
            // SAFETY: latched exclusively in take_frame.
            unsafe { mf.unlock(true) };
            mf.pins.fetch_sub(1, Release);
        }
        if ok {
            if let Some(old) = old_dirty {
                g.evicting.retain(|p| *p != old);
                self.evicted.notify_all();
            }
        }
    }
}
