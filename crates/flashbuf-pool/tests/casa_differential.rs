#![allow(clippy::unwrap_used)]
//! CASA against its naive scanning version through the real pool: same counters and the
//! same store calls, over random traces, buffer sizes and device costs. Both are built
//! from the spec through the policy table (`tests/policies_differential.rs` covers every
//! entry with a reference; this file keeps CASA's cost strategy and its regressions).

mod common;
mod policy_harness;

use flashbuf_core::DeviceFacts;
use policy_harness::{context, pair, replay, trace};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]
    #[test]
    fn casa_matches_naive(
        frames in 1usize..40,
        read_cost in prop_oneof![Just(1.0), 0.01f64..100.0],
        write_cost in prop_oneof![Just(1.0), Just(136.0), 0.01f64..1000.0],
        ops in trace(800),
    ) {
        let spec = format!("casa:read_cost={read_cost},write_cost={write_cost}");
        let (fast, naive) = pair(&spec, &context(frames, DeviceFacts::default()));
        let a = replay(fast, frames, &ops);
        let b = replay(naive, frames, &ops);
        prop_assert_eq!(a, b);
    }
}
