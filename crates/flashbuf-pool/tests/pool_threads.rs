#![allow(clippy::unwrap_used)]
//! Many threads pinning, modifying and verifying pages through a small pool, so that
//! evictions, write-backs and waits on in-flight loads all happen concurrently.

mod common;

use common::mem_store;
use flashbuf_core::PageId;
use flashbuf_pool::policy::{Clustered, ClusteringConfig, Lru, Policy};
use flashbuf_pool::BufferPool;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn run(seed: u64, threads: usize, frames: usize, pages: u64, ops: usize) {
    run_with(
        seed,
        threads,
        frames,
        pages,
        ops,
        Box::new(Lru::new(frames)),
    );
}

fn run_with(
    seed: u64,
    threads: usize,
    frames: usize,
    pages: u64,
    ops: usize,
    policy: Box<dyn Policy>,
) {
    let pool = Arc::new(BufferPool::new(mem_store(512), frames, policy).unwrap());
    let expected: Arc<Vec<AtomicU64>> = Arc::new((0..pages).map(|_| AtomicU64::new(0)).collect());
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let pool = pool.clone();
            let expected = expected.clone();
            std::thread::spawn(move || {
                let mut rng = XorShift(seed * 1000 + t as u64 + 1);
                for _ in 0..ops {
                    let pid = rng.next() % pages;
                    if rng.next() % 10 < 3 {
                        let mut w = pool.write(PageId(pid)).expect("write fix");
                        let mut c = [0u8; 8];
                        c.copy_from_slice(&w.data()[..8]);
                        let n = u64::from_le_bytes(c) + 1;
                        w.write(0, &n.to_le_bytes());
                        // A pattern tied to the counter: a torn page would break it.
                        w.data_mut_range(8, 200).fill(n as u8);
                        drop(w);
                        expected[pid as usize].fetch_add(1, Ordering::SeqCst);
                    } else {
                        let r = pool.read(PageId(pid)).expect("read fix");
                        let d = r.data();
                        let mut c = [0u8; 8];
                        c.copy_from_slice(&d[..8]);
                        let n = u64::from_le_bytes(c);
                        assert!(
                            d[8..208].iter().all(|&b| b == n as u8),
                            "page {pid}: torn or lost update (counter {n})"
                        );
                    }
                    if rng.next().is_multiple_of(500) {
                        pool.flush_all().expect("flush");
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("worker panicked");
    }
    pool.check_invariants().unwrap();
    pool.sync().unwrap();
    for pid in 0..pages {
        let r = pool.read(PageId(pid)).unwrap();
        let mut c = [0u8; 8];
        c.copy_from_slice(&r.data()[..8]);
        assert_eq!(
            u64::from_le_bytes(c),
            expected[pid as usize].load(Ordering::SeqCst),
            "page {pid}: lost update"
        );
    }
    let s = pool.stats();
    assert!(s.misses > frames as u64, "the test should evict: {s:?}");
}

#[test]
fn four_threads_small_pool() {
    for seed in 0..5 {
        run(seed, 4, 8, 40, 4000);
    }
}

#[test]
fn eight_threads_hot_pages() {
    // Few pages, even fewer frames: heavy contention on the same latches.
    for seed in 0..3 {
        run(seed, 8, 4, 10, 3000);
    }
}

/// Regression: a miss took its cluster's batch members from the pool's shared batch list
/// only after dropping and retaking the pool lock, so another thread's miss in between
/// could replace the list — the first then wrote back (and unlatched) frames the other
/// had secured. The members now leave the list under the lock that chose them.
#[test]
fn regression_pool_batch_members_are_the_evictors_own() {
    // Before the fix, about one run in four of four seeds panicked or hung.
    for seed in 0..16 {
        let frames = 12;
        let policy = Clustered::new(Lru::new(frames), ClusteringConfig::batch(4)).unwrap();
        run_with(seed, 4, frames, 60, 4000, Box::new(policy));
    }
}
