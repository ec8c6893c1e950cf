#![allow(clippy::unwrap_used)]
//! Golden counts: exact hits, misses and page writes of LRU on the bundled sample traces
//! (through the real pool, direct store and memory device), with the integrity oracle on.
//!
//! Regenerate after an intended change with
//! `FLASHBUF_REGEN_GOLDEN=1 cargo test -p flashbuf-lab --test golden_lru -- --nocapture`
//! and paste the printed rows.

use flashbuf_lab::{run, BufferSize, RunConfig};
use std::path::PathBuf;

fn sample(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces"
    ))
    .join(name)
}

fn config(trace: &str, policy: &str, frames: usize) -> RunConfig {
    RunConfig {
        trace: sample(trace),
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
    }
}

/// (trace, policy, frames, references, hits, misses, page_writes)
const GOLDEN: &[(&str, &str, usize, u64, u64, u64, u64)] = &[
    // The page-trace rows agree with ../shared/tools/ref_lru_dirty.py (misses, write-backs).
    (
        "tpcc-sample.pagetrace.csv.zst",
        "lru",
        64,
        200000,
        145908,
        54092,
        18604,
    ),
    (
        "tpcc-sample.pagetrace.csv.zst",
        "lru",
        256,
        200000,
        160969,
        39031,
        15307,
    ),
    (
        "tpcc-sample.pagetrace.csv.zst",
        "lru",
        1024,
        200000,
        167989,
        32011,
        13768,
    ),
    (
        "pgbench-sample.pagetrace.csv.zst",
        "lru",
        64,
        2000,
        1790,
        210,
        3,
    ),
    (
        "pgbench-sample.pagetrace.csv.zst",
        "lru",
        256,
        2000,
        1828,
        172,
        0,
    ),
    (
        "pgbench-sample.pagetrace.csv.zst",
        "lru",
        1024,
        2000,
        1828,
        172,
        0,
    ),
    (
        "pgbench-sample.iotrace.msr.csv.zst",
        "lru",
        64,
        4000,
        992,
        3008,
        1324,
    ),
    (
        "pgbench-sample.iotrace.msr.csv.zst",
        "lru",
        1024,
        4000,
        2722,
        1278,
        36,
    ),
    (
        "pgbench-sample.iotrace.msr.csv.zst",
        "none",
        0,
        4000,
        0,
        4000,
        1546,
    ),
    (
        "cloudPhysicsIO-sample.csv.gz",
        "lru",
        256,
        69277,
        12427,
        56850,
        34198,
    ),
    (
        "tpcc-small-sample.disksim.trace",
        "lru",
        256,
        1473,
        12,
        1461,
        611,
    ),
    ("arc-oltp-sample.lis.zst", "lru", 1024, 2000, 577, 1423, 0),
];

#[test]
fn lru_golden_counts_on_samples() {
    let regen = std::env::var_os("FLASHBUF_REGEN_GOLDEN").is_some();
    let cases: &[(&str, &str, &[usize])] = &[
        ("tpcc-sample.pagetrace.csv.zst", "lru", &[64, 256, 1024]),
        ("pgbench-sample.pagetrace.csv.zst", "lru", &[64, 256, 1024]),
        ("pgbench-sample.iotrace.msr.csv.zst", "lru", &[64, 1024]),
        ("pgbench-sample.iotrace.msr.csv.zst", "none", &[0]),
        ("cloudPhysicsIO-sample.csv.gz", "lru", &[256]),
        ("tpcc-small-sample.disksim.trace", "lru", &[256]),
        ("arc-oltp-sample.lis.zst", "lru", &[1024]),
    ];
    let mut rows = Vec::new();
    for &(trace, policy, sizes) in cases {
        for &frames in sizes {
            let r = run(&config(trace, policy, frames.max(1)), None).unwrap();
            assert_eq!(
                r.verify_errors, 0,
                "{trace} {policy} {frames}: {:?}",
                r.first_verify_error
            );
            rows.push((
                trace,
                policy,
                frames,
                r.references,
                r.hits,
                r.misses,
                r.page_writes,
            ));
        }
    }
    if regen {
        for (t, p, f, refs, h, m, w) in &rows {
            println!("    (\"{t}\", \"{p}\", {f}, {refs}, {h}, {m}, {w}),");
        }
        return;
    }
    assert_eq!(
        rows.len(),
        GOLDEN.len(),
        "golden table out of date; regenerate"
    );
    for (got, want) in rows.iter().zip(GOLDEN) {
        assert_eq!(got, want, "golden mismatch (got, want)");
    }
}

/// A replay finds the trace's pages through the pool's direct page index (4 bytes per
/// dense page, the address map's numbering) — with the same golden counts as above, which
/// were made with the hashed page table alone.
#[test]
fn the_replay_indexes_the_dense_pages() {
    // The first golden row: TPC-C sample, LRU, 64 frames.
    let (trace, policy, frames, _, _, misses, page_writes) = GOLDEN[0];
    let mut c = config(trace, policy, frames);
    // The page table's check, index included, after every batch.
    c.paranoid = true;
    // With a scan, the index is sized to the trace's dense pages.
    c.presize = true;
    let r = run(&c, None).unwrap();
    let dense = r.dense_pages;
    assert!(dense > 0, "the run scanned the trace");
    assert_eq!(r.page_index_bytes, 4 * dense);
    assert_eq!((r.misses, r.page_writes), (misses, page_writes));
    // Without one, it grows with the pages, doubling: under twice as many entries.
    c.presize = false;
    let r = run(&c, None).unwrap();
    assert_eq!(r.dense_pages, 0);
    let entries = r.page_index_bytes / 4;
    assert!(entries.is_power_of_two() && entries >= dense && entries < 2 * dense);
    assert_eq!((r.misses, r.page_writes), (misses, page_writes));
}
