//! Open, write, reopen: SQLite on a store in both cache modes and both journal modes.
#![allow(clippy::unwrap_used)]

use flashbuf_core::page::{self, PageState};
use flashbuf_core::PageId;
use flashbuf_device::fault::FaultDevice;
use flashbuf_device::Device;
use flashbuf_pool::policy::Lru;
use flashbuf_sqlite::{
    store_on, AuxFiles, Cache, Database, FlashDb, FlashVfs, JournalMode, MemFs, OpenOptions,
};
use flashbuf_store::registry::StoreContext;
use std::sync::Arc;

const PS: usize = 4096;

fn cache(pool: bool) -> Cache {
    if pool {
        Cache::Pool {
            frames: 32,
            policy: Box::new(Lru::new(32)),
        }
    } else {
        Cache::PassThrough
    }
}

fn open(
    dev: &Arc<FaultDevice>,
    fs: &MemFs,
    spec: &str,
    create: bool,
    pool: bool,
    jm: JournalMode,
) -> Database {
    let store = store_on(spec, Box::new(dev.clone()), &StoreContext::new(PS), create).unwrap();
    let db = FlashDb::open(store, cache(pool)).unwrap();
    Database::open(db, OpenOptions::in_memory(fs.clone()).journal_mode(jm)).unwrap()
}

fn integrity(db: &Database) -> String {
    db.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn rows_survive_close_and_reopen_in_every_mode() {
    for spec in ["direct", "stable-buffer:slots=16"] {
        for pool in [false, true] {
            for jm in [JournalMode::Wal, JournalMode::Delete] {
                let dev = Arc::new(FaultDevice::new(0));
                let fs = MemFs::new();
                let db = open(&dev, &fs, spec, true, pool, jm);
                db.execute_batch(
                    "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);
                     CREATE INDEX tv ON t(v);",
                )
                .unwrap();
                {
                    let mut db = db;
                    let tx = db.transaction().unwrap();
                    for k in 0..3000 {
                        tx.execute(
                            "INSERT INTO t VALUES (?1, ?2)",
                            (k as i64, format!("value-{k:06}-{}", "x".repeat(k % 50))),
                        )
                        .unwrap();
                    }
                    tx.commit().unwrap();
                    assert_eq!(integrity(&db), "ok");
                    db.flash().check_invariants().unwrap();
                    assert!(db.flash().stats().db_pages > 10 || jm == JournalMode::Wal);
                    db.close().unwrap();
                }
                let db = open(&dev, &fs, spec, false, pool, jm);
                let n: i64 = db
                    .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                    .unwrap();
                let v: String = db
                    .query_row("SELECT v FROM t WHERE k = 2999", [], |r| r.get(0))
                    .unwrap();
                assert_eq!(n, 3000, "{spec} pool={pool} {jm:?}");
                assert!(v.starts_with("value-002999-"));
                assert_eq!(integrity(&db), "ok");
                let ps: i64 = db.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
                assert_eq!(ps as usize, PS);
                db.close().unwrap();
            }
        }
    }
}

#[test]
fn the_header_sits_in_sqlites_reserved_bytes() {
    let dev = Arc::new(FaultDevice::new(0));
    let fs = MemFs::new();
    let db = open(&dev, &fs, "direct", true, false, JournalMode::Delete);
    db.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (zeroblob(100000));")
        .unwrap();
    let pages = db.flash().stats().db_pages;
    db.close().unwrap();
    // Read SQLite's page 1 back from the store: a sealed flashbuf page whose payload is
    // SQLite's usable bytes, declaring 32 reserved bytes.
    let store = store_on(
        "direct",
        Box::new(dev.clone()),
        &StoreContext::new(PS),
        false,
    )
    .unwrap();
    let mut buf = vec![0u8; PS];
    for n in 1..=pages {
        let pid = flashbuf_sqlite::layout::page_id(n - 1);
        store.read_page(pid, &mut buf).unwrap();
        match page::check(&buf, pid).unwrap() {
            PageState::Sealed(h) => assert_eq!(h.page_id, pid),
            PageState::Unwritten => panic!("page {n} never written"),
        }
        if n == 1 {
            assert_eq!(&buf[32..48], b"SQLite format 3\0");
            assert_eq!(buf[32 + 20], 32, "32 reserved bytes");
        }
    }
    store.read_page(PageId(0), &mut buf).unwrap();
    assert!(dev.len() > 0);
}

#[test]
fn a_database_without_the_reserved_bytes_is_refused() {
    use flashbuf_sqlite::rusqlite::{Connection, OpenFlags};
    // A raw connection through the VFS, without the setup Database::open does: SQLite
    // would use the bytes flashbuf's header needs, so its first page write is refused.
    let dev = Arc::new(FaultDevice::new(0));
    let fs = MemFs::new();
    let db = open(&dev, &fs, "direct", true, false, JournalMode::Delete);
    let name = db.vfs_name().to_string();
    // The database is open: a second connection is refused.
    let second =
        Connection::open_with_flags_and_vfs("flashbuf.db", OpenFlags::default(), name.as_str());
    let err = match second {
        Ok(c) => c
            .execute_batch("CREATE TABLE t(x)")
            .unwrap_err()
            .to_string(),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("unable to open"), "{err}");
    assert!(db.flash().last_error().unwrap().contains("already open"));
    db.close().unwrap();

    let store = store_on(
        "direct",
        Box::new(Arc::new(FaultDevice::new(0))),
        &StoreContext::new(PS),
        true,
    )
    .unwrap();
    let flash = Arc::new(FlashDb::open(store, Cache::PassThrough).unwrap());
    let vfs = FlashVfs::new(flash.clone(), AuxFiles::Memory(MemFs::new()), None).unwrap();
    let again = FlashVfs::new(flash.clone(), AuxFiles::Memory(MemFs::new()), None);
    assert!(again.err().unwrap().to_string().contains("already served"));
    // A raw connection without the reserved bytes: SQLite would use the bytes flashbuf's
    // header needs, so its first write of page 1 is refused.
    let c =
        Connection::open_with_flags_and_vfs("raw.db", OpenFlags::default(), vfs.name()).unwrap();
    c.execute_batch("PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=DELETE")
        .unwrap();
    let err = c
        .execute_batch("CREATE TABLE t(x)")
        .unwrap_err()
        .to_string();
    assert!(err.contains("I/O error"), "{err}");
    let why = flash.last_error().unwrap();
    assert!(why.contains("reserves 0 bytes"), "{why}");
    drop(c);
    drop(vfs);
}
