#![allow(clippy::unwrap_used)]
//! ICL against a `HashMap` model of page contents (proptest): whole and partial page
//! writes, the partial ones given to the store only as dirty ranges, in single writes and
//! batches; reads; syncs; clean reopens; crashes that lose everything unsynced. Every read
//! must return exactly the model's bytes — after a crash, a page written since the last
//! sync may come back as any version written since (log-space merges sync on their own),
//! and the model takes what it reads — and the store's invariants must hold after every
//! step — over page sizes, WOB sizes, log-space sizes, double-write slots and thresholds
//! chosen so that flushes, copy-forwards, merges at the threshold and log-space merges
//! all happen (checked in aggregate).
//!
//! `FLASHBUF_ICL_CASES=N` raises the number of cases (soak).

mod icl_support;

use flashbuf_core::PageId;
use flashbuf_device::fault::{CrashMode, FaultDevice};
use flashbuf_store::icl::{IclConfig, IclStats, IclStore};
use flashbuf_store::{PageStore, PageWrite, ReadOutcome};
use icl_support::{config, Model};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// A page, its edits (payload offset, length), a seed.
type PageEdit = (u8, Vec<(usize, usize)>, u64);

#[derive(Debug, Clone)]
enum Op {
    /// Edit `edits` (payload offset, length) of a page, or rewrite it whole.
    Write {
        page: u8,
        edits: Vec<(usize, usize)>,
        whole: bool,
        seed: u64,
    },
    Batch(Vec<PageEdit>),
    Read(u8),
    Sync,
    /// Sync, drop the store, open it again.
    Reopen,
    /// Power cut losing everything unsynced, then open.
    Crash,
}

fn edits() -> impl Strategy<Value = Vec<(usize, usize)>> {
    prop::collection::vec(
        (
            0usize..65536,
            prop_oneof![1usize..16, 1usize..200, 1usize..900],
        ),
        1..4,
    )
}

fn op(pages: u8) -> impl Strategy<Value = Op> {
    let page = prop_oneof![0..pages.min(4), 0..pages];
    prop_oneof![
        10 => (page.clone(), edits(), prop::bool::weighted(0.1), any::<u64>())
            .prop_map(|(page, edits, whole, seed)| Op::Write { page, edits, whole, seed }),
        2 => prop::collection::vec((page.clone(), edits(), any::<u64>()), 1..6).prop_map(Op::Batch),
        4 => page.prop_map(Op::Read),
        1 => Just(Op::Sync),
        1 => Just(Op::Reopen),
        1 => Just(Op::Crash),
    ]
}

fn scenario() -> impl Strategy<Value = (IclConfig, u8, Vec<Op>)> {
    (
        prop::sample::select(vec![512usize, 4096]),
        1u64..4,
        2u32..12,
        1u32..4,
        prop::sample::select(vec![0.2f64, 0.5, 0.9]),
        2u8..40,
    )
        .prop_flat_map(|(ps, wob, log, dw, thr, pages)| {
            let cfg = IclConfig {
                merge_threshold: thr,
                ..config(ps, wob, log, dw)
            };
            (
                Just(cfg),
                Just(pages),
                prop::collection::vec(op(pages), 1..120),
            )
        })
}

fn cases() -> u32 {
    std::env::var("FLASHBUF_ICL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

type Store = IclStore<Arc<FaultDevice>>;

fn check(store: &Store, what: &str) -> Result<(), TestCaseError> {
    store
        .check_invariants()
        .map_err(|e| TestCaseError::fail(format!("after {what}: {e}")))
}

/// Runs `ops`; returns the counters summed over every store opened.
fn run(cfg: IclConfig, ops: &[Op]) -> Result<IclStats, TestCaseError> {
    let ps = cfg.page_size;
    let dev = Arc::new(FaultDevice::new(0));
    let mut store = IclStore::create(dev.clone(), cfg).unwrap();
    let mut dev = dev;
    let mut model = Model::new(ps);
    let mut synced = model.clone();
    // Versions of each page written since the last sync.
    let mut since: HashMap<PageId, Vec<Vec<u8>>> = HashMap::new();
    let mut total = IclStats::default();
    let mut buf = vec![0u8; ps];
    for (i, op) in ops.iter().enumerate() {
        let what = format!("op #{i} {op:?}");
        match op {
            Op::Write {
                page,
                edits,
                whole,
                seed,
            } => {
                let pid = PageId(u64::from(*page));
                let (p, d) = if *whole {
                    model.whole(pid, *seed)
                } else {
                    model.edit(pid, edits, *seed)
                };
                store.write_page(pid, &p, &d).unwrap();
                since.entry(pid).or_default().push(p);
            }
            Op::Batch(w) => {
                let mut seen = Vec::new();
                let mut pages = Vec::new();
                for (page, edits, seed) in w {
                    let pid = PageId(u64::from(*page));
                    if !seen.contains(&pid) {
                        seen.push(pid);
                        pages.push((pid, model.edit(pid, edits, *seed)));
                    }
                }
                let batch: Vec<PageWrite<'_>> = pages
                    .iter()
                    .map(|(pid, (p, d))| PageWrite {
                        pid: *pid,
                        page: p,
                        dirty: *d,
                    })
                    .collect();
                store.write_pages(&batch).unwrap();
                for (pid, (p, _)) in pages {
                    since.entry(pid).or_default().push(p);
                }
            }
            Op::Read(page) => {
                let pid = PageId(u64::from(*page));
                store.read_page(pid, &mut buf).unwrap();
                let want = model
                    .pages
                    .get(&pid)
                    .cloned()
                    .unwrap_or_else(|| vec![0u8; ps]);
                prop_assert!(buf == want, "{what}: {pid} reads other bytes");
            }
            Op::Sync => {
                store.sync().unwrap();
                synced = model.clone();
                since.clear();
            }
            Op::Reopen | Op::Crash => {
                if matches!(op, Op::Reopen) {
                    store.sync().unwrap();
                    synced = model.clone();
                    since.clear();
                }
                total = add(total, store.icl_stats());
                let img = dev.crash_image(CrashMode::LoseUnsynced);
                drop(store);
                dev = Arc::new(FaultDevice::from_image(img));
                store = IclStore::open(dev.clone(), cfg)
                    .map_err(|e| TestCaseError::fail(format!("{what}: reopen: {e}")))?;
                check(&store, &what)?;
                // Synced pages exact; pages written since: the synced state or any version
                // written since. The model continues from what the store holds.
                let versions = model.versions.clone();
                model = synced.clone();
                model.versions = versions;
                for (pid, written) in since.drain() {
                    let r = store.read_page(pid, &mut buf).unwrap();
                    let old = synced.pages.get(&pid);
                    let ok = match r {
                        ReadOutcome::Unwritten => old.is_none(),
                        ReadOutcome::Found => old == Some(&buf) || written.contains(&buf),
                    };
                    prop_assert!(ok, "{what}: {pid} reads bytes of no write ({r:?})");
                    if r == ReadOutcome::Found {
                        model.pages.insert(pid, buf.clone());
                    } else {
                        model.pages.remove(&pid);
                    }
                }
                synced = model.clone();
                model.verify(&store, &[PageId(200)]);
            }
        }
        check(&store, &what)?;
    }
    model.verify(&store, &[PageId(201)]);
    Ok(add(total, store.icl_stats()))
}

fn add(a: IclStats, b: IclStats) -> IclStats {
    let mut out = a;
    out.log_writes += b.log_writes;
    out.copy_forwards += b.copy_forwards;
    out.merges_threshold += b.merges_threshold;
    out.merges_bulk += b.merges_bulk;
    out.dw_writes += b.dw_writes;
    out.tombstones_written += b.tombstones_written;
    out.resolutions += b.resolutions;
    out.data_writes_whole += b.data_writes_whole;
    out.log_reads += b.log_reads;
    out
}

#[test]
fn icl_reads_back_exactly_what_the_model_holds() {
    let total = RefCell::new(IclStats::default());
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/icl_model.proptest-regressions",
        ))),
        ..Config::default()
    });
    runner
        .run(&scenario(), |(cfg, _pages, ops)| {
            let s = run(cfg, &ops)?;
            let t = add(*total.borrow(), s);
            *total.borrow_mut() = t;
            Ok(())
        })
        .unwrap();
    let t = total.into_inner();
    eprintln!("icl model: {t:?}");
    // The cases must reach every part of the write path.
    assert!(
        t.log_writes > 0
            && t.copy_forwards > 0
            && t.merges_threshold > 0
            && t.merges_bulk > 0
            && t.dw_writes > 0
            && t.tombstones_written > 0
            && t.resolutions > 0
            && t.log_reads > 0,
        "{t:?}"
    );
}
