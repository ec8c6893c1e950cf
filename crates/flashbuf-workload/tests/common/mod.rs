//! Shared helpers for the workload crate's integration tests.
#![allow(dead_code)]

use flashbuf_core::PageId;
use flashbuf_device::MemDevice;
use flashbuf_pool::{policy::Lru, BufferPool};
use flashbuf_store::{DirectStore, DirectStoreConfig};
use std::sync::Arc;

/// A direct store over a shared memory device (reopen it with [`reopen`]).
pub type MemStore = DirectStore<Arc<MemDevice>>;

/// A fresh memory device and an LRU pool of `frames` over a direct store on it.
pub fn mem_pool(page_size: usize, frames: usize) -> (Arc<MemDevice>, BufferPool<MemStore>) {
    let dev = Arc::new(MemDevice::new(0));
    let store = DirectStore::create(dev.clone(), DirectStoreConfig::with_page_size(page_size))
        .expect("create store");
    let pool = BufferPool::new(store, frames, Box::new(Lru::new(frames))).expect("pool");
    (dev, pool)
}

/// A new pool over the store already on `dev` (after the old pool was synced and dropped).
pub fn reopen(dev: &Arc<MemDevice>, page_size: usize, frames: usize) -> BufferPool<MemStore> {
    let store = DirectStore::open(dev.clone(), DirectStoreConfig::with_page_size(page_size))
        .expect("open store");
    BufferPool::new(store, frames, Box::new(Lru::new(frames))).expect("pool")
}

/// The first page of the test trees' space.
pub const SPACE: PageId = PageId(0);

pub mod engine;
