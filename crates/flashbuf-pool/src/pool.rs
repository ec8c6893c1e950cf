//! The buffer pool: frames, page table, pin guards, write-back.
//!
//! # Concurrency protocol
//! One pool lock (`inner`) protects the page table, the policy, the free list and the set
//! of pages being written back by an eviction. Each frame has a reader-writer latch that
//! protects its bytes, flags and dirty ranges. Rules:
//! - A thread pins a frame (`pins += 1`) only under the pool lock, and only then waits for
//!   the latch, after releasing the pool lock. Guards release the latch first and unpin
//!   after. Hence an unpinned frame's latch is free, and the evictor (which holds the pool
//!   lock) can always take it with `try_lock`.
//! - No thread waits for a latch while holding the pool lock, and no thread holds two
//!   latches while waiting for a third (flushing takes one latch at a time; eviction only
//!   `try_lock`s). Latch → pool lock is the only nesting order.
//! - Device I/O happens outside the pool lock: the evicting thread installs the new page
//!   id in the table, keeps the frame latched exclusively while it writes the old page
//!   back and reads the new one, and records the old page id in `evicting` so that a miss
//!   on it waits until the write-back is done (it would read a stale page otherwise).
//! - `writers` counts pins taken for writing that have not been released. A write-back
//!   tells the policy `on_clean` only if no writer is pending, so that the policy's view
//!   of dirtiness never misses a modification. The frame's `DIRTY` flag is authoritative
//!   for write-back; the policy's view is exact whenever writers do not race a flush.
//!
//! # Fail-stop
//! A failed write-back (eviction, flush), a failed store sync, or a device error on a read
//! poisons the pool (`Inner::poisoned`, checked under the pool lock on every fix, flush and
//! sync, so hits cost nothing extra): every later call returns
//! [`StoreError::Poisoned`] until the store is reopened under a new pool. A dirty page
//! whose write-back failed is gone from the pool, so carrying on could serve the stale
//! store copy (regression test `regression_pool_poison`).

use crate::frame::{Arena, Frame, DIRTY, VALID};
use crate::page_table::PageTable;
use crate::policy::{Access, IoKind, Policy, Victim};
use crate::PoolError;
use flashbuf_core::page::{self, HEADER_BYTES};
use flashbuf_core::{DirtyRanges, FrameId, PageId};
use flashbuf_store::{PageStore, PageWrite, ReadOutcome, StoreError};
use parking_lot::{Condvar, Mutex, MutexGuard};
use serde::Serialize;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

/// Counters of a pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PoolStats {
    /// Fixes that found the page resident.
    pub hits: u64,
    /// Fixes that had to load the page.
    pub misses: u64,
    /// Pages read from the store (misses that reached it, unwritten pages included).
    pub page_reads: u64,
    /// Page reads that found a never-written page.
    pub unwritten_reads: u64,
    /// Pages written to the store (evictions, cluster write-backs, flushes).
    pub page_writes: u64,
    /// Store batch writes issued (clusters of more than one page).
    pub write_batches: u64,
    /// Pages evicted.
    pub evictions: u64,
    /// Evicted pages that were dirty.
    pub dirty_evictions: u64,
    /// Misses whose load failed (I/O error, corrupt page); the page was not cached.
    pub failed_loads: u64,
}

/// Counters updated outside the pool lock.
#[derive(Default)]
struct IoCounters {
    page_reads: AtomicU64,
    unwritten_reads: AtomicU64,
    page_writes: AtomicU64,
    write_batches: AtomicU64,
    failed_loads: AtomicU64,
}

struct Inner {
    table: PageTable,
    policy: Box<dyn Policy>,
    free: Vec<FrameId>,
    /// Pages whose write-back by an eviction is in flight.
    evicting: Vec<PageId>,
    stats: PoolStats,
    /// Frames of the current batch write-back (reused; no allocation per eviction).
    batch: Vec<FrameId>,
    observe_io: bool,
    /// Why the pool is poisoned (fail-stop), if it is.
    poisoned: Option<String>,
}

impl Inner {
    /// `Err(Poisoned)` once the pool is poisoned.
    #[inline]
    fn check_poison(&self) -> Result<(), PoolError> {
        match &self.poisoned {
            None => Ok(()),
            Some(r) => Err(PoolError::Store(StoreError::Poisoned(r.clone()))),
        }
    }
}

/// A fixed-size buffer pool over a [`PageStore`], with a pluggable replacement
/// [`Policy`]. `Send + Sync`: fix pages from any number of threads.
///
/// ```
/// use flashbuf_core::PageId;
/// use flashbuf_device::MemDevice;
/// use flashbuf_pool::{policy::Lru, BufferPool};
/// use flashbuf_store::{DirectStore, DirectStoreConfig};
///
/// let store = DirectStore::create(MemDevice::new(0), DirectStoreConfig::with_page_size(4096)).unwrap();
/// let pool = BufferPool::new(store, 16, Box::new(Lru::new(16))).unwrap();
/// {
///     let mut w = pool.write(PageId(7)).unwrap();
///     w.write(0, b"hello");
/// }
/// pool.sync().unwrap(); // writes dirty pages back and syncs the store
/// assert_eq!(&pool.read(PageId(7)).unwrap().data()[..5], b"hello");
/// ```
pub struct BufferPool<S> {
    store: S,
    page_size: usize,
    frames: Box<[Frame]>,
    arena: Arena,
    inner: Mutex<Inner>,
    evicted: Condvar,
    io: IoCounters,
}

/// Most accesses [`BufferPool::access_many`] serves per hold of the pool lock.
pub const ACCESS_RUN_MAX: usize = 64;

/// One access handed to the closure of [`BufferPool::access_many`].
pub enum PageAccess<'a> {
    /// Read access: the payload.
    Read(&'a [u8]),
    /// Write access: a writer that records modified ranges.
    Write(PageWriter<'a>),
}

/// How often a miss retries when every frame is pinned before it reports
/// [`PoolError::AllPinned`] (64 yields, then 100 µs sleeps: about 0.1 s in all).
const ALL_PINNED_RETRIES: u32 = 1064;

/// What [`BufferPool::probe`] found.
enum Probe {
    /// Resident, unpinned, valid: counted as a hit; the caller may use the frame.
    Hit(FrameId),
    /// Not resident.
    Miss,
    /// Resident but pinned or being loaded.
    Busy,
}

/// What `take_frame` secured: a frame latched exclusively and pinned once, and the page
/// it held if that page must be written back.
struct Taken {
    frame: FrameId,
    old_dirty: Option<PageId>,
}

impl<S: PageStore> BufferPool<S> {
    /// A pool of `frames_count` frames of the store's page size, managed by `policy`.
    pub fn new(store: S, frames_count: usize, policy: Box<dyn Policy>) -> Result<Self, PoolError> {
        if frames_count == 0 || frames_count >= u32::MAX as usize {
            return Err(PoolError::Config(format!(
                "{frames_count} frames; need at least one"
            )));
        }
        if policy.frames_count() != frames_count {
            return Err(PoolError::Config(format!(
                "policy '{}' was built for {} frames, the pool has {frames_count}",
                policy.name(),
                policy.frames_count()
            )));
        }
        let page_size = store.page_size();
        let frames: Box<[Frame]> = (0..frames_count).map(|_| Frame::new()).collect();
        let observe_io = policy.wants_io_observations();
        Ok(Self {
            store,
            page_size,
            frames,
            arena: Arena::new(frames_count, page_size),
            inner: Mutex::new(Inner {
                table: PageTable::new(frames_count),
                policy,
                free: (0..frames_count as u32).rev().map(FrameId).collect(),
                evicting: Vec::new(),
                stats: PoolStats::default(),
                batch: Vec::new(),
                observe_io,
                poisoned: None,
            }),
            evicted: Condvar::new(),
            io: IoCounters::default(),
        })
    }

    /// Number of frames.
    pub fn frames_count(&self) -> usize {
        self.frames.len()
    }

    /// Page size in bytes.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// The store under the pool.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Counters so far.
    pub fn stats(&self) -> PoolStats {
        let g = self.inner.lock();
        self.stats_locked(&g)
    }

    fn stats_locked(&self, g: &Inner) -> PoolStats {
        PoolStats {
            page_reads: self.io.page_reads.load(Relaxed),
            unwritten_reads: self.io.unwritten_reads.load(Relaxed),
            page_writes: self.io.page_writes.load(Relaxed),
            write_batches: self.io.write_batches.load(Relaxed),
            failed_loads: self.io.failed_loads.load(Relaxed),
            ..g.stats
        }
    }

    /// The policy's name.
    pub fn policy_name(&self) -> &'static str {
        self.inner.lock().policy.name()
    }

    /// Poisons the pool (the first reason is kept).
    fn poison(&self, what: &str, e: &dyn std::fmt::Display) {
        let mut g = self.inner.lock();
        if g.poisoned.is_none() {
            g.poisoned = Some(format!("buffer pool: {what} failed: {e}"));
        }
    }

    /// Whether `pid` is resident in the pool (a snapshot: another thread may change it).
    pub fn contains(&self, pid: PageId) -> bool {
        let g = self.inner.lock();
        self.lookup(&g, pid).is_some()
    }

    /// Whether an earlier store failure poisoned the pool.
    pub fn is_poisoned(&self) -> bool {
        self.inner.lock().poisoned.is_some()
    }

    /// The policy's own figures.
    pub fn policy_report(&self) -> Vec<(&'static str, f64)> {
        self.inner.lock().policy.report()
    }

    /// Bytes of metadata per frame besides the page bytes: frame header, page-table share
    /// and the policy's per-frame state (as the policy reports it).
    pub fn metadata_bytes_per_frame(&self) -> f64 {
        let g = self.inner.lock();
        let n = self.frames.len() as f64;
        std::mem::size_of::<Frame>() as f64
            + g.table.bytes() as f64 / n
            + g.policy.bytes_per_frame() as f64
    }

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
    /// `0..n`, and `f(i, page)` runs on it. Runs of hits on unpinned pages are served under
    /// one hold of the pool lock (at most [`ACCESS_RUN_MAX`] accesses per hold, so other
    /// threads get their turn); a miss or a pinned page drops the lock and takes the guard
    /// path. Decisions, counts and store calls are exactly those of the same accesses made
    /// one by one. `f` must be brief and must not touch the pool.
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
            let mut missed = None;
            while i < stop {
                let (pid, access) = key(i);
                match self.probe(&mut g, pid, access) {
                    Probe::Hit(fr) => {
                        // SAFETY: `probe` established exclusive access under the lock.
                        unsafe { self.call_exclusive(fr, access, i, &mut f) };
                        i += 1;
                    }
                    Probe::Miss => {
                        missed = Some((pid, access, true));
                        break;
                    }
                    Probe::Busy => {
                        missed = Some((pid, access, false));
                        break;
                    }
                }
            }
            let Some((pid, access, plain_miss)) = missed else {
                continue;
            };
            // A plain miss is loaded right away under the lock we hold (as `fix` would,
            // without giving the lock up and looking the page up again). A pinned page,
            // one being written back, or a miss that finds every frame pinned takes the
            // guard path, which waits.
            let frame = if plain_miss && !g.evicting.contains(&pid) {
                match self.load(g, pid, access) {
                    Ok(fr) => Some(fr),
                    Err(PoolError::AllPinned { .. }) => None,
                    Err(e) => return Err((i, e)),
                }
            } else {
                drop(g);
                None
            };
            let r = match (access, frame) {
                (Access::Read, Some(frame)) => {
                    let guard = PageReadGuard { pool: self, frame };
                    f(i, PageAccess::Read(guard.data()));
                    Ok(())
                }
                (Access::Write, Some(frame)) => {
                    let mut guard = PageWriteGuard { pool: self, frame };
                    f(i, PageAccess::Write(guard.writer()));
                    Ok(())
                }
                (Access::Read, None) => self.read(pid).map(|g| f(i, PageAccess::Read(g.data()))),
                (Access::Write, None) => self
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
    unsafe fn call_exclusive<F>(&self, fr: FrameId, access: Access, i: usize, f: &mut F)
    where
        F: FnMut(usize, PageAccess<'_>),
    {
        let frame = &self.frames[fr.index()];
        match access {
            Access::Read => {
                // SAFETY: per the contract.
                let page = unsafe { self.arena.page(fr) };
                f(i, PageAccess::Read(&page[HEADER_BYTES..]));
            }
            Access::Write => {
                let flags = frame.flags.load(Relaxed);
                if flags & DIRTY == 0 {
                    frame.flags.store(flags | DIRTY, Relaxed);
                }
                // SAFETY: per the contract.
                let w = unsafe { PageWriter::new(self.arena.page_mut(fr), frame.dirty_mut()) };
                f(i, PageAccess::Write(w));
            }
        }
    }

    /// Under the pool lock: if `pid` is resident, valid and unpinned, counts the hit, tells
    /// the policy, and returns its frame. While the lock is held nobody can pin the frame,
    /// so the caller has exclusive access to it.
    #[inline]
    fn exclusive_hit(&self, g: &mut Inner, pid: PageId, access: Access) -> Option<FrameId> {
        match self.probe(g, pid, access) {
            Probe::Hit(f) => Some(f),
            Probe::Miss | Probe::Busy => None,
        }
    }

    /// Under the pool lock: a hit on an unpinned valid page is counted and told to the
    /// policy (the caller then has exclusive access to the frame); otherwise says whether
    /// the page is absent or present but pinned or loading.
    #[inline]
    fn probe(&self, g: &mut Inner, pid: PageId, access: Access) -> Probe {
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
    fn page_of(&self, f: FrameId) -> PageId {
        PageId(self.frames[f.index()].page_id.load(Relaxed))
    }

    #[inline]
    fn lookup(&self, g: &Inner, pid: PageId) -> Option<FrameId> {
        g.table.find(pid, |f| self.page_of(f))
    }

    fn table_remove(&self, g: &mut Inner, pid: PageId, frame: FrameId) {
        let removed = g.table.remove(pid, frame, |f| self.page_of(f));
        debug_assert!(removed, "{pid} in {frame} missing from the page table");
    }

    fn table_insert(&self, g: &mut Inner, pid: PageId, frame: FrameId) {
        g.table.insert(pid, frame);
    }

    /// Releases a pin taken by `fix` (after the latch was released).
    #[inline]
    fn unpin(&self, f: FrameId, write: bool) {
        let fr = &self.frames[f.index()];
        if write {
            fr.writers.fetch_sub(1, Release);
        }
        fr.pins.fetch_sub(1, Release);
    }

    fn fix(&self, pid: PageId, access: Access) -> Result<FrameId, PoolError> {
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
                    if waited < 64 {
                        std::thread::yield_now();
                    } else {
                        std::thread::sleep(std::time::Duration::from_micros(100));
                    }
                }
                r => return r,
            }
        }
    }

    /// Miss path: secure a frame, write back what it held, read `pid` into it.
    fn load(
        &self,
        mut g: MutexGuard<'_, Inner>,
        pid: PageId,
        access: Access,
    ) -> Result<FrameId, PoolError> {
        let write = access.is_write();
        g.policy.prepare_miss(access);
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
            *dirty = DirtyRanges::full(self.page_size);
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
    fn abandon(&self, f: FrameId, pid: PageId, write: bool, old_dirty: Option<PageId>) {
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

    /// Under the pool lock: a free frame, or the policy's victim (removed from the table
    /// and the policy). The frame comes back latched exclusively. Batch members chosen by
    /// the policy are left in `g.batch`, each pinned and latched exclusively.
    fn take_frame(&self, g: &mut MutexGuard<'_, Inner>) -> Result<Taken, PoolError> {
        g.batch.clear();
        // A frame whose load failed may still carry the pin of a thread about to retry;
        // take a free frame nobody pins.
        if let Some(i) = g
            .free
            .iter()
            .rposition(|f| self.frames[f.index()].pins.load(Acquire) == 0)
        {
            let f = g.free.swap_remove(i);
            if self.frames[f.index()].try_lock_exclusive() {
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
        let inner = &mut **g;
        let policy_name = inner.policy.name();
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
                policy: policy_name,
                detail: format!("chose {v}, which is pinned, free or unknown"),
            });
        }
        let fr = &self.frames[v.index()];
        if !fr.try_lock_exclusive() {
            return Err(PoolError::Policy {
                policy: policy_name,
                detail: format!("chose {v}, whose latch is held"),
            });
        }
        let old = PageId(fr.page_id.load(Relaxed));
        let dirty = fr.flags.load(Relaxed) & DIRTY != 0;
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
    /// The caller holds `f`'s latch exclusively.
    unsafe fn seal(&self, f: FrameId, pid: PageId) -> DirtyRanges {
        // SAFETY: per the contract.
        let (buf, dirty) = unsafe { (self.arena.page_mut(f), self.frames[f.index()].dirty_mut()) };
        let version = page::version_of(buf) + 1;
        page::seal(buf, pid, version);
        let mut d = *dirty;
        d.add(0, HEADER_BYTES);
        dirty.clear();
        d
    }

    /// Writes back the evicted frame's old page (if dirty) and the batch members, in the
    /// policy's order, as one store call. Frame `f` holds the old page's bytes.
    fn write_back_victim(
        &self,
        f: FrameId,
        old_dirty: Option<PageId>,
        observe: bool,
    ) -> Result<(), PoolError> {
        // Copy the member list out of the lock (members are pinned and latched by us).
        let members: Vec<FrameId> = {
            let g = self.inner.lock();
            g.batch.clone()
        };
        let t0 = observe.then(|| self.store.device_stats().device_time_us);
        let result = if members.is_empty() {
            let old = old_dirty.unwrap_or_else(|| unreachable!("no write-back requested"));
            // SAFETY: f is latched exclusively by this thread.
            let dirty = unsafe { self.seal(f, old) };
            // SAFETY: as above.
            let bytes = unsafe { self.arena.page(f) };
            self.store.write_page(old, bytes, &dirty).map(|()| 1)
        } else {
            let mut writes = Vec::with_capacity(members.len() + 1);
            let mut victim_in_batch = false;
            for &m in &members {
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
        };
        let mut g = self.inner.lock();
        let ok = result.is_ok();
        if let (Err(e), None) = (&result, &g.poisoned) {
            g.poisoned = Some(format!(
                "buffer pool: write-back of an evicted page failed: {e}"
            ));
        }
        if let Ok(n) = result {
            self.io.page_writes.fetch_add(n, Relaxed);
            if !members.is_empty() {
                self.io.write_batches.fetch_add(1, Relaxed);
            }
            if let Some(t0) = t0 {
                let dt = self.store.device_stats().device_time_us - t0;
                g.policy.observe_io(IoKind::Write, dt / n.max(1) as f64);
            }
        }
        for &m in &members {
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
        g.batch.clear();
        if ok {
            if let Some(old) = old_dirty {
                g.evicting.retain(|p| *p != old);
                self.evicted.notify_all();
            }
        }
        drop(g);
        result.map(|_| ()).map_err(PoolError::from)
    }

    /// Writes back one resident dirty frame (pinned by the caller) and tells the policy.
    fn flush_frame(&self, f: FrameId) -> Result<bool, PoolError> {
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

    /// Checks the pool's invariants (and the policy's and the store's); for tests and
    /// `--paranoid`. Call it while no other thread uses the pool.
    pub fn check_invariants(&self) -> Result<(), String> {
        let g = self.inner.lock();
        let mut resident = 0usize;
        for (i, fr) in self.frames.iter().enumerate() {
            let f = FrameId(i as u32);
            let valid = fr.flags.load(Acquire) & VALID != 0;
            let in_free = g.free.contains(&f);
            if valid == in_free {
                return Err(format!("{f}: valid={valid} but in free list={in_free}"));
            }
            if valid {
                resident += 1;
                let pid = PageId(fr.page_id.load(Relaxed));
                if self.lookup(&g, pid) != Some(f) {
                    return Err(format!("{f} holds {pid} but the page table disagrees"));
                }
            }
            let pins = fr.pins.load(Acquire);
            let writers = fr.writers.load(Acquire);
            if writers > pins {
                return Err(format!("{f}: {writers} writers but {pins} pins"));
            }
        }
        g.table.check(|f| self.page_of(f))?;
        if g.table.len() != resident {
            return Err(format!(
                "page table has {} entries, {resident} frames are resident",
                g.table.len()
            ));
        }
        if !g.evicting.is_empty() {
            return Err(format!("write-backs still in flight: {:?}", g.evicting));
        }
        if resident + g.free.len() != self.frames.len() {
            return Err(format!(
                "{resident} resident + {} free != {} frames",
                g.free.len(),
                self.frames.len()
            ));
        }
        let s = self.stats_locked(&g);
        if s.misses != s.page_reads + s.failed_loads {
            return Err(format!(
                "{} misses but {} reads + {} failed loads",
                s.misses, s.page_reads, s.failed_loads
            ));
        }
        if s.page_reads != s.evictions + resident as u64 {
            return Err(format!(
                "{} pages loaded but {} evicted and {resident} resident",
                s.page_reads, s.evictions
            ));
        }
        g.policy.check_invariants()?;
        drop(g);
        self.store.check_invariants()
    }
}

/// A shared pin on a page: the page stays resident and unmodified while held.
pub struct PageReadGuard<'a, S: PageStore> {
    pool: &'a BufferPool<S>,
    frame: FrameId,
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
    pool: &'a BufferPool<S>,
    frame: FrameId,
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
    unsafe fn new(page: &'a mut [u8], dirty: &'a mut DirtyRanges) -> Self {
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
