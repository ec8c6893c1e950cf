#![allow(clippy::unwrap_used)]
//! `compare` checks every name and option of its whole matrix before it runs or reads
//! anything (issue 10): a bad option in the last cell fails at once, naming the flag, the
//! value and the valid keys, with no run output.

mod common;
use common::flashbuf;
use std::time::Instant;

fn refused(args: &[&str], wanted: &[&str]) {
    let t0 = Instant::now();
    let o = flashbuf(args);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
    assert!(o.stdout.is_empty(), "{args:?} ran something");
    for w in wanted {
        assert!(e.contains(w), "{args:?}: '{w}' not in {e}");
    }
    // Nothing ran: no result lines (they end in refs/s) and no matrix bar in the errors.
    assert!(
        !e.contains("refs/s") && !e.contains("matrix ["),
        "{args:?}: {e}"
    );
    eprintln!("{args:?}: refused in {:?}", t0.elapsed());
}

#[test]
fn a_bad_last_cell_fails_before_anything_runs() {
    // The trace does not even exist: the options are checked before it is opened.
    let missing = "/nonexistent/flashbuf/trace.csv";
    refused(
        &[
            "compare",
            "--trace",
            missing,
            "--policy",
            "lru",
            "--policy",
            "cfdc:windw=0.5",
        ],
        &[
            "--policy cfdc:windw=0.5",
            "unknown option 'windw'",
            "window, cluster_size",
        ],
    );
    refused(
        &[
            "compare",
            "--trace",
            missing,
            "--policies",
            "lru,cfdc:window=0.5,cluster_size=x",
        ],
        &[
            "--policies cfdc:window=0.5,cluster_size=x",
            "expected a whole number",
        ],
    );
    refused(
        &[
            "compare",
            "--trace",
            missing,
            "--devices",
            "memory,simm:mtron",
        ],
        &[
            "--devices simm:mtron",
            "unknown device 'simm'",
            "memory, cost, file, sim",
        ],
    );
    refused(
        &[
            "compare",
            "--trace",
            missing,
            "--device",
            "sim:mtron:channel=3",
        ],
        &["unknown option 'channel'", "channels"],
    );
    refused(
        &[
            "compare",
            "--trace",
            missing,
            "--stores",
            "direct,stable-buffer:flush=eager",
        ],
        &[
            "--stores stable-buffer:flush=eager",
            "one of passive, proactive",
        ],
    );
}

#[test]
fn comma_lists_keep_options_with_their_component() {
    let o = flashbuf(&[
        "compare",
        "--limit",
        "5000",
        "--buffer-pages",
        "64",
        "--json",
        "--quiet",
        "--policies",
        "lru,cfdc:window=0.25,cluster_size=32",
        "--devices",
        "memory",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let policies: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["policy"].as_str().unwrap())
        .collect();
    assert_eq!(policies, ["lru", "cfdc:cluster_size=32,window=0.25"]);
}
