#![allow(clippy::unwrap_used)]
//! `flashbuf torture` and `flashbuf check` from the outside: the simulated soak through a
//! buffer pool, refusals with clear messages (a store held by another *process*, another
//! page size, another format version), violations reported with exit status 2, usage
//! errors.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn flashbuf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(args)
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

fn p(d: &Path) -> &str {
    d.to_str().unwrap()
}

#[test]
fn sim_torture_through_the_pool_reports_its_counts() {
    let o = flashbuf(&[
        "torture",
        "--sim",
        "--crash-points",
        "1000",
        "--via",
        "pool",
        "--seed",
        "3",
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["violations"], 0);
    for s in v["stores"].as_array().unwrap() {
        assert!(s["crash_points"].as_u64().unwrap() >= 1000, "{s}");
        assert_eq!(s["pool_scenarios"], s["scenarios"]);
        assert!(
            s["by_mode"]["subset/torn-512/garbage"].as_u64().unwrap() > 0,
            "{s}"
        );
    }
    // The table form, one store.
    let o = flashbuf(&[
        "torture",
        "--sim",
        "--crash-points",
        "200",
        "--store",
        "direct",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("crash points by mode (direct)") && t.contains("0 violations"),
        "{t}"
    );
}

#[test]
fn check_is_refused_while_another_process_holds_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(["torture", "--pages", "64", "--path", p(&d)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while std::fs::metadata(d.join("torture.journal")).map_or(0, |m| m.len()) < 200 {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "torture did not start"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let o = flashbuf(&["check", "--path", p(&d)]);
    let held = text(&o);
    let _ = child.kill();
    child.wait().unwrap();
    assert_eq!(o.status.code(), Some(1), "{held}");
    // The directory lock is met first (issue 11: every command holds it).
    assert!(
        held.contains("is in use by another flashbuf process"),
        "{held}"
    );
    // Once the torture process is gone, check works.
    let o = flashbuf(&["check", "--path", p(&d)]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("0 violations"));
}

#[test]
fn other_page_size_and_format_version_are_refused_with_clear_messages() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("run");
    let o = flashbuf(&[
        "torture",
        "--rounds",
        "10",
        "--pages",
        "32",
        "--path",
        p(&d),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("10 rounds acknowledged"), "{}", text(&o));
    let o = flashbuf(&["check", "--path", p(&d), "--page-size", "8192"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("formatted with page size 4096 bytes, but page size 8192 was requested"),
        "{}",
        text(&o)
    );
    // A store written by a future format version (checked-in image, no journal).
    let img = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/corrupt/direct-format-v3.img"
    );
    let d2 = dir.path().join("v2");
    std::fs::create_dir_all(&d2).unwrap();
    std::fs::copy(img, d2.join("store.flashbuf")).unwrap();
    let o = flashbuf(&["check", "--path", p(&d2), "--page-size", "512"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("store format version 3, this build reads version 2"),
        "{}",
        text(&o)
    );
    // The valid image checks clean without a journal.
    let img = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/corrupt/direct-valid-512.img"
    );
    std::fs::copy(img, d2.join("store.flashbuf")).unwrap();
    let o = flashbuf(&[
        "check",
        "--path",
        p(&d2),
        "--page-size",
        "512",
        "--pages",
        "8",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("6 hold data, 2 unwritten"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_damaged_store_fails_check_with_status_2_and_names_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("run");
    let o = flashbuf(&[
        "torture",
        "--rounds",
        "40",
        "--pages",
        "16",
        "--pool-frames",
        "0",
        "--path",
        p(&d),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    // Every page of a 16-page run is written in 40 rounds; damage page 5.
    let f = d.join("store.flashbuf");
    let mut b = std::fs::read(&f).unwrap();
    // Page 5 of the data area (behind the superblock and the two state record copies).
    b[3 * 4096 + 5 * 4096 + 2000] ^= 0x40;
    std::fs::write(&f, &b).unwrap();
    let o = flashbuf(&["check", "--path", p(&d)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("VIOLATIONS") && text(&o).contains("page 5: corrupt"),
        "{}",
        text(&o)
    );
    // Resuming a damaged run is refused too.
    let o = flashbuf(&["torture", "--rounds", "1", "--path", p(&d)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("cannot resume"), "{}", text(&o));
}

#[test]
fn usage_errors_say_what_to_do() {
    let o = flashbuf(&["torture"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("give --path DIR"), "{}", text(&o));
    let o = flashbuf(&["torture", "--sim", "--store", "nope", "--crash-points", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("valid names: direct"), "{}", text(&o));
    let dir = tempfile::tempdir().unwrap();
    let o = flashbuf(&["check", "--path", p(dir.path())]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("no store in"), "{}", text(&o));
    let o = flashbuf(&["torture", "--sim", "--via", "cache", "--crash-points", "1"]);
    assert!(
        text(&o).contains("expected store, pool or both"),
        "{}",
        text(&o)
    );
}
