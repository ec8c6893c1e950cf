#![allow(clippy::unwrap_used)]
//! `--warmup N` (issue 16: the papers measure after a warm-up): a run with a warm-up
//! measures exactly the references after it — its counts plus the warm-up's cold figures
//! are the whole run's, its device time is the rest of the run's — and the same pages are
//! verified; combinations it cannot honour are refused.

use flashbuf_lab::{run, BufferSize, RunConfig, RunResult};
use std::path::PathBuf;

fn sample() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces/tpcc-sample.pagetrace.csv.zst"
    ))
}

fn cfg(policy: &str, warmup: u64) -> RunConfig {
    RunConfig {
        trace: sample(),
        policy: flashbuf_lab::spec::parse(policy).unwrap(),
        device: flashbuf_lab::spec::parse("cost:read_us=100,write_us=1000").unwrap(),
        buffer: BufferSize::Pages(512),
        page_size: 8192,
        warmup_refs: warmup,
        ..RunConfig::default()
    }
}

fn go(policy: &str, warmup: u64) -> RunResult {
    let r = run(&cfg(policy, warmup), None).unwrap();
    assert_eq!(r.verify_errors, 0);
    r
}

#[test]
fn a_warm_run_measures_the_rest_of_the_trace() {
    for policy in ["lru", "cfdc", "fd-buffer"] {
        let whole = go(policy, 0);
        let warm = go(policy, 50_000);
        assert_eq!(whole.warmup_refs, None);
        assert_eq!(warm.warmup_refs, Some(50_000));
        assert_eq!(warm.references, whole.references - 50_000, "{policy}");
        assert_eq!(
            warm.misses + warm.cold_misses.unwrap(),
            whole.misses,
            "{policy}"
        );
        assert_eq!(
            warm.page_writes + warm.cold_page_writes.unwrap(),
            whole.page_writes,
            "{policy}"
        );
        assert_eq!(warm.hits + warm.misses, warm.references, "{policy}");
        assert!(warm.device_time_us < whole.device_time_us, "{policy}");
        assert!(warm.device_time_us > 0.0, "{policy}");
        assert!(
            (warm.miss_ratio - warm.misses as f64 / warm.references as f64).abs() < 1e-12,
            "{policy}: the ratio is of the measured references"
        );
    }
}

#[test]
fn warmup_combinations_that_cannot_hold_are_refused() {
    let mut c = cfg("lru", 10);
    c.bounds = Some(flashbuf_lab::bounds::BoundsCost::Device);
    assert!(run(&c, None).unwrap_err().to_string().contains("--bounds"));
    let e = run(&cfg("none", 10), None).unwrap_err().to_string();
    assert!(e.contains("pass-through"), "{e}");
    let e = run(&cfg("lru", 10_000_000), None).unwrap_err().to_string();
    assert!(e.contains("before the warm-up did"), "{e}");
}
