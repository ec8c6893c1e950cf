#![allow(clippy::unwrap_used)]
//! Regression (found by `stress_file_store`, which failed with `AllPinned` on a 12-frame
//! pool with 8 threads): `flush_all` (and so `sync`) pinned *every* dirty frame up front
//! and kept them pinned while it waited for each frame's latch in turn. A thread holding a
//! guard on one of those pages and missing on another found no evictable frame and failed
//! with `AllPinned` after its retries, although the pool had frames to spare. Fixed:
//! `flush_all` pins one frame at a time.

use flashbuf_core::PageId;
use flashbuf_device::MemDevice;
use flashbuf_pool::policy::Lru;
use flashbuf_pool::BufferPool;
use flashbuf_store::{DirectStore, DirectStoreConfig};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn a_flush_waiting_for_one_latch_does_not_starve_misses() {
    let store =
        DirectStore::create(MemDevice::new(0), DirectStoreConfig::with_page_size(4096)).unwrap();
    let pool = Arc::new(BufferPool::new(store, 2, Box::new(Lru::new(2))).unwrap());
    pool.write(PageId(0)).unwrap().write(0, b"zero");
    pool.write(PageId(1)).unwrap().write(0, b"one");
    // Hold page 0: the flush below waits for its latch.
    let held = pool.read(PageId(0)).unwrap();
    let flusher = {
        let pool = pool.clone();
        std::thread::spawn(move || pool.flush_all().unwrap())
    };
    std::thread::sleep(Duration::from_millis(150));
    // Page 1's frame is dirty but not in use: a miss may evict it.
    let r = pool.read(PageId(2)).map(|g| g.data()[0]);
    drop(held);
    flusher.join().unwrap();
    assert!(
        r.is_ok(),
        "miss failed while a flush was waiting: {:?}",
        r.err()
    );
    pool.sync().unwrap();
    assert_eq!(&pool.read(PageId(1)).unwrap().data()[..3], b"one");
    pool.check_invariants().unwrap();
}
