#![allow(clippy::unwrap_used)]
//! Crash suite in metadata-only mode (`--data none`, issue 17): every crash variant of every
//! store whose table entry takes the mode runs seeded op sequences on 64-byte metadata
//! pages — single and batched writes, reads, syncs, crashes under every crash mode of the
//! fault device (lose unsynced, keep all, prefixes and subsets, torn at 512 B / 4 KB with
//! old bytes or garbage) — against the same model as the bytes suite (`crash_sim.rs`):
//! synced pages exact, later pages old or new or reported corrupt, no phantoms. A store that
//! refuses the mode is refused by name, with its reason.
//!
//! The devices see whole-page requests here (the fault device keeps a byte image: a head
//! request goes down as the whole page, head then zeros), so a crash tears the page as it
//! tears a page of bytes.

use flashbuf_core::rng::SplitMix64;
use flashbuf_core::DataMode;
use flashbuf_testkit::sim::{random_ops, run, store_front, torn_overwrites};
use flashbuf_testkit::sim::{SimConfig, SimReport};
use flashbuf_testkit::CrashStore;

/// Crash points each store must reach.
const MIN_CRASH_POINTS: u64 = 1_000;

fn metadata_variants() -> Vec<CrashStore> {
    let all = CrashStore::variants().unwrap();
    let v: Vec<CrashStore> = all
        .iter()
        .filter(|s| s.takes_metadata())
        .map(|s| s.with_data(DataMode::Metadata).unwrap())
        .collect();
    // Direct, both StableBuffer variants and the log store at least.
    assert!(v.len() >= 4, "{v:?}");
    v
}

#[test]
fn every_metadata_store_keeps_synced_pages_and_returns_old_or_new_after_any_crash() {
    for factory in &metadata_variants() {
        let mut t = SimReport::default();
        for scenario in 0..32u64 {
            let mut rng = SplitMix64::new(0xDA7A ^ scenario);
            let pages = 2 + rng.below(22) as u32;
            let n = 10 + rng.below(70) as usize;
            let ops = random_ops(&mut rng, pages, n);
            let cfg = SimConfig {
                page_size: [4096, 8192][scenario as usize % 2],
                pages,
                fanout: 8,
                seed: scenario,
            };
            match run(factory, &store_front, &cfg, &ops) {
                Ok(r) => t.add(&r),
                Err(e) => panic!("{e}"),
            }
        }
        eprintln!(
            "metadata crash suite, store '{}': {} scenarios, {} crash points, {} reads judged \
             (synced {}, old {}, newest {}, corrupt-after-unsynced {}); by mode {:?}",
            factory.name,
            t.scenarios,
            t.crash_points,
            t.pages_checked,
            t.synced,
            t.old,
            t.newest,
            t.corrupt_unsynced,
            t.by_mode
        );
        assert!(
            t.crash_points >= MIN_CRASH_POINTS,
            "store '{}': only {} crash points",
            factory.name,
            t.crash_points
        );
        assert!(t.old > 0 && t.newest > 0 && t.synced > 0, "{t:?}");
        if factory.masks_torn_writes {
            assert_eq!(t.corrupt_unsynced, 0, "{}: {t:?}", factory.name);
        }
        assert!(t.by_mode.len() >= 10, "modes covered: {:?}", t.by_mode);
    }
}

/// A synced page rewritten and torn by a crash reads as its old head, its new head, or a
/// corrupt-page error — never as anything else — for every tear shape and many seeds.
#[test]
fn a_torn_overwrite_of_a_synced_metadata_page_is_old_new_or_corrupt() {
    for factory in &metadata_variants() {
        let total = torn_overwrites(factory, 8192).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            total.old > 0 && total.newest > 0,
            "{}: {total:?}",
            factory.name
        );
    }
}

/// The crash configurations name the mode, and a store that does not take it is refused
/// with the table's reason (ICL, until its log records can carry lengths only).
#[test]
fn the_mode_is_named_and_refused_where_the_table_refuses_it() {
    for s in CrashStore::variants().unwrap() {
        match s.with_data(DataMode::Metadata) {
            Ok(m) => {
                assert!(s.takes_metadata());
                assert_eq!(m.name, format!("{} (--data none)", s.name));
                assert_eq!(m.with_data(DataMode::Bytes).unwrap().name, s.name);
            }
            Err(e) => {
                assert!(!s.takes_metadata());
                assert!(e.to_string().contains("--data none"), "{e}");
            }
        }
    }
}
