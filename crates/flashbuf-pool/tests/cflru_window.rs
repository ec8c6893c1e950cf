#![allow(clippy::unwrap_used)]
//! CFLRU by hand-worked examples, through the pool: the clean page inside the window goes
//! before an older dirty page, a clean page outside the window does not, and with no clean
//! page in the window the LRU page is written back.

mod common;

use common::{mem_store, Call, Recording};
use flashbuf_core::PageId;
use flashbuf_pool::policy::{Cflru, CflruConfig, Lru};
use flashbuf_pool::BufferPool;

fn writes(calls: &[Call]) -> Vec<&Call> {
    calls
        .iter()
        .filter(|c| !matches!(c, Call::Read(_)))
        .collect()
}

#[test]
fn clean_page_in_window_goes_before_older_dirty_page() {
    // 4 frames, window 2. Recency (LRU first): W1 R2 | R3 R4.
    let p = Cflru::with_config(4, CflruConfig { window: 0.5 }).unwrap();
    let pool = BufferPool::new(Recording::new(mem_store(512)), 4, Box::new(p)).unwrap();
    pool.write(PageId(1)).unwrap().write(0, b"x");
    for pg in [2, 3, 4] {
        drop(pool.read(PageId(pg)).unwrap());
    }
    pool.store().take();
    // Fault on 5: the window is {1 (dirty), 2 (clean)}: 2 goes, nothing is written.
    drop(pool.read(PageId(5)).unwrap());
    assert_eq!(pool.store().take(), vec![Call::Read(PageId(5))]);
    // Now LRU first: W1 R3 | R4 R5: window {1, 3}: 3 goes.
    drop(pool.read(PageId(6)).unwrap());
    assert_eq!(pool.store().take(), vec![Call::Read(PageId(6))]);
    // W1 R4 | R5 R6. Dirty 4, touch 5 and 6: W1 W4 | R5 R6 -> the window {1, 4} has no
    // clean page although 5 and 6 are clean: the LRU page 1 is written back and evicted.
    pool.write(PageId(4)).unwrap().write(0, b"y");
    drop(pool.read(PageId(5)).unwrap());
    drop(pool.read(PageId(6)).unwrap());
    drop(pool.read(PageId(7)).unwrap());
    let calls = pool.store().take();
    assert_eq!(writes(&calls).len(), 1);
    assert!(matches!(&calls[0], Call::Write(PageId(1), _)), "{calls:?}");
    pool.check_invariants().unwrap();
    let s = pool.stats();
    assert_eq!((s.misses, s.dirty_evictions, s.page_writes), (7, 1, 1));
}

#[test]
fn fewer_writes_than_lru_on_a_mixed_loop() {
    // A loop over 6 pages in 4 frames, page 0 written each round: LRU writes it back every
    // round, CFLRU keeps the dirty page and evicts clean ones.
    let run = |p: Box<dyn flashbuf_pool::policy::Policy>| {
        let pool = BufferPool::new(mem_store(512), 4, p).unwrap();
        for _ in 0..20 {
            pool.write(PageId(0)).unwrap().write(0, b"z");
            for pg in 1..6 {
                drop(pool.read(PageId(pg)).unwrap());
            }
        }
        pool.check_invariants().unwrap();
        pool.stats()
    };
    let lru = run(Box::new(Lru::new(4)));
    let cflru = run(Box::new(Cflru::new(4)));
    assert_eq!(lru.page_writes, 20);
    assert_eq!(cflru.page_writes, 0);
    assert_eq!(cflru.misses, lru.misses - 19, "page 0 also stops missing");
}
