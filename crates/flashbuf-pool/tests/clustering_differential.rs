#![allow(clippy::unwrap_used)]
//! The write-clustering decorator against its naive version, around LRU, CFLRU and CASA
//! (each wrapped fast around fast and naive around naive), in both modes and with both
//! cluster choices: same counters, same store calls (batches included) in the same order.
//! Both sides are built from the spec through the policy table.

mod common;
mod policy_harness;

use flashbuf_core::DeviceFacts;
use flashbuf_pool::policy::{ClusterChoice, ClusterMode, ClusteringConfig, Policy};
use policy_harness::{context, pair as table_pair, replay, trace};
use proptest::prelude::*;

fn config() -> impl Strategy<Value = ClusteringConfig> {
    (
        prop_oneof![Just(ClusterMode::Batch), Just(ClusterMode::Drain)],
        prop_oneof![Just(ClusterChoice::Victim), Just(ClusterChoice::Metric)],
        prop_oneof![Just(64u64), Just(4), Just(8), 1u64..80],
    )
        .prop_map(|(mode, choice, cluster_size)| ClusteringConfig {
            mode,
            cluster_size,
            choice,
        })
}

/// The spec of `inner` (0 LRU, 1 CFLRU, 2 CASA) with the clustering options of `cfg`.
fn spec(inner: u8, cfg: ClusteringConfig) -> String {
    let base = match inner {
        0 => "lru:",
        1 => "cflru:window=0.5,",
        _ => "casa:read_cost=1,write_cost=10,",
    };
    let mode = match cfg.mode {
        ClusterMode::Batch => "batch",
        ClusterMode::Drain => "drain",
    };
    let choice = match cfg.choice {
        ClusterChoice::Victim => "victim",
        ClusterChoice::Metric => "metric",
    };
    format!(
        "{base}clustering={mode},cluster={},choice={choice}",
        cfg.cluster_size
    )
}

fn pair(inner: u8, frames: usize, cfg: ClusteringConfig) -> (Box<dyn Policy>, Box<dyn Policy>) {
    table_pair(&spec(inner, cfg), &context(frames, DeviceFacts::default()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]
    #[test]
    fn clustered_matches_naive(
        frames in 1usize..40,
        inner in 0u8..3,
        cfg in config(),
        ops in trace(800),
    ) {
        let (fast, naive) = pair(inner, frames, cfg);
        let a = replay(fast, frames, &ops);
        let b = replay(naive, frames, &ops);
        prop_assert_eq!(a, b);
    }
}
