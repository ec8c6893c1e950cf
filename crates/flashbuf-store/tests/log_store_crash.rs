#![allow(clippy::unwrap_used)]
//! Crash points inside cleaning and checkpoints: the log-structured store with tiny
//! segments (4 blocks) in a tiny space, so that foreground cleaning, pre-free segments and
//! checkpoints happen every few writes, with a one-log rule (greedy) and SepBIT's six
//! logs, through the shared crash harness (every crash mode, torn writes) and through a
//! buffer pool. The store in `STORES` runs the big suite (`crash_sim.rs`); this file
//! stresses the cleaner under crashes.

use flashbuf_core::rng::SplitMix64;
use flashbuf_store::log_store::{CleanerConfig, CleanerKind, LogStore, LogStoreConfig, TimeBase};
use flashbuf_store::{PageStore, Superblock};
use flashbuf_testkit::fronts::store_front;
use flashbuf_testkit::sim::{random_ops, run, SimConfig, SimReport};
use flashbuf_testkit::CrashStore;

fn tiny(ps: usize, kind: CleanerKind) -> LogStoreConfig {
    LogStoreConfig {
        segment_bytes: 4 * ps as u64,
        // 20 segments of 3 data blocks beside the superblock and the checkpoint slots.
        capacity_bytes: Some(Superblock::reserved_bytes(ps) + 16 * ps as u64 + 20 * 4 * ps as u64),
        logical_pages: Some(40),
        align_bytes: ps as u64,
        cleaner: CleanerConfig {
            kind,
            cleaning_interval_ticks: 3.0,
            segments_per_clean: 1,
            protection_period_ticks: 1.0,
            min_free_segments: Some(4),
            max_free_segments: Some(6),
            background: true,
            queue: Default::default(),
        },
        time_base: TimeBase::Writes,
        checkpoint_segments: Some(3),
        salt: Some(0xc7a5),
        ..LogStoreConfig::with_page_size(ps)
    }
}

/// The tiny store of the test below as a spec of the store table: 20 segments of 4
/// blocks (3 data blocks and the summary), 40 page ids, page-aligned.
fn tiny_spec(cleaner: &str) -> String {
    format!(
        "log-structured:cleaner={cleaner},segment_pages=4,segments=20,pages=40,align_pages=1,\
         clock=writes,ci=3,nspc=1,pp=1,min_free=4,max_free=6,checkpoint=3"
    )
}

fn scenarios() -> u64 {
    std::env::var("FLASHBUF_CRASH_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12)
}

#[test]
fn crashes_during_cleaning_and_checkpoints_keep_synced_pages() {
    for cleaner in ["greedy", "sepbit"] {
        let f = &CrashStore::from_spec(&tiny_spec(cleaner)).unwrap();
        let mut total = SimReport::default();
        for seed in 0..scenarios() {
            let mut rng = SplitMix64::new(seed ^ 0x10c);
            // 12-24 pages in a store that holds at most (20 - kept) * 3 of them.
            let pages = 12 + (seed % 13) as u32;
            let ops = random_ops(&mut rng, pages, 160);
            let cfg = SimConfig {
                page_size: [512usize, 4096][seed as usize % 2],
                pages,
                fanout: 6,
                seed,
            };
            match run(f, &store_front, &cfg, &ops) {
                Ok(r) => total.add(&r),
                Err(e) => panic!("{e}"),
            }
        }
        eprintln!("{}: {total:?}", f.name);
        assert!(total.crash_points >= 300, "{}: {total:?}", f.name);
        assert!(total.old > 0 && total.newest > 0);
        assert_eq!(total.corrupt_unsynced, 0, "torn writes are masked");
    }
}

/// The same store, written hard enough that the cleaner must run: it does, and a final
/// crash image of the running store recovers every synced page.
#[test]
fn the_tiny_store_really_cleans() {
    use flashbuf_core::{DirtyRanges, PageId};
    use flashbuf_device::fault::{CrashMode, FaultDevice};
    use flashbuf_testkit::content::filled_page;
    use std::sync::Arc;
    for kind in [CleanerKind::Greedy, CleanerKind::SepBit] {
        let dev = Arc::new(FaultDevice::new(0));
        let store = LogStore::create(dev.clone(), tiny(512, kind)).unwrap();
        let mut rng = SplitMix64::new(1);
        let pages = store.layout().logical_pages.min(24);
        for i in 0..2_000u64 {
            let pid = if i < pages { i } else { rng.below(pages) };
            let p = filled_page(512, PageId(pid), i + 1, 5);
            store
                .write_page(PageId(pid), &p, &DirtyRanges::full(512))
                .unwrap();
            if i % 7 == 0 {
                store.sync().unwrap();
            }
        }
        store.sync().unwrap();
        let s = store.log_stats();
        assert!(
            s.segments_cleaned > 100 && s.checkpoints > 20,
            "{}: {s:?}",
            kind.name()
        );
        let reopened = LogStore::open(
            FaultDevice::from_image(dev.crash_image(CrashMode::LoseUnsynced)),
            tiny(512, kind),
        )
        .unwrap();
        reopened.check_invariants().unwrap();
        assert_eq!(reopened.live_pages(), pages);
    }
}
