#![cfg(feature = "shuttle")]
#![allow(clippy::unwrap_used)]
//! Schedule exploration of the pool's protocol with [shuttle](https://docs.rs/shuttle):
//! the pool built on shuttle's primitives (feature `shuttle`, `src/sync.rs`), small
//! scenarios run under thousands of thread schedules — random ones and PCT's
//! (probabilistic concurrency testing, which finds bugs of a given depth with a known
//! probability) — each checking that no write is lost or torn, that nothing deadlocks
//! (shuttle reports a schedule where every thread waits), and the pool's invariants.
//!
//! What the schedules reach: guards pinning and latching frames while `access_many`
//! serves misses under the pool lock with frames claimed without their latch
//! (`Frame::claim`'s invariant: no thread latches a frame without a pin taken under the
//! pool lock), evictions of dirty pages whose write-back is in flight (a miss on such a
//! page waits on the condition variable), cluster write-backs, flushes, and a pool with
//! every frame pinned (the miss backs off and retries).
//!
//! Run: `cargo test -p flashbuf-pool --features shuttle --test pool_schedules`. A failure
//! prints the schedule; `shuttle::replay` with it reproduces the run.

mod common;

use common::mem_store;
use flashbuf_core::DirtyRanges;
use flashbuf_core::PageId;
use flashbuf_device::MemDevice;
use flashbuf_pool::policy::{Access, Clustered, ClusteringConfig, Lru, Policy};
use flashbuf_pool::{BufferPool, PageAccess, PoolError};
use flashbuf_store::{forward_store, DirectStore, PageStore, PageWrite, ReadOutcome, StoreError};
use shuttle::thread;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A store whose I/O lets other threads run in its middle: before and after each request
/// the scheduler may switch threads (a real device's I/O is where threads overlap; the
/// memory device underneath has no switch points of its own).
struct SlowIo {
    inner: DirectStore<MemDevice>,
    /// A page whose write, once it starts, waits (up to [`HOLD_YIELDS`] turns) until
    /// another thread raises the flag: a write-back held open for a directed race.
    hold: Option<(PageId, Arc<AtomicBool>)>,
}

/// Turns a held write waits for the flag before it goes on anyway (the other thread may
/// rightly be waiting for this very write).
const HOLD_YIELDS: usize = 50;

impl SlowIo {
    fn new() -> Self {
        Self {
            inner: mem_store(512),
            hold: None,
        }
    }

    fn hold(&self, pid: PageId) {
        thread::yield_now();
        if let Some((held, flag)) = &self.hold {
            if *held == pid {
                for _ in 0..HOLD_YIELDS {
                    if flag.load(Ordering::SeqCst) {
                        break;
                    }
                    thread::yield_now();
                }
            }
        }
    }
}

impl PageStore for SlowIo {
    fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
        thread::yield_now();
        let r = self.inner.read_page(pid, buf);
        thread::yield_now();
        r
    }

    fn write_page(&self, pid: PageId, page: &[u8], dirty: &DirtyRanges) -> Result<(), StoreError> {
        self.hold(pid);
        let r = self.inner.write_page(pid, page, dirty);
        thread::yield_now();
        r
    }

    fn write_pages(&self, batch: &[PageWrite<'_>]) -> Result<(), StoreError> {
        for w in batch {
            self.hold(w.pid);
        }
        let r = self.inner.write_pages(batch);
        thread::yield_now();
        r
    }

    forward_store!(inner => name, page_size, sync, stats, device_stats, check_invariants, report);
}

type Pool = BufferPool<SlowIo>;

/// Schedules per scenario and scheduler (a scenario runs in well under a millisecond);
/// `FLASHBUF_SHUTTLE_SCHEDULES` sets another number (a soak).
fn schedules() -> usize {
    std::env::var("FLASHBUF_SHUTTLE_SCHEDULES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1500)
}

/// The page's counter (payload bytes 0..8).
fn counter(data: &[u8]) -> u64 {
    u64::from_le_bytes(data[..8].try_into().unwrap())
}

/// Increments the counter and rewrites the pattern tied to it (a torn page breaks it),
/// letting other threads run between the read and the write: a second writer admitted to
/// the page meanwhile loses an update.
fn bump(w: &mut flashbuf_pool::PageWriter<'_>) {
    let n = counter(w.data()) + 1;
    thread::yield_now();
    w.write(0, &n.to_le_bytes());
    w.write(8, &[n as u8; 24]);
}

/// The counter, after checking the pattern tied to it.
fn checked(data: &[u8]) -> u64 {
    let n = counter(data);
    let want = if n == 0 { 0 } else { n as u8 };
    assert!(
        data[8..32].iter().all(|&b| b == want),
        "torn page: counter {n}, pattern {:?}",
        &data[8..32]
    );
    n
}

/// Guard path: thread `t` writes pages `t, t+1, ...` (mod `pages`) and reads the next.
fn guard_worker(pool: &Pool, t: u64, ops: u64, pages: u64) -> Result<(), PoolError> {
    for k in 0..ops {
        let pid = PageId((t + k) % pages);
        {
            let mut g = pool.write(pid)?;
            let mut w = g.writer();
            bump(&mut w);
        }
        let r = pool.read(PageId((t + k + 1) % pages))?;
        checked(r.data());
    }
    Ok(())
}

/// `access_many` path: the same writes as a guard worker, served under the pool lock.
fn many_worker(pool: &Pool, t: u64, ops: u64, pages: u64) -> Result<(), PoolError> {
    let n = (2 * ops) as usize;
    let key = |i: usize| {
        let k = i as u64 / 2;
        if i.is_multiple_of(2) {
            (PageId((t + k) % pages), Access::Write)
        } else {
            (PageId((t + k + 1) % pages), Access::Read)
        }
    };
    pool.access_many(n, key, |_, page| match page {
        PageAccess::Read(data) => {
            checked(data);
        }
        PageAccess::Write(mut w) => bump(&mut w),
    })
    .map_err(|(_, e)| e)
}

/// Writes each page got: thread `t` writes `(t + k) % pages` for `k < ops`.
fn expected_writes(threads: u64, ops: u64, pages: u64) -> Vec<u64> {
    let mut n = vec![0; pages as usize];
    for t in 0..threads {
        for k in 0..ops {
            n[((t + k) % pages) as usize] += 1;
        }
    }
    n
}

/// Two guard workers, one `access_many` worker and (optionally) a flusher on a pool of
/// `frames` frames over `pages` pages; then every counter must equal its page's writes.
fn scenario(
    frames: usize,
    pages: u64,
    ops: u64,
    flusher: bool,
    policy: fn(usize) -> Box<dyn Policy>,
) {
    let pool = Arc::new(BufferPool::new(SlowIo::new(), frames, policy(frames)).unwrap());
    let mut handles = Vec::new();
    for t in 0..2u64 {
        let p = pool.clone();
        handles.push(thread::spawn(move || guard_worker(&p, t, ops, pages)));
    }
    let p = pool.clone();
    handles.push(thread::spawn(move || many_worker(&p, 2, ops, pages)));
    if flusher {
        let p = pool.clone();
        handles.push(thread::spawn(move || p.flush_all().map(|_| ())));
    }
    for h in handles {
        match h.join().unwrap() {
            // Every frame pinned by the other threads for all of a waiter's retries: an
            // error the caller sees, never a hang; the counts below then cannot hold.
            Err(PoolError::AllPinned { .. }) => panic!("allpinned"),
            r => r.unwrap(),
        }
    }
    pool.check_invariants().unwrap();
    pool.sync().unwrap();
    for (pid, want) in expected_writes(3, ops, pages).into_iter().enumerate() {
        let got = checked(pool.read(PageId(pid as u64)).unwrap().data());
        assert_eq!(got, want, "page {pid}: a write was lost");
    }
    pool.check_invariants().unwrap();
}

fn lru(frames: usize) -> Box<dyn Policy> {
    Box::new(Lru::new(frames))
}

/// LRU whose evictions write back clusters of dirty neighbours (batch members latched
/// and pinned by the evicting thread).
fn clustered(frames: usize) -> Box<dyn Policy> {
    Box::new(Clustered::new(Lru::new(frames), ClusteringConfig::batch(2)).unwrap())
}

#[test]
fn random_schedules_lose_no_write() {
    shuttle::check_random(|| scenario(2, 4, 3, true, lru), schedules());
}

#[test]
fn pct_schedules_lose_no_write() {
    shuttle::check_pct(|| scenario(2, 4, 3, true, lru), schedules(), 3);
}

#[test]
fn cluster_write_backs_under_random_schedules() {
    shuttle::check_random(|| scenario(3, 6, 3, false, clustered), schedules());
}

#[test]
fn one_frame_for_three_threads_backs_off_or_serves() {
    // Every miss but one finds the frame pinned: the back-off and retry path.
    shuttle::check_random(|| scenario(1, 3, 2, false, lru), schedules());
}

/// Directed race: thread A evicts dirty page 0 (to read page 2) and its write-back is held
/// open; thread B then writes page 0. B must wait for the write-back (the pool's
/// `evicting` list and condition variable) and read the page back with A's write, not
/// the store's older copy (with that wait removed, B's update is made on the older copy
/// and A's write is lost: this test fails).
#[test]
fn a_miss_on_a_page_being_written_back_waits_for_the_write() {
    shuttle::check_random(
        || {
            let done = Arc::new(AtomicBool::new(false));
            let store = SlowIo {
                hold: Some((PageId(0), done.clone())),
                ..SlowIo::new()
            };
            let pool = Arc::new(BufferPool::new(store, 2, lru(2)).unwrap());
            let p = pool.clone();
            let a = thread::spawn(move || {
                let mut g = p.write(PageId(0)).unwrap();
                bump(&mut g.writer());
                drop(g);
                drop(p.read(PageId(1)).unwrap());
                drop(p.read(PageId(2)).unwrap()); // evicts page 0, dirty
            });
            let p = pool.clone();
            let b = thread::spawn(move || {
                while p.stats().dirty_evictions == 0 {
                    thread::yield_now();
                }
                let mut g = p.write(PageId(0)).unwrap();
                bump(&mut g.writer());
                drop(g);
                done.store(true, Ordering::SeqCst);
            });
            a.join().unwrap();
            b.join().unwrap();
            pool.check_invariants().unwrap();
            assert_eq!(
                checked(pool.read(PageId(0)).unwrap().data()),
                2,
                "a write was lost"
            );
        },
        schedules(),
    );
}
