#![allow(clippy::unwrap_used)]
//! Concurrency schedules through a buffer pool over every store (issue 11): two worker
//! threads write pages through a small pool (so that misses evict other threads' dirty
//! pages, and a pool `sync` — flush, then store sync — races evictions and in-place
//! staging updates), while the seeded scheduler of `flashbuf_store::testing::schedule`
//! lets one device operation through at a time and judges crash images at every point.
//!
//! `FLASHBUF_SCHEDULES=N` sets the schedules per store (default 30).

use flashbuf_core::PageId;
use flashbuf_pool::policy::Lru;
use flashbuf_pool::BufferPool;
use flashbuf_store::testing::schedule::{explore, ConcurrentFront, ScheduleConfig, ScheduleReport};
use flashbuf_store::testing::STORES;
use flashbuf_store::{PageStore, ReadOutcome};
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

#[test]
fn the_pool_over_every_store_survives_every_explored_schedule() {
    let n: u64 = std::env::var("FLASHBUF_SCHEDULES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let mut all = ScheduleReport::default();
    for f in STORES {
        let mut rep = ScheduleReport::default();
        for seed in 0..n {
            let cfg = ScheduleConfig {
                page_size: 512,
                workers: 2,
                pages_per_worker: 3,
                steps: 7,
                fanout: 2,
                seed,
            };
            rep.add(&explore(f, &pool, &cfg).unwrap_or_else(|e| panic!("{e}")));
        }
        eprintln!("pool over {}: {rep:?}", f.name);
        assert!(rep.points > n * 3, "{}: {rep:?}", f.name);
        all.add(&rep);
    }
    eprintln!("pool schedules: {all:?}");
}

fn unfenced_cfg(ps: usize) -> flashbuf_store::StableBufferConfig {
    flashbuf_store::StableBufferConfig {
        staging_bytes: 16 * ps as u64,
        recognition: flashbuf_store::stable_buffer::Recognition::OnDemand,
        align_bytes: ps as u64,
        grow_bytes: 8 * ps as u64,
        ..flashbuf_store::StableBufferConfig::with_page_size(ps)
    }
}

fn unfenced_create(
    d: Box<dyn flashbuf_device::Device>,
    ps: usize,
) -> Result<Box<dyn PageStore>, flashbuf_store::StoreError> {
    let s = flashbuf_store::StableBufferStore::create(d, unfenced_cfg(ps))?;
    s.simulate_bug_unfenced_sync(true);
    Ok(Box::new(s))
}

fn unfenced_open(
    d: Box<dyn flashbuf_device::Device>,
    ps: usize,
) -> Result<Box<dyn PageStore>, flashbuf_store::StoreError> {
    Ok(Box::new(flashbuf_store::StableBufferStore::open(d, unfenced_cfg(ps))?))
}

/// Meta-test: through the pool too (a pool sync racing another thread's write-back),
/// the exploration finds bug C when the fence is removed.
#[test]
fn meta_the_pool_exploration_catches_an_unfenced_sync() {
    let f = flashbuf_store::testing::StoreFactory {
        name: "stable-buffer-unfenced",
        create: unfenced_create,
        open: unfenced_open,
        masks_torn_writes: true,
    };
    let found = (0..400u64).find_map(|seed| {
        let cfg = ScheduleConfig {
            page_size: 512,
            workers: 2,
            pages_per_worker: 3,
            steps: 7,
            fanout: 2,
            seed,
        };
        explore(&f, &pool, &cfg).err().map(|e| (seed, e))
    });
    let (seed, e) = found.expect("400 pool schedules explored, bug C not found");
    eprintln!("bug C found through the pool at seed {seed}: {e}");
}
