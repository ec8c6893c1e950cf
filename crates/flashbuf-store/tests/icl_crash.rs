#![allow(clippy::unwrap_used)]
//! ICL's crash suite beyond its registry variant: the test kit's scenarios (whole and
//! partial writes, batches, reads, syncs, crashes with lost, kept, reordered and torn
//! writes) over several ICL configurations — tiny and roomy log spaces, one or three
//! double-write slots, low and high merge thresholds — each crash point checked under
//! eight crash modes against the model ("synced pages exact; later pages old or new or
//! reported corrupt"). The shared suite (`crash_sim.rs`) runs the registry's variant.
//!
//! Those crash points fall between operations, when every log-space merge has finished;
//! `crash_anywhere_*` below also crashes *inside* writes, flushes, merges and syncs: a
//! tap device takes crash images before every device write and sync (nothing unsynced,
//! everything, prefixes and seeded subsets, torn into 128-byte sectors with old bytes or
//! garbage), each reopened and checked the same way, and every seventh recovered store
//! goes on (writes, sync, crash, reopen).
//!
//! `FLASHBUF_CRASH_CASES=N` raises the number of scenarios per configuration (soak).

mod icl_support;

use flashbuf_core::rng::SplitMix64;
use flashbuf_core::PageId;
use flashbuf_device::fault::{CrashMode, FaultDevice};
use flashbuf_store::icl::{IclConfig, IclStore};
use flashbuf_store::{PageStore, ReadOutcome, StoreError};
use flashbuf_testkit::sim::{random_ops, run, store_front, SimConfig, SimReport};
use flashbuf_testkit::tap::{Recorder, TapDevice, TapImage};
use flashbuf_testkit::CrashStore;
use icl_support::{config, Model};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

const CONFIGS: &[&str] = &[
    "icl:wob_pages=1,log_pages=2,dw_pages=1,grow_pages=8",
    "icl:wob_pages=2,log_pages=5,dw_pages=3,grow_pages=8,merge_threshold=0.2",
    "icl:wob_pages=1,log_pages=12,dw_pages=2,grow_pages=8,merge_threshold=0.9",
    "icl:wob_pages=4,log_pages=3,dw_pages=1,grow_pages=8",
];

fn cases() -> u64 {
    std::env::var("FLASHBUF_CRASH_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12)
}

#[test]
fn icl_configurations_keep_synced_pages_and_return_old_or_new_after_any_crash() {
    for spec in CONFIGS {
        let store = CrashStore::from_spec(spec).unwrap();
        let mut total = SimReport::default();
        for case in 0..cases() {
            let seed = 0x1C1_0000 + case;
            let mut rng = SplitMix64::new(seed);
            let page_size = [512usize, 4096, 8192][(case % 3) as usize];
            let pages = 4 + rng.below(28) as u32;
            let ops = random_ops(&mut rng, pages, 120);
            let cfg = SimConfig {
                page_size,
                pages,
                fanout: 8,
                seed,
            };
            match run(&store, &store_front, &cfg, &ops) {
                Ok(r) => total.add(&r),
                Err(e) => panic!("{e}"),
            }
        }
        eprintln!("{spec}: {total:?}");
        assert!(total.crash_points >= 300, "{spec}: {total:?}");
        assert!(total.old > 0 && total.newest > 0, "{spec}: {total:?}");
        assert!(
            total.corrupt_unsynced > 0,
            "{spec}: torn writes never seen: {total:?}"
        );
    }
}

/// What may come back for each page after a crash: its bytes at the last completed sync,
/// and every version written since (the one in flight included).
#[derive(Debug, Clone, Default)]
struct Allowed {
    synced: HashMap<PageId, Vec<u8>>,
    since: HashMap<PageId, Vec<Vec<u8>>>,
}

/// A crash image: its label, its bytes, what it may hold.
type Image = TapImage<Allowed>;

const PAGES: u64 = 24;

/// A seeded workload of whole and partial writes (as dirty ranges) and syncs on a tapped
/// store; returns the crash images.
fn tapped_workload(seed: u64, cfg: IclConfig, ops: usize) -> Vec<Image> {
    let dev = Arc::new(FaultDevice::new(0));
    let rec = Arc::new(Mutex::new(Recorder::new(
        Allowed::default(),
        seed ^ 0xC0FFEE,
    )));
    let tap = TapDevice::new(dev, Arc::clone(&rec));
    let store = IclStore::create(tap, cfg).unwrap();
    rec.lock().unwrap().enabled = true;
    let mut rng = SplitMix64::new(seed);
    let mut model = Model::new(cfg.page_size);
    for _ in 0..ops {
        let op = rng.below(100);
        if op < 8 {
            store.sync().unwrap();
            let mut r = rec.lock().unwrap();
            r.model.since.clear();
            r.model.synced = model.pages.clone();
            continue;
        }
        let pid = PageId(if rng.below(2) == 0 {
            rng.below(5)
        } else {
            rng.below(PAGES)
        });
        let (page, dirty) = if rng.below(6) == 0 {
            model.whole(pid, rng.next_u64())
        } else {
            let edits: Vec<(usize, usize)> = (0..1 + rng.below(3))
                .map(|_| (rng.below(1 << 16) as usize, 1 + rng.below(120) as usize))
                .collect();
            model.edit(pid, &edits, rng.next_u64())
        };
        rec.lock()
            .unwrap()
            .model
            .since
            .entry(pid)
            .or_default()
            .push(page.clone());
        store.write_page(pid, &page, &dirty).unwrap();
        if op >= 97 {
            store.device().tap();
        }
    }
    model.verify(&store, &[]);
    store.check_invariants().unwrap();
    rec.lock().unwrap().enabled = false;
    drop(store);
    let mut r = rec.lock().unwrap();
    std::mem::take(&mut r.images)
}

/// Checks every page of a recovered store; returns what each page holds (`None`:
/// unwritten; corrupt pages are left out).
fn verify_recovered(
    store: &dyn PageStore,
    a: &Allowed,
    what: &str,
    ps: usize,
) -> HashMap<PageId, Option<Vec<u8>>> {
    let mut buf = vec![0u8; ps];
    let mut got = HashMap::new();
    for pid in (0..PAGES).map(PageId) {
        let synced = a.synced.get(&pid);
        let since = a.since.get(&pid);
        match store.read_page(pid, &mut buf) {
            Ok(ReadOutcome::Unwritten) => {
                assert!(synced.is_none(), "{what}: {pid} lost its synced version");
                got.insert(pid, None);
            }
            Ok(ReadOutcome::Found) => {
                let ok = synced == Some(&buf) || since.is_some_and(|v| v.contains(&buf));
                assert!(
                    ok,
                    "{what}: {pid} reads bytes of no write (version {})",
                    flashbuf_core::page::version_of(&buf)
                );
                got.insert(pid, Some(buf.clone()));
            }
            Err(StoreError::Corrupt { .. }) => {
                assert!(since.is_some(), "{what}: synced {pid} reported corrupt");
            }
            Err(e) => panic!("{what}: {pid}: {e}"),
        }
    }
    store
        .check_invariants()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    got
}

/// What recoveries did, summed over crash points: (pages restored from the double-write
/// area, recovered pages whose newest record did not apply but an older one did, recovered
/// pages whose records did not apply to their newer home page).
#[derive(Debug, Default)]
struct RecoveryCounts {
    restored: u64,
    older: u64,
    home: u64,
}

fn check_images(images: &[Image], cfg: IclConfig, continue_every: usize, rc: &mut RecoveryCounts) {
    let ps = cfg.page_size;
    for (i, (what, img, allowed)) in images.iter().enumerate() {
        let what = format!("crash point {i} ({what})");
        let dev = Arc::new(FaultDevice::from_image(img.clone()));
        let store = IclStore::open(Arc::clone(&dev), cfg)
            .unwrap_or_else(|e| panic!("{what}: reopen failed: {e}"));
        let got = verify_recovered(&store, allowed, &what, ps);
        let s = store.icl_stats();
        rc.restored += s.data_writes_restore;
        rc.older += s.resolved_older;
        rc.home += s.resolved_home;
        if i % continue_every != 0 {
            continue;
        }
        // The recovered store goes on: partial writes over what it holds, a sync, a
        // crash, a reopen; everything must then read exactly.
        let mut m = Model::new(ps);
        for (pid, p) in &got {
            if let Some(p) = p {
                m.pages.insert(*pid, p.clone());
                m.versions.insert(*pid, flashbuf_core::page::version_of(p));
            }
        }
        let mut rng = SplitMix64::new(i as u64);
        for _ in 0..40 {
            let pid = PageId(rng.below(PAGES));
            if !got.contains_key(&pid) {
                continue; // corrupt: a pool could not read it to modify it
            }
            let (p, d) = m.edit(
                pid,
                &[(rng.below(4096) as usize, 1 + rng.below(90) as usize)],
                rng.next_u64(),
            );
            store.write_page(pid, &p, &d).unwrap();
        }
        store.sync().unwrap();
        drop(store);
        let again = FaultDevice::from_image(dev.crash_image(CrashMode::LoseUnsynced));
        let store = IclStore::open(again, cfg)
            .unwrap_or_else(|e| panic!("{what}, after continuing: reopen failed: {e}"));
        m.verify(&store, &[]);
        store.check_invariants().unwrap();
    }
}

fn crash_anywhere(cfg: IclConfig, seeds: std::ops::Range<u64>) -> RecoveryCounts {
    let mut total = 0;
    let mut rc = RecoveryCounts::default();
    for seed in seeds {
        let images = tapped_workload(seed, cfg, 160);
        total += images.len();
        check_images(&images, cfg, 7, &mut rc);
    }
    eprintln!("crash anywhere {cfg:?}: {total} crash points, recoveries {rc:?}");
    assert!(total >= 1000, "only {total} crash points");
    rc
}

#[test]
fn crash_anywhere_tiny_log_space() {
    let rc = crash_anywhere(config(512, 1, 3, 2), 0..4);
    // Crashes inside log-space merges are recovered from the double-write area.
    assert!(rc.restored > 0, "{rc:?}");
}

#[test]
fn crash_anywhere_roomy_log_space_low_threshold() {
    let cfg = IclConfig {
        merge_threshold: 0.25,
        ..config(4096, 2, 10, 1)
    };
    let rc = crash_anywhere(cfg, 10..18);
    // Recovered pages whose newest records lost their base, or whose home page is newer.
    assert!(rc.older > 0 && rc.home > 0, "{rc:?}");
}
