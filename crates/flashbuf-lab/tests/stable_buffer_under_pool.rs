#![allow(clippy::unwrap_used)]
//! The StableBuffer store under the buffer pool with every policy (issue 5: "the same store
//! also works under the buffer pool with any policy"), on a simulated SSD, paranoid: the
//! oracle verifies every reference, invariants are checked during the run, and every page
//! is re-read from the store at the end.

use flashbuf_lab::{run, BufferSize, RunConfig};
use std::path::PathBuf;

fn config(policy: &str, store: &str) -> RunConfig {
    RunConfig {
        trace: PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/traces/tpcc-sample.pagetrace.csv.zst"
        )),
        format: None,
        policy: flashbuf_lab::spec::parse(policy).unwrap(),
        store: flashbuf_lab::spec::parse(store).unwrap(),
        device: flashbuf_lab::spec::parse("sim:mtron").unwrap(),
        buffer: BufferSize::Pages(256),
        page_size: 4096,
        seed: 3,
        paranoid: true,
        progress: false,
        limit_refs: Some(40_000),
        facts: None,
        ..RunConfig::default()
    }
}

#[test]
fn every_policy_runs_over_stable_buffer_with_no_verify_error() {
    let stores = [
        "stable-buffer:recognition=ondemand,flush=passive,size=1MiB",
        "stable-buffer:recognition=incremental,flush=proactive,size=1MiB",
    ];
    let policies = [
        "lru",
        "cflru",
        "cfdc",
        "casa",
        "fd-buffer",
        "lru:clustering=batch",
    ];
    for store in stores {
        for policy in policies {
            let r = run(&config(policy, store), None).unwrap();
            assert_eq!(
                r.verify_errors, 0,
                "{policy} over {store}: {:?}",
                r.first_verify_error
            );
            assert!(r.page_writes > 0, "{policy} over {store} wrote nothing");
            // Staging traffic reaches the device beyond the pool's write-backs.
            assert!(
                r.device_writes >= r.page_writes,
                "{policy} over {store}: {r:?}"
            );
        }
    }
}
