#![allow(clippy::unwrap_used)]
//! Golden counts of every policy of the table (`flashbuf_pool::policy::POLICIES`, each
//! entry's `golden` specs) through the lab: exact hits, misses, page writes and write
//! batches on the bundled TPC-C sample (200,000 references; direct store, memory device:
//! unit costs, R = 1, clusters of 64 pages; 4 KB pages) at three buffer sizes, with the
//! integrity oracle on. The rows are in `tests/golden/policies.txt`; an entry (or golden
//! spec) without rows fails, naming the row.
//!
//! Regenerate after an intended change with
//! `FLASHBUF_REGEN_GOLDEN=1 cargo test -p flashbuf-lab --test policies_golden_lab`.

#[path = "../../flashbuf-pool/tests/golden_rows/mod.rs"]
mod golden_rows;

use flashbuf_lab::{run, BufferSize, RunConfig};
use flashbuf_pool::policy::POLICIES;
use golden_rows::Row;
use std::path::{Path, PathBuf};

const SIZES: &[usize] = &[64, 256, 1024];

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/policies.txt");
const REGEN: &str = "FLASHBUF_REGEN_GOLDEN=1 cargo test -p flashbuf-lab --test policies_golden_lab";

#[test]
fn policy_golden_counts_on_the_sample() {
    let trace = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces/tpcc-sample.pagetrace.csv.zst"
    ));
    let mut rows = Vec::new();
    for entry in POLICIES {
        for &policy in entry.golden {
            for &frames in SIZES {
                let cfg = RunConfig {
                    trace: trace.clone(),
                    format: None,
                    policy: flashbuf_lab::spec::parse(policy).unwrap(),
                    store: flashbuf_lab::spec::parse("direct").unwrap(),
                    device: flashbuf_lab::spec::parse("memory").unwrap(),
                    buffer: BufferSize::Pages(frames),
                    page_size: 4096,
                    seed: 1,
                    paranoid: false,
                    progress: false,
                    limit_refs: None,
                    facts: None,
                    ..RunConfig::default()
                };
                let r = run(&cfg, None).unwrap();
                assert_eq!(
                    r.verify_errors, 0,
                    "{policy} {frames}: {:?}",
                    r.first_verify_error
                );
                rows.push(Row {
                    key: format!("{policy} frames={frames}"),
                    values: format!(
                        "refs={} hits={} misses={} page_writes={} write_batches={}",
                        r.references, r.hits, r.misses, r.page_writes, r.write_batches
                    ),
                });
            }
        }
    }
    golden_rows::check(
        Path::new(GOLDEN),
        REGEN,
        &[
            "Golden counts of every policy table entry's golden specs through the lab",
            "(tests/policies_golden_lab.rs): TPC-C sample, direct store, memory device, 4 KB pages.",
            "The lru rows agree with tests/golden_lru.rs.",
        ],
        &rows,
    );
}
