#![allow(clippy::unwrap_used)]
//! Golden counts of every policy through the lab: exact hits, misses, page writes and
//! write batches on the bundled TPC-C sample (200,000 references; direct store, memory
//! device, 4 KB pages) at three buffer sizes, with the integrity oracle on.
//!
//! Regenerate after an intended change with
//! `FLASHBUF_REGEN_GOLDEN=1 cargo test -p flashbuf-lab --test policies_golden_lab -- --nocapture`
//! and paste the printed rows.

use flashbuf_lab::{run, BufferSize, RunConfig};
use std::path::PathBuf;

const SIZES: &[usize] = &[64, 256, 1024];

/// Policies covered (the memory device: unit costs, R = 1, cluster = 64 pages).
const POLICIES: &[&str] = &[
    "lru",
    "cflru",
    "cfdc",
    "casa",
    "lru:clustering=drain",
    "casa:clustering=batch,choice=metric",
    "fd-buffer",
    "fd-buffer:r=136",
    "fd-buffer:r=136,clustering=drain",
    "fd-buffer:r=136,clustering=batch,victim=order",
    "belady",
    "offline:rule=cost-aware,read=1,write=10",
];

/// (policy, frames, references, hits, misses, page_writes, write_batches)
const GOLDEN: &[(&str, usize, u64, u64, u64, u64, u64)] = &[
    // The lru rows agree with tests/golden_lru.rs.
    ("lru", 64, 200000, 145908, 54092, 18604, 0),
    ("lru", 256, 200000, 160969, 39031, 15307, 0),
    ("lru", 1024, 200000, 167989, 32011, 13768, 0),
    ("cflru", 64, 200000, 138022, 61978, 16659, 0),
    ("cflru", 256, 200000, 158675, 41325, 14698, 0),
    ("cflru", 1024, 200000, 166507, 33493, 12764, 0),
    ("cfdc", 64, 200000, 135466, 64534, 18019, 0),
    ("cfdc", 256, 200000, 157937, 42063, 15222, 0),
    ("cfdc", 1024, 200000, 166039, 33961, 13105, 0),
    ("casa", 64, 200000, 145412, 54588, 19461, 0),
    ("casa", 256, 200000, 161011, 38989, 15585, 0),
    ("casa", 1024, 200000, 168419, 31581, 14090, 0),
    ("lru:clustering=drain", 64, 200000, 145225, 54775, 19455, 0),
    ("lru:clustering=drain", 256, 200000, 160292, 39708, 16030, 0),
    (
        "lru:clustering=drain",
        1024,
        200000,
        167947,
        32053,
        14236,
        0,
    ),
    (
        "casa:clustering=batch,choice=metric",
        64,
        200000,
        144398,
        55602,
        21073,
        2544,
    ),
    (
        "casa:clustering=batch,choice=metric",
        256,
        200000,
        159683,
        40317,
        18278,
        2876,
    ),
    (
        "casa:clustering=batch,choice=metric",
        1024,
        200000,
        167489,
        32511,
        15992,
        2852,
    ),
    ("fd-buffer", 64, 200000, 132799, 67201, 28781, 0),
    ("fd-buffer", 256, 200000, 160681, 39319, 15368, 0),
    ("fd-buffer", 1024, 200000, 167249, 32751, 13171, 0),
    ("fd-buffer:r=136", 64, 200000, 88291, 111709, 17082, 0),
    ("fd-buffer:r=136", 256, 200000, 159932, 40068, 14956, 0),
    ("fd-buffer:r=136", 1024, 200000, 166170, 33830, 12642, 0),
    (
        "fd-buffer:r=136,clustering=drain",
        64,
        200000,
        79566,
        120434,
        19668,
        0,
    ),
    (
        "fd-buffer:r=136,clustering=drain",
        256,
        200000,
        156640,
        43360,
        17411,
        0,
    ),
    (
        "fd-buffer:r=136,clustering=drain",
        1024,
        200000,
        164146,
        35854,
        14027,
        0,
    ),
    (
        "fd-buffer:r=136,clustering=batch,victim=order",
        64,
        200000,
        84778,
        115222,
        17999,
        2820,
    ),
    (
        "fd-buffer:r=136,clustering=batch,victim=order",
        256,
        200000,
        159076,
        40924,
        15630,
        3450,
    ),
    (
        "fd-buffer:r=136,clustering=batch,victim=order",
        1024,
        200000,
        165875,
        34125,
        12829,
        2805,
    ),
    ("belady", 64, 200000, 161678, 38322, 15195, 0),
    ("belady", 256, 200000, 170072, 29928, 13442, 0),
    ("belady", 1024, 200000, 178153, 21847, 10496, 0),
    (
        "offline:rule=cost-aware,read=1,write=10",
        64,
        200000,
        160355,
        39645,
        14490,
        0,
    ),
    (
        "offline:rule=cost-aware,read=1,write=10",
        256,
        200000,
        167941,
        32059,
        12206,
        0,
    ),
    (
        "offline:rule=cost-aware,read=1,write=10",
        1024,
        200000,
        175733,
        24267,
        9046,
        0,
    ),
];

#[test]
fn policy_golden_counts_on_the_sample() {
    let regen = std::env::var_os("FLASHBUF_REGEN_GOLDEN").is_some();
    let trace = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces/tpcc-sample.pagetrace.csv.zst"
    ));
    let mut rows = Vec::new();
    for &policy in POLICIES {
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
            };
            let r = run(&cfg, None).unwrap();
            assert_eq!(
                r.verify_errors, 0,
                "{policy} {frames}: {:?}",
                r.first_verify_error
            );
            rows.push((
                policy,
                frames,
                r.references,
                r.hits,
                r.misses,
                r.page_writes,
                r.write_batches,
            ));
        }
    }
    if regen {
        for (p, f, refs, h, m, w, b) in &rows {
            println!("    (\"{p}\", {f}, {refs}, {h}, {m}, {w}, {b}),");
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
