//! The SQLite torture killed with SIGKILL at random (seeded) moments, many times, for every
//! store of the store table (its crash variants) in pass-through and pool mode (LRU and
//! CFDC), with WAL and with the rollback journal; after each kill the directory is
//! checked: `PRAGMA integrity_check` is `ok`, the TPC-B balance sums and row counts hold,
//! and every journalled commit is in the database. Kills per configuration:
//! `FLASHBUF_SQLITE_KILLS` (default 3).
#![allow(clippy::unwrap_used)]

use flashbuf_core::rng::SplitMix64;
use flashbuf_sqlite::torture;
use flashbuf_testkit::CrashStore;
use std::process::{Command, Stdio};
use std::time::Duration;

fn kills() -> usize {
    std::env::var("FLASHBUF_SQLITE_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

#[test]
fn sigkill_at_random_moments_loses_no_commit() {
    let bin = env!("CARGO_BIN_EXE_flashbuf-sqlite-torture");
    let mut rng = SplitMix64::new(0x5EED_0014);
    let modes: [(&str, &[&str]); 3] = [
        ("pass-through", &[]),
        ("pool-lru", &["--pool", "48", "--policy", "lru"]),
        ("pool-cfdc", &["--pool", "48", "--policy", "cfdc"]),
    ];
    let mut total = 0;
    for store in CrashStore::variants().unwrap() {
        for (mode, mode_args) in modes {
            for journal in ["wal", "delete"] {
                let dir = tempfile::tempdir().unwrap();
                let mut last = 0;
                for k in 0..kills() {
                    let mut child = Command::new(bin)
                        .args(["run", "--dir", dir.path().to_str().unwrap()])
                        .args([
                            "--store",
                            &store.spec,
                            "--journal",
                            journal,
                            "--accounts",
                            "2000",
                        ])
                        .args(mode_args)
                        .stdout(Stdio::null())
                        .stderr(Stdio::piped())
                        .spawn()
                        .unwrap();
                    std::thread::sleep(Duration::from_millis(30 + rng.below(300)));
                    if let Some(status) = child.try_wait().unwrap() {
                        let out = child.wait_with_output().unwrap();
                        panic!(
                            "{} {mode} {journal}: the torture stopped by itself ({status}): {}",
                            store.name,
                            String::from_utf8_lossy(&out.stderr)
                        );
                    }
                    child.kill().unwrap(); // SIGKILL
                    child.wait().unwrap();
                    let r = torture::check(dir.path()).unwrap();
                    assert!(
                        r.ok(),
                        "{} {mode} {journal}, kill {k}: {:?}",
                        store.name,
                        r.violations
                    );
                    assert!(r.journalled >= last, "the journal shrank");
                    last = r.journalled;
                    total += 1;
                }
                assert!(
                    last > 0,
                    "{} {mode} {journal}: no transaction ever committed",
                    store.name
                );
                println!(
                    "{} {mode} {journal}: {} SIGKILLs survived, {last} journalled commits all present",
                    store.name,
                    kills()
                );
            }
        }
    }
    println!("{total} SIGKILLs survived, 0 failed integrity checks, 0 lost commits");
}
