#![allow(clippy::unwrap_used)]
//! Concurrency schedules through a buffer pool over every store (issue 11): two worker
//! threads write pages through a small pool (so that misses evict other threads' dirty
//! pages, and a pool `sync` — flush, then store sync — races evictions and in-place
//! staging updates), while the seeded scheduler of `flashbuf_testkit::schedule`
//! lets one device operation through at a time and judges crash images at every point.
//! Twice: with LRU, and with LRU writing its victim's 2-page cluster as one batch (the
//! members pinned and latched by the evicting thread while the other worker misses).
//!
//! `FLASHBUF_SCHEDULES=N` sets the schedules per store (default 30).

use flashbuf_core::PageId;
use flashbuf_pool::policy::{Clustered, ClusteringConfig, Lru, Policy};
use flashbuf_pool::BufferPool;
use flashbuf_store::{PageStore, ReadOutcome};
use flashbuf_testkit::schedule::{explore, ConcurrentFront, ScheduleConfig, ScheduleReport};
use flashbuf_testkit::CrashStore;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const FRAMES: usize = 4;
/// Frames of the clustered pool: fewer, so that dirty neighbours are evicted together.
const CLUSTERED_FRAMES: usize = 3;

struct PoolWriter(BufferPool<Box<dyn PageStore>>, &'static str);

/// Batch write-backs of every pool these tests built (added up when a pool is dropped).
static WRITE_BATCHES: AtomicU64 = AtomicU64::new(0);

impl Drop for PoolWriter {
    fn drop(&mut self) {
        WRITE_BATCHES.fetch_add(self.0.stats().write_batches, Ordering::Relaxed);
    }
}

impl ConcurrentFront for PoolWriter {
    fn describe(&self) -> String {
        format!("pool({} frames, {})", self.0.frames_count(), self.1)
    }
    fn write(&self, pid: PageId, _tag: u64, payload: &[u8]) -> Result<(), String> {
        let mut g = self.0.write(pid).map_err(|e| e.to_string())?;
        g.data_mut().copy_from_slice(payload);
        Ok(())
    }
    fn read(&self, pid: PageId, payload: &mut [u8]) -> Result<ReadOutcome, String> {
        let g = self.0.read(pid).map_err(|e| e.to_string())?;
        payload.copy_from_slice(g.data());
        Ok(if payload.iter().all(|&b| b == 0) {
            ReadOutcome::Unwritten
        } else {
            ReadOutcome::Found
        })
    }
    fn flush(&self) -> Result<(), String> {
        self.0.flush_all().map(|_| ()).map_err(|e| e.to_string())
    }
    fn sync(&self) -> Result<(), String> {
        self.0.sync().map_err(|e| e.to_string())
    }
}

fn pool(store: Box<dyn PageStore>) -> Result<Arc<dyn ConcurrentFront>, String> {
    pool_with(store, Box::new(Lru::new(FRAMES)), "lru")
}

/// LRU whose victim takes the dirty pages of its 2-page cluster along: evictions are
/// batch write-backs of pinned, latched members (`Victim::Batch`).
fn clustered_pool(store: Box<dyn PageStore>) -> Result<Arc<dyn ConcurrentFront>, String> {
    let policy = Clustered::new(Lru::new(CLUSTERED_FRAMES), ClusteringConfig::batch(2))
        .map_err(|e| e.to_string())?;
    pool_with(store, Box::new(policy), "lru:clustering=batch,cluster=2")
}

fn pool_with(
    store: Box<dyn PageStore>,
    policy: Box<dyn Policy>,
    name: &'static str,
) -> Result<Arc<dyn ConcurrentFront>, String> {
    let frames = policy.frames_count();
    let p = BufferPool::new(store, frames, policy).map_err(|e| e.to_string())?;
    Ok(Arc::new(PoolWriter(p, name)))
}

/// Two workers of three pages each through the 4-frame pool: every miss may evict.
fn pool_cfg(seed: u64) -> ScheduleConfig {
    ScheduleConfig {
        page_size: 512,
        workers: 2,
        pages_per_worker: 3,
        steps: 7,
        fanout: 2,
        seed,
    }
}

fn schedules() -> u64 {
    std::env::var("FLASHBUF_SCHEDULES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30)
}

#[test]
fn the_pool_over_every_store_survives_every_explored_schedule() {
    let n = schedules();
    let mut all = ScheduleReport::default();
    for f in &CrashStore::variants().unwrap() {
        let mut rep = ScheduleReport::default();
        for seed in 0..n {
            rep.add(&explore(f, &pool, &pool_cfg(seed)).unwrap_or_else(|e| panic!("{e}")));
        }
        eprintln!("pool over {}: {rep:?}", f.name);
        assert!(rep.points > n * 3, "{}: {rep:?}", f.name);
        all.add(&rep);
    }
    eprintln!("pool schedules: {all:?}");
}

/// The same with cluster write-backs: an eviction writes its victim's cluster as one
/// batch (members pinned and latched by the evicting thread) while the other worker
/// misses, flushes and syncs (half the schedules per store: the batches make each longer).
#[test]
fn the_clustered_pool_over_every_store_survives_every_explored_schedule() {
    let n = schedules().div_ceil(2);
    let mut all = ScheduleReport::default();
    for f in &CrashStore::variants().unwrap() {
        let mut rep = ScheduleReport::default();
        for seed in 0..n {
            let cfg = ScheduleConfig {
                pages_per_worker: 4,
                steps: 9,
                ..pool_cfg(seed)
            };
            let r = explore(f, &clustered_pool, &cfg).unwrap_or_else(|e| panic!("{e}"));
            rep.add(&r);
        }
        eprintln!("clustered pool over {}: {rep:?}", f.name);
        assert!(rep.points > n * 3, "{}: {rep:?}", f.name);
        all.add(&rep);
    }
    let batches = WRITE_BATCHES.load(Ordering::Relaxed);
    eprintln!("clustered pool schedules: {all:?}, {batches} batch write-backs");
    assert!(batches > 0, "the clustered pool never wrote a batch");
}
