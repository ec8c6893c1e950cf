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
        warmup: if warmup == 0 {
            flashbuf_lab::Warmup::None
        } else {
            flashbuf_lab::Warmup::Refs(warmup)
        },
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

#[test]
fn a_fill_warmup_ends_when_the_buffer_is_full() {
    for policy in ["lru", "fd-buffer"] {
        let mut c = cfg(policy, 0);
        c.warmup = flashbuf_lab::Warmup::Fill;
        let warm = run(&c, None).unwrap();
        let whole = go(policy, 0);
        let refs = warm.warmup_refs.unwrap();
        // The warm-up's misses are exactly the buffer's frames: every distinct page up to
        // the one that fills it missed once, and nothing left the buffer before.
        assert_eq!(warm.cold_misses, Some(512), "{policy}");
        assert_eq!(warm.cold_page_writes, Some(0), "{policy}");
        assert!(refs >= 512, "{policy}: {refs}");
        assert_eq!(warm.references + refs, whole.references, "{policy}");
        assert_eq!(warm.misses + 512, whole.misses, "{policy}");
        // The same as a warm-up of that many references.
        let by_count = go(policy, refs);
        assert_eq!(
            (
                by_count.misses,
                by_count.page_writes,
                by_count.device_time_us
            ),
            (warm.misses, warm.page_writes, warm.device_time_us),
            "{policy}"
        );
    }
}

#[test]
fn a_buffer_that_never_fills_is_refused() {
    let mut c = cfg("lru", 0);
    c.warmup = flashbuf_lab::Warmup::Fill;
    c.limit_refs = Some(300);
    let e = run(&c, None).unwrap_err().to_string();
    assert!(e.contains("never filled"), "{e}");
    assert_eq!("fill".parse(), Ok(flashbuf_lab::Warmup::Fill));
    assert_eq!("0".parse(), Ok(flashbuf_lab::Warmup::None));
    assert_eq!("70".parse(), Ok(flashbuf_lab::Warmup::Refs(70)));
    assert!("lots"
        .parse::<flashbuf_lab::Warmup>()
        .unwrap_err()
        .contains("fill"));
}
