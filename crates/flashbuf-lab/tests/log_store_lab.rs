#![allow(clippy::unwrap_used)]
//! The log-structured store in the lab: under the pool with every policy and in
//! pass-through mode, on the simulated NIPU SSD with the data at 80% of the device, every
//! victim rule, paranoid (invariants during the run, every page re-read at the end); its
//! report (both write amplifications, cleaning I/O) lands in the result; bad options are
//! usage errors naming the valid ones.

use flashbuf_lab::{run, BufferSize, RunConfig};
use std::path::PathBuf;

fn config(policy: &str, store: &str, device: &str, frames: usize) -> RunConfig {
    RunConfig {
        trace: PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/traces/tpcc-sample.pagetrace.csv.zst"
        )),
        format: None,
        policy: flashbuf_lab::spec::parse(policy).unwrap(),
        store: flashbuf_lab::spec::parse(store).unwrap(),
        device: flashbuf_lab::spec::parse(device).unwrap(),
        buffer: BufferSize::Pages(frames),
        page_size: 4096,
        seed: 5,
        paranoid: true,
        progress: false,
        limit_refs: Some(40_000),
        ..RunConfig::default()
    }
}

const SSD: &str = "sim:nipu-ssd:precondition=true,fill=0.8";

#[test]
fn every_policy_runs_over_the_log_store_with_no_verify_error() {
    for policy in [
        "lru",
        "cflru",
        "cfdc",
        "casa",
        "fd-buffer",
        "lru:clustering=batch",
    ] {
        let store = "log-structured:segment=256KiB,cleaner=cost-benefit,prefill=true";
        let r = run(&config(policy, store, SSD, 64), None).unwrap();
        assert_eq!(r.verify_errors, 0, "{policy}: {:?}", r.first_verify_error);
        assert!(r.page_writes > 0);
        assert!(r.store_report["caller_pages"] >= r.page_writes as f64);
    }
}

#[test]
fn pass_through_with_every_rule_reports_both_write_amplifications() {
    for cleaner in ["greedy", "cost-benefit", "oldest", "sepbit"] {
        let store = format!(
            "log-structured:segment=256KiB,cleaner={cleaner},prefill=true,ci=0.01,pp=0.001"
        );
        let mut cfg = config("none", &store, SSD, 1);
        cfg.limit_refs = None; // 200,000 references: enough writes to need the cleaner
        let r = run(&cfg, None).unwrap();
        assert_eq!(r.verify_errors, 0, "{cleaner}: {:?}", r.first_verify_error);
        let s = &r.store_report;
        let (swa, fwa) = (s["store_write_amplification"], s["ftl_write_amplification"]);
        assert!(swa >= 1.0 && fwa >= 1.0, "{cleaner}: {s:?}");
        assert!((s["total_write_amplification"] - swa * fwa).abs() < 1e-9);
        // The FTL's is the run's (the report also covers the final sync's checkpoint).
        assert!(
            (fwa / r.write_amplification - 1.0).abs() < 0.05,
            "{fwa} vs {}",
            r.write_amplification
        );
        assert!(
            s["utilization"] > 0.6 && s["utilization"] < 0.9,
            "{cleaner}: {s:?}"
        );
        assert!(s["segments_cleaned"] > 0.0, "{cleaner}: {s:?}");
        assert_eq!(s["map_bytes_per_page"], 4.0);
        let text = flashbuf_lab::result::table(std::slice::from_ref(&r));
        assert!(text.contains("store_write_amplification="), "{text}");
    }
}

#[test]
fn memory_device_uses_the_writes_clock_and_bad_options_are_refused() {
    let r = run(
        &config("lru", "log-structured:segment=64KiB", "memory", 128),
        None,
    )
    .unwrap();
    assert_eq!(r.verify_errors, 0);
    assert_eq!(r.store_report["ftl_write_amplification"], 1.0);
    let e = run(
        &config("lru", "log-structured:cleaner=lfu", "memory", 128),
        None,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("greedy, cost-benefit, oldest, sepbit"),
        "{e}"
    );
    let e = run(
        &config("lru", "log-structured:segmnt=1MiB", "memory", 128),
        None,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("unknown option 'segmnt'") && e.to_string().contains("segment"),
        "{e}"
    );
}
