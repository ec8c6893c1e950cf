#![allow(clippy::unwrap_used)]
//! Regression (issue 6, fail-stop): after the store under a pool failed (an injected read,
//! write-back or sync fault, EIO or ENOSPC) the store was poisoned but the *pool* went on:
//! hits on resident pages (guards and the `with_read`/`with_write` fast path) kept
//! succeeding, and a failed eviction write-back silently dropped the dirty page from the
//! pool, so a later miss re-read the stale store copy if the store error did not poison
//! (a lost update). Fixed: the pool poisons itself on any write-back, flush or sync failure
//! and on device errors of reads; every later call returns `StoreError::Poisoned` until the
//! store is reopened. Reopening returns every synced page (checked against the model) —
//! for every crash variant of every store in `flashbuf_store::STORES`.

use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::PageId;
use flashbuf_device::fault::{CrashMode, FaultDevice, FaultKind, FaultPlan};
use flashbuf_pool::policy::Lru;
use flashbuf_pool::{BufferPool, PoolError};
use flashbuf_store::{PageStore, StoreError};
use flashbuf_testkit::content::fill;
use flashbuf_testkit::model::Model;
use flashbuf_testkit::CrashStore;
use std::sync::Arc;

const PS: usize = 4096;
const FRAMES: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Read,
    Write,
    Sync,
}

struct Harness {
    dev: Arc<FaultDevice>,
    pool: BufferPool<Box<dyn PageStore>>,
    model: Model,
    tag: u64,
}

impl Harness {
    fn new(f: &CrashStore) -> Self {
        let dev = Arc::new(FaultDevice::new(0));
        let store = f.create(Box::new(dev.clone()), PS).unwrap();
        let pool = BufferPool::new(store, FRAMES, Box::new(Lru::new(FRAMES))).unwrap();
        Self {
            dev,
            pool,
            model: Model::new(),
            tag: 0,
        }
    }

    fn write(&mut self, pid: u64) -> Result<(), PoolError> {
        self.tag += 1;
        let mut payload = vec![0u8; PS - HEADER_BYTES];
        fill(&mut payload, PageId(pid), self.tag, 11);
        let mut g = self.pool.write(PageId(pid))?;
        g.data_mut().copy_from_slice(&payload);
        drop(g);
        self.model.write(PageId(pid), self.tag, payload.into());
        Ok(())
    }

    fn sync(&mut self) -> Result<(), PoolError> {
        self.pool.sync()?;
        self.model.sync();
        Ok(())
    }
}

fn provoke(h: &mut Harness, fault: Fault) -> PoolError {
    for i in 0..64u64 {
        let r = match fault {
            // Alternate never-written pages (which evict) with the written pages 0..3
            // (which then miss and must be read from the device; a store may answer
            // never-written pages without any device read).
            Fault::Read => {
                let pid = if i % 2 == 0 { 100 + i } else { (i / 2) % 3 };
                h.pool.read(PageId(pid)).map(|_| ())
            }
            Fault::Write => h.write(i),
            Fault::Sync => h.write(i % 3).and_then(|()| h.sync()),
        };
        if let Err(e) = r {
            return e;
        }
    }
    panic!("the injected {fault:?} fault never surfaced");
}

fn assert_poisoned<T>(what: &str, r: Result<T, PoolError>) {
    match r {
        Err(PoolError::Store(StoreError::Poisoned(_))) => {}
        Err(e) => panic!("{what}: expected Poisoned, got {e}"),
        Ok(_) => panic!("{what}: succeeded on a poisoned pool"),
    }
}

fn check(f: &CrashStore, fault: Fault, kind: FaultKind) {
    let ctx = format!("store '{}', {fault:?} fault, {kind:?}", f.name);
    let mut h = Harness::new(f);
    for pid in 0..3 {
        h.write(pid).unwrap();
    }
    h.sync().unwrap();
    // Pages 0 and 1 dirty again and resident.
    h.write(0).unwrap();
    h.write(1).unwrap();
    h.dev.set_plan(FaultPlan {
        fail_read: (fault == Fault::Read).then_some(1),
        fail_write: (fault == Fault::Write).then_some(1),
        fail_sync: (fault == Fault::Sync).then_some(1),
        kind,
        sticky: false,
    });
    let first = provoke(&mut h, fault);
    assert!(
        !matches!(first, PoolError::Store(StoreError::Poisoned(_))),
        "{ctx}: the first error should be the fault itself: {first}"
    );
    h.dev.set_plan(FaultPlan::default());
    // Resident pages would be served by the fast paths without touching the store: they
    // must be refused by the pool itself.
    let cached: Vec<u64> = (0..64u64).filter(|p| h.pool.contains(PageId(*p))).collect();
    assert!(!cached.is_empty(), "{ctx}: no page stayed resident");
    for &p in &cached {
        assert_poisoned(&ctx, h.pool.with_read(PageId(p), |_| ()));
        assert_poisoned(&ctx, h.pool.with_write(PageId(p), |_| ()));
        let many = h.pool.access_many(
            1,
            |_| (PageId(p), flashbuf_pool::policy::Access::Read),
            |_, _| {},
        );
        assert_poisoned(&ctx, many.map_err(|(_, e)| e));
    }
    let resident = (0..8u64)
        .find(|p| h.pool.with_read(PageId(*p), |_| ()).is_ok())
        .map(|p| format!("{ctx}: page {p} served by a poisoned pool"));
    assert_eq!(resident, None);
    assert_poisoned(&ctx, h.pool.read(PageId(0)));
    assert_poisoned(&ctx, h.pool.write(PageId(1)));
    assert_poisoned(&ctx, h.pool.read(PageId(40)));
    assert_poisoned(&ctx, h.pool.with_write(PageId(0), |_| ()));
    assert_poisoned(&ctx, h.pool.flush_all());
    assert_poisoned(&ctx, h.pool.sync());
    assert_poisoned(&ctx, h.pool.sync());

    // Reopen: synced pages exact, the rest old or new (or corrupt if written since).
    let images = [
        h.dev.crash_image(CrashMode::LoseUnsynced),
        h.dev.crash_image(CrashMode::KeepAll),
        h.dev.live_image(),
    ];
    for img in images {
        let store = f.open(Box::new(FaultDevice::from_image(img)), PS).unwrap();
        let mut buf = vec![0u8; PS];
        for pid in (0..70).map(PageId) {
            let r = store.read_page(pid, &mut buf);
            if let Err(v) =
                h.model
                    .check_recovered(pid, r.as_ref().map(|o| *o), &buf[HEADER_BYTES..])
            {
                panic!("{ctx}: after reopen: {v}");
            }
        }
    }
}

#[test]
fn a_pool_over_a_failed_store_is_poisoned_until_reopened() {
    for f in &CrashStore::variants().unwrap() {
        for fault in [Fault::Read, Fault::Write, Fault::Sync] {
            for kind in [FaultKind::Eio, FaultKind::Enospc] {
                check(f, fault, kind);
            }
        }
    }
}

/// A store error that does not poison the store (here: "full") during an eviction's
/// write-back used to drop the dirty page from the pool: the next miss read the stale
/// store copy and returned it as current. Now the pool is poisoned instead.
#[test]
fn a_failed_write_back_never_exposes_the_stale_store_copy() {
    use flashbuf_core::{DeviceStats, DirtyRanges};
    use flashbuf_device::MemDevice;
    use flashbuf_store::{DirectStore, DirectStoreConfig, ReadOutcome, StoreStats};
    use std::sync::atomic::{AtomicBool, Ordering};

    struct FullOnce {
        inner: DirectStore<MemDevice>,
        armed: AtomicBool,
    }
    impl PageStore for FullOnce {
        fn name(&self) -> &'static str {
            "full-once"
        }
        fn page_size(&self) -> usize {
            self.inner.page_size()
        }
        fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
            self.inner.read_page(pid, buf)
        }
        fn write_page(&self, pid: PageId, p: &[u8], d: &DirtyRanges) -> Result<(), StoreError> {
            if self.armed.swap(false, Ordering::SeqCst) {
                return Err(StoreError::Full("no room for this page".into()));
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

    let store = FullOnce {
        inner: DirectStore::create(MemDevice::new(0), DirectStoreConfig::with_page_size(PS))
            .unwrap(),
        armed: AtomicBool::new(false),
    };
    let pool = BufferPool::new(store, 1, Box::new(Lru::new(1))).unwrap();
    pool.write(PageId(0)).unwrap().write(0, b"old");
    pool.sync().unwrap();
    pool.write(PageId(0)).unwrap().write(0, b"new");
    pool.store().armed.store(true, Ordering::SeqCst);
    // Evicting page 0 (dirty, "new") fails.
    assert!(pool.read(PageId(1)).is_err());
    let seen = pool
        .read(PageId(0))
        .map(|g| String::from_utf8_lossy(&g.data()[..3]).into_owned());
    match seen {
        Ok(s) => panic!("page 0 served after its write-back failed: {s:?}"),
        Err(e) => assert!(
            matches!(e, PoolError::Store(StoreError::Poisoned(_))),
            "{e}"
        ),
    }
}
