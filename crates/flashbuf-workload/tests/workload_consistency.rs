#![allow(clippy::unwrap_used)]
//! Every workload keeps its consistency conditions after runs with 1 and 4 threads, for
//! every policy, over the direct store on a memory device and on a small simulated one, and
//! over every store of the table (its defaults) with LRU;
//! the pool's and the store's invariants hold afterwards.

mod common;

use common::engine::{pool, DEVICES, POLICIES};
use flashbuf_workload::{parse_workload, run, RunConfig, RunLimit};

const WORKLOADS: &[(&str, u64)] = &[
    ("tpcc:warehouses=2,items=2000,customers=60", 400),
    ("tpcb:scale=2,accounts=3000", 1500),
    ("cfdc:records=20000,scan=0.05,range=64", 1500),
];

fn run_all(threads: usize) {
    for &(spec, txns) in WORKLOADS {
        let w = parse_workload(spec).unwrap();
        for device in DEVICES {
            for policy in POLICIES {
                let p = pool(policy, device, 96);
                let cfg = RunConfig {
                    threads,
                    limit: RunLimit::Transactions(txns),
                    seed: 11,
                };
                let r =
                    run(&*w, &p, &cfg).unwrap_or_else(|e| panic!("{spec} {policy} {device}: {e}"));
                let at = format!("{spec} with {policy} on {device}, {threads} threads");
                assert!(r.consistency.ok(), "{at}: {:?}", r.consistency.failed);
                assert!(!r.consistency.checked.is_empty(), "{at}");
                assert_eq!(r.transactions, txns, "{at}");
                assert!(
                    r.pool.evictions > 0,
                    "{at}: the pool should be too small: {:?}",
                    r.pool
                );
                if device.starts_with("sim:") {
                    assert!(
                        r.tps_device.is_some_and(|t| t > 0.0),
                        "{at}: no device time"
                    );
                }
                p.check_invariants().unwrap_or_else(|e| panic!("{at}: {e}"));
            }
        }
    }
}

#[test]
fn consistency_holds_with_one_thread() {
    run_all(1);
}

#[test]
fn consistency_holds_with_four_threads() {
    run_all(4);
}

/// Every store of the table (its defaults) under every workload, with 1 and 4 threads
/// (LRU, memory device): the conditions hold and the store's invariants too.
#[test]
fn consistency_holds_over_every_store() {
    use flashbuf_store::registry::{parse_text, StoreContext, STORES};
    use flashbuf_store::PageStore;
    for entry in STORES {
        for threads in [1, 4] {
            for &(spec, txns) in WORKLOADS {
                let parsed = parse_text(entry.name).unwrap();
                let ctx = StoreContext {
                    data_pages: 1 << 14,
                    ..StoreContext::new(4096)
                };
                let store = parsed
                    .factory
                    .create(Box::new(flashbuf_device::MemDevice::new(0)), &ctx)
                    .unwrap_or_else(|e| panic!("{}: {e}", entry.name));
                let p = flashbuf_pool::BufferPool::new(
                    flashbuf_workload::EngineStore::new(store),
                    96,
                    common::engine::policy("lru", 96),
                )
                .unwrap();
                let w = parse_workload(spec).unwrap();
                let cfg = RunConfig {
                    threads,
                    limit: RunLimit::Transactions(txns),
                    seed: 5,
                };
                let at = format!("{spec} over {} with {threads} threads", entry.name);
                let r = run(&*w, &p, &cfg).unwrap_or_else(|e| panic!("{at}: {e}"));
                assert!(r.consistency.ok(), "{at}: {:?}", r.consistency.failed);
                p.check_invariants().unwrap_or_else(|e| panic!("{at}: {e}"));
                p.store()
                    .check_invariants()
                    .unwrap_or_else(|e| panic!("{at}: {e}"));
            }
        }
    }
}
