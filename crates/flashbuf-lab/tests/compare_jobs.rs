#![allow(clippy::unwrap_used)]
//! `compare` with `jobs > 1` and with the trace decoded once for the matrix gives exactly
//! the counts of runs made one at a time, each reading the trace itself, in matrix order.

use flashbuf_lab::compare::{compare, Matrix};
use flashbuf_lab::{run, BufferSize, RunConfig, RunResult};
use std::path::PathBuf;

fn sample() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces/tpcc-sample.pagetrace.csv.zst"
    ))
}

fn specs(names: &[&str]) -> Vec<flashbuf_lab::spec::Spec> {
    names
        .iter()
        .map(|n| flashbuf_lab::spec::parse(n).unwrap())
        .collect()
}

fn matrix() -> Matrix {
    Matrix {
        base: RunConfig {
            trace: sample(),
            page_size: 4096,
            seed: 5,
            limit_refs: Some(15_000),
            ..RunConfig::default()
        },
        policies: specs(&["lru", "cfdc", "fd-buffer", "belady"]),
        stores: specs(&["direct", "stable-buffer"]),
        devices: specs(&["memory", "sim:mtron"]),
        buffers: vec![BufferSize::Pages(64), BufferSize::Ratio(0.05)],
    }
}

/// Everything but the timing fields.
fn counts(r: &RunResult) -> String {
    format!(
        "{} {} {} {} refs={} hits={} misses={} reads={} writes={} dev_r={} dev_w={} erases={} time={:.3} verify={}",
        r.policy,
        r.store,
        r.device,
        r.buffer_pages,
        r.references,
        r.hits,
        r.misses,
        r.page_reads,
        r.page_writes,
        r.device_reads,
        r.device_writes,
        r.erases,
        r.device_time_us,
        r.verify_errors
    )
}

#[test]
fn parallel_and_shared_runs_equal_sequential_private_runs() {
    let m = matrix();
    // The reference: every run alone, reading the file itself.
    let alone: Vec<String> = m
        .configs()
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c.facts = None;
            counts(&run(&c, None).unwrap())
        })
        .collect();
    for jobs in [1, 3] {
        let mut seen = 0;
        let got = compare(&m, jobs, |_| seen += 1).unwrap();
        assert_eq!(seen, m.len(), "jobs {jobs}: on_done calls");
        let got: Vec<String> = got.iter().map(counts).collect();
        assert_eq!(got, alone, "jobs {jobs}");
    }
    assert!(alone.iter().all(|r| r.ends_with("verify=0")), "{alone:?}");
}
