#![allow(clippy::unwrap_used)]
//! `--data none` decides and costs exactly what `--data bytes` does: every policy of the
//! table (each entry's golden specs, offline ones included) and pass-through, over the
//! direct store on the memory device and two simulated flash devices (an FTL with merges,
//! one with page mapping), and over every other store that takes the mode on a simulated
//! SSD, with the workload and asymmetry dynamics and a warm-up, give the same result
//! document field for field — hits, misses, page writes, batches, device time, erases, the
//! policy's and the store's own reports — except the fields that measure the machine
//! (time, memory) and the data mode itself. Both modes run the integrity oracle.
//! Stores that do not take the mode are refused by name, saying why. ICL, whose decisions
//! follow the dirty ranges of the logical page, decides the same with the ranges of a
//! range I/O trace too, pass-through and through a pool.

use flashbuf_core::DataMode;
use flashbuf_lab::dynamics::{parse_asymmetry, Dynamics, WorkloadTransform};
use flashbuf_lab::{run, BufferSize, RunConfig, Warmup};
use flashbuf_pool::policy::POLICIES;
use flashbuf_store::registry::{MetadataOnly, STORES};
use serde_json::Value;
use std::path::PathBuf;

/// Fields that measure the machine, not the run's decisions.
const MACHINE: &[&str] = &[
    "cpu_time_s",
    "refs_per_s",
    "wall_time_s",
    "scan_time_s",
    "max_rss_bytes",
    "metadata_bytes_per_frame",
    "data",
];

fn trace() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces/tpcc-sample.pagetrace.csv.zst"
    ))
}

fn cfg(policy: &str, device: &str, data: DataMode) -> RunConfig {
    cfg_on(policy, "direct", device, data)
}

fn cfg_on(policy: &str, store: &str, device: &str, data: DataMode) -> RunConfig {
    RunConfig {
        trace: trace(),
        policy: flashbuf_lab::spec::parse(policy).unwrap(),
        store: flashbuf_lab::spec::parse(store).unwrap(),
        device: flashbuf_lab::spec::parse(device).unwrap(),
        buffer: BufferSize::Pages(96),
        page_size: 4096,
        seed: 3,
        limit_refs: Some(40_000),
        presize: true,
        data,
        ..RunConfig::default()
    }
}

/// The run's result document without the machine's fields.
fn decisions(c: &RunConfig) -> Value {
    let r = run(c, None).unwrap_or_else(|e| panic!("{} {}: {e}", c.policy, c.data));
    assert_eq!(
        r.verify_errors, 0,
        "{} {}: {:?}",
        c.policy, c.data, r.first_verify_error
    );
    let mut v = serde_json::to_value(&r).unwrap();
    let m = v.as_object_mut().unwrap();
    for k in MACHINE {
        m.remove(*k);
    }
    // A policy's own wall-clock figures (FD-Buffer's advisor time) measure the machine too.
    if let Some(Value::Object(report)) = m.get_mut("policy_report") {
        report.retain(|k, _| !k.ends_with("_ns") && !k.ends_with("_share_of_wall"));
    }
    // So do a store's memory figures (ICL's WOB holds no content beyond the heads).
    if let Some(Value::Object(report)) = m.get_mut("store_report") {
        report.retain(|k, _| !k.ends_with("_memory_bytes"));
    }
    v
}

fn assert_same(bytes: &RunConfig) {
    let none = RunConfig {
        data: DataMode::Metadata,
        ..bytes.clone()
    };
    let (b, n) = (decisions(bytes), decisions(&none));
    assert_eq!(
        b, n,
        "{} on {}: the modes differ",
        bytes.policy, bytes.device
    );
    assert!(b["references"].as_u64().unwrap() > 0);
}

#[test]
fn every_policy_decides_and_costs_the_same_without_bytes() {
    let mut runs = 0;
    for device in ["memory", "sim:sd-card", "sim:mtron"] {
        for entry in POLICIES {
            for &policy in entry.golden {
                assert_same(&cfg(policy, device, DataMode::Bytes));
                runs += 1;
            }
        }
        assert_same(&cfg("none", device, DataMode::Bytes));
    }
    assert!(runs >= 3 * POLICIES.len(), "{runs} runs");
}

#[test]
fn every_store_that_takes_the_mode_decides_and_costs_the_same() {
    let stores: Vec<&str> = STORES
        .iter()
        .filter(|e| e.metadata_only == MetadataOnly::Supported && e.name != "direct")
        .map(|e| e.name)
        .collect();
    assert!(!stores.is_empty());
    for store in stores {
        // Every policy entry (its first golden spec) on a shorter prefix: a store sees a
        // policy only through its write-back stream.
        for entry in POLICIES {
            let policy = entry.golden.first().copied().unwrap_or(entry.name);
            let c = RunConfig {
                limit_refs: Some(15_000),
                ..cfg_on(policy, store, "sim:mtron", DataMode::Bytes)
            };
            assert_same(&c);
        }
        assert_same(&cfg_on("none", store, "sim:sd-card", DataMode::Bytes));
    }
}

#[test]
fn dynamics_and_warm_up_are_the_same_without_bytes() {
    for policy in ["cflru", "fd-buffer", "casa:clustering=drain"] {
        let c = RunConfig {
            dynamics: Dynamics {
                workload: Some(WorkloadTransform::parse("wm1").unwrap()),
                asymmetry: Some(parse_asymmetry("rm1").unwrap()),
                epoch_refs: 5_000,
            },
            ..cfg(policy, "sim:usb-stick", DataMode::Bytes)
        };
        assert_same(&c);
        let w = RunConfig {
            warmup: Warmup::Fill,
            ..cfg(policy, "sim:sd-card", DataMode::Bytes)
        };
        assert_same(&w);
    }
}

#[test]
fn the_result_says_which_mode_ran() {
    let n = run(&cfg("lru", "memory", DataMode::Metadata), None).unwrap();
    assert_eq!(n.data, "none");
    let v = serde_json::to_value(&n).unwrap();
    assert_eq!(v["data"], "none");
    let b = run(&cfg("lru", "memory", DataMode::Bytes), None).unwrap();
    let v = serde_json::to_value(&b).unwrap();
    assert!(
        v.get("data").is_none(),
        "byte runs keep their documents as they were"
    );
}

#[test]
fn stores_that_need_bytes_are_refused() {
    let refused = STORES
        .iter()
        .filter(|e| matches!(e.metadata_only, MetadataOnly::Unsupported(_)));
    for store in refused.map(|e| e.name) {
        let c = cfg_on("lru", store, "sim:mtron", DataMode::Metadata);
        let e = run(&c, None).unwrap_err().to_string();
        assert!(e.contains("--data none is not supported"), "{store}: {e}");
    }
}

/// PostgreSQL's write-backs below a 256 kB buffer with the exact changed bytes (8 KB).
fn ranges_trace() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../traces/oltp-pg15-t8-sb256k.iotrace-ranges.csv.zst"
    ))
}

#[test]
fn icl_decides_and_costs_the_same_with_the_trace_ranges_without_bytes() {
    // Pass-through (the trace's own ranges, contents checked in the head) and through two
    // pools (ranges merged until write-back), with a small WOB and log space so that
    // flushes, copy-forwards, threshold merges and log-space merges all happen.
    let store = "icl:wob_pages=4,log_pages=64";
    for (policy, refs) in [("none", 60_000), ("lru", 60_000), ("cflru", 30_000)] {
        let c = RunConfig {
            trace: ranges_trace(),
            page_size: 8192,
            buffer: BufferSize::Pages(256),
            limit_refs: Some(refs),
            dirty_bytes: flashbuf_lab::dirty::DirtyBytes::Auto,
            paranoid: true,
            ..cfg_on(policy, store, "sim:mtron", DataMode::Bytes)
        };
        let b = decisions(&c);
        assert_eq!(b["dirty_model"], "trace", "{policy}");
        let icl = &b["store_report"];
        for k in [
            "log_writes",
            "data_writes_merge",
            "copy_forwards",
            "merges_bulk",
        ] {
            assert!(icl[k].as_f64().unwrap() > 0.0, "{policy}: {k} in {icl}");
        }
        assert_same(&c);
    }
}
