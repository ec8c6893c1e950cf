#![allow(clippy::unwrap_used)]
//! LRU miss counts identical to libCacheSim's LRU (PyPI `libcachesim`, run as a peer by
//! `scripts/peer-check.sh`, which prints these numbers afresh) on the shared page traces at
//! buffer sizes of 1%, 3% and 10% of distinct pages. The TPC-C write-backs also agree with
//! `../shared/tools/ref_lru_dirty.py` (and `../shared/tools/README.md`).
//!
//! Skipped (with a message) when `../shared/traces` is not beside the project.

use flashbuf_lab::{run, BufferSize, RunConfig};
use std::path::PathBuf;

fn shared(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces"
    ))
    .join(name);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("{} absent; skipping", p.display());
        None
    }
}

fn lru(trace: PathBuf, ratio: f64) -> flashbuf_lab::RunResult {
    let cfg = RunConfig {
        trace,
        format: None,
        policy: flashbuf_lab::spec::parse("lru").unwrap(),
        store: flashbuf_lab::spec::parse("direct").unwrap(),
        device: flashbuf_lab::spec::parse("memory").unwrap(),
        buffer: BufferSize::Ratio(ratio),
        page_size: 512,
        seed: 1,
        paranoid: false,
        progress: false,
        limit_refs: None,
        facts: None,
        ..RunConfig::default()
    };
    let r = run(&cfg, None).unwrap();
    assert_eq!(r.verify_errors, 0);
    r
}

/// (trace, distinct pages, [(buffer pages, libCacheSim LRU misses, reference write-backs or
/// u64::MAX when not checked)])
/// (buffer pages, misses, write-backs).
type Row = (usize, u64, u64);

const PEER: &[(&str, u64, [Row; 3])] = &[
    (
        "tpcc-pg15-w4.pagetrace.csv.zst",
        41_399,
        [
            (413, 1_004_077, 398_661),
            (1_241, 874_942, 371_529),
            (4_139, 586_339, 305_770),
        ],
    ),
    (
        "pgbench-pg15-s20.pagetrace.csv.zst",
        39_712,
        [
            (397, 304_441, u64::MAX),
            (1_191, 290_078, u64::MAX),
            (3_971, 249_223, u64::MAX),
        ],
    ),
    (
        "arc-oltp.lis.zst",
        186_880,
        [
            (1_868, 533_560, 0),
            (5_606, 411_566, 0),
            (18_688, 306_044, 0),
        ],
    ),
];

#[test]
fn lru_misses_equal_libcachesim_at_1_3_10_percent() {
    for (name, distinct, rows) in PEER {
        let Some(path) = shared(name) else { continue };
        for (ratio, &(frames, misses, writes)) in [0.01, 0.03, 0.10].iter().zip(rows) {
            let r = lru(path.clone(), *ratio);
            assert_eq!(r.distinct_pages, *distinct, "{name}");
            assert_eq!(r.buffer_pages, frames, "{name} at {ratio}");
            assert_eq!(r.misses, misses, "{name} at {frames} frames: misses");
            if writes != u64::MAX {
                assert_eq!(
                    r.page_writes, writes,
                    "{name} at {frames} frames: write-backs"
                );
            }
        }
    }
}
