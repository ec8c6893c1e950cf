//! The SQL workloads on flashbuf (both cache modes, both journal modes) and on SQLite's
//! default VFS: they run, their consistency conditions hold, and a broken database is
//! caught by them.
#![allow(clippy::unwrap_used)]

use flashbuf_device::MemDevice;
use flashbuf_pool::policy::Lru;
use flashbuf_sqlite::rusqlite::Connection;
use flashbuf_sqlite::{
    parse_sql_workload, run_sql, store_on, Cache, Database, FlashDb, JournalMode, MemFs,
    OpenOptions,
};
use flashbuf_store::registry::StoreContext;
use flashbuf_workload::{RunConfig, RunLimit};

const TPCC: &str = "tpcc:warehouses=2,items=200,customers=30";
const TPCB: &str = "tpcb:scale=2,accounts=500";

fn flash_db(pool: bool, jm: JournalMode) -> Database {
    let store = store_on(
        "direct",
        Box::new(MemDevice::new(0)),
        &StoreContext::new(4096),
        true,
    )
    .unwrap();
    let cache = if pool {
        Cache::Pool {
            frames: 64,
            policy: Box::new(Lru::new(64)),
        }
    } else {
        Cache::PassThrough
    };
    let db = FlashDb::open(store, cache).unwrap();
    Database::open(db, OpenOptions::in_memory(MemFs::new()).journal_mode(jm)).unwrap()
}

fn cfg(n: u64) -> RunConfig {
    RunConfig {
        threads: 1,
        limit: RunLimit::Transactions(n),
        seed: 11,
    }
}

#[test]
fn tpcb_and_tpcc_run_consistently_on_flashbuf_and_on_the_default_vfs() {
    for spec in [TPCB, TPCC] {
        let w = parse_sql_workload(spec).unwrap();
        for (pool, jm) in [
            (false, JournalMode::Wal),
            (true, JournalMode::Wal),
            (true, JournalMode::Delete),
        ] {
            let mut db = flash_db(pool, jm);
            let r = db.run_workload(&*w, &cfg(300)).unwrap();
            assert_eq!(r.transactions, 300);
            assert!(
                r.consistency.ok(),
                "{spec} pool={pool}: {:?}",
                r.consistency.failed
            );
            assert!(r.consistency.checked.len() >= 3);
            let f = r.flash.unwrap();
            assert!(f.vfs.writes > 0 && f.device.writes > 0, "{spec}: {f:?}");
            let ok: String = db
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(ok, "ok");
            db.close().unwrap();
        }
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("plain.db")).unwrap();
        conn.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL")
            .unwrap();
        let r = run_sql(&*w, &mut conn, None, &cfg(300)).unwrap();
        assert!(r.consistency.ok(), "{:?}", r.consistency.failed);
        assert_eq!(r.engine, "sqlite-default-vfs");
        assert!(r.flash.is_none() && r.tps_device.is_none());
    }
}

#[test]
fn broken_data_fails_the_conditions() {
    let dir = tempfile::tempdir().unwrap();
    let mut conn = Connection::open(dir.path().join("c.db")).unwrap();
    let w = parse_sql_workload(TPCC).unwrap();
    run_sql(&*w, &mut conn, None, &cfg(50)).unwrap();
    conn.execute_batch(
        "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1;
         UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 2 AND d_id = 3;
         DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 1
           AND no_o_id = (SELECT min(no_o_id) + 1 FROM new_order WHERE no_w_id = 1 AND no_d_id = 1);
         DELETE FROM order_line WHERE ol_w_id = 2 AND ol_d_id = 2 AND ol_o_id = 1 AND ol_number = 1;",
    )
    .unwrap();
    let c = w.check(&conn).unwrap();
    assert_eq!(c.failed.len(), 4, "{:?}", c.failed);
    let b = parse_sql_workload(TPCB).unwrap();
    let mut conn = Connection::open(dir.path().join("b.db")).unwrap();
    run_sql(&*b, &mut conn, None, &cfg(50)).unwrap();
    conn.execute_batch("UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 3; DELETE FROM pgbench_history WHERE mtime = 7")
        .unwrap();
    let c = b.check(&conn).unwrap();
    assert_eq!(c.failed.len(), 2, "{:?}", c.failed);
}
