#![allow(clippy::unwrap_used)]
//! CASA against its naive scanning version through the real pool: same counters and the
//! same store calls, over random traces, buffer sizes and device costs.

mod common;
mod policy_harness;

use flashbuf_pool::policy::reference::NaiveCasa;
use flashbuf_pool::policy::{Casa, CasaConfig};
use policy_harness::{replay, trace};
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
        let cfg = CasaConfig { read_cost, write_cost, ..CasaConfig::default() };
        let a = replay(Box::new(Casa::with_config(frames, cfg).unwrap()), frames, &ops);
        let b = replay(Box::new(NaiveCasa::new(frames, cfg).unwrap()), frames, &ops);
        prop_assert_eq!(a, b);
    }
}
