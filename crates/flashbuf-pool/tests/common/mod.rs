//! Shared helpers for the pool's integration tests.
#![allow(dead_code)]

use flashbuf_core::{DeviceStats, DirtyRanges, PageId};
use flashbuf_device::MemDevice;
use flashbuf_store::{
    DirectStore, DirectStoreConfig, PageStore, PageWrite, ReadOutcome, StoreError, StoreStats,
};
use parking_lot::Mutex;

/// One store call seen by [`Recording`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    Read(PageId),
    Write(PageId, Vec<(u32, u32)>),
    Batch(Vec<PageId>),
    Sync,
}

/// A store wrapper that records every call.
pub struct Recording<S> {
    pub inner: S,
    pub calls: Mutex<Vec<Call>>,
}

impl<S: PageStore> Recording<S> {
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            calls: Mutex::new(Vec::new()),
        }
    }
    pub fn take(&self) -> Vec<Call> {
        std::mem::take(&mut *self.calls.lock())
    }
}

impl<S: PageStore> PageStore for Recording<S> {
    fn name(&self) -> &'static str {
        "recording"
    }
    fn page_size(&self) -> usize {
        self.inner.page_size()
    }
    fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
        self.calls.lock().push(Call::Read(pid));
        self.inner.read_page(pid, buf)
    }
    fn write_page(&self, pid: PageId, page: &[u8], dirty: &DirtyRanges) -> Result<(), StoreError> {
        self.calls.lock().push(Call::Write(
            pid,
            dirty.iter().map(|r| (r.start, r.end)).collect(),
        ));
        self.inner.write_page(pid, page, dirty)
    }
    fn write_pages(&self, batch: &[PageWrite<'_>]) -> Result<(), StoreError> {
        self.calls
            .lock()
            .push(Call::Batch(batch.iter().map(|w| w.pid).collect()));
        self.inner.write_pages(batch)
    }
    fn sync(&self) -> Result<(), StoreError> {
        self.calls.lock().push(Call::Sync);
        self.inner.sync()
    }
    fn stats(&self) -> StoreStats {
        self.inner.stats()
    }
    fn device_stats(&self) -> DeviceStats {
        self.inner.device_stats()
    }
}

pub fn mem_store(page_size: usize) -> DirectStore<MemDevice> {
    DirectStore::create(
        MemDevice::new(0),
        DirectStoreConfig::with_page_size(page_size),
    )
    .expect("create store")
}
