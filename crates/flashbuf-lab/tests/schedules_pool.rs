#![allow(clippy::unwrap_used)]
//! Concurrency schedules through a buffer pool over every store (issue 11): two worker
//! threads write pages through a small pool (so that misses evict other threads' dirty
//! pages, and a pool `sync` — flush, then store sync — races evictions and in-place
//! staging updates), while the seeded scheduler of `flashbuf_testkit::schedule`
//! lets one device operation through at a time and judges crash images at every point.
//!
//! `FLASHBUF_SCHEDULES=N` sets the schedules per store (default 30).

use flashbuf_core::PageId;
use flashbuf_pool::policy::Lru;
use flashbuf_pool::BufferPool;
use flashbuf_store::{PageStore, ReadOutcome};
use flashbuf_testkit::schedule::{explore, ConcurrentFront, ScheduleConfig, ScheduleReport};
use flashbuf_testkit::CrashStore;
use std::sync::Arc;

const FRAMES: usize = 4;

struct PoolWriter(BufferPool<Box<dyn PageStore>>);

impl ConcurrentFront for PoolWriter {
    fn describe(&self) -> String {
        format!("pool({FRAMES} frames, lru)")
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
    let p =
        BufferPool::new(store, FRAMES, Box::new(Lru::new(FRAMES))).map_err(|e| e.to_string())?;
    Ok(Arc::new(PoolWriter(p)))
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

#[test]
fn the_pool_over_every_store_survives_every_explored_schedule() {
    let n: u64 = std::env::var("FLASHBUF_SCHEDULES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
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
