#![allow(clippy::unwrap_used)]
//! Regression (found while building `stress_file_store`): `BufferPool::sync` could return
//! while a page modified *before* the call was still being written back by a concurrent
//! eviction. The evicting thread takes the page out of the page table before its
//! write-back; `flush_all` saw neither a resident dirty page nor waited for the in-flight
//! write, and the store sync ran ahead of it — after a crash the acknowledged page was
//! gone. Fixed: `flush_all` waits for the in-flight eviction write-backs of every page
//! that was dirty or being evicted when it started.

use flashbuf_core::{DeviceStats, DirtyRanges, PageId};
use flashbuf_device::fault::{CrashMode, FaultDevice};
use flashbuf_pool::policy::Lru;
use flashbuf_pool::BufferPool;
use flashbuf_store::{
    DirectStore, DirectStoreConfig, PageStore, ReadOutcome, StoreError, StoreStats,
};
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Holds writes of page 0 at a gate until it opens.
struct Gated {
    inner: DirectStore<Arc<FaultDevice>>,
    gate: Mutex<(bool, bool)>, // (entered, open)
    cv: Condvar,
}

impl PageStore for Gated {
    fn name(&self) -> &'static str {
        "gated"
    }
    fn page_size(&self) -> usize {
        self.inner.page_size()
    }
    fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
        self.inner.read_page(pid, buf)
    }
    fn write_page(&self, pid: PageId, p: &[u8], d: &DirtyRanges) -> Result<(), StoreError> {
        if pid == PageId(0) {
            let mut g = self.gate.lock();
            g.0 = true;
            self.cv.notify_all();
            while !g.1 {
                self.cv.wait(&mut g);
            }
        }
        self.inner.write_page(pid, p, d)
    }
    fn sync(&self) -> Result<(), StoreError> {
        self.inner.sync()
    }
    fn stats(&self) -> StoreStats {
        self.inner.stats()
    }
    fn device_stats(&self) -> DeviceStats {
        self.inner.device_stats()
    }
}

#[test]
fn sync_waits_for_a_concurrent_eviction_of_a_page_modified_before_it() {
    let dev = Arc::new(FaultDevice::new(0));
    let store = Gated {
        inner: DirectStore::create(dev.clone(), DirectStoreConfig::with_page_size(4096)).unwrap(),
        gate: Mutex::new((false, false)),
        cv: Condvar::new(),
    };
    let pool = Arc::new(BufferPool::new(store, 1, Box::new(Lru::new(1))).unwrap());
    pool.write(PageId(0)).unwrap().write(0, b"acknowledged");

    // An eviction of page 0 starts and stalls in its write-back.
    let evictor = {
        let pool = pool.clone();
        std::thread::spawn(move || drop(pool.read(PageId(1)).unwrap()))
    };
    {
        let s = pool.store();
        let mut g = s.gate.lock();
        while !g.0 {
            s.cv.wait(&mut g);
        }
    }
    // Page 0 was modified before this sync: when it returns, page 0 must be durable.
    let returned = Arc::new(AtomicBool::new(false));
    let syncer = {
        let pool = pool.clone();
        let returned = returned.clone();
        std::thread::spawn(move || {
            pool.sync().unwrap();
            returned.store(true, Ordering::SeqCst);
        })
    };
    let t = Instant::now();
    while t.elapsed() < Duration::from_millis(500) && !returned.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let early = returned.load(Ordering::SeqCst);
    let durable_then = dev.crash_image(CrashMode::LoseUnsynced);
    {
        let s = pool.store();
        s.gate.lock().1 = true;
        s.cv.notify_all();
    }
    evictor.join().unwrap();
    syncer.join().unwrap();
    assert!(
        !early,
        "sync returned while page 0's write-back was in flight (durable image {} it)",
        if durable_then.windows(12).any(|w| w == b"acknowledged") {
            "holds"
        } else {
            "lacks"
        }
    );
    let img = dev.crash_image(CrashMode::LoseUnsynced);
    let reopened = DirectStore::open(
        FaultDevice::from_image(img),
        DirectStoreConfig::with_page_size(4096),
    )
    .unwrap();
    let mut buf = vec![0u8; 4096];
    assert_eq!(
        reopened.read_page(PageId(0), &mut buf).unwrap(),
        ReadOutcome::Found
    );
    assert_eq!(&buf[32..44], b"acknowledged");
}
