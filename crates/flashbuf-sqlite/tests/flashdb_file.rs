//! `FlashDb` as SQLite's file, without SQLite: sizes, short reads, holes, truncation,
//! refusals, reopening; and the pool's dirty ranges are SQLite's changed bytes.
#![allow(clippy::unwrap_used)]

use flashbuf_core::{DeviceStats, DirtyRanges, PageId};
use flashbuf_device::MemDevice;
use flashbuf_pool::policy::Lru;
use flashbuf_sqlite::{store_on, Cache, Database, FlashDb, MemFs, OpenOptions};
use flashbuf_store::registry::StoreContext;
use flashbuf_store::{PageStore, PageWrite, ReadOutcome, StoreError, StoreStats};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

const PS: usize = 4096;

fn page(tag: u8) -> Vec<u8> {
    let mut p = vec![tag; PS];
    p[..16].copy_from_slice(b"SQLite format 3\0");
    p[16..18].copy_from_slice(&4096u16.to_be_bytes());
    p[20] = 32;
    p
}

fn open(dev: &Arc<MemDevice>, create: bool, pool: bool) -> FlashDb {
    let store = store_on(
        "direct",
        Box::new(dev.clone()),
        &StoreContext::new(PS),
        create,
    )
    .unwrap();
    let cache = if pool {
        Cache::Pool {
            frames: 8,
            policy: Box::new(Lru::new(8)),
        }
    } else {
        Cache::PassThrough
    };
    FlashDb::open(store, cache).unwrap()
}

#[test]
fn sizes_holes_and_truncation_behave_like_a_file_across_reopens() {
    for pool in [false, true] {
        let dev = Arc::new(MemDevice::new(0));
        let db = open(&dev, true, pool);
        assert_eq!(db.file_size(), 0);
        let mut buf = vec![9u8; PS];
        assert!(!db.read(0, &mut buf).unwrap(), "empty file: short read");
        assert!(buf.iter().all(|&b| b == 0));
        for n in 0..4u64 {
            db.write(n * PS as u64, &page(n as u8 + 1)).unwrap();
        }
        assert_eq!(db.file_size(), 4 * PS as u64);
        // Reads inside a page, across pages, past the end.
        let mut b = [0u8; 16];
        assert!(db.read(24, &mut b).unwrap());
        assert_eq!(b[0], 1);
        let mut two = vec![0u8; 200];
        assert!(db.read(PS as u64 - 100, &mut two).unwrap());
        // Bytes PS-100..PS of page 1 (its reserved tail PS-32..PS reads zero), then page 2.
        assert_eq!(
            (two[0], two[67], two[68], two[99]),
            (1, 1, 0, 0),
            "reserved tail reads zero"
        );
        assert_eq!(two[100], b'S');
        assert!(!db.read(4 * PS as u64 - 10, &mut two).unwrap());
        // Shrink, then grow by truncation: the old page 4 reads as zeros (a hole).
        db.truncate(2 * PS as u64).unwrap();
        db.truncate(5 * PS as u64).unwrap();
        let mut p = vec![7u8; PS];
        assert!(db.read(3 * PS as u64, &mut p).unwrap());
        assert!(p.iter().all(|&b| b == 0), "a hole reads as zeros");
        db.sync().unwrap();
        assert_eq!(db.stats().vfs.hole_pages, 3);
        // Refusals.
        assert!(db.write(PS as u64, &page(1)[..100]).is_err());
        assert!(db.write(100, &page(1)).is_err());
        assert!(
            db.write(0, &vec![0u8; PS]).is_err(),
            "page 1 without SQLite's header"
        );
        assert!(db.truncate(100).is_err());
        db.check_invariants().unwrap();
        drop(db);
        let db = open(&dev, false, pool);
        assert_eq!(db.file_size(), 5 * PS as u64, "pool={pool}");
        assert!(db.read(3 * PS as u64, &mut p).unwrap());
        assert!(
            p.iter().all(|&b| b == 0),
            "the hole stays zero after a reopen"
        );
        assert!(db.read(PS as u64, &mut p).unwrap());
        assert_eq!(p[100], 2);
    }
}

#[test]
fn another_page_size_or_foreign_data_is_refused() {
    let dev = Arc::new(MemDevice::new(0));
    drop(open(&dev, true, false));
    let store = store_on(
        "direct",
        Box::new(dev.clone()),
        &StoreContext::new(8192),
        false,
    );
    assert!(store.is_err(), "the store itself refuses another page size");
    // A store holding pages that are not the VFS's record.
    let dev = Arc::new(MemDevice::new(0));
    let store = store_on(
        "direct",
        Box::new(dev.clone()),
        &StoreContext::new(PS),
        true,
    )
    .unwrap();
    let mut p = vec![0u8; PS];
    p[100] = 1;
    flashbuf_core::page::seal(&mut p, PageId(0), 1);
    store
        .write_page(PageId(0), &p, &DirtyRanges::full(PS))
        .unwrap();
    let e = FlashDb::open(store, Cache::PassThrough)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("does not hold a flashbuf-sqlite database"),
        "{e}"
    );
}

/// Counts the dirty bytes the store is told about.
struct Recording {
    inner: Box<dyn PageStore>,
    writes: Arc<AtomicU64>,
    partial: Arc<AtomicU64>,
    dirty_bytes: Arc<AtomicU64>,
}

impl PageStore for Recording {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn page_size(&self) -> usize {
        self.inner.page_size()
    }
    fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
        self.inner.read_page(pid, buf)
    }
    fn write_page(&self, pid: PageId, page: &[u8], dirty: &DirtyRanges) -> Result<(), StoreError> {
        self.writes.fetch_add(1, Relaxed);
        if dirty.total_bytes() < page.len() {
            self.partial.fetch_add(1, Relaxed);
        }
        self.dirty_bytes
            .fetch_add(dirty.total_bytes() as u64, Relaxed);
        self.inner.write_page(pid, page, dirty)
    }
    fn write_pages(&self, batch: &[PageWrite<'_>]) -> Result<(), StoreError> {
        for w in batch {
            self.write_page(w.pid, w.page, &w.dirty)?;
        }
        Ok(())
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
fn the_pool_hands_the_store_sqlites_changed_bytes_only() {
    let (writes, dirty) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let partial = Arc::new(AtomicU64::new(0));
    let inner = store_on(
        "direct",
        Box::new(MemDevice::new(0)),
        &StoreContext::new(PS),
        true,
    )
    .unwrap();
    let store = Box::new(Recording {
        inner,
        writes: writes.clone(),
        partial: partial.clone(),
        dirty_bytes: dirty.clone(),
    });
    let cache = Cache::Pool {
        frames: 512,
        policy: Box::new(Lru::new(512)),
    };
    let mut db = Database::open(
        FlashDb::open(store, cache).unwrap(),
        OpenOptions::in_memory(MemFs::new()),
    )
    .unwrap();
    let w = flashbuf_sqlite::parse_sql_workload("tpcb:accounts=2000").unwrap();
    let cfg = flashbuf_workload::RunConfig {
        threads: 1,
        limit: flashbuf_workload::RunLimit::Transactions(3000),
        seed: 1,
    };
    db.run_workload(&*w, &cfg).unwrap();
    db.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    let (n, d, p) = (
        writes.load(Relaxed),
        dirty.load(Relaxed),
        partial.load(Relaxed),
    );
    let mean = d as f64 / n as f64;
    println!("{n} page writes ({p} partial), {mean:.0} dirty bytes per write of a {PS}-byte page");
    assert!(n > 50);
    // Overwrites of account, teller and branch pages carry SQLite's changed runs (at most
    // four ranges, merged); new history pages are whole.
    assert!(p * 4 > n, "only {p} of {n} write-backs were partial");
    assert!(mean < PS as f64 * 0.8, "{mean:.0} dirty bytes per write");
}
