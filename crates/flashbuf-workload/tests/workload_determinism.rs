#![allow(clippy::unwrap_used)]
//! With one thread, the same seed gives the same run: transaction counts per kind, pool
//! and device counters (virtual device time included) and write-back statistics.

mod common;

use common::engine::pool;
use flashbuf_workload::{parse_workload, run, RunConfig, RunLimit, WorkloadResult};

fn once(spec: &str, policy: &str, seed: u64) -> WorkloadResult {
    let w = parse_workload(spec).unwrap();
    let p = pool(policy, "sim:mtron", 64);
    let cfg = RunConfig {
        threads: 1,
        limit: RunLimit::Transactions(600),
        seed,
    };
    run(&*w, &p, &cfg).unwrap()
}

fn counts(r: &WorkloadResult) -> Vec<u64> {
    r.by_kind.iter().map(|k| k.count).collect()
}

#[test]
fn same_seed_same_counts() {
    for spec in [
        "tpcc:warehouses=1,items=1000,customers=30",
        "tpcb:accounts=2000",
        "cfdc:records=5000,scan=0.1,range=32",
    ] {
        for policy in ["lru", "cfdc", "fd-buffer"] {
            let (a, b) = (once(spec, policy, 5), once(spec, policy, 5));
            let at = format!("{spec} with {policy}");
            assert_eq!(counts(&a), counts(&b), "{at}");
            assert_eq!(a.pool, b.pool, "{at}");
            assert_eq!(a.device, b.device, "{at}");
            assert_eq!(a.write_backs, b.write_backs, "{at}");
            assert_eq!(a.consistency, b.consistency, "{at}");
            assert!(a.consistency.ok(), "{at}");
            let c = once(spec, policy, 6);
            assert!(
                counts(&a) != counts(&c) || a.pool != c.pool,
                "{at}: another seed should give another run"
            );
        }
    }
}
