#![allow(clippy::unwrap_used)]
//! `--dirty-bytes` (issue 15): a range I/O CSV replayed pass-through hands every store the
//! trace's own ranges, with page contents that differ exactly there, and every read is
//! checked whole; plain traces change whole pages unless the user picks the empirical
//! model; each run names its model; the combinations that cannot be honoured are refused.

use flashbuf_lab::dirty::DirtyBytes;
use flashbuf_lab::{run, BufferSize, RunConfig, RunResult};
use flashbuf_store::STORES;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// PostgreSQL's pgbench write-backs below a 256 kB buffer, with the exact changed bytes.
fn ranges_trace() -> PathBuf {
    root().join("traces/pgbench-pg15-s50-sb256k.iotrace-ranges.csv.zst")
}

fn cfg(trace: PathBuf, policy: &str, store: &str, dirty: DirtyBytes) -> RunConfig {
    RunConfig {
        trace,
        policy: flashbuf_lab::spec::parse(policy).unwrap(),
        store: flashbuf_lab::spec::parse(store).unwrap(),
        buffer: BufferSize::Pages(512),
        page_size: 8192,
        limit_refs: Some(60_000),
        paranoid: true,
        dirty_bytes: dirty,
        ..RunConfig::default()
    }
}

fn go(c: &RunConfig) -> RunResult {
    let r = run(c, None).unwrap();
    assert_eq!(
        r.verify_errors, 0,
        "{}: {:?}",
        c.store, r.first_verify_error
    );
    r
}

#[test]
fn every_store_serves_the_trace_ranges_exactly() {
    let mut by_store = Vec::new();
    for e in STORES {
        let r = go(&cfg(ranges_trace(), "none", e.name, DirtyBytes::Auto));
        assert_eq!(r.dirty_model, "trace");
        let exact = r.dirty_exact_bytes_per_write.unwrap();
        let handed = r.dirty_bytes_per_write.unwrap();
        assert!(
            exact > 32.0 && exact < 8192.0 && handed >= exact,
            "{exact} {handed}"
        );
        by_store.push((e.name, r));
    }
    let get = |n: &str| &by_store.iter().find(|(s, _)| *s == n).unwrap().1;
    let (direct, icl) = (get("direct"), get("icl"));
    assert_eq!(direct.page_writes, icl.page_writes);
    // The bar: ICL's page writes at most 0.6x direct's, its reads at most 2x.
    let w = icl.device_writes as f64 / direct.device_writes as f64;
    let rd = icl.device_reads as f64 / direct.device_reads.max(1) as f64;
    assert!(w <= 0.6, "ICL writes {w:.3}x direct's");
    assert!(rd <= 2.0, "ICL reads {rd:.3}x direct's");
}

#[test]
fn plain_traces_change_whole_pages_unless_asked() {
    let sample = root().join("testdata/traces/tpcc-sample.pagetrace.csv.zst");
    let whole = go(&cfg(sample.clone(), "lru", "icl", DirtyBytes::Auto));
    assert_eq!(whole.dirty_model, "whole");
    assert_eq!(whole.dirty_exact_bytes_per_write, None);
    // Whole pages give ICL nothing to log: it writes every page home.
    assert_eq!(whole.device_writes, whole.page_writes);
    let emp = go(&cfg(
        sample,
        "lru",
        "icl",
        DirtyBytes::Empirical(ranges_trace()),
    ));
    assert!(
        emp.dirty_model.starts_with("empirical:"),
        "{}",
        emp.dirty_model
    );
    let mean = emp.dirty_exact_bytes_per_write.unwrap();
    assert!(mean > 32.0 && mean < 2048.0, "{mean}");
    assert_eq!(
        emp.page_writes, whole.page_writes,
        "the model changes bytes, not decisions"
    );
    // Through a pool a page's writes merge (at most four runs per frame), so ICL logs
    // less than whole pages but far more than one write's bytes.
    assert!(
        emp.device_writes < whole.device_writes,
        "{} vs {}",
        emp.device_writes,
        whole.device_writes
    );
}

#[test]
fn impossible_models_are_refused() {
    let sample = root().join("testdata/traces/tpcc-sample.pagetrace.csv.zst");
    let e = run(&cfg(sample, "none", "icl", DirtyBytes::Trace), None).unwrap_err();
    assert!(e.to_string().contains("records no dirty ranges"), "{e}");
    let mut c = cfg(ranges_trace(), "none", "icl", DirtyBytes::Auto);
    c.page_size = 4096;
    let e = run(&c, None).unwrap_err();
    assert!(e.to_string().contains("beyond the 4096-byte page"), "{e}");
}

#[test]
fn a_pool_over_a_range_trace_hands_the_union_of_its_ranges() {
    let direct = go(&cfg(ranges_trace(), "lru", "direct", DirtyBytes::Auto));
    let icl = go(&cfg(ranges_trace(), "lru", "icl", DirtyBytes::Auto));
    assert_eq!(icl.dirty_model, "trace");
    assert!(icl.dirty_exact_bytes_per_write.unwrap() < 8192.0);
    assert_eq!(icl.page_writes, direct.page_writes, "bytes, not decisions");
    assert!(
        icl.device_writes < direct.device_writes,
        "{} vs {}",
        icl.device_writes,
        direct.device_writes
    );
}
