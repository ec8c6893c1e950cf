//! SQLite on flashbuf, measured: (A) transactions/s of the TPC-B-like and TPC-C-like SQL
//! workloads through flashbuf against SQLite on its default VFS, same machine, same run;
//! (B) device writes, flash programs, erases and device time per store and policy on a
//! simulated flash device (`sim:mtron` by default).
//!
//! ```sh
//! cargo run --release -p flashbuf-sqlite --example sqlite_bench -- [--seconds 10]
//!     [--rounds 3] [--transactions 4000] [--device sim:mtron] [--parts ABCDE] [--json out.json]
//! ```
//!
//! Devices, stores and policies are built by name through the lab's registry (what
//! `flashbuf run --engine sqlite` will do). Every run uses WAL, `synchronous=FULL`,
//! exclusive locking, 4 KiB pages; the default-VFS run keeps its database in a plain file
//! in the same directory as flashbuf's `file:` device.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use flashbuf_lab::registry::{build_device, build_policy, build_store, device_facts, BuildContext};
use flashbuf_lab::spec;
use flashbuf_sqlite::rusqlite::Connection;
use flashbuf_sqlite::{
    parse_sql_workload, run_sql, Cache, Database, FlashDb, JournalMode, OpenOptions, SqlRunResult,
    Synchronous,
};
use flashbuf_workload::{RunConfig, RunLimit};

const PS: usize = 4096;
const TPCB: &str = "tpcb:accounts=50000";
const TPCC: &str = "tpcc:items=10000,customers=300";

struct Args {
    seconds: f64,
    rounds: usize,
    transactions: u64,
    device: String,
    parts: String,
    json: Option<String>,
}

fn args() -> Args {
    let mut a = Args {
        seconds: 10.0,
        rounds: 3,
        transactions: 4000,
        device: "sim:mtron".into(),
        parts: "ABCDE".into(),
        json: None,
    };
    let v: Vec<String> = std::env::args().skip(1).collect();
    for p in v.chunks(2) {
        let val = p.get(1).cloned().unwrap_or_default();
        match p[0].as_str() {
            "--seconds" => a.seconds = val.parse().expect("--seconds"),
            "--transactions" => a.transactions = val.parse().expect("--transactions"),
            "--rounds" => a.rounds = val.parse().expect("--rounds"),
            "--device" => a.device = val,
            "--parts" => a.parts = val,
            "--json" => a.json = Some(val),
            other => panic!("unknown argument {other}"),
        }
    }
    a
}

fn ctx(data_pages: u64) -> BuildContext {
    BuildContext {
        page_size: PS,
        data: flashbuf_core::DataMode::Bytes,
        data_pages,
        seed: 7,
        facts: Default::default(),
    }
}

/// SQLite on flashbuf: `device` × `store` × (`policy` with `frames`, or pass-through).
fn flash_db(
    device: &str,
    store: &str,
    policy: Option<(&str, usize)>,
    opts: OpenOptions,
) -> Database {
    let mut c = ctx(64 << 20 >> 12);
    let dspec = spec::parse(device).unwrap();
    c.facts = device_facts(&dspec, &c).unwrap();
    let dev = build_device(&dspec, &c).unwrap();
    let st = build_store(&spec::parse(store).unwrap(), dev.device, &c).unwrap();
    let cache = match policy {
        None => Cache::PassThrough,
        Some((p, frames)) => Cache::Pool {
            frames,
            policy: build_policy(&spec::parse(p).unwrap(), frames, &c)
                .unwrap()
                .unwrap(),
        },
    };
    let db = FlashDb::open(st, cache).unwrap();
    Database::open(db, opts).unwrap()
}

fn default_vfs(dir: &std::path::Path, sync: Synchronous) -> Connection {
    let c = Connection::open(dir.join("default-vfs.db")).unwrap();
    let sync = if sync == Synchronous::Off {
        "OFF"
    } else {
        "FULL"
    };
    c.execute_batch(&format!(
        "PRAGMA locking_mode=EXCLUSIVE; PRAGMA page_size=4096; PRAGMA journal_mode=WAL; PRAGMA synchronous={sync};"
    ))
    .unwrap();
    c
}

fn line(label: &str, r: &SqlRunResult) {
    let f = r.flash.as_ref();
    println!(
        "{label:<44} {:>7} txn {:>9.1} tps  p99 {:>8.0} us  dev.writes {:>7}  programs {:>7}  erases {:>5}  dev.time {:>7.2} s  tps(dev) {:>8}  ok={}",
        r.transactions,
        r.tps_wall,
        r.response_us_p99,
        f.map_or(0, |f| f.device.writes),
        f.map_or(0, |f| f.device.flash_programs),
        f.map_or(0, |f| f.device.erases),
        r.device_seconds,
        r.tps_device.map_or("-".to_string(), |t| format!("{t:.1}")),
        r.consistency.ok()
    );
    assert!(r.consistency.ok(), "{label}: {:?}", r.consistency.failed);
}

/// Transactions/s of SQLite's default VFS and of flashbuf, with `synchronous` as given:
/// rounds of every configuration in turn, so that the machine's drift (the fsync latency of
/// a shared disk) hits them alike; the median round is reported.
fn tps_compare(a: &Args, sync: Synchronous, all: &mut Vec<(String, SqlRunResult)>) {
    let timed = RunConfig {
        threads: 1,
        limit: RunLimit::Seconds(a.seconds),
        seed: 7,
    };
    for w in [TPCB, TPCC] {
        let wl = parse_sql_workload(w).unwrap();
        type Config = (
            &'static str,
            Option<(&'static str, Option<(&'static str, usize)>)>,
        );
        let configs: [Config; 4] = [
            ("default VFS (file)", None),
            ("flashbuf file, direct, pass-through", Some(("file", None))),
            (
                "flashbuf file, direct, pool lru 1024",
                Some(("file", Some(("lru", 1024)))),
            ),
            (
                "flashbuf memory, direct, pass-through",
                Some(("memory", None)),
            ),
        ];
        let mut tps: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
        for round in 0..a.rounds {
            for (i, (label, cfg)) in configs.iter().enumerate() {
                let dir = tempfile::tempdir_in(".").unwrap();
                let r = match cfg {
                    None => {
                        run_sql(&*wl, &mut default_vfs(dir.path(), sync), None, &timed).unwrap()
                    }
                    Some((device, policy)) => {
                        let device = if *device == "file" {
                            format!("file:{}", dir.path().join("store").display())
                        } else {
                            device.to_string()
                        };
                        let mut db = flash_db(
                            &device,
                            "direct",
                            *policy,
                            OpenOptions::in_dir(dir.path()).synchronous(sync),
                        );
                        let r = db.run_workload(&*wl, &timed).unwrap();
                        db.close().unwrap();
                        r
                    }
                };
                line(&format!("{w} {sync:?} {label} #{round}"), &r);
                tps[i].push(r.tps_wall);
                all.push((format!("{w} {sync:?} {label} #{round}"), r));
            }
        }
        for ((label, _), t) in configs.iter().zip(&mut tps) {
            t.sort_by(f64::total_cmp);
            println!(
                "{w} {sync:?} {label}: median {:.1} tps over {} runs {t:.1?}",
                t[t.len() / 2],
                t.len()
            );
        }
    }
}

fn main() {
    let a = args();
    let mut all = Vec::new();
    println!(
        "## A. transactions/s: flashbuf vs SQLite's default VFS ({} s per run, after the load)",
        a.seconds
    );
    if a.parts.contains('A') {
        tps_compare(&a, Synchronous::Full, &mut all);
    }
    println!(
        "\n## B. device writes on {} ({} transactions after the load)",
        a.device, a.transactions
    );
    let counted = RunConfig {
        threads: 1,
        limit: RunLimit::Transactions(a.transactions),
        seed: 7,
    };
    // Same memory for both modes: pass-through gives SQLite 256 + 64 pages of cache, pool
    // mode gives the pool 256 frames and SQLite 64 pages.
    if a.parts.contains('B') {
        for w in [TPCB, TPCC] {
            let wl = parse_sql_workload(w).unwrap();
            for store in ["direct", "stable-buffer"] {
                for policy in [
                    None,
                    Some("lru"),
                    Some("cflru"),
                    Some("cfdc"),
                    Some("casa"),
                    Some("fd-buffer"),
                ] {
                    let dir = tempfile::tempdir_in(".").unwrap();
                    let opts = OpenOptions::in_dir(dir.path());
                    let opts = if policy.is_none() {
                        opts.sqlite_cache_pages(320)
                    } else {
                        opts
                    };
                    let mut db = flash_db(&a.device, store, policy.map(|p| (p, 256)), opts);
                    let r = db.run_workload(&*wl, &counted).unwrap();
                    let label = format!(
                        "{w} wal {store} {}",
                        policy.map_or("pass-through".into(), |p| format!("pool {p} 256"))
                    );
                    line(&label, &r);
                    all.push((label, r));
                    db.close().unwrap();
                }
            }
        }
    }
    println!(
        "\n## C. the rollback journal (every commit writes and syncs the store) on {}",
        a.device
    );
    if a.parts.contains('C') {
        for w in [TPCB, TPCC] {
            let wl = parse_sql_workload(w).unwrap();
            for store in ["direct", "stable-buffer"] {
                for policy in [None, Some("lru"), Some("cfdc")] {
                    let dir = tempfile::tempdir_in(".").unwrap();
                    let opts = OpenOptions::in_dir(dir.path()).journal_mode(JournalMode::Delete);
                    let opts = if policy.is_none() {
                        opts.sqlite_cache_pages(320)
                    } else {
                        opts
                    };
                    let mut db = flash_db(&a.device, store, policy.map(|p| (p, 256)), opts);
                    let r = db.run_workload(&*wl, &counted).unwrap();
                    let label = format!(
                        "{w} delete {store} {}",
                        policy.map_or("pass-through".into(), |p| format!("pool {p} 256"))
                    );
                    line(&label, &r);
                    all.push((label, r));
                    db.close().unwrap();
                }
            }
        }
    }
    println!(
        "\n## D. synchronous=OFF (no xSync: not crash-safe; the pool's policy decides every write-back) on {}",
        a.device
    );
    if a.parts.contains('D') {
        for w in [TPCB, TPCC] {
            let wl = parse_sql_workload(w).unwrap();
            for policy in [
                None,
                Some("lru"),
                Some("cflru"),
                Some("cfdc"),
                Some("casa"),
                Some("fd-buffer"),
            ] {
                let dir = tempfile::tempdir_in(".").unwrap();
                let opts = OpenOptions::in_dir(dir.path()).synchronous(Synchronous::Off);
                let opts = if policy.is_none() {
                    opts.sqlite_cache_pages(320)
                } else {
                    opts
                };
                let mut db = flash_db(&a.device, "direct", policy.map(|p| (p, 256)), opts);
                let r = db.run_workload(&*wl, &counted).unwrap();
                let label = format!(
                    "{w} off direct {}",
                    policy.map_or("pass-through".into(), |p| format!("pool {p} 256"))
                );
                line(&label, &r);
                all.push((label, r));
                db.close().unwrap();
            }
        }
    }
    if a.parts.contains('E') {
        println!(
            "\n## E. transactions/s without fsync (synchronous=OFF on both): the VFS's own cost"
        );
        tps_compare(&a, Synchronous::Off, &mut all);
    }
    if let Some(path) = a.json {
        let runs: Vec<serde_json::Value> = all
            .iter()
            .map(|(label, r)| {
                let mut v = serde_json::to_value(r).unwrap();
                v["label"] = serde_json::Value::String(label.clone());
                v
            })
            .collect();
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&serde_json::json!({ "runs": runs })).unwrap(),
        )
        .unwrap();
    }
}
