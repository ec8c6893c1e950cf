#![allow(clippy::unwrap_used)]
//! CFDC (Formula 1 by the block scan, exact) against the naive version that recomputes
//! every priority from the formula and sorts the clusters at each decision: same counters
//! and the same store calls, over random traces with multi-page clusters, buffer sizes,
//! priority windows, cluster sizes, pins and flushes. Both are built from the spec
//! through the policy table.

mod common;
mod policy_harness;

use flashbuf_core::DeviceFacts;
use policy_harness::{context, pair, replay, trace, trace_over};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]
    #[test]
    fn cfdc_matches_naive(
        frames in 1usize..40,
        window in prop_oneof![Just(0.5), Just(0.0), Just(1.0), 0.0f64..=1.0],
        cluster_size in prop_oneof![Just(64u64), Just(1), Just(2), Just(4), Just(8), 1u64..100],
        ops in trace(800),
    ) {
        let spec = format!("cfdc:window={window},cluster_size={cluster_size}");
        let (fast, naive) = pair(&spec, &context(frames, DeviceFacts::default()));
        let a = replay(fast, frames, &ops);
        let b = replay(naive, frames, &ops);
        prop_assert_eq!(a, b);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Larger buffers and longer traces: many clusters at once, several blocks of the
    /// scan, orders that flip as globaltime advances.
    #[test]
    fn cfdc_matches_naive_large(
        frames in 64usize..200,
        window in prop_oneof![Just(0.5), 0.2f64..=0.9],
        cluster_size in prop_oneof![Just(64u64), Just(8), Just(16), 2u64..40],
        ops in trace_over(4000, 90),
    ) {
        let spec = format!("cfdc:window={window},cluster_size={cluster_size}");
        let (fast, naive) = pair(&spec, &context(frames, DeviceFacts::default()));
        let a = replay(fast, frames, &ops);
        let b = replay(naive, frames, &ops);
        prop_assert_eq!(a, b);
    }
}
