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

/// A run reading the trace itself hands FD-Buffer's Two-Stack estimators to its reader
/// thread (`Policy::detach_stream_model`); a matrix run from the shared decode keeps them
/// inline: the same result document, the policy's report figures included, for the
/// paper's setup, the named variant, short windows and the Table 5 records.
#[test]
fn detached_and_inline_estimators_give_the_same_documents() {
    let doc = |r: &RunResult| {
        let mut v = serde_json::to_value(r).unwrap();
        let m = v.as_object_mut().unwrap();
        for k in [
            "cpu_time_s",
            "refs_per_s",
            "wall_time_s",
            "scan_time_s",
            "max_rss_bytes",
        ] {
            m.remove(k);
        }
        if let Some(serde_json::Value::Object(report)) = m.get_mut("policy_report") {
            report.retain(|k, _| !k.ends_with("_ns") && !k.ends_with("_share_of_wall"));
        }
        v
    };
    let policies = [
        "fd-buffer",
        "fd-buffer:cost=clustered",
        "fd-buffer:window=777",
        "fd-buffer:track=true",
    ];
    let m = Matrix {
        policies: specs(&policies),
        stores: specs(&["direct"]),
        devices: specs(&["sim:mtron"]),
        buffers: vec![BufferSize::Pages(96)],
        base: RunConfig {
            limit_refs: Some(40_000),
            ..matrix().base
        },
    };
    let inline = compare(&m, 1, |_| {}).unwrap();
    assert_eq!(inline.len(), policies.len());
    for (c, shared) in m.configs().iter().zip(&inline) {
        let mut c = c.clone();
        c.facts = None;
        let alone = run(&c, None).unwrap();
        assert!(
            alone.policy_report.contains_key("stack_work"),
            "{}",
            c.policy
        );
        assert_eq!(doc(&alone), doc(shared), "{}", c.policy);
    }
}
