#![allow(clippy::unwrap_used)]
//! The write-clustering decorator against its naive version, around LRU, CFLRU and CASA
//! (each wrapped fast around fast and naive around naive), in both modes and with both
//! cluster choices: same counters, same store calls (batches included) in the same order.

mod common;
mod policy_harness;

use flashbuf_pool::policy::reference::{NaiveCasa, NaiveCflru, NaiveClustered, NaiveLru};
use flashbuf_pool::policy::{
    Casa, CasaConfig, Cflru, CflruConfig, ClusterChoice, ClusterMode, Clustered, ClusteringConfig,
    Lru, Policy,
};
use policy_harness::{replay, trace};
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

fn pair(inner: u8, frames: usize, cfg: ClusteringConfig) -> (Box<dyn Policy>, Box<dyn Policy>) {
    match inner {
        0 => (
            Box::new(Clustered::new(Lru::new(frames), cfg).unwrap()),
            Box::new(NaiveClustered::new(NaiveLru::new(frames), cfg).unwrap()),
        ),
        1 => {
            let c = CflruConfig { window: 0.5 };
            (
                Box::new(Clustered::new(Cflru::with_config(frames, c).unwrap(), cfg).unwrap()),
                Box::new(NaiveClustered::new(NaiveCflru::new(frames, c).unwrap(), cfg).unwrap()),
            )
        }
        _ => {
            let c = CasaConfig {
                read_cost: 1.0,
                write_cost: 10.0,
                ..CasaConfig::default()
            };
            (
                Box::new(Clustered::new(Casa::with_config(frames, c).unwrap(), cfg).unwrap()),
                Box::new(NaiveClustered::new(NaiveCasa::new(frames, c).unwrap(), cfg).unwrap()),
            )
        }
    }
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
