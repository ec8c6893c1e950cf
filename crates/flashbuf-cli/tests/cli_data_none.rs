#![allow(clippy::unwrap_used)]
//! `--data none` from the command line: replay and compare give the same figures as with
//! bytes and say which mode ran; bench says the byte limit does not apply; mrc's
//! miniatures estimate the same; bad values and stores that need bytes are refused with
//! the reason, never a panic.

mod common;
use common::flashbuf;

fn json(args: &[&str]) -> serde_json::Value {
    common::json(&flashbuf(args))
}

/// The figures that a run decides (not the machine's time and memory).
fn figures(run: &serde_json::Value) -> Vec<String> {
    [
        "hits",
        "misses",
        "page_writes",
        "device_time_us",
        "erases",
        "write_batches",
    ]
    .iter()
    .map(|k| run[*k].to_string())
    .collect()
}

#[test]
fn replay_and_compare_without_bytes_give_the_same_figures() {
    let base = [
        "replay",
        "--limit",
        "30000",
        "--device",
        "sim:sd-card",
        "--buffer-pages",
        "200",
        "--json",
    ];
    let bytes = json(&base);
    let none = json(&[&base[..], &["--data", "none"]].concat());
    let (b, n) = (&bytes["runs"][0], &none["runs"][0]);
    assert_eq!(figures(b), figures(n));
    assert_eq!(n["data"], "none");
    assert!(b.get("data").is_none());
    let cmp = [
        "compare",
        "--limit",
        "20000",
        "--devices",
        "sim:mtron",
        "--json",
    ];
    let cb = json(&cmp);
    let cn = json(&[&cmp[..], &["--data", "none"]].concat());
    let runs = cb["runs"].as_array().unwrap();
    assert!(runs.len() >= 4);
    for (b, n) in runs.iter().zip(cn["runs"].as_array().unwrap()) {
        assert_eq!(figures(b), figures(n), "{}", b["policy"]);
    }
}

#[test]
fn bench_and_mrc_take_the_mode() {
    let b = json(&[
        "bench", "--limit", "20000", "--runs", "1", "--data", "none", "--json",
    ]);
    assert_eq!(b["config"]["data"], "none");
    assert!(b["bench"]["byte_limit_refs_per_s"].is_null());
    // Nothing measured that does not apply.
    assert!(b["bench"]["page_copy_ns"].is_null(), "{b}");
    assert!(b["bench"]["working_set_refs_per_s"].is_null(), "{b}");
    let bytes = json(&["bench", "--limit", "20000", "--runs", "1", "--json"]);
    let limit = bytes["bench"]["byte_limit_refs_per_s"].as_f64();
    assert!(limit.is_some_and(|l| l > 0.0), "{bytes}");
    assert!(bytes["bench"]["page_copy_ns"]
        .as_f64()
        .is_some_and(|c| c > 0.0));
    // The second figure: pages taken from a region the size of the run's distinct pages.
    assert!(bytes["bench"]["working_set_page_ns"]
        .as_f64()
        .is_some_and(|c| c > 0.0));
    let pages = bytes["runs"][0]["distinct_pages"].as_u64().unwrap_or(0);
    assert_eq!(
        bytes["bench"]["working_set_source_bytes"].as_u64(),
        Some(pages * 8192),
        "{bytes}"
    );
    let o = flashbuf(&["bench", "--limit", "20000", "--runs", "1", "--data", "none"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("byte limit does not apply"));
    let mrc = |data: &str| {
        json(&[
            "mrc", "--policy", "cflru", "--sample", "rate=0.5", "--sizes", "50,200", "--limit",
            "30000", "--data", data, "--json",
        ])
    };
    let (mb, mn) = (mrc("bytes"), mrc("none"));
    assert_eq!(mb["rows"].as_array().map(Vec::len), Some(2), "{mb}");
    assert_eq!(mb["rows"], mn["rows"]);
}

/// `bench` says where the best run's two threads spent it: the reader's decoding and
/// stream model, each thread's waits, and which of them bounds the speed. Only a policy
/// that detached a stream model (FD-Buffer's estimator) runs one on the reader.
#[test]
fn bench_reports_where_the_threads_spent_the_run() {
    let threads = |policy: &str| {
        let b = json(&[
            "bench", "--limit", "20000", "--runs", "1", "--data", "none", "--policy", policy,
            "--json",
        ]);
        b["bench"]["threads"].clone()
    };
    for policy in ["lru", "fd-buffer"] {
        let t = threads(policy);
        let secs = |k: &str| t[k].as_f64().unwrap_or(-1.0);
        assert!(secs("decode_s") > 0.0, "{policy}: {t}");
        assert!(
            secs("reader_wait_s") >= 0.0 && secs("replay_wait_s") >= 0.0,
            "{t}"
        );
        let model = secs("model_s");
        if policy == "lru" {
            assert_eq!(model, 0.0, "{t}");
        } else {
            assert!(model > 0.0, "{t}");
        }
        let bound = t["bound"].as_str().unwrap_or("");
        assert!(["reader", "replay", "both"].contains(&bound), "{t}");
    }
    let o = flashbuf(&["bench", "--limit", "20000", "--runs", "1", "--data", "none"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("threads (best run): the reader decoded for"),
        "{text}"
    );
}

#[test]
fn bad_values_are_refused_and_icl_takes_the_mode() {
    let o = flashbuf(&["replay", "--limit", "100", "--data", "some"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("'some'"));
    // ICL, which once needed page bytes, takes the mode too (issue 17).
    let o = flashbuf(&[
        "replay", "--limit", "100", "--store", "icl", "--data", "none",
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{e}");
    assert!(!e.contains("panicked"), "{e}");
}

/// `torture --sim --data none` runs the crash scenarios on metadata-only stores (each named
/// with the mode) and finds no violation; the files mode refuses the flag.
#[test]
fn torture_sim_runs_metadata_only_stores() {
    let v = json(&[
        "torture",
        "--sim",
        "--data",
        "none",
        "--store",
        "direct",
        "--crash-points",
        "200",
        "--json",
    ]);
    assert_eq!(v["violations"], 0, "{v}");
    let stores = v["stores"].as_array().unwrap();
    assert_eq!(stores.len(), 1, "{v}");
    assert_eq!(stores[0]["store"], "direct (--data none)");
    assert!(stores[0]["crash_points"].as_u64().unwrap() >= 200, "{v}");
    assert!(stores[0]["pool_scenarios"].as_u64().unwrap() > 0, "{v}");
    let o = flashbuf(&["torture", "--data", "none", "--seconds", "1"]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("only with --sim"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
}
