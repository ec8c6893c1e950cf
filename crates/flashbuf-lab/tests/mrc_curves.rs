#![allow(clippy::unwrap_used)]
//! One-pass LRU miss and write-back curves (`flashbuf_lab::mrc`): exact points equal full
//! replays through the pool and the reference figures of `../shared/tools`; SHARDS errors
//! on the TPC-C trace are within their documented bounds.

use flashbuf_lab::mrc::{log_sizes, lru_curve, Curve, Sampling};
use flashbuf_lab::{run, BufferSize, RunConfig};
use std::path::{Path, PathBuf};

fn sample(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces"
    ))
    .join(name)
}

fn shared(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces"
    ))
    .join(name);
    p.exists().then_some(p)
}

fn replay(trace: &Path, frames: usize, page_size: usize) -> flashbuf_lab::RunResult {
    let cfg = RunConfig {
        trace: trace.to_path_buf(),
        format: None,
        policy: flashbuf_lab::spec::parse("lru").unwrap(),
        store: flashbuf_lab::spec::parse("direct").unwrap(),
        device: flashbuf_lab::spec::parse("memory").unwrap(),
        buffer: BufferSize::Pages(frames),
        page_size,
        seed: 1,
        paranoid: false,
        progress: false,
        limit_refs: None,
        facts: None,
        ..RunConfig::default()
    };
    run(&cfg, None).unwrap()
}

#[test]
fn exact_points_equal_full_replays() {
    for (trace, page_size) in [
        ("tpcc-sample.pagetrace.csv.zst", 8192),
        ("pgbench-sample.pagetrace.csv.zst", 8192),
    ] {
        let t = sample(trace);
        let c = lru_curve(&t, None, page_size as u32, None, Sampling::Exact, 1).unwrap();
        for frames in [1, 17, 64, 300, 1024] {
            let r = replay(&t, frames, page_size);
            let p = c.curve.at(frames);
            assert_eq!(
                (p.misses as u64, p.page_writes as u64, p.flush_writes as u64),
                (r.misses, r.page_writes, r.flush_writes),
                "{trace} at {frames} frames"
            );
            assert_eq!(c.curve.references as u64, r.references);
        }
    }
}

#[test]
fn exact_curve_matches_the_reference_tool_figures() {
    let Some(t) = shared("tpcc-pg15-w4.pagetrace.csv.zst") else {
        eprintln!("../shared not found; skipped");
        return;
    };
    let c = lru_curve(&t, None, 8192, None, Sampling::Exact, 1).unwrap();
    // ../shared/tools/README.md (ref_wb_curve.py / ref_lru_dirty.py).
    for (size, misses, wb) in [
        (413, 1_004_077, 398_661),
        (1_241, 874_942, 371_529),
        (4_139, 586_339, 305_770),
    ] {
        let p = c.curve.at(size);
        assert_eq!(
            (p.misses as u64, p.page_writes as u64),
            (misses, wb),
            "{size}"
        );
    }
    eprintln!(
        "exact curve: {:.2} s, {} bytes ({:.1} B per distinct page)",
        c.wall_s,
        c.curve.memory_bytes,
        c.curve.memory_bytes as f64 / c.curve.distinct_pages
    );
}

fn mae(a: &Curve, exact: &Curve, sizes: &[usize]) -> (f64, f64) {
    let n = sizes.len() as f64;
    let mr = sizes
        .iter()
        .map(|&s| (a.at(s).miss_ratio - exact.at(s).miss_ratio).abs())
        .sum::<f64>()
        / n;
    let wb = sizes
        .iter()
        .map(|&s| (a.at(s).page_writes - exact.at(s).page_writes).abs() / exact.references)
        .sum::<f64>()
        / n;
    (mr, wb)
}

#[test]
fn shards_errors_on_the_tpcc_trace() {
    let Some(t) = shared("tpcc-pg15-w4.pagetrace.csv.zst") else {
        eprintln!("../shared not found; skipped");
        return;
    };
    let exact = lru_curve(&t, None, 8192, None, Sampling::Exact, 1)
        .unwrap()
        .curve;
    let distinct = exact.distinct_pages as usize;
    // Sizes from 1% to 100% of the distinct pages, log-spaced (the buffer ratios the papers use).
    let sizes: Vec<usize> = log_sizes(100, distinct)
        .into_iter()
        .filter(|&s| s * 100 >= distinct)
        .collect();
    for (mode, bound_mr) in [
        (Sampling::Rate(0.1), 0.005),
        (Sampling::Rate(0.01), 0.03),
        (Sampling::Size(8_000), 0.015),
    ] {
        let mut worst = 0.0f64;
        for seed in 1..=3 {
            let c = lru_curve(&t, None, 8192, None, mode, seed).unwrap();
            let (mr, wb) = mae(&c.curve, &exact, &sizes);
            eprintln!("SHARDS {mode} seed {seed}: miss-ratio MAE {mr:.4}, write-backs MAE {wb:.4} per reference, {:.2} s", c.wall_s);
            worst = worst.max(mr);
        }
        assert!(worst < bound_mr, "{mode}: worst MAE {worst}");
    }
}
