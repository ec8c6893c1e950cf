#![allow(clippy::unwrap_used)]
//! Regression (issue 11, bug A): two `flashbuf torture` runs started at once on a fresh
//! directory destroyed acknowledged data. Each removed `store.flashbuf.tmp` and the store
//! file before holding any lock (the lock was `flock` on the store file, not on the
//! directory), so one run unlinked or renamed the other's locked file; the survivor wrote
//! to an unlinked file, acknowledged every round, and `check` then found hundreds of lost
//! acknowledged writes (7 of 20 attempts). torture also silently deleted an existing store
//! whenever the journal was missing.
//!
//! Now every command that creates or removes files in the directory takes the directory's
//! lock first: the second run is refused with a message naming the lock, and `check`
//! finds nothing lost, every time.

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn torture(dir: &Path, seed: &str) -> std::process::Child {
    bin()
        .args([
            "torture",
            "--store",
            "direct",
            "--pool-frames",
            "0",
            "--seconds",
            "0.6",
        ])
        .args(["--seed", seed, "--path"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn two_tortures_at_once_never_lose_an_acknowledged_write() {
    let attempts: usize = std::env::var("FLASHBUF_TWO_PROCESS_ATTEMPTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let (mut refused, mut both_ran) = (0, 0);
    for i in 0..attempts {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("r");
        let a = torture(&d, "1");
        let b = torture(&d, "2");
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        for o in [&a, &b] {
            // Never a panic or a signal: success, or a clear refusal.
            let code = o.status.code();
            assert!(
                code == Some(0) || code == Some(1),
                "attempt {i}: {:?}: {}",
                o.status,
                text(o)
            );
            if code == Some(1) {
                assert!(
                    text(o).contains("in use by another flashbuf process"),
                    "attempt {i}: refused without naming the lock: {}",
                    text(o)
                );
                refused += 1;
            }
        }
        both_ran += usize::from(a.status.success() && b.status.success());
        let c = bin()
            .args(["check", "--store", "direct", "--json", "--path"])
            .arg(&d)
            .output()
            .unwrap();
        assert!(c.status.success(), "attempt {i}: check: {}", text(&c));
        let v: serde_json::Value = serde_json::from_slice(&c.stdout).unwrap();
        assert_eq!(
            v["violations"].as_array().unwrap().len(),
            0,
            "attempt {i}: {v}"
        );
    }
    eprintln!("{attempts} attempts: {refused} runs refused, {both_ran} attempts where both ran (one after the other)");
}

#[test]
fn torture_never_deletes_a_store_whose_journal_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("r");
    let o = bin()
        .args(["torture", "--pool-frames", "0", "--rounds", "20", "--path"])
        .arg(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    std::fs::remove_file(d.join("torture.journal")).unwrap();
    let before = std::fs::read(d.join("store.flashbuf")).unwrap();
    let o = bin()
        .args(["torture", "--pool-frames", "0", "--rounds", "5", "--path"])
        .arg(&d)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("no torture journal"), "{}", text(&o));
    assert_eq!(
        std::fs::read(d.join("store.flashbuf")).unwrap(),
        before,
        "the store was changed"
    );
}

/// Meta-test: what bug A did — a second process removing and recreating the store file
/// without the directory lock while a torture run holds it open — is caught by `check`
/// (the survivor's acknowledged writes went to an unlinked file).
#[test]
fn meta_a_process_that_skips_the_lock_is_caught() {
    use flashbuf_testkit::CrashStore;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("r");
    let child = bin()
        .args([
            "torture",
            "--store",
            "direct",
            "--pool-frames",
            "0",
            "--seconds",
            "1.5",
            "--path",
        ])
        .arg(&d)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let journal = d.join("torture.journal");
    let t = std::time::Instant::now();
    while std::fs::metadata(&journal).map_or(0, |m| m.len()) < 2000 {
        assert!(t.elapsed().as_secs() < 60, "torture did not start");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // The rogue: unlink the store and format a new one in its place, no lock taken.
    let store = d.join("store.flashbuf");
    std::fs::remove_file(&store).unwrap();
    let dev =
        flashbuf_device::FileDevice::open(&store, flashbuf_device::FileDeviceOptions::default())
            .unwrap();
    drop(
        CrashStore::from_spec("direct")
            .unwrap()
            .create(Box::new(dev), 4096)
            .unwrap(),
    );
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    let c = bin()
        .args(["check", "--store", "direct", "--json", "--path"])
        .arg(&d)
        .output()
        .unwrap();
    assert_eq!(c.status.code(), Some(2), "{}", text(&c));
    let v: serde_json::Value = serde_json::from_slice(&c.stdout).unwrap();
    let lost = v["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x.as_str().unwrap().contains("lost an acknowledged write"))
        .count();
    assert!(lost > 0, "{v}");
}
