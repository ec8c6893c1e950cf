#![allow(clippy::unwrap_used)]
//! LRU against its naive O(n) reference on random traces, through the real pool: same hits,
//! misses and write-backs, and the same store calls in the same order. The short-access API
//! (`with_read`/`with_write`) must make exactly the same decisions as the guards.

mod common;

use common::{mem_store, Call, Recording};
use flashbuf_core::PageId;
use flashbuf_pool::policy::{
    reference::NaiveLru, Access, Clustered, ClusteringConfig, Lru, Policy,
};
use flashbuf_pool::{BufferPool, PageAccess, PoolStats};
use proptest::prelude::*;

/// Replays `trace` one access at a time; `closures` selects `with_read`/`with_write`
/// instead of guards.
fn replay_with(
    policy: Box<dyn Policy>,
    frames: usize,
    trace: &[(bool, u64)],
    closures: bool,
) -> (PoolStats, Vec<Call>) {
    let pool = BufferPool::new(Recording::new(mem_store(512)), frames, policy).unwrap();
    for &(w, p) in trace {
        match (w, closures) {
            (true, false) => pool.write(PageId(p)).unwrap().write(0, &p.to_le_bytes()),
            (false, false) => drop(pool.read(PageId(p)).unwrap()),
            (true, true) => pool
                .with_write(PageId(p), |g| g.write(0, &p.to_le_bytes()))
                .unwrap(),
            (false, true) => pool
                .with_read(PageId(p), |d| {
                    assert!(d[..8] == p.to_le_bytes() || d[..8] == [0; 8])
                })
                .unwrap(),
        }
    }
    pool.check_invariants().unwrap();
    (pool.stats(), pool.store().take())
}

/// Replays `trace` with `access_many` (runs of hits under one lock hold).
fn replay_many(
    policy: Box<dyn Policy>,
    frames: usize,
    trace: &[(bool, u64)],
) -> (PoolStats, Vec<Call>) {
    let pool = BufferPool::new(Recording::new(mem_store(512)), frames, policy).unwrap();
    let key = |i: usize| {
        let (w, p) = trace[i];
        (PageId(p), if w { Access::Write } else { Access::Read })
    };
    pool.access_many(trace.len(), key, |i, page| {
        let p = trace[i].1;
        match page {
            PageAccess::Read(d) => assert!(d[..8] == p.to_le_bytes() || d[..8] == [0; 8]),
            PageAccess::Write(mut w) => w.write(0, &p.to_le_bytes()),
        }
    })
    .map_err(|(_, e)| e)
    .unwrap();
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
        let a = replay_with(Box::new(Lru::new(frames)), frames, &trace, false);
        let b = replay_with(Box::new(NaiveLru::new(frames)), frames, &trace, false);
        prop_assert_eq!(&a, &b);
        let c = replay_with(Box::new(Lru::new(frames)), frames, &trace, true);
        prop_assert_eq!(&a, &c);
        let d = replay_many(Box::new(Lru::new(frames)), frames, &trace);
        prop_assert_eq!(a, d);
    }

    /// `access_many` serves misses under the pool lock held all along, the guards release
    /// it for the store's I/O: with cluster write-backs (batches of pinned, latched
    /// members) both must make the same store calls in the same order.
    #[test]
    fn access_many_matches_the_guards_with_cluster_write_backs(
        frames in 1usize..12,
        cluster in 1u64..6,
        drain in any::<bool>(),
        trace in proptest::collection::vec((any::<bool>(), 0u64..30), 1..400)
    ) {
        let cfg = if drain { ClusteringConfig::drain(cluster) } else { ClusteringConfig::batch(cluster) };
        let policy = || Box::new(Clustered::new(Lru::new(frames), cfg).unwrap());
        let a = replay_with(policy(), frames, &trace, false);
        let b = replay_many(policy(), frames, &trace);
        prop_assert_eq!(a, b);
    }
}
