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
//!   The exception is [`BufferPool::access_many`], the replay's way in: it serves a plain
//!   miss with the pool lock held all along (no other thread can pin anything meanwhile,
//!   so the frame needs no published pin), trading other threads' progress during the
//!   store's I/O for no lock round trips — the same steps, policy calls and store calls.
//! - A miss takes its cluster's batch members out of the shared list under the lock that
//!   chose them (regression test `regression_pool_batch_members_are_the_evictors_own`).
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
//!
//! # Files
//! - this file: the pool's state, construction, counters, reports, the policy's cost
//!   updates and the invariant check;
//! - `fix`: the ways in (guards, closures, `access_many`) and the hit path;
//! - `load`: the miss path (load a page into a frame, give the frame back on failure);
//! - `evict`: taking a frame from the policy's victim and writing the victim (and its
//!   cluster batch) back;
//! - `flush`: `flush_all` and `sync`;
//! - `guards`: [`PageReadGuard`], [`PageWriteGuard`], [`PageWriter`];
//! - `resident`: [`ResidentCounts`] (clean and dirty frames, FD-Buffer Figs. 4-5).

mod evict;
mod fix;
mod flush;
mod guards;
mod load;
mod resident;

pub use guards::{PageReadGuard, PageWriteGuard, PageWriter};
pub use resident::ResidentCounts;

use crate::frame::{Arena, Frame, VALID};
use crate::page_table::PageTable;
use crate::policy::{Policy, PolicyReport, StreamOutput};
use crate::sync::{AtomicU64, Condvar, Mutex};
use crate::PoolError;
use flashbuf_core::{DeviceFacts, FrameId, PageId};
use flashbuf_store::{PageStore, StoreError};
use serde::Serialize;
use std::sync::atomic::Ordering::{Acquire, Relaxed};

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

impl std::ops::Sub for PoolStats {
    type Output = PoolStats;
    /// Counters accumulated between two snapshots (`later - earlier`).
    fn sub(self, o: PoolStats) -> PoolStats {
        PoolStats {
            hits: self.hits.saturating_sub(o.hits),
            misses: self.misses.saturating_sub(o.misses),
            page_reads: self.page_reads.saturating_sub(o.page_reads),
            unwritten_reads: self.unwritten_reads.saturating_sub(o.unwritten_reads),
            page_writes: self.page_writes.saturating_sub(o.page_writes),
            write_batches: self.write_batches.saturating_sub(o.write_batches),
            evictions: self.evictions.saturating_sub(o.evictions),
            dirty_evictions: self.dirty_evictions.saturating_sub(o.dirty_evictions),
            failed_loads: self.failed_loads.saturating_sub(o.failed_loads),
        }
    }
}

/// Counters updated outside the pool lock (the guards' miss path, flushes); those updated
/// under it are in `Inner::stats`.
#[derive(Default)]
struct IoCounters {
    page_reads: AtomicU64,
    unwritten_reads: AtomicU64,
    page_writes: AtomicU64,
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
    /// Poisons the pool (the first reason is kept); the caller holds the pool lock.
    fn poison(&mut self, what: &str, e: &dyn std::fmt::Display) {
        if self.poisoned.is_none() {
            self.poisoned = Some(format!("buffer pool: {what} failed: {e}"));
        }
    }

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
        Self::with_page_index(store, frames_count, policy, 0)
    }

    /// [`BufferPool::new`] for a caller whose page ids are mostly below `pages_below` (dense,
    /// as a replay's address map numbers a trace's pages): those are found by index in a
    /// direct page index of 4 bytes a page (at most
    /// [`DIRECT_PAGES_MAX`](crate::page_table::DIRECT_PAGES_MAX) pages), the others in the
    /// hashed page table. The same pool otherwise: every decision and count is the same
    /// with any bound; it saves the hashed table's probes (see `page_table`).
    pub fn with_page_index(
        store: S,
        frames_count: usize,
        policy: Box<dyn Policy>,
        pages_below: u64,
    ) -> Result<Self, PoolError> {
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
                table: PageTable::with_direct(frames_count, pages_below),
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

    /// The counts kept under the pool lock (`Inner::stats`) plus those kept outside it
    /// (`IoCounters`).
    fn stats_locked(&self, g: &Inner) -> PoolStats {
        let s = &g.stats;
        PoolStats {
            page_reads: s.page_reads + self.io.page_reads.load(Relaxed),
            unwritten_reads: s.unwritten_reads + self.io.unwritten_reads.load(Relaxed),
            page_writes: s.page_writes + self.io.page_writes.load(Relaxed),
            ..g.stats
        }
    }

    /// The policy's name.
    pub fn policy_name(&self) -> &'static str {
        self.inner.lock().policy.name()
    }

    /// Poisons the pool (the first reason is kept).
    fn poison(&self, what: &str, e: &dyn std::fmt::Display) {
        self.inner.lock().poison(what, e);
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
        self.inner.lock().policy.report().figures
    }

    /// The policy's whole report: figures and window records.
    pub fn policy_report_full(&self) -> PolicyReport {
        self.inner.lock().policy.report()
    }

    /// Tells the policy, under the pool lock, that the device's costs changed (e.g. a new
    /// epoch of an asymmetry model); see [`Policy::update_costs`] for who reacts.
    pub fn update_costs(&self, costs: &DeviceFacts) {
        self.inner.lock().policy.update_costs(costs)
    }

    /// Hands the policy, under the pool lock and in order, the outputs of the stream model
    /// it detached before the pool was built ([`Policy::detach_stream_model`]); empties
    /// `outputs`. The caller keeps the model's contract (`crate::policy::stream`).
    pub fn stream_outputs(&self, outputs: &mut Vec<StreamOutput>) {
        if outputs.is_empty() {
            return;
        }
        let mut g = self.inner.lock();
        for o in outputs.drain(..) {
            g.policy.stream_output(o);
        }
    }

    /// Bytes of metadata per frame besides the page bytes: frame header, page-table share
    /// and the policy's per-frame state (as the policy reports it). The direct page index,
    /// sized by pages and not frames, is [`BufferPool::page_index_bytes`].
    pub fn metadata_bytes_per_frame(&self) -> f64 {
        let g = self.inner.lock();
        let n = self.frames.len() as f64;
        std::mem::size_of::<Frame>() as f64
            + g.table.bytes() as f64 / n
            + g.policy.bytes_per_frame() as f64
    }

    /// Bytes of the direct page index ([`BufferPool::with_page_index`]; 0 without one).
    pub fn page_index_bytes(&self) -> usize {
        self.inner.lock().table.direct_bytes()
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
