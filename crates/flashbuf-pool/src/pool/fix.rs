//! The ways in: guards (`read`/`write`), closures (`with_read`/`with_write`) and
//! `access_many`, the hit path under the pool lock, and `fix`, which pins a resident page
//! or takes the miss path (`super::load`).

use super::{BufferPool, Inner, PageAccess, Probe, ACCESS_RUN_MAX, ALL_PINNED_RETRIES};
use super::{PageReadGuard, PageWriteGuard, PageWriter};
use crate::frame::{DIRTY, VALID};
use crate::policy::Access;
use crate::PoolError;
use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::{FrameId, PageId};
use flashbuf_store::PageStore;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

impl<S: PageStore> BufferPool<S> {
    /// Fixes `pid` for reading: loads it on a miss; many readers may hold it at once.
    pub fn read(&self, pid: PageId) -> Result<PageReadGuard<'_, S>, PoolError> {
        let frame = self.fix(pid, Access::Read)?;
        Ok(PageReadGuard { pool: self, frame })
    }

    /// Fixes `pid` for writing: loads it on a miss; exclusive; the page becomes dirty.
    pub fn write(&self, pid: PageId) -> Result<PageWriteGuard<'_, S>, PoolError> {
        let frame = self.fix(pid, Access::Write)?;
        Ok(PageWriteGuard { pool: self, frame })
    }

    /// Runs `f` on the payload of `pid` (read access). For short accesses: when the page
    /// is resident and unpinned, `f` runs under the pool lock without pinning or latching
    /// (two atomic operations instead of nine), so it must be brief and must not touch the
    /// pool; otherwise this falls back to [`BufferPool::read`].
    pub fn with_read<R>(&self, pid: PageId, f: impl FnOnce(&[u8]) -> R) -> Result<R, PoolError> {
        {
            let mut g = self.inner.lock();
            g.check_poison()?;
            if let Some(fr) = self.exclusive_hit(&mut g, pid, Access::Read) {
                // SAFETY: `exclusive_hit` established that no guard exists or can be
                // created while we hold the pool lock.
                let page = unsafe { self.arena.page(fr) };
                return Ok(f(&page[HEADER_BYTES..]));
            }
        }
        let guard = self.read(pid)?;
        Ok(f(guard.data()))
    }

    /// Runs `f` with write access to `pid` (the page becomes dirty; ranges written through
    /// the [`PageWriter`] are recorded). Same fast path and rules as
    /// [`BufferPool::with_read`]; otherwise falls back to [`BufferPool::write`].
    pub fn with_write<R>(
        &self,
        pid: PageId,
        f: impl FnOnce(&mut PageWriter<'_>) -> R,
    ) -> Result<R, PoolError> {
        {
            let mut g = self.inner.lock();
            g.check_poison()?;
            if let Some(fr) = self.exclusive_hit(&mut g, pid, Access::Write) {
                let frame = &self.frames[fr.index()];
                let flags = frame.flags.load(Relaxed);
                if flags & DIRTY == 0 {
                    frame.flags.store(flags | DIRTY, Relaxed);
                }
                // SAFETY: as in `with_read`; exclusive access to bytes and dirty ranges.
                let mut w = unsafe { PageWriter::new(self.arena.page_mut(fr), frame.dirty_mut()) };
                return Ok(f(&mut w));
            }
        }
        let mut guard = self.write(pid)?;
        let mut w = guard.writer();
        Ok(f(&mut w))
    }

    /// Accesses many pages in order: `key(i)` names the `i`-th page and access for `i` in
    /// `0..n`, and `f(i, page)` runs on it. Runs of accesses are served under one hold of
    /// the pool lock (at most [`ACCESS_RUN_MAX`] per hold, so other threads get their
    /// turn), misses included: a plain miss is loaded with the lock held all along (the
    /// store's I/O too — for a replay, where no other thread waits: no lock is dropped
    /// and retaken, no pin published). A pinned page, one being written back, or a miss
    /// that finds every frame pinned drops the lock and takes the guard path, which
    /// waits. Decisions, counts and store calls are exactly those of the same accesses
    /// made one by one. `f` must be brief and must not touch the pool.
    ///
    /// On error, returns the index of the access that failed with the error; accesses
    /// before it were made.
    pub fn access_many<K, F>(
        &self,
        n: usize,
        mut key: K,
        mut f: F,
    ) -> Result<(), (usize, PoolError)>
    where
        K: FnMut(usize) -> (PageId, Access),
        F: FnMut(usize, PageAccess<'_>),
    {
        let mut i = 0;
        while i < n {
            let mut g = self.inner.lock();
            if let Err(e) = g.check_poison() {
                return Err((i, e));
            }
            let stop = n.min(i + ACCESS_RUN_MAX);
            let mut waits = None;
            while i < stop {
                let (pid, access) = key(i);
                let fr = match self.probe(&mut g, pid, access) {
                    Probe::Hit(fr) => fr,
                    Probe::Miss if !g.evicting.contains(&pid) => {
                        match self.load_locked(&mut g, pid, access) {
                            Ok(fr) => fr,
                            Err(PoolError::AllPinned { .. }) => {
                                waits = Some((pid, access));
                                break;
                            }
                            Err(e) => return Err((i, e)),
                        }
                    }
                    Probe::Miss | Probe::Busy => {
                        waits = Some((pid, access));
                        break;
                    }
                };
                // SAFETY: `probe` (a hit) or `load_locked` (a miss) established exclusive
                // access under the lock, which we still hold.
                unsafe { self.call_exclusive(fr, access, i, &mut f) };
                i += 1;
            }
            drop(g);
            let Some((pid, access)) = waits else {
                continue;
            };
            let r = match access {
                Access::Read => self.read(pid).map(|g| f(i, PageAccess::Read(g.data()))),
                Access::Write => self
                    .write(pid)
                    .map(|mut g| f(i, PageAccess::Write(g.writer()))),
            };
            r.map_err(|e| (i, e))?;
            i += 1;
        }
        Ok(())
    }

    /// Runs `f` on frame `fr` for access `i`.
    ///
    /// # Safety
    /// The caller holds the pool lock and `fr` is unpinned (see `exclusive_hit`).
    #[inline]
    pub(super) unsafe fn call_exclusive<F>(&self, fr: FrameId, access: Access, i: usize, f: &mut F)
    where
        F: FnMut(usize, PageAccess<'_>),
    {
        let frame = &self.frames[fr.index()];
        // One call site for `f`, so that the compiler can inline it into the loop.
        let page = match access {
            Access::Read => {
                // SAFETY: per the contract.
                let page = unsafe { self.arena.page(fr) };
                PageAccess::Read(&page[HEADER_BYTES..])
            }
            Access::Write => {
                let flags = frame.flags.load(Relaxed);
                if flags & DIRTY == 0 {
                    frame.flags.store(flags | DIRTY, Relaxed);
                }
                // SAFETY: per the contract.
                PageAccess::Write(unsafe {
                    PageWriter::new(self.arena.page_mut(fr), frame.dirty_mut())
                })
            }
        };
        f(i, page);
    }

    /// Under the pool lock: if `pid` is resident, valid and unpinned, counts the hit, tells
    /// the policy, and returns its frame. While the lock is held nobody can pin the frame,
    /// so the caller has exclusive access to it.
    #[inline]
    pub(super) fn exclusive_hit(
        &self,
        g: &mut Inner,
        pid: PageId,
        access: Access,
    ) -> Option<FrameId> {
        match self.probe(g, pid, access) {
            Probe::Hit(f) => Some(f),
            Probe::Miss | Probe::Busy => None,
        }
    }

    /// Under the pool lock: a hit on an unpinned valid page is counted and told to the
    /// policy (the caller then has exclusive access to the frame); otherwise says whether
    /// the page is absent or present but pinned or loading.
    ///
    /// Inlined into every caller: out of line (as the compiler chose once the page table's
    /// direct index made it smaller), its call saved and restored registers on every
    /// reference of `access_many`, ≈ 25 instructions.
    #[inline(always)]
    pub(super) fn probe(&self, g: &mut Inner, pid: PageId, access: Access) -> Probe {
        let Some(f) = self.lookup(g, pid) else {
            return Probe::Miss;
        };
        let fr = &self.frames[f.index()];
        if fr.pins.load(Acquire) != 0 || fr.flags.load(Relaxed) & VALID == 0 {
            return Probe::Busy;
        }
        g.stats.hits += 1;
        g.policy.on_hit(f, access);
        Probe::Hit(f)
    }

    #[inline]
    pub(super) fn page_of(&self, f: FrameId) -> PageId {
        PageId(self.frames[f.index()].page_id.load(Relaxed))
    }

    #[inline]
    pub(super) fn lookup(&self, g: &Inner, pid: PageId) -> Option<FrameId> {
        g.table.find(pid, |f| self.page_of(f))
    }

    pub(super) fn table_remove(&self, g: &mut Inner, pid: PageId, frame: FrameId) {
        let removed = g.table.remove(pid, frame, |f| self.page_of(f));
        debug_assert!(removed, "{pid} in {frame} missing from the page table");
    }

    pub(super) fn table_insert(&self, g: &mut Inner, pid: PageId, frame: FrameId) {
        g.table.insert(pid, frame);
    }

    /// Releases a pin taken by `fix` (after the latch was released).
    #[inline]
    pub(super) fn unpin(&self, f: FrameId, write: bool) {
        let fr = &self.frames[f.index()];
        if write {
            fr.writers.fetch_sub(1, Release);
        }
        fr.pins.fetch_sub(1, Release);
    }

    pub(super) fn fix(&self, pid: PageId, access: Access) -> Result<FrameId, PoolError> {
        let write = access.is_write();
        let mut waited = 0u32;
        loop {
            let mut g = self.inner.lock();
            g.check_poison()?;
            if let Some(f) = self.lookup(&g, pid) {
                let fr = &self.frames[f.index()];
                fr.pins.fetch_add(1, Relaxed);
                if write {
                    fr.writers.fetch_add(1, Relaxed);
                }
                g.stats.hits += 1;
                g.policy.on_hit(f, access);
                drop(g);
                fr.lock(write);
                if fr.flags.load(Acquire) & VALID == 0 {
                    // The load of this page failed; retry (and meet the error ourselves).
                    // SAFETY: locked just above in this mode.
                    unsafe { fr.unlock(write) };
                    self.unpin(f, write);
                    continue;
                }
                if write {
                    // Flags change only under the exclusive latch (held) or under the pool
                    // lock while unpinned (we hold a pin): a plain store suffices.
                    let flags = fr.flags.load(Relaxed);
                    if flags & DIRTY == 0 {
                        fr.flags.store(flags | DIRTY, Relaxed);
                    }
                }
                return Ok(f);
            }
            if g.evicting.contains(&pid) {
                self.evicted.wait(&mut g);
                continue;
            }
            match self.load(g, pid, access) {
                Err(PoolError::AllPinned { .. }) if waited < ALL_PINNED_RETRIES => {
                    // Every frame is pinned by other threads: give them time to unpin.
                    waited += 1;
                    crate::sync::back_off(waited);
                }
                r => return r,
            }
        }
    }
}
