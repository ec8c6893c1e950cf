#![allow(clippy::unwrap_used)]
//! The ranges the pool records for the tree's changes are the real ones: every byte that
//! differs from the page's previous image in the store lies in a recorded range (checked
//! on every write-back of the three workloads), and a slot insert, a small update and a
//! delete dirty a few dozen bytes, not the page.

mod common;

use common::engine::store;
use flashbuf_core::{DeviceStats, DirtyRanges, PageId};
use flashbuf_pool::policy::Lru;
use flashbuf_pool::BufferPool;
use flashbuf_store::{PageStore, PageWrite, ReadOutcome, StoreError, StoreStats};
use flashbuf_workload::btree::{BTree, PageSpace, TreeConfig, TreeId};
use flashbuf_workload::{parse_workload, run, EngineStore, RunConfig, RunLimit};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// A store wrapper that checks each write's recorded ranges against the previous image.
struct CoverCheck {
    inner: Box<dyn PageStore>,
    images: Mutex<HashMap<PageId, Vec<u8>>>,
    violations: Arc<Mutex<Vec<String>>>,
}

impl CoverCheck {
    fn check(&self, pid: PageId, page: &[u8], dirty: &DirtyRanges) {
        let mut images = self.images.lock();
        if let Some(old) = images.get(&pid) {
            for (i, (a, b)) in old.iter().zip(page).enumerate() {
                if a != b && !dirty.iter().any(|r| r.as_usize().contains(&i)) {
                    self.violations
                        .lock()
                        .push(format!("{pid}: byte {i} changed outside {dirty:?}"));
                    break;
                }
            }
        }
        images.insert(pid, page.to_vec());
    }
}

impl PageStore for CoverCheck {
    fn name(&self) -> &'static str {
        "cover-check"
    }
    fn page_size(&self) -> usize {
        self.inner.page_size()
    }
    fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
        let r = self.inner.read_page(pid, buf)?;
        if r == ReadOutcome::Found {
            self.images.lock().insert(pid, buf.to_vec());
        }
        Ok(r)
    }
    fn write_page(&self, pid: PageId, page: &[u8], dirty: &DirtyRanges) -> Result<(), StoreError> {
        self.check(pid, page, dirty);
        self.inner.write_page(pid, page, dirty)
    }
    fn write_pages(&self, batch: &[PageWrite<'_>]) -> Result<(), StoreError> {
        for w in batch {
            self.check(w.pid, w.page, &w.dirty);
        }
        self.inner.write_pages(batch)
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
fn recorded_ranges_cover_every_changed_byte() {
    for (spec, threads) in [
        ("tpcc:warehouses=2,items=2000,customers=60", 4),
        ("tpcb:accounts=3000", 2),
        ("cfdc:records=20000,scan=0.05,range=64", 2),
    ] {
        let violations = Arc::new(Mutex::new(Vec::new()));
        let checked = CoverCheck {
            inner: store("memory"),
            images: Mutex::new(HashMap::new()),
            violations: violations.clone(),
        };
        let s = EngineStore::with_exact_diff(Box::new(checked));
        let pool = BufferPool::new(s, 64, Box::new(Lru::new(64))).unwrap();
        let w = parse_workload(spec).unwrap();
        let cfg = RunConfig {
            threads,
            limit: RunLimit::Transactions(800),
            seed: 3,
        };
        let r = run(&*w, &pool, &cfg).unwrap();
        assert!(r.consistency.ok(), "{spec}: {:?}", r.consistency.failed);
        let v = violations.lock();
        assert!(
            v.is_empty(),
            "{spec}: {} violations, first {:?}",
            v.len(),
            v.first()
        );
        let (rec, exact) = (r.write_backs.run, r.write_backs.run_exact.unwrap());
        assert!(
            rec.write_backs > 100 && rec.write_backs == exact.write_backs,
            "{spec}"
        );
        assert!(
            exact.bytes_mean <= rec.bytes_mean,
            "{spec}: {exact:?} vs {rec:?}"
        );
        assert!(
            rec.bytes_p50 < 1024,
            "{spec}: a typical write-back is small: {rec:?}"
        );
    }
}

#[test]
fn small_changes_dirty_few_bytes() {
    let pool = BufferPool::new(
        EngineStore::with_exact_diff(store("memory")),
        64,
        Box::new(Lru::new(64)),
    )
    .unwrap();
    let space = PageSpace::create(&pool, PageId(0), 1 << 20).unwrap();
    let t = BTree::create(&pool, space, TreeId(1), TreeConfig::default()).unwrap();
    for i in 0..40u32 {
        t.insert(&(i * 2).to_be_bytes(), &[i as u8; 60]).unwrap();
    }
    pool.sync().unwrap();
    let mut last = pool.store().snapshot();
    let mut step = |what: &str, max_bytes: u64, f: &dyn Fn()| {
        f();
        pool.sync().unwrap();
        let now = pool.store().snapshot();
        let d = now.since(&last);
        let (rec, exact) = (d.recorded.summary(), d.exact.unwrap().summary());
        assert_eq!(rec.write_backs, 1, "{what}: one page written");
        assert!(rec.bytes_p50 <= max_bytes, "{what}: {rec:?}");
        assert!(exact.bytes_p50 <= rec.bytes_p50, "{what}: {exact:?}");
        last = now;
    };
    // 32 header bytes + a 70-byte cell + shifted slots + 4 node-header bytes.
    step("slot insert", 32 + 70 + 2 * 40 + 4, &|| {
        assert!(t.insert(&1u32.to_be_bytes(), &[9u8; 62]).unwrap());
    });
    step("3-byte update", 32 + 3, &|| {
        t.update(&20u32.to_be_bytes(), |v| {
            let mut n = v.to_vec();
            n[10] ^= 1;
            n[12] ^= 1;
            Some(n)
        })
        .unwrap();
    });
    step("delete", 32 + 2 * 41 + 4, &|| {
        assert!(t.delete(&40u32.to_be_bytes()).unwrap());
    });
}
