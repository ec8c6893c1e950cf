#![allow(clippy::unwrap_used)]
//! Belady's MIN: against a naive O(n²) MIN on random traces, as a pool policy, and on the
//! shared TPC-C trace against libCacheSim's figures (`shared/tools/README.md`).

mod common;
mod fd_buffer_support;

use fd_buffer_support::small_store;
use flashbuf_core::PageId;
use flashbuf_pool::policy::offline::{belady_misses, OfflinePolicy, OfflineRule};
use flashbuf_pool::BufferPool;
use proptest::prelude::*;

/// MIN by brute force: on a miss with a full cache, scan the future for every cached page.
fn naive_min(trace: &[(bool, u64)], frames: usize) -> u64 {
    let mut cache: Vec<u64> = Vec::new();
    let mut misses = 0;
    for (t, &(_, p)) in trace.iter().enumerate() {
        if cache.contains(&p) {
            continue;
        }
        misses += 1;
        if cache.len() == frames {
            let next = |q: u64| {
                trace[t + 1..]
                    .iter()
                    .position(|r| r.1 == q)
                    .unwrap_or(usize::MAX)
            };
            let (i, _) = cache
                .iter()
                .enumerate()
                .max_by_key(|&(_, &q)| next(q))
                .unwrap();
            cache.swap_remove(i);
        }
        cache.push(p);
    }
    misses
}

fn pool_replay(
    trace: &[(bool, u64)],
    frames: usize,
    rule: OfflineRule,
) -> flashbuf_pool::PoolStats {
    let pool = BufferPool::new(
        small_store(),
        frames,
        Box::new(OfflinePolicy::new(trace, frames, rule)),
    )
    .unwrap();
    for &(w, p) in trace {
        if w {
            drop(pool.write(PageId(p)).unwrap());
        } else {
            drop(pool.read(PageId(p)).unwrap());
        }
    }
    pool.check_invariants().unwrap();
    pool.stats()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn belady_matches_naive_min(
        frames in 1usize..10,
        trace in proptest::collection::vec((any::<bool>(), 0u64..25), 0..300)
    ) {
        let fast = belady_misses(&trace, frames);
        prop_assert_eq!(fast.misses, naive_min(&trace, frames));
        prop_assert_eq!(fast.hits + fast.misses, trace.len() as u64);
        let s = pool_replay(&trace, frames, OfflineRule::Belady);
        prop_assert_eq!((s.misses, s.page_writes), (fast.misses, fast.write_backs));
    }
}

#[test]
fn belady_on_tpcc_matches_libcachesim() {
    let Some(trace) = fd_buffer_support::tpcc() else {
        return;
    };
    assert_eq!(trace.len(), 5_123_689);
    for (frames, expected) in [(413, 758_229u64), (1_241, 562_687), (4_139, 303_756)] {
        let r = belady_misses(trace, frames);
        assert_eq!(r.misses, expected, "Belady misses at {frames} frames");
    }
}
