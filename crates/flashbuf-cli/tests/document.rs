#![allow(clippy::unwrap_used)]
//! `flashbuf_cli::document`: the library's JSON documents are the binary's `--json` output
//! (the Python package's contract), and bad arguments are clear errors.

use serde_json::Value;
use std::process::Command;

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/traces/tpcc-sample.pagetrace.csv.zst"
);

/// Fields that measure the machine (wall clock, CPU time, memory), not the run.
const MACHINE_FIELDS: &[&str] = &[
    "cpu_time_s",
    "refs_per_s",
    "wall_time_s",
    "scan_time_s",
    "max_rss_bytes",
];

fn without_machine_fields(mut run: Value) -> Value {
    let obj = run.as_object_mut().unwrap();
    for f in MACHINE_FIELDS {
        assert!(obj.remove(*f).is_some(), "field {f} missing");
    }
    run
}

#[test]
fn replay_document_is_the_binarys_json() {
    let args = [
        "replay",
        "--trace",
        SAMPLE,
        "--limit",
        "5000",
        "--buffer-pages",
        "300",
        "--policy",
        "cfdc",
        "--device",
        "sim:mtron",
    ];
    let lib: Value = serde_json::from_str(&flashbuf_cli::document(args).unwrap()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success());
    let bin: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (lib_run, bin_run) = (
        without_machine_fields(lib["runs"][0].clone()),
        without_machine_fields(bin["runs"][0].clone()),
    );
    assert_eq!(lib_run, bin_run);
    assert_eq!(lib_run["references"], 5000);
    assert_eq!(lib_run["buffer_pages"], 300);
}

#[test]
fn unknown_policy_names_the_valid_ones() {
    let e = flashbuf_cli::document(["replay", "--policy", "lruu"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("lruu"), "{e}");
    assert!(e.contains("cfdc") && e.contains("arc"), "{e}");
}

#[test]
fn bad_flag_is_clap_message_without_usage() {
    let e = flashbuf_cli::document(["replay", "--polcy", "lru"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("--polcy"), "{e}");
    assert!(!e.contains("Usage:") && !e.starts_with("error:"), "{e}");
}

#[test]
fn commands_without_document_are_refused() {
    let e = flashbuf_cli::document(["bench"]).unwrap_err().to_string();
    assert!(
        e.contains("replay, compare, mrc, run, reproduce, list"),
        "{e}"
    );
}

#[test]
fn list_document_names_every_policy_kind() {
    let doc: Value =
        serde_json::from_str(&flashbuf_cli::document(["list", "policies"]).unwrap()).unwrap();
    let text = doc.to_string();
    assert!(
        text.contains("\"lru\"") && text.contains("\"cfdc\""),
        "{text}"
    );
}

#[test]
fn help_of_a_command_and_of_an_unknown_one() {
    let h = flashbuf_cli::help("replay").unwrap();
    assert!(
        h.contains("--policy") && h.contains("flashbuf replay"),
        "{h}"
    );
    let e = flashbuf_cli::help("replya").unwrap_err().to_string();
    assert!(e.contains("replay") && e.contains("compare"), "{e}");
}
