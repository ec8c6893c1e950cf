#![allow(clippy::unwrap_used)]
//! FD-Buffer against its naive O(n) reference on random traces, through the real pool:
//! same hits, misses and write-backs, and the same store calls in the same order. Small
//! windows make the advisor move `M_c` often; clustering runs in both modes.

mod common;
mod fd_buffer_support;

use common::Recording;
use fd_buffer_support::small_store;
use flashbuf_core::PageId;
use flashbuf_pool::policy::fd_buffer::naive::NaiveFdBuffer;
use flashbuf_pool::policy::fd_buffer::{
    ClusterVictim, Clustering, FdBuffer, FdBufferHandle, FdBufferOptions,
};
use flashbuf_pool::policy::{Access, Policy};
use flashbuf_pool::BufferPool;
use proptest::prelude::*;

fn replay(
    policy: Box<dyn Policy>,
    handle: &FdBufferHandle,
    frames: usize,
    trace: &[(bool, u64)],
    flush_every: usize,
) -> (flashbuf_pool::PoolStats, Vec<common::Call>) {
    let pool = BufferPool::new(Recording::new(small_store()), frames, policy).unwrap();
    for (i, &(w, p)) in trace.iter().enumerate() {
        if w {
            handle.set_next_access(Access::Write);
            pool.write(PageId(p)).unwrap().write(0, &p.to_le_bytes());
        } else {
            handle.set_next_access(Access::Read);
            drop(pool.read(PageId(p)).unwrap());
        }
        if flush_every > 0 && i % flush_every == flush_every - 1 {
            pool.flush_all().unwrap();
        }
    }
    pool.check_invariants().unwrap();
    (pool.stats(), pool.store().take())
}

fn both(opts: FdBufferOptions, frames: usize, trace: &[(bool, u64)], flush_every: usize) {
    let fast = FdBuffer::new(frames, opts.clone()).unwrap();
    let hf = fast.handle();
    let naive = NaiveFdBuffer::new(frames, &opts).unwrap();
    let hn = naive.handle();
    let a = replay(Box::new(fast), &hf, frames, trace, flush_every);
    let b = replay(Box::new(naive), &hn, frames, trace, flush_every);
    assert_eq!(a.0, b.0, "stats differ ({opts:?})");
    assert!(a.1 == b.1, "store calls differ ({opts:?})");
}

fn clustering(k: u8, pages: u64) -> Clustering {
    match k {
        0 => Clustering::Off,
        1 => Clustering::Drain {
            cluster_pages: pages,
        },
        _ => Clustering::Batch {
            cluster_pages: pages,
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn fd_buffer_matches_naive(
        frames in 1usize..14,
        window in 1u64..40,
        group in prop_oneof![Just(1usize), Just(2), Just(3), Just(64)],
        r in prop_oneof![Just(0.0f64), Just(1.0), Just(3.0), Just(136.0)],
        pr in any::<bool>(),
        clus in 0u8..3,
        cluster_pages in 1u64..6,
        flush_every in prop_oneof![Just(0usize), Just(37)],
        order_victim in any::<bool>(),
        trace in proptest::collection::vec((any::<bool>(), 0u64..40), 1..500)
    ) {
        let opts = FdBufferOptions::default()
            .window_refs(window)
            .group_size(group)
            .fixed_r(r)
            .present_conditions(pr)
            .clustering(clustering(clus, cluster_pages))
            .cluster_victim(if order_victim { ClusterVictim::OrderVictim } else { ClusterVictim::Priority });
        both(opts, frames, &trace, flush_every);
    }
}

#[test]
fn skewed_trace_with_many_windows() {
    // A longer trace with locality so that both pools see hits and M_c moves.
    let mut x = 7u64;
    let trace: Vec<(bool, u64)> = (0..20_000)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let hot = (x >> 60) < 12;
            let page = if hot { (x >> 20) % 24 } else { (x >> 20) % 400 };
            ((x >> 8).is_multiple_of(5), page)
        })
        .collect();
    for clus in 0..3 {
        for cv in [ClusterVictim::Priority, ClusterVictim::OrderVictim] {
            let opts = FdBufferOptions::default()
                .window_refs(500)
                .group_size(4)
                .fixed_r(20.0)
                .clustering(clustering(clus, 8))
                .cluster_victim(cv);
            both(opts, 64, &trace, 0);
        }
    }
}
