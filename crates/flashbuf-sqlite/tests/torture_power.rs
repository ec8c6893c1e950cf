//! Simulated power cuts: SQLite on every store of the store table (its crash variants) on
//! a `FaultDevice`, with its WAL or rollback journal in a `MemFs` (also fault devices),
//! runs TPC-B-like transactions; at seeded random I/O operations (any write, sync,
//! truncation or deletion, on any file) the test takes the images a power cut would leave
//! — the store's and each journal file's unsynced writes lost, kept, cut to a prefix or a
//! random subset, torn at 512 B or 4 KB with old bytes or garbage, independently per file —
//! then reopens each: `PRAGMA integrity_check` must be `ok`, the balance sums and row
//! counts must hold, every transaction whose COMMIT had returned must be there, and at
//! most the one in flight besides. Crash points per configuration:
//! `FLASHBUF_SQLITE_POWER_CUTS` (default 12).
#![allow(clippy::unwrap_used)]

use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{DeviceStats, DirtyRanges, PageId};
use flashbuf_device::fault::FaultDevice;
use flashbuf_sqlite::sql::tpcb::{history_row, last_seq, SqlTpcB, Txn};
use flashbuf_sqlite::torture::policy_by_name;
use flashbuf_sqlite::{
    Cache, Database, FlashDb, IoEvent, JournalMode, MemFs, OpenOptions, SqlWorkload,
};
use flashbuf_store::{PageStore, ReadOutcome, StoreError, StoreStats};
use flashbuf_testkit::sim::{mode_label, CrashChoice};
use flashbuf_testkit::CrashStore;
use flashbuf_workload::tpcb::TpcB;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

const PS: usize = 4096;
const TRANSACTIONS: u64 = 120;

fn cut_count() -> usize {
    std::env::var("FLASHBUF_SQLITE_POWER_CUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12)
}

/// Wraps the store the run writes through.
type Wrap = fn(Box<dyn PageStore>) -> Box<dyn PageStore>;

/// What a power cut left, and what had been promised by then.
struct Cut {
    store: Vec<u8>,
    files: MemFs,
    committed: usize,
    in_flight: Option<Txn>,
    label: String,
}

#[derive(Default)]
struct Progress {
    committed: Vec<Txn>,
    in_flight: Option<Txn>,
    cuts: Vec<Cut>,
    events: u64,
}

fn cache(mode: &str) -> Cache {
    match mode {
        "pass-through" => Cache::PassThrough,
        policy => Cache::Pool {
            frames: 24,
            policy: policy_by_name(policy, 24).unwrap(),
        },
    }
}

fn workload() -> SqlTpcB {
    SqlTpcB(TpcB {
        scale: 1,
        accounts_per_branch: 400,
    })
}

/// Runs the workload, taking crash images at seeded random I/O events.
fn run(store: &CrashStore, mode: &str, jm: JournalMode, seed: u64, wrap: Wrap) -> Vec<Cut> {
    let dev = Arc::new(FaultDevice::new(0));
    let fs = MemFs::new();
    let progress = Arc::new(Mutex::new(Progress::default()));
    let hook = {
        let (dev, fs, progress) = (dev.clone(), fs.clone(), progress.clone());
        let rng = Mutex::new(SplitMix64::new(seed));
        Arc::new(move |e: IoEvent| {
            let mut p = progress.lock().unwrap();
            p.events += 1;
            let mut rng = rng.lock().unwrap();
            if p.cuts.len() >= cut_count() || rng.below(40) != 0 {
                return;
            }
            let mode = CrashChoice::random(&mut rng).mode(dev.pending_writes());
            let mut labels = vec![format!(
                "{:?}/{:?} store:{}",
                e.file,
                e.op,
                mode_label(&mode)
            )];
            let files = fs.crash_image(|name, pending| {
                let m = CrashChoice::random(&mut rng).mode(pending);
                labels.push(format!("{name}:{}", mode_label(&m)));
                m
            });
            let cut = Cut {
                store: dev.crash_image(mode),
                files,
                committed: p.committed.len(),
                in_flight: p.in_flight,
                label: labels.join(" "),
            };
            p.cuts.push(cut);
        })
    };
    let s = wrap(store.create(Box::new(dev.clone()), PS).unwrap());
    let db = FlashDb::open(s, cache(mode)).unwrap();
    let opts = OpenOptions::in_memory(fs.clone())
        .journal_mode(jm)
        .on_io(hook);
    let mut db = Database::open(db, opts).unwrap();
    let w = workload();
    w.load(&mut db, seed).unwrap();
    let mut rng = SplitMix64::new(seed ^ 0xD1CE);
    for seq in 1..=TRANSACTIONS {
        let t = Txn::draw(&w, &mut rng, seq);
        progress.lock().unwrap().in_flight = Some(t);
        t.run(&mut db).unwrap();
        let mut p = progress.lock().unwrap();
        p.committed.push(t);
        p.in_flight = None;
    }
    let mut p = progress.lock().unwrap();
    assert!(p.events > 100, "only {} I/O events", p.events);
    let committed = p.committed.clone();
    let mut cuts = std::mem::take(&mut p.cuts);
    drop(p);
    for c in &mut cuts {
        c.in_flight = c.in_flight.filter(|t| t.seq as usize == c.committed + 1);
        assert!(c.committed <= committed.len());
    }
    cuts
}

/// Reopens a power cut's images and checks them; returns the violations.
fn verify(
    store: &CrashStore,
    mode: &str,
    jm: JournalMode,
    cut: &Cut,
    committed: &[Txn],
) -> Vec<String> {
    let dev = Arc::new(FaultDevice::from_image(cut.store.clone()));
    let s = match store.open(Box::new(dev), PS) {
        Ok(s) => s,
        Err(e) => return vec![format!("the store does not reopen: {e}")],
    };
    let db = FlashDb::open(s, cache(mode)).unwrap();
    let db = match Database::open(
        db,
        OpenOptions::in_memory(cut.files.clone()).journal_mode(jm),
    ) {
        Ok(db) => db,
        Err(e) => return vec![format!("SQLite does not open the database: {e}")],
    };
    let mut v = Vec::new();
    let ok: String = match db.query_row("PRAGMA integrity_check", [], |r| r.get(0)) {
        Ok(s) => s,
        Err(e) => return vec![format!("integrity_check failed: {}", db.explain(e))],
    };
    if ok != "ok" {
        v.push(format!("integrity_check: {ok}"));
    }
    let loaded: bool = match db.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'pgbench_history'",
        [],
        |r| r.get(0),
    ) {
        Ok(b) => b,
        Err(e) => return vec![format!("the schema does not read: {}", db.explain(e))],
    };
    if !loaded {
        if cut.committed > 0 {
            v.push("the load is gone".into());
        }
        return v;
    }
    match workload().check(&db) {
        Ok(c) => v.extend(c.failed),
        Err(e) => return vec![format!("the consistency check fails: {e}")],
    }
    for t in &committed[..cut.committed] {
        if history_row(&db, t.seq).ok() != Some(Some(*t)) {
            v.push(format!("committed transaction {} lost", t.seq));
        }
    }
    let n = last_seq(&db).unwrap_or(u64::MAX) as usize;
    let extra_ok = n == cut.committed || (n == cut.committed + 1 && cut.in_flight.is_some());
    if !extra_ok {
        v.push(format!(
            "{n} transactions after a cut with {} committed",
            cut.committed
        ));
    }
    db.flash().check_invariants().unwrap();
    v
}

#[test]
fn power_cuts_through_the_fault_device_lose_no_commit() {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut seed = 0x0014_5EED;
    for store in CrashStore::variants().unwrap() {
        for mode in ["pass-through", "lru", "cfdc"] {
            for jm in [JournalMode::Wal, JournalMode::Delete] {
                seed += 1;
                let cuts = run(&store, mode, jm, seed, |s| s);
                // The transactions as committed: rerun the draws.
                let w = workload();
                let mut rng = SplitMix64::new(seed ^ 0xD1CE);
                let committed: Vec<Txn> = (1..=TRANSACTIONS)
                    .map(|s| Txn::draw(&w, &mut rng, s))
                    .collect();
                assert!(
                    cuts.len() >= cut_count().min(3),
                    "{}: {} cuts",
                    store.name,
                    cuts.len()
                );
                for cut in &cuts {
                    let v = verify(&store, mode, jm, cut, &committed);
                    assert!(
                        v.is_empty(),
                        "{} {mode} {jm:?} seed {seed}, cut after {} commits ({}): {v:?}",
                        store.name,
                        cut.committed,
                        cut.label
                    );
                }
                let key = format!("{} {mode} {jm:?}", store.name);
                println!("{key}: {} power cuts survived", cuts.len());
                *counts.entry(key).or_default() += cuts.len();
            }
        }
    }
    let total: usize = counts.values().sum();
    println!("{total} power cuts survived, 0 failed integrity checks, 0 lost commits");
}

/// A store whose `sync` returns without syncing: the power cuts must catch it.
struct LyingSync(Box<dyn PageStore>);

impl PageStore for LyingSync {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn page_size(&self) -> usize {
        self.0.page_size()
    }
    fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
        self.0.read_page(pid, buf)
    }
    fn write_page(&self, pid: PageId, page: &[u8], dirty: &DirtyRanges) -> Result<(), StoreError> {
        self.0.write_page(pid, page, dirty)
    }
    fn sync(&self) -> Result<(), StoreError> {
        Ok(())
    }
    fn stats(&self) -> StoreStats {
        self.0.stats()
    }
    fn device_stats(&self) -> DeviceStats {
        self.0.device_stats()
    }
}

#[test]
fn meta_a_store_that_skips_sync_is_caught() {
    let store = &CrashStore::variants().unwrap()[0];
    let mut caught = 0;
    for (seed, jm) in [(1, JournalMode::Wal), (2, JournalMode::Delete)] {
        let cuts = run(store, "pass-through", jm, seed, |s| Box::new(LyingSync(s)));
        let w = workload();
        let mut rng = SplitMix64::new(seed ^ 0xD1CE);
        let committed: Vec<Txn> = (1..=TRANSACTIONS)
            .map(|s| Txn::draw(&w, &mut rng, s))
            .collect();
        caught += cuts
            .iter()
            .filter(|c| !verify(store, "pass-through", jm, c, &committed).is_empty())
            .count();
    }
    assert!(caught > 0, "no power cut caught a store that never syncs");
}
