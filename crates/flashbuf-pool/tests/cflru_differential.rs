#![allow(clippy::unwrap_used)]
//! CFLRU against its naive scanning version through the real pool: same counters and the
//! same store calls in the same order, over random read/write mixes, buffer sizes, window
//! settings, pins and flushes. Both are built from the spec through the policy table.

mod common;
mod policy_harness;

use flashbuf_core::DeviceFacts;
use policy_harness::{context, pair, replay, trace};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]
    #[test]
    fn cflru_matches_naive(
        frames in 1usize..40,
        window in prop_oneof![Just(0.0), Just(0.25), Just(0.5), Just(1.0), 0.0f64..=1.0],
        ops in trace(800),
    ) {
        let (fast, naive) = pair(&format!("cflru:window={window}"), &context(frames, DeviceFacts::default()));
        let a = replay(fast, frames, &ops);
        let b = replay(naive, frames, &ops);
        prop_assert_eq!(a, b);
    }
}
