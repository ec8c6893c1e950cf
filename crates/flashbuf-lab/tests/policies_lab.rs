#![allow(clippy::unwrap_used)]
//! Every policy name and option the lab offers builds and replays the bundled sample
//! through `run()` with the integrity oracle clean; the options reach the policy (its
//! report says so); bad names and options are usage errors listing the valid ones.

use flashbuf_lab::registry::{build_policy, validate_policy, BuildContext, DeviceFacts};
use flashbuf_lab::{run, BufferSize, RunConfig, RunResult};
use std::path::PathBuf;

fn sample() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces/tpcc-sample.pagetrace.csv.zst"
    ))
}

fn config(policy: &str, device: &str, frames: usize, limit: u64) -> RunConfig {
    RunConfig {
        trace: sample(),
        format: None,
        policy: flashbuf_lab::spec::parse(policy).unwrap(),
        store: flashbuf_lab::spec::parse("direct").unwrap(),
        device: flashbuf_lab::spec::parse(device).unwrap(),
        buffer: BufferSize::Pages(frames),
        page_size: 4096,
        seed: 3,
        paranoid: true,
        progress: false,
        limit_refs: Some(limit),
        facts: None,
        ..RunConfig::default()
    }
}

fn replay(policy: &str, device: &str) -> RunResult {
    let r = run(&config(policy, device, 128, 60_000), None)
        .unwrap_or_else(|e| panic!("{policy} on {device}: {e}"));
    assert_eq!(r.verify_errors, 0, "{policy}: {:?}", r.first_verify_error);
    assert_eq!(r.references, 60_000);
    assert_eq!(r.hits + r.misses, r.references, "{policy}");
    r
}

#[test]
fn every_new_policy_and_option_replays_cleanly() {
    const COST: &str = "cost:read_us=100,write_us=2500";
    let cases: &[(&str, &str)] = &[
        ("fd-buffer", "memory"),
        ("fd-buffer:clustering=drain", "memory"),
        ("fd-buffer:clustering=batch,cluster=16", "memory"),
        ("fd-buffer:clustering=drain,victim=order", "memory"),
        ("fd-buffer:inner=fifo", "memory"),
        ("fd-buffer:pr=false,group=1,window=1000", "memory"),
        ("fd-buffer:r=136,track=true", "memory"),
        ("fd-buffer:q=0.01", COST),
        ("fd-buffer:r=online,m=1024", COST),
        ("fd-buffer:init=0.1,timed=false", COST),
        ("belady", "memory"),
        ("offline:rule=clean-beyond,k=64", "memory"),
        ("offline:rule=cost-aware", COST),
        ("offline:rule=best,read=1,write=25", "memory"),
    ];
    for &(p, d) in cases {
        replay(p, d);
    }
}

#[test]
fn fd_buffer_options_reach_the_policy_and_its_report_lands_in_the_json() {
    let r = replay("fd-buffer:r=136,window=2000,track=true", "memory");
    let get = |k: &str| *r.policy_report.get(k).unwrap_or_else(|| panic!("no {k}"));
    assert_eq!(get("r"), 136.0);
    assert_eq!(get("windows"), 30.0); // 60,000 references / 2,000
    assert_eq!(get("unhinted_misses"), 0.0);
    assert!(get("advisor_ns") > 0.0 && get("advisor_share_of_wall") < 0.5);
    for k in ["err_p_c", "err_p_d", "err_p_d_w", "err_p_c_without_pr"] {
        assert!(get(k).is_finite(), "{k}");
    }
    let json = flashbuf_lab::result::json(std::slice::from_ref(&r));
    assert!(json.contains("\"m_c\"") && json.contains("\"err_p_c_without_pr\""));

    // The default R comes from the device facts: write_us / read_us.
    let c = replay("fd-buffer", "cost:read_us=100,write_us=2500");
    assert_eq!(c.policy_report["r"], 25.0);
    // Online R measures the cost device's latencies: exactly 25 when every miss reads the
    // device (`presize`); more without, as reads of never-written pages cost nothing.
    let presized = RunConfig {
        presize: true,
        ..config(
            "fd-buffer:r=online",
            "cost:read_us=100,write_us=2500",
            128,
            60_000,
        )
    };
    let o = run(&presized, None).unwrap();
    assert!(
        (o.policy_report["r"] - 25.0).abs() < 1e-9,
        "{}",
        o.policy_report["r"]
    );
    let o = replay("fd-buffer:r=online", "cost:read_us=100,write_us=2500");
    assert!(o.policy_report["r"] > 25.0, "{}", o.policy_report["r"]);
    // Clustering drains clusters (the default, the paper's setup): a different victim
    // sequence than without.
    let plain = replay("fd-buffer:clustering=off", "memory");
    let drain = replay("fd-buffer:clustering=drain,cluster=64", "memory");
    assert_eq!(
        (drain.misses, drain.page_writes),
        {
            let d = replay("fd-buffer:cluster=64", "memory");
            (d.misses, d.page_writes)
        },
        "clustering=drain is the default"
    );
    assert!(drain.policy_report["cluster_scans"] > 0.0);
    assert_ne!(
        (plain.misses, plain.page_writes),
        (drain.misses, drain.page_writes)
    );
    // Batch clustering writes clusters as store batches.
    let batch = replay("fd-buffer:clustering=batch,cluster=64", "memory");
    assert!(batch.write_batches > 0);
}

#[test]
fn belady_has_the_fewest_misses() {
    let b = replay("belady", "memory");
    for p in [
        "lru",
        "cflru",
        "cfdc",
        "casa",
        "fd-buffer",
        "offline:rule=cost-aware",
    ] {
        let r = replay(p, "memory");
        assert!(
            b.misses <= r.misses,
            "belady {} > {p} {}",
            b.misses,
            r.misses
        );
    }
}

#[test]
fn bad_names_and_options_are_usage_errors() {
    let ctx = BuildContext {
        page_size: 4096,
        data: flashbuf_core::DataMode::Bytes,
        data_pages: 10,
        seed: 1,
        facts: DeviceFacts::default(),
    };
    let err = |s: &str| {
        build_policy(&flashbuf_lab::spec::parse(s).unwrap(), 8, &ctx)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert!(err("fd-buffer:windw=5").contains("valid options: window"));
    assert!(err("fd-buffer:clustering=sideways").contains("off, drain, batch"));
    assert!(err("fd-buffer:clustering=off,victim=order").contains("need clustering"));
    assert!(err("fd-buffer:m=10").contains("r=online"));
    assert!(err("fd-buffer:inner=mru").contains("lru, fifo"));
    let e = err("fd-buffer:window=0");
    assert!(e.contains("window=0") && e.contains("[1, "), "{e}");
    assert!(err("fd-buffer:q=0.01,window=100").contains("either window or q"));
    assert!(err("belady").contains("offline policy"));
    assert!(err("lruu").contains("fd-buffer, belady, offline"));
    let r = run(&config("offline:rule=psychic", "memory", 8, 100), None);
    assert!(r
        .err()
        .unwrap()
        .to_string()
        .contains("clean-beyond, cost-aware, best"));
}

/// A matrix is checked before anything runs: `validate_policy` parses every cell without
/// building, and a run whose policy spec is bad fails before it touches the trace.
#[test]
fn policy_specs_are_validated_before_anything_runs() {
    let cells = ["lru", "none", "fd-buffer:r=online,m=64", "cfdc:windw=0.5"];
    let errors: Vec<String> = cells
        .iter()
        .filter_map(|c| validate_policy(&flashbuf_lab::spec::parse(c).unwrap()).err())
        .map(|e| e.to_string())
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("unknown option 'windw'")
            && errors[0].contains("window, cluster_size, clustering, cluster, choice"),
        "{}",
        errors[0]
    );
    let e = validate_policy(&flashbuf_lab::spec::parse("none:x=1").unwrap()).unwrap_err();
    assert!(
        e.to_string().contains("unknown option 'x' for 'none'"),
        "{e}"
    );
    // The trace does not exist: had the run started, the error would be about the trace.
    let mut cfg = config("casa:read_cost=0", "memory", 8, 100);
    cfg.trace = PathBuf::from("/nonexistent/trace.csv");
    let e = run(&cfg, None).unwrap_err().to_string();
    assert!(e.contains("read_cost must be positive"), "{e}");
}
