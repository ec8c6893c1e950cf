#![allow(clippy::unwrap_used)]
//! LRU against its naive O(n) reference on random traces, through the real pool: same hits,
//! misses and write-backs, and the same store calls in the same order.

mod common;

use common::{mem_store, Recording};
use flashbuf_core::PageId;
use flashbuf_pool::policy::{reference::NaiveLru, Lru, Policy};
use flashbuf_pool::BufferPool;
use proptest::prelude::*;

fn replay(
    policy: Box<dyn Policy>,
    frames: usize,
    trace: &[(bool, u64)],
) -> (flashbuf_pool::PoolStats, Vec<common::Call>) {
    let pool = BufferPool::new(Recording::new(mem_store(512)), frames, policy).unwrap();
    for &(w, p) in trace {
        if w {
            pool.write(PageId(p)).unwrap().write(0, &p.to_le_bytes());
        } else {
            drop(pool.read(PageId(p)).unwrap());
        }
    }
    pool.check_invariants().unwrap();
    (pool.stats(), pool.store().take())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn lru_matches_naive(
        frames in 1usize..12,
        trace in proptest::collection::vec((any::<bool>(), 0u64..30), 1..400)
    ) {
        let a = replay(Box::new(Lru::new(frames)), frames, &trace);
        let b = replay(Box::new(NaiveLru::new(frames)), frames, &trace);
        prop_assert_eq!(a, b);
    }
}
