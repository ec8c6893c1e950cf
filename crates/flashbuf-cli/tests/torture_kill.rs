#![allow(clippy::unwrap_used)]
//! Real-process crash test: `flashbuf torture` writes and syncs a store on real files and
//! is killed with SIGKILL at random moments; after every kill `flashbuf check` recovers
//! the store and verifies it against the torture journal (every acknowledged page at
//! least at its acknowledged version, nothing newer than written, no torn page, no corrupt
//! synced page, no phantom). Each run resumes the previous one (after verifying it), so
//! the store goes through every kill in turn; runs alternate between writing through a
//! buffer pool and straight to the store, batched or not, and with O_DIRECT.
//!
//! `FLASHBUF_KILLS=N` sets the number of kills (default 24; soak with more).

use flashbuf_core::rng::SplitMix64;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
}

fn journal_len(dir: &Path) -> u64 {
    std::fs::metadata(dir.join("torture.journal"))
        .map(|m| m.len())
        .unwrap_or(0)
}

fn kills() -> usize {
    std::env::var("FLASHBUF_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

/// Runs `flashbuf check` and returns its JSON report (failing the test on a violation).
fn check(store: &str, dir: &Path, ctx: &str) -> serde_json::Value {
    let out = bin()
        .args(["check", "--store", store, "--json", "--path"])
        .arg(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{ctx}: check failed ({:?}): {stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["violations"].as_array().unwrap().len(), 0, "{ctx}: {v}");
    v
}

#[test]
fn sigkill_at_random_moments_never_loses_an_acknowledged_page() {
    // Every crash variant of every store in the table (`flashbuf_store::STORES`), by the
    // spec that builds it (`direct:grow_pages=8`, ...).
    for f in flashbuf_testkit::CrashStore::variants().unwrap() {
        kill_loop(&f.spec);
    }
}

fn kill_loop(store: &str) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("run");
    let mut rng = SplitMix64::new(0x5EED);
    let n = kills();
    let (mut checks, mut mid_round, mut newer, mut corrupt) = (0, 0, 0u64, 0u64);
    let mut last_acked = 0;
    for i in 0..n {
        let mut cmd = bin();
        cmd.args(["torture", "--store", store, "--pages", "128", "--seed"])
            .arg(i.to_string())
            .arg("--path")
            .arg(&d)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        match i % 4 {
            0 => cmd.args(["--pool-frames", "0"]),
            1 => cmd.args(["--pool-frames", "8"]),
            2 => cmd.args(["--pool-frames", "0", "--max-pages-per-round", "48"]),
            _ => cmd.args(["--pool-frames", "16", "--direct-io"]),
        };
        let before = journal_len(&d);
        let mut child = cmd.spawn().unwrap();
        // Let it get going (a record past what the previous run left), then kill it at a
        // random moment.
        let t = Instant::now();
        while journal_len(&d) <= before {
            if let Some(st) = child.try_wait().unwrap() {
                panic!("kill {i}: torture exited early with {st:?}");
            }
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "kill {i}: torture made no progress"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_micros(rng.below(150_000)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let v = check(store, &d, &format!("store {store}, kill {i}"));
        checks += 1;
        let acked = v["rounds_acked"].as_u64().unwrap();
        assert!(acked >= last_acked, "kill {i}: journal went backwards");
        last_acked = acked;
        mid_round += u64::from(v["last_round_open"].as_bool().unwrap());
        newer += v["newer_unsynced"].as_u64().unwrap();
        corrupt += v["corrupt_unsynced"].as_u64().unwrap();
    }
    eprintln!(
        "store {store}: {n} SIGKILLs, {checks} checks passed: {last_acked} rounds acknowledged, {mid_round} kills mid-round, \
         {newer} pages found newer than acknowledged, {corrupt} corrupt after an unsynced write"
    );
    assert_eq!(checks, n);
    // Every run is killed after at least one new journal record; on a slow disk that may
    // be a single round per run.
    assert!(
        last_acked >= (n / 4) as u64,
        "too little progress: {last_acked} rounds"
    );
}

/// Kills right after the start (before or while the store and journal are created): the
/// next run must start or resume cleanly, and whatever exists must check clean.
#[test]
fn sigkill_during_startup_leaves_a_startable_directory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("run");
    for i in 0..6u64 {
        let mut child = bin()
            .args(["torture", "--pages", "32", "--path"])
            .arg(&d)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(i * 3));
        child.kill().unwrap();
        child.wait().unwrap();
        if d.join("torture.journal").exists() {
            check("direct", &d, &format!("early kill {i}"));
        }
    }
    let out = bin()
        .args(["torture", "--pages", "32", "--rounds", "5", "--path"])
        .arg(&d)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check("direct", &d, "after early kills");
}
