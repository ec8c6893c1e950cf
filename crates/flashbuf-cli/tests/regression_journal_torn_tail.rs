#![allow(clippy::unwrap_used)]
//! Regression (issue 11, bug D): resuming `flashbuf torture` after a torn journal tail
//! corrupted the journal. `Journal::open_append` did not cut the torn last line, so the
//! next record was glued to it and everything after could not be verified (`check` exit
//! 1: "corrupt at line 101"). A complete last line with a bad checksum was also ignored as
//! "torn" instead of reported.

use std::path::Path;
use std::process::{Command, Output};

fn flashbuf(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(args)
        .arg("--path")
        .arg(dir)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn cut(path: &Path, bytes: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    let len = f.metadata().unwrap().len();
    f.set_len(len - bytes).unwrap();
}

#[test]
fn resume_after_a_torn_tail_cuts_it_and_check_passes() {
    for cut_bytes in [1u64, 10, 25] {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("jt");
        let j = d.join("torture.journal");
        let o = flashbuf(
            &[
                "torture",
                "--store",
                "direct",
                "--rounds",
                "50",
                "--pool-frames",
                "0",
            ],
            &d,
        );
        assert!(o.status.success(), "{}", text(&o));
        cut(&j, cut_bytes);
        let o = flashbuf(
            &[
                "torture",
                "--store",
                "direct",
                "--rounds",
                "5",
                "--pool-frames",
                "0",
            ],
            &d,
        );
        assert!(o.status.success(), "cut {cut_bytes}: {}", text(&o));
        let o = flashbuf(&["check", "--store", "direct", "--json"], &d);
        assert!(o.status.success(), "cut {cut_bytes}: {}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["violations"].as_array().unwrap().len(), 0, "{v}");
        assert_eq!(v["torn_tail"], false, "the torn line was cut: {v}");
        // 50 rounds, the torn one lost (an intent or an ack), then 5 more.
        let acked = v["rounds_acked"].as_u64().unwrap();
        assert!(
            (54..=55).contains(&acked),
            "cut {cut_bytes}: {acked} rounds acked"
        );
    }
}

#[test]
fn a_complete_last_line_with_a_bad_checksum_is_corruption() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("jt");
    let j = d.join("torture.journal");
    let o = flashbuf(
        &[
            "torture",
            "--store",
            "direct",
            "--rounds",
            "10",
            "--pool-frames",
            "0",
        ],
        &d,
    );
    assert!(o.status.success(), "{}", text(&o));
    let mut b = std::fs::read(&j).unwrap();
    // Change a digit inside the last (complete) line: its checksum no longer matches.
    let start = b[..b.len() - 1].iter().rposition(|&c| c == b'\n').unwrap() + 1;
    let at = start + b[start..].iter().position(|c| c.is_ascii_digit()).unwrap();
    b[at] = if b[at] == b'9' { b'8' } else { b[at] + 1 };
    std::fs::write(&j, &b).unwrap();
    let o = flashbuf(&["check", "--store", "direct"], &d);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("checksum mismatch"), "{}", text(&o));
    // And torture refuses to resume it (a violation: exit status 2).
    let o = flashbuf(&["torture", "--store", "direct", "--rounds", "1"], &d);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("checksum mismatch"), "{}", text(&o));
}
