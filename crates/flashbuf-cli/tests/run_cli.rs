#![allow(clippy::unwrap_used)]
//! `flashbuf run`: both engines run a workload and report consistency; bad names and
//! options are refused before anything runs, naming the flag; `--record` writes a range
//! I/O CSV that `replay` reads back with as many reads and writes as the store saw.

use std::process::{Command, Output};
use std::time::Instant;

fn flashbuf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(args)
        .output()
        .unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["runs"][0].clone()
}

#[test]
fn both_engines_run_and_keep_the_workloads_consistent() {
    for (engine, workload, policy) in [
        (
            "native",
            "tpcc:warehouses=1,items=1000,customers=100",
            "cfdc",
        ),
        ("native", "tpcb:accounts=1000", "lru"),
        (
            "sqlite",
            "tpcc:warehouses=1,items=1000,customers=100",
            "none",
        ),
        ("sqlite", "tpcb:accounts=1000", "lru"),
    ] {
        let r = json(&flashbuf(&[
            "run",
            "--engine",
            engine,
            "--workload",
            workload,
            "--policy",
            policy,
            "--transactions",
            "300",
            "--buffer-pages",
            "64",
            "--page-size",
            "4096",
            "--device",
            "sim:mtron",
            "--json",
        ]));
        assert_eq!(r["consistency"], true, "{engine} {workload}: {r}");
        assert_eq!(r["transactions"], 300, "{r}");
        assert!(r["tps_wall"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["device_time_us"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["tps_device"].as_f64().unwrap() > 0.0, "{r}");
        assert!(
            r["response_us_p99"].as_f64().unwrap() >= r["response_us_mean"].as_f64().unwrap() * 0.0
        );
    }
    // Four threads on the native engine.
    let r = json(&flashbuf(&[
        "run",
        "--workload",
        "tpcb:accounts=1000",
        "--threads",
        "4",
        "--transactions",
        "400",
        "--buffer-pages",
        "32",
        "--page-size",
        "4096",
        "--json",
    ]));
    assert_eq!(r["consistency"], true, "{r}");
}

#[test]
fn bad_names_are_refused_before_anything_runs() {
    for (args, want) in [
        (&["run", "--workload", "tpcx"][..], "tpcx"),
        (&["run", "--workload", "tpcc:warehouse=2"][..], "warehouse"),
        (
            &["run", "--workload", "tpcb", "--policy", "lruu"][..],
            "lruu",
        ),
        (
            &["run", "--workload", "tpcb", "--policy", "none"][..],
            "pass-through is for --engine sqlite",
        ),
        (
            &["run", "--workload", "tpcb", "--policy", "belady"][..],
            "offline policy",
        ),
        (
            &["run", "--workload", "cfdc", "--engine", "sqlite"][..],
            "no SQL version",
        ),
        (
            &[
                "run",
                "--workload",
                "tpcb",
                "--engine",
                "sqlite",
                "--threads",
                "2",
            ][..],
            "one connection",
        ),
        (
            &["run", "--workload", "tpcb", "--engine", "oracle"][..],
            "valid engines: native, sqlite",
        ),
        (
            &["run", "--workload", "tpcb", "--device", "simm:mtron"][..],
            "simm",
        ),
        (
            &["run", "--workload", "tpcb", "--seconds", "-1"][..],
            "--seconds",
        ),
    ] {
        let t0 = Instant::now();
        let o = flashbuf(args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} ran");
        assert!(e.contains(want), "{args:?}: '{want}' not in {e}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert!(
            t0.elapsed().as_secs() < 5,
            "{args:?} took {:?}",
            t0.elapsed()
        );
    }
}

#[test]
fn a_recording_replays_with_the_reads_and_writes_the_store_saw() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("tpcb.ranges.csv");
    let rec_s = rec.to_str().unwrap();
    let r = json(&flashbuf(&[
        "run",
        "--workload",
        "tpcb:accounts=2000",
        "--transactions",
        "500",
        "--buffer-pages",
        "16",
        "--page-size",
        "4096",
        "--record",
        rec_s,
        "--json",
    ]));
    assert_eq!(r["record"], rec_s);
    let text = std::fs::read_to_string(&rec).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("op,page,ranges,new"));
    let (mut reads, mut writes, mut partial) = (0u64, 0u64, 0u64);
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), 4, "{l}");
        match f[0] {
            "R" => reads += 1,
            "W" => {
                writes += 1;
                let ranges = flashbuf_trace::parse_ranges(f[2]).unwrap();
                assert!(!ranges.is_empty(), "{l}");
                let bytes: u64 = ranges.iter().map(|r| r.1).sum();
                assert!(bytes <= 4096, "{l}");
                if bytes < 4096 {
                    partial += 1;
                }
            }
            other => panic!("op {other}"),
        }
    }
    assert!(writes > 0 && reads > 0);
    assert!(partial > 0, "no write-back carried less than a page");
    // The replay below the buffer sees exactly those references.
    let o = flashbuf(&[
        "replay",
        "--trace",
        rec_s,
        "--policy",
        "none",
        "--page-size",
        "4096",
        "--json",
    ]);
    let replay = json(&o);
    assert_eq!(replay["format"], "ranges");
    assert_eq!(replay["page_reads"].as_u64().unwrap(), reads);
    assert_eq!(replay["page_writes"].as_u64().unwrap(), writes);
    assert_eq!(replay["verify_errors"], 0);
    // Never over an existing file.
    let o = flashbuf(&["run", "--workload", "tpcb:accounts=100", "--record", rec_s]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--record"),
        "{o:?}"
    );
}
