#![allow(clippy::unwrap_used)]
//! CFLRU against its naive scanning version through the real pool: same counters and the
//! same store calls in the same order, over random read/write mixes, buffer sizes, window
//! settings, pins and flushes.

mod common;
mod policy_harness;

use flashbuf_pool::policy::reference::NaiveCflru;
use flashbuf_pool::policy::{Cflru, CflruConfig};
use policy_harness::{replay, trace};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]
    #[test]
    fn cflru_matches_naive(
        frames in 1usize..40,
        window in prop_oneof![Just(0.0), Just(0.25), Just(0.5), Just(1.0), 0.0f64..=1.0],
        ops in trace(800),
    ) {
        let cfg = CflruConfig { window };
        let a = replay(Box::new(Cflru::with_config(frames, cfg).unwrap()), frames, &ops);
        let b = replay(Box::new(NaiveCflru::new(frames, cfg).unwrap()), frames, &ops);
        prop_assert_eq!(a, b);
    }
}
