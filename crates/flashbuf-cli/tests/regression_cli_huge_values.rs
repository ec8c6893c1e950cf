#![allow(clippy::unwrap_used)]
//! Regression (issue 11, bug F): command-line values that panicked, aborted or hung.
//! `torture --seconds 1e300` panicked in `Duration::from_secs_f64`; `--pool-frames
//! 100000000000` panicked ("too many frames"); `--pool-frames 1000000000` aborted
//! allocating 40 GB; `--pages 18446744073709551615` overflowed a capacity; `--pages
//! 2000000` wrote a journal `check` then rejected; `check --pages 18446744073709551615`
//! without a journal never ended; `--page-size` was ignored on resume; errors of I/O on
//! the directory were labelled "output:"; `replay --buffer-pages 100000000` aborted
//! (`memory allocation of 409600000000 bytes failed`).
//!
//! Every one now ends within seconds with status 0 (frames capped at what the run can
//! use) or 1 and a clear message — never a panic (101), an abort or a signal.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs flashbuf with a watchdog: a run longer than `limit` is killed and fails the test.
fn run(args: &[&str], dir: Option<&Path>, limit: Duration) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_flashbuf"));
    c.args(args);
    if let Some(d) = dir {
        c.arg("--path").arg(d);
    }
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if t.elapsed() > limit {
            child.kill().unwrap();
            let o = child.wait_with_output().unwrap();
            panic!(
                "flashbuf {args:?} still running after {limit:?} (a hang): {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Refused with exit status 1 and a message containing `msg`.
fn refused(o: &Output, msg: &str, what: &str) {
    assert_eq!(
        o.status.code(),
        Some(1),
        "{what}: {:?}: {}",
        o.status,
        text(o)
    );
    let t = text(o);
    assert!(t.contains("error: "), "{what}: {t}");
    assert!(t.contains(msg), "{what}: expected '{msg}' in: {t}");
    assert!(!t.contains("panicked"), "{what}: {t}");
}

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn torture_values_are_refused_or_capped() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("t");
    let o = run(&["torture", "--seconds", "1e300"], Some(&d), LIMIT);
    refused(&o, "--seconds 1e300", "huge --seconds");
    let o = run(
        &[
            "torture",
            "--pages",
            "18446744073709551615",
            "--rounds",
            "1",
        ],
        Some(&d),
        LIMIT,
    );
    refused(&o, "--pages 18446744073709551615", "huge --pages");
    let o = run(
        &["torture", "--pages", "2000000", "--rounds", "1"],
        Some(&d),
        LIMIT,
    );
    refused(&o, "1048576", "--pages above the journal's limit");
    // Frames beyond the pages of the run are capped (the run cannot use them).
    for frames in ["100000000000", "1000000000"] {
        let o = run(
            &[
                "torture",
                "--pool-frames",
                frames,
                "--rounds",
                "3",
                "--pages",
                "64",
            ],
            Some(&d),
            LIMIT,
        );
        assert!(o.status.success(), "--pool-frames {frames}: {}", text(&o));
        assert!(
            text(&o).contains("capped"),
            "--pool-frames {frames}: {}",
            text(&o)
        );
    }
    // What the machine cannot hold is refused, naming the size.
    let big = tmp.path().join("big");
    let o = run(
        &[
            "torture",
            "--pages",
            "1048576",
            "--pool-frames",
            "1048576",
            "--page-size",
            "65536",
            "--rounds",
            "1",
        ],
        Some(&big),
        LIMIT,
    );
    let available_kib: u64 = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0);
    if available_kib < 64 << 20 {
        refused(&o, "64.0 GiB", "a pool bigger than the machine");
    }
    // Resuming with another page size or page count is refused.
    let o = run(
        &["torture", "--page-size", "8192", "--rounds", "1"],
        Some(&d),
        LIMIT,
    );
    refused(&o, "page size 4096", "--page-size on resume");
    let o = run(
        &["torture", "--pages", "65", "--rounds", "1"],
        Some(&d),
        LIMIT,
    );
    refused(&o, "64 pages", "--pages on resume");
    // I/O errors on the directory name it, and are not "output" errors.
    let o = run(
        &["torture", "--rounds", "1"],
        Some(Path::new("/dev/null/x")),
        LIMIT,
    );
    refused(&o, "/dev/null/x", "unusable directory");
    assert!(!text(&o).contains("output:"), "{}", text(&o));
}

#[test]
fn check_values_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("c");
    let o = run(
        &["torture", "--rounds", "3", "--pool-frames", "0"],
        Some(&d),
        LIMIT,
    );
    assert!(o.status.success(), "{}", text(&o));
    std::fs::remove_file(d.join("torture.journal")).unwrap();
    let o = run(
        &["check", "--pages", "18446744073709551615"],
        Some(&d),
        LIMIT,
    );
    refused(&o, "--pages 18446744073709551615", "check --pages huge");
}

#[test]
fn replay_buffer_pages_are_capped_at_what_the_trace_uses() {
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces/tpcc-sample.pagetrace.csv.zst"
    );
    for pages in ["100000000", "1000000"] {
        let o = run(
            &[
                "replay",
                "--trace",
                trace,
                "--limit",
                "1000",
                "--policy",
                "lru",
                "--quiet",
                "--json",
                "--buffer-pages",
                pages,
            ],
            None,
            LIMIT,
        );
        assert!(o.status.success(), "--buffer-pages {pages}: {}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let used = v["runs"][0]["buffer_pages"].as_u64().unwrap();
        assert!(
            used <= 1000,
            "--buffer-pages {pages}: {used} frames for 1000 references"
        );
        assert!(text(&o).contains("capped"), "{}", text(&o));
    }
}
