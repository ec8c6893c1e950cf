#![allow(clippy::unwrap_used)]
//! The log-structured store against a `HashMap` model of page contents, under proptest:
//! writes, overwrites, batches, syncs and reopens, with every cleaner, small segments and
//! a nearly full store so that cleaning and checkpoints run often. Invariants (map ↔
//! summaries ↔ usage counts) are checked after every op; memory per page is bounded.

use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::MemDevice;
use flashbuf_store::log_store::{CleanerConfig, CleanerKind, LogStore, LogStoreConfig, TimeBase};
use flashbuf_store::{PageStore, PageWrite, ReadOutcome, StoreError};
use flashbuf_testkit::content::{filled_page, matches_fill};
use proptest::prelude::*;
use std::collections::HashMap;

const PS: usize = 512;
const SEED: u64 = 0x10c;

fn config(kind: CleanerKind, segments: u64, pages: u64) -> LogStoreConfig {
    LogStoreConfig {
        segment_bytes: 16 * PS as u64,
        capacity_bytes: Some(16 * PS as u64 * (segments + 4)),
        logical_pages: Some(pages),
        align_bytes: PS as u64,
        cleaner: CleanerConfig {
            kind,
            cleaning_interval_ticks: 8.0,
            segments_per_clean: 2,
            protection_period_ticks: 4.0,
            min_free_segments: Some(2),
            max_free_segments: Some(4),
            background: true,
            queue: Default::default(),
        },
        time_base: TimeBase::Writes,
        checkpoint_segments: Some(3),
        salt: Some(7),
        ..LogStoreConfig::with_page_size(PS)
    }
}

#[derive(Debug, Clone)]
enum Op {
    Write(u64),
    Batch(Vec<u64>),
    Read(u64),
    Sync,
    Checkpoint,
    Reopen,
}

fn op(pages: u64) -> impl Strategy<Value = Op> {
    let hot = (pages / 5).max(1);
    let page = prop_oneof![3 => 0..hot, 1 => 0..pages];
    prop_oneof![
        12 => page.clone().prop_map(Op::Write),
        2 => prop::collection::vec(page.clone(), 1..12).prop_map(Op::Batch),
        4 => page.prop_map(Op::Read),
        2 => Just(Op::Sync),
        1 => Just(Op::Checkpoint),
        1 => Just(Op::Reopen),
    ]
}

fn check_page(
    store: &dyn PageStore,
    model: &HashMap<u64, u64>,
    pid: u64,
) -> Result<(), TestCaseError> {
    let mut buf = vec![0u8; PS];
    let r = store.read_page(PageId(pid), &mut buf).unwrap();
    match model.get(&pid) {
        None => prop_assert_eq!(r, ReadOutcome::Unwritten),
        Some(&tag) => {
            prop_assert_eq!(r, ReadOutcome::Found);
            prop_assert!(
                matches_fill(&buf[32..], PageId(pid), tag, SEED),
                "page {} is not write {}",
                pid,
                tag
            );
        }
    }
    Ok(())
}

/// Just enough segments for `pages` (at most 15 data blocks each) besides the reserve and
/// the open segments, and two to spare: the store is nearly full.
fn segments_for(kind: CleanerKind, pages: u64) -> u64 {
    pages.div_ceil(15) + u64::from(2 + kind.heads()) + 2
}

/// Runs `ops`; returns the segments the cleaner cleaned over the whole run and the copies
/// it redirected to another head.
fn run(kind: CleanerKind, ops: &[Op], pages: u64) -> Result<(u64, u64), TestCaseError> {
    let cfg = config(kind, segments_for(kind, pages), pages);
    let mut store = LogStore::create(MemDevice::new(0), cfg.clone()).unwrap();
    let mut model: HashMap<u64, u64> = HashMap::new();
    let mut tag = 0u64;
    let mut cleaned = 0;
    let mut redirected = 0;
    for op in ops {
        match op {
            Op::Write(pid) => {
                tag += 1;
                let p = filled_page(PS, PageId(*pid), tag, SEED);
                store
                    .write_page(PageId(*pid), &p, &DirtyRanges::full(PS))
                    .unwrap();
                model.insert(*pid, tag);
            }
            Op::Batch(pids) => {
                let mut pages_ = Vec::new();
                let mut seen = Vec::new();
                for &pid in pids {
                    if !seen.contains(&pid) {
                        seen.push(pid);
                        tag += 1;
                        pages_.push((pid, tag, filled_page(PS, PageId(pid), tag, SEED)));
                    }
                }
                let batch: Vec<PageWrite<'_>> = pages_
                    .iter()
                    .map(|(pid, _, p)| PageWrite {
                        pid: PageId(*pid),
                        page: p,
                        dirty: DirtyRanges::full(PS),
                    })
                    .collect();
                store.write_pages(&batch).unwrap();
                for (pid, t, _) in &pages_ {
                    model.insert(*pid, *t);
                }
            }
            Op::Read(pid) => check_page(&store, &model, *pid)?,
            Op::Sync => store.sync().unwrap(),
            Op::Checkpoint => store.checkpoint().unwrap(),
            Op::Reopen => {
                // The memory device keeps every completed write: reopening sees them all.
                cleaned += store.log_stats().segments_cleaned;
                redirected += store.log_stats().redirected_copies;
                store = LogStore::open(store.into_device(), cfg.clone()).unwrap();
                prop_assert!(store.recovery_report().is_some());
            }
        }
        store
            .check_invariants()
            .map_err(|e| TestCaseError::fail(format!("after {op:?}: {e}")))?;
    }
    for pid in 0..pages {
        check_page(&store, &model, pid)?;
    }
    prop_assert_eq!(store.live_pages(), model.len() as u64);
    let mem = store.memory();
    prop_assert!(
        mem.map_bytes_per_page <= 8.0 && mem.per_page_bytes <= 8.0,
        "{:?}",
        mem
    );
    let s = store.log_stats();
    Ok((
        cleaned + s.segments_cleaned,
        redirected + s.redirected_copies,
    ))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_cleaner_matches_the_model(
        kind in prop::sample::select(CleanerKind::ALL.to_vec()),
        ops in prop::collection::vec(op(120), 1..400),
    ) {
        run(kind, &ops, 120)?;
    }
}

/// Long runs of overwrites at high utilisation: the cleaner has to work hard, and the
/// model still holds after every reopen.
#[test]
fn long_overwrite_runs_with_reopens() {
    use flashbuf_core::rng::SplitMix64;
    for kind in CleanerKind::ALL {
        let mut rng = SplitMix64::new(kind as u64 + 1);
        let pages = 130;
        let ops: Vec<Op> = (0..6000)
            .map(|i| match (i % 997, rng.below(100)) {
                (996, _) => Op::Reopen,
                (_, 0..=1) => Op::Sync,
                (_, 2..=79) => Op::Write(if rng.below(4) == 0 {
                    rng.below(pages)
                } else {
                    rng.below(30)
                }),
                (_, 80..=84) => {
                    Op::Batch((0..rng.below(10) + 1).map(|_| rng.below(pages)).collect())
                }
                _ => Op::Read(rng.below(pages)),
            })
            .collect();
        let (cleaned, redirected) =
            run(kind, &ops, pages).unwrap_or_else(|e| panic!("cleaner {}: {e}", kind.name()));
        eprintln!(
            "{}: {cleaned} segments cleaned, {redirected} copies redirected",
            kind.name()
        );
        assert!(
            cleaned > 100,
            "cleaner {}: only {cleaned} segments cleaned",
            kind.name()
        );
    }
}

/// Page ids beyond the store, and more pages than fit, are refused as `Full` before any
/// I/O and without poisoning; the store keeps working.
#[test]
fn refusals_do_not_poison() {
    let cfg = config(CleanerKind::Greedy, 12, 1000);
    let store = LogStore::create(MemDevice::new(0), cfg).unwrap();
    let p = filled_page(PS, PageId(5000), 1, SEED);
    let e = store
        .write_page(PageId(5000), &p, &DirtyRanges::full(PS))
        .unwrap_err();
    assert!(
        matches!(e, StoreError::Full(_)) && e.to_string().contains("page ids"),
        "{e}"
    );
    let mut full = None;
    for pid in 0..1000 {
        let p = filled_page(PS, PageId(pid), 1, SEED);
        if let Err(e) = store.write_page(PageId(pid), &p, &DirtyRanges::full(PS)) {
            full = Some((pid, e));
            break;
        }
    }
    let (pid, e) = full.unwrap();
    assert!(
        matches!(e, StoreError::Full(_)) && e.to_string().contains("holds at most"),
        "{e}"
    );
    assert!(pid >= 100, "refused after {pid} pages");
    let p = filled_page(PS, PageId(0), 2, SEED);
    store
        .write_page(PageId(0), &p, &DirtyRanges::full(PS))
        .unwrap();
    store.sync().unwrap();
    store.check_invariants().unwrap();
    let mut buf = vec![0u8; PS];
    assert_eq!(
        store.read_page(PageId(999_999), &mut buf).unwrap(),
        ReadOutcome::Unwritten
    );
}
