#![allow(clippy::unwrap_used)]
//! FD-Buffer against its naive O(n) reference on random traces, through the real pool:
//! same hits, misses and write-backs, and the same store calls in the same order. Small
//! windows make the advisor move `M_c` often; clustering runs in both modes. Both sides
//! are built from the spec through the policy table; the pool announces every miss's
//! access (`prepare_miss`) to both.

mod common;
mod fd_buffer_support;
mod policy_harness;

use common::Recording;
use fd_buffer_support::small_store;
use flashbuf_core::{DeviceFacts, PageId};
use flashbuf_pool::policy::fd_buffer::ClusterVictim;
use flashbuf_pool::policy::Policy;
use flashbuf_pool::BufferPool;
use policy_harness::{context, pair};
use proptest::prelude::*;

fn replay(
    policy: Box<dyn Policy>,
    frames: usize,
    trace: &[(bool, u64)],
    flush_every: usize,
) -> (flashbuf_pool::PoolStats, Vec<common::Call>) {
    let pool = BufferPool::new(Recording::new(small_store()), frames, policy).unwrap();
    for (i, &(w, p)) in trace.iter().enumerate() {
        if w {
            pool.write(PageId(p)).unwrap().write(0, &p.to_le_bytes());
        } else {
            drop(pool.read(PageId(p)).unwrap());
        }
        if flush_every > 0 && i % flush_every == flush_every - 1 {
            pool.flush_all().unwrap();
        }
    }
    pool.check_invariants().unwrap();
    (pool.stats(), pool.store().take())
}

fn both(spec: &str, frames: usize, trace: &[(bool, u64)], flush_every: usize) {
    let (fast, naive) = pair(spec, &context(frames, DeviceFacts::default()));
    let a = replay(fast, frames, trace, flush_every);
    let b = replay(naive, frames, trace, flush_every);
    assert_eq!(a.0, b.0, "stats differ ({spec})");
    assert!(a.1 == b.1, "store calls differ ({spec})");
}

/// `fd-buffer` with fixed windows of `window` references, group size `group`, a fixed
/// `r`, present conditions `pr`, and clustering `k` (0 off, 1 drain, 2 batch) of `pages`
/// pages with the victim cluster by priority or by the dirty pool's order.
fn spec(
    window: u64,
    group: usize,
    r: f64,
    pr: bool,
    k: u8,
    pages: u64,
    victim: ClusterVictim,
) -> String {
    let mut s = format!("fd-buffer:window={window},group={group},r={r},pr={pr},timed=false");
    if k > 0 {
        let mode = if k == 1 { "drain" } else { "batch" };
        let v = match victim {
            ClusterVictim::Priority => "priority",
            ClusterVictim::OrderVictim => "order",
        };
        s += &format!(",clustering={mode},cluster={pages},victim={v}");
    }
    s
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
        let victim = if order_victim { ClusterVictim::OrderVictim } else { ClusterVictim::Priority };
        both(&spec(window, group, r, pr, clus, cluster_pages, victim), frames, &trace, flush_every);
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
            both(&spec(500, 4, 20.0, true, clus, 8, cv), 64, &trace, 0);
        }
    }
}
