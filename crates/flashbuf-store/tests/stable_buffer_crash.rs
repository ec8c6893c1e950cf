#![allow(clippy::unwrap_used)]
//! Crash consistency and fail-stop of the StableBuffer store, on the fault-injecting device.
//!
//! A seeded workload writes, overwrites and syncs pages of a small store (16 slots, so
//! flushes happen all the time). Before every device write and sync — inside writes,
//! flushes and syncs alike — a tap takes crash images of what a power cut would leave:
//! nothing unsynced, everything, a prefix of the pending writes (with the next one torn
//! into 128-byte sectors, lost sectors keeping old bytes or garbage), or a seeded random
//! subset with tears. Each image is reopened and recovered; then every page must read back
//! as the version its last completed `sync` left or a version written after it (never torn,
//! never older, never an error), the invariants must hold, and the recovered store must go
//! on working (write, sync, crash, reopen).
//!
//! Also: reformatting the device (or copying the staging area of an earlier format back
//! into it) resurrects nothing (generation salt); injected EIO on writes and syncs poisons
//! the store and synced data survives.

use flashbuf_core::page::{self, PageState};
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::fault::{CrashMode, FaultDevice, FaultKind, FaultPlan, Tear};
use flashbuf_device::{Device, MemDevice};
use flashbuf_store::stable_buffer::{
    FlushMode, MinRun, PatternCosts, Recognition, StableBufferConfig, StableBufferStore, WriteOrder,
};
use flashbuf_store::{PageStore, ReadOutcome, StoreError};
use flashbuf_testkit::tap::{Recorder, TapDevice};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

const PS: usize = 512;
const PAGES: u64 = 40;
const SLOTS: u64 = 16;

fn cfg(recognition: Recognition, flush: FlushMode) -> StableBufferConfig {
    StableBufferConfig {
        page_size: PS,
        staging_bytes: SLOTS * PS as u64,
        recognition,
        flush,
        costs: PatternCosts {
            source: "test".into(),
            t_seq_us: 1.0,
            t_par_us: 1.5,
            t_focus_us: 2.0,
            theta_min_bytes: 2 * PS as u64,
            focused_area_bytes: 8 * PS as u64,
            partitions: 2,
        },
        align_bytes: PS as u64,
        grow_bytes: 4096,
        salt: None,
        ..StableBufferConfig::with_page_size(PS)
    }
}

/// The bytes of `pid` at `version`: a seeded pattern, sealed.
fn content(pid: u64, version: u64) -> Vec<u8> {
    let mut p = vec![0u8; PS];
    let mut r = SplitMix64::new(pid << 32 ^ version);
    for b in p[page::HEADER_BYTES..].iter_mut() {
        *b = r.next_u64() as u8;
    }
    page::seal(&mut p, PageId(pid), version);
    p
}

/// What may come back for each page after a crash.
#[derive(Debug, Clone, Default)]
struct Model {
    /// Version the last completed sync made durable.
    synced: HashMap<u64, u64>,
    /// Versions written since (the one in flight included).
    since: HashMap<u64, Vec<u64>>,
}

impl Model {
    fn allowed(&self, pid: u64) -> (Option<u64>, Vec<u64>) {
        (
            self.synced.get(&pid).copied(),
            self.since.get(&pid).cloned().unwrap_or_default(),
        )
    }
}

/// Checks every page of a recovered store against the model; returns the versions read.
fn verify(store: &dyn PageStore, m: &Model, what: &str) -> HashMap<u64, u64> {
    let mut buf = vec![0u8; PS];
    let mut got = HashMap::new();
    for pid in 0..PAGES {
        let (synced, since) = m.allowed(pid);
        match store.read_page(PageId(pid), &mut buf) {
            Ok(ReadOutcome::Unwritten) => assert!(
                synced.is_none(),
                "{what}: page {pid} lost (synced version {synced:?})"
            ),
            Ok(ReadOutcome::Found) => {
                let v = page::version_of(&buf);
                assert!(
                    synced == Some(v) || since.contains(&v),
                    "{what}: page {pid} came back as version {v}; synced {synced:?}, later {since:?}"
                );
                assert!(
                    buf == content(pid, v),
                    "{what}: page {pid} v{v} has wrong bytes"
                );
                got.insert(pid, v);
            }
            Err(e) => panic!("{what}: page {pid}: {e}"),
        }
    }
    store
        .check_invariants()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    got
}

/// Runs a seeded workload with taps; returns the crash images and their models.
fn workload(seed: u64, c: &StableBufferConfig, ops: usize) -> Vec<(String, Vec<u8>, Model)> {
    let dev = Arc::new(FaultDevice::new(0));
    let rec = Arc::new(Mutex::new(Recorder::new(Model::default(), seed ^ 0xC0FFEE)));
    let tap = TapDevice::new(Arc::clone(&dev), Arc::clone(&rec));
    let store = StableBufferStore::create(tap, c.clone()).unwrap();
    rec.lock().unwrap().enabled = true;
    let mut rng = SplitMix64::new(seed);
    let mut versions: HashMap<u64, u64> = HashMap::new();
    let full = DirtyRanges::full(PS);
    for _ in 0..ops {
        let op = rng.below(100);
        if op < 8 {
            store.sync().unwrap();
            let mut r = rec.lock().unwrap();
            let since = std::mem::take(&mut r.model.since);
            for (pid, vs) in since {
                if let Some(&v) = vs.last() {
                    r.model.synced.insert(pid, v);
                }
            }
        } else {
            // Hot pages 0..6 half of the time, then any page.
            let pid = if rng.below(2) == 0 {
                rng.below(6)
            } else {
                rng.below(PAGES)
            };
            let v = versions.entry(pid).or_insert(0);
            *v += 1;
            let v = *v;
            rec.lock()
                .unwrap()
                .model
                .since
                .entry(pid)
                .or_default()
                .push(v);
            store
                .write_page(PageId(pid), &content(pid, v), &full)
                .unwrap();
        }
        if op >= 97 {
            // A crash point between operations too.
            store.device().tap();
        }
    }
    // The live store agrees with the newest versions.
    let mut buf = vec![0u8; PS];
    for (&pid, &v) in &versions {
        store.read_page(PageId(pid), &mut buf).unwrap();
        assert_eq!(buf, content(pid, v), "live read of page {pid}");
    }
    store.check_invariants().unwrap();
    rec.lock().unwrap().enabled = false;
    drop(store);
    let mut r = rec.lock().unwrap();
    std::mem::take(&mut r.images)
}

/// Reopens each image, verifies it, and (every `continue_every`-th) keeps going.
fn check_images(
    images: &[(String, Vec<u8>, Model)],
    c: &StableBufferConfig,
    continue_every: usize,
) {
    let full = DirtyRanges::full(PS);
    for (i, (what, img, model)) in images.iter().enumerate() {
        let dev = FaultDevice::from_image(img.clone());
        let store = StableBufferStore::open(dev, c.clone())
            .unwrap_or_else(|e| panic!("crash point {i} ({what}): reopen failed: {e}"));
        let got = verify(&store, model, &format!("crash point {i} ({what})"));
        if i % continue_every != 0 {
            continue;
        }
        // The recovered store goes on: new versions, a sync, a crash, a reopen.
        let mut m = Model::default();
        for pid in 0..PAGES {
            if let Some(&v) = got.get(&pid) {
                m.synced.insert(pid, v);
            }
        }
        for k in 0..30u64 {
            let pid = (k * 7 + i as u64) % PAGES;
            let v = got.get(&pid).copied().unwrap_or(0) + 1000 + k;
            store
                .write_page(PageId(pid), &content(pid, v), &full)
                .unwrap();
            m.synced.insert(pid, v);
        }
        store.sync().unwrap();
        let dev = store.into_device();
        let again = FaultDevice::from_image(dev.crash_image(CrashMode::LoseUnsynced));
        let store = StableBufferStore::open(again, c.clone()).unwrap();
        verify(
            &store,
            &m,
            &format!("crash point {i} ({what}), after continuing"),
        );
    }
}

#[test]
fn crash_anywhere_passive_ondemand() {
    let c = cfg(Recognition::OnDemand, FlushMode::Passive);
    let mut total = 0;
    for seed in 0..4 {
        let images = workload(seed, &c, 220);
        total += images.len();
        check_images(&images, &c, 7);
    }
    eprintln!("passive/ondemand: {total} crash points");
    assert!(total >= 1000, "only {total} crash points");
}

#[test]
fn crash_anywhere_passive_incremental() {
    let c = cfg(Recognition::Incremental, FlushMode::Passive);
    let mut total = 0;
    for seed in 10..14 {
        let images = workload(seed, &c, 220);
        total += images.len();
        check_images(&images, &c, 7);
    }
    eprintln!("passive/incremental: {total} crash points");
    assert!(total >= 1000, "only {total} crash points");
}

#[test]
fn crash_anywhere_proactive() {
    // The background flusher's writes are tapped too (from its own thread).
    let c = cfg(Recognition::Incremental, FlushMode::Proactive);
    let mut total = 0;
    for seed in 20..24 {
        let images = workload(seed, &c, 220);
        total += images.len();
        check_images(&images, &c, 7);
    }
    eprintln!("proactive: {total} crash points");
    assert!(total >= 500, "only {total} crash points");
}

#[test]
fn crash_anywhere_with_the_sorted_order_and_theta_runs() {
    // The write order of a flush is no part of durability: the named options that write
    // every instance sorted (and ask θ_seq-page partitions) keep the same guarantees as the
    // default's round-robin and staging orders the suites above run.
    let c = StableBufferConfig {
        order: WriteOrder::Sorted,
        min_run: MinRun::Theta,
        ..cfg(Recognition::OnDemand, FlushMode::Passive)
    };
    let mut total = 0;
    for seed in 30..32 {
        let images = workload(seed, &c, 220);
        total += images.len();
        check_images(&images, &c, 7);
    }
    assert!(total >= 500, "only {total} crash points");
}

#[test]
fn crash_with_page_sized_sectors_and_larger_pages() {
    // 4 KiB pages written as 512-byte sectors: tears inside a page.
    let c = StableBufferConfig {
        page_size: 4096,
        staging_bytes: 8 * 4096,
        align_bytes: 4096,
        ..cfg(Recognition::Incremental, FlushMode::Passive)
    };
    let full = DirtyRanges::full(4096);
    let dev = Arc::new(FaultDevice::new(0));
    let store = StableBufferStore::create(Arc::clone(&dev), c.clone()).unwrap();
    let mut rng = SplitMix64::new(99);
    let mut m = Model::default();
    let mut points = 0;
    let page = |pid: u64, v: u64| {
        let mut p = vec![(pid * 31 + v) as u8; 4096];
        page::seal(&mut p, PageId(pid), v);
        p
    };
    let mut versions: HashMap<u64, u64> = HashMap::new();
    for step in 0..120u64 {
        let pid = rng.below(20);
        let v = versions.entry(pid).or_insert(0);
        *v += 1;
        m.since.entry(pid).or_default().push(*v);
        store
            .write_page(PageId(pid), &page(pid, *v), &full)
            .unwrap();
        if step % 9 == 0 {
            store.sync().unwrap();
            for (pid, vs) in std::mem::take(&mut m.since) {
                m.synced.insert(pid, *vs.last().unwrap());
            }
        }
        for t in 0..3 {
            let img = dev.crash_image(CrashMode::Random {
                seed: step * 3 + t,
                tear: Some(Tear {
                    sector_bytes: 512,
                    garbage: t == 1,
                }),
            });
            points += 1;
            let s2 = StableBufferStore::open(FaultDevice::from_image(img), c.clone()).unwrap();
            let mut buf = vec![0u8; 4096];
            for pid in 0..20 {
                let (synced, since) = m.allowed(pid);
                match s2.read_page(PageId(pid), &mut buf).unwrap() {
                    ReadOutcome::Unwritten => assert!(synced.is_none(), "page {pid} lost"),
                    ReadOutcome::Found => {
                        let v = page::version_of(&buf);
                        assert!(synced == Some(v) || since.contains(&v), "page {pid} v{v}");
                        assert_eq!(buf, page(pid, v));
                    }
                }
            }
            s2.check_invariants().unwrap();
        }
    }
    assert!(points >= 300);
}

/// Writes pages 0..n (staged: n ≤ slots) at `version` and syncs.
fn stage_pages(store: &dyn PageStore, n: u64, version: u64) {
    for pid in 0..n {
        store
            .write_page(PageId(pid), &content(pid, version), &DirtyRanges::full(PS))
            .unwrap();
    }
    store.sync().unwrap();
}

#[test]
fn reformat_never_resurrects_stale_slots() {
    let c = cfg(Recognition::OnDemand, FlushMode::Passive);
    let dev = Arc::new(MemDevice::new(0));
    let a = StableBufferStore::create(Arc::clone(&dev), c.clone()).unwrap();
    stage_pages(&a, 10, 5);
    assert_eq!(a.staged(), 10, "the pages are staged, not home");
    let layout = a.layout();
    let salt_a = a.salt();
    drop(a);
    let mut old_staging = vec![0u8; layout.staging_bytes() as usize];
    dev.read_at(layout.staging_offset, &mut old_staging)
        .unwrap();
    // Sanity: reopening the old format recovers them.
    let a = StableBufferStore::open(Arc::clone(&dev), c.clone()).unwrap();
    assert_eq!(a.sb_stats().recovered_staged, 10);
    drop(a);

    // Reformat: the new salt differs from the previous superblock's.
    let b = StableBufferStore::create(Arc::clone(&dev), c.clone()).unwrap();
    assert_ne!(b.salt(), salt_a);
    assert_eq!(b.layout(), layout);
    drop(b);
    // A device that kept the old bytes (no truncation): put the old slots back.
    dev.write_at(layout.staging_offset, &old_staging).unwrap();
    let b = StableBufferStore::open(Arc::clone(&dev), c.clone()).unwrap();
    assert_eq!(b.sb_stats().recovered_staged, 0, "stale slots resurrected");
    let mut buf = vec![0u8; PS];
    for pid in 0..10 {
        assert_eq!(
            b.read_page(PageId(pid), &mut buf).unwrap(),
            ReadOutcome::Unwritten,
            "page {pid} came back from an earlier format"
        );
    }
    // New writes reuse the area normally, and survive a reopen.
    stage_pages(&b, 4, 1);
    drop(b);
    let b = StableBufferStore::open(Arc::clone(&dev), c.clone()).unwrap();
    assert_eq!(b.sb_stats().recovered_staged, 4);
    assert_eq!(
        b.read_page(PageId(7), &mut buf).unwrap(),
        ReadOutcome::Unwritten
    );
    drop(b);

    // Control: with the *same* salt the stale slots would be valid — the salt is what
    // tells generations apart.
    let same = StableBufferConfig {
        salt: Some(salt_a),
        ..c.clone()
    };
    drop(StableBufferStore::create(Arc::clone(&dev), same.clone()).unwrap());
    dev.write_at(layout.staging_offset, &old_staging).unwrap();
    let s = StableBufferStore::open(Arc::clone(&dev), same).unwrap();
    assert_eq!(s.sb_stats().recovered_staged, 10);
}

#[test]
fn a_slot_copied_to_another_slot_is_invalid() {
    let c = cfg(Recognition::OnDemand, FlushMode::Passive);
    let dev = Arc::new(MemDevice::new(0));
    let s = StableBufferStore::create(Arc::clone(&dev), c.clone()).unwrap();
    stage_pages(&s, 1, 3);
    let l = s.layout();
    drop(s);
    let mut slot0 = vec![0u8; PS];
    dev.read_at(l.slot_offset(0), &mut slot0).unwrap();
    dev.write_at(l.slot_offset(5), &slot0).unwrap();
    dev.write_at(l.slot_offset(0), &vec![0u8; PS]).unwrap();
    let s = StableBufferStore::open(Arc::clone(&dev), c).unwrap();
    assert_eq!(s.sb_stats().recovered_staged, 0);
}

fn plan_write(n: u64) -> FaultPlan {
    FaultPlan {
        fail_write: Some(n),
        kind: FaultKind::Eio,
        ..FaultPlan::default()
    }
}

#[test]
fn injected_eio_poisons_and_synced_data_survives() {
    for (recognition, flush) in [
        (Recognition::OnDemand, FlushMode::Passive),
        (Recognition::Incremental, FlushMode::Passive),
    ] {
        let c = cfg(recognition, flush);
        // Fail the n-th write after a synced base: staging writes, flush home writes.
        for n in 1..40u64 {
            let dev = Arc::new(FaultDevice::new(0));
            let store = StableBufferStore::create(Arc::clone(&dev), c.clone()).unwrap();
            let mut m = Model::default();
            for pid in 0..12 {
                store
                    .write_page(PageId(pid), &content(pid, 1), &DirtyRanges::full(PS))
                    .unwrap();
                m.synced.insert(pid, 1);
            }
            store.sync().unwrap();
            dev.set_plan(plan_write(n));
            let mut failed = None;
            for k in 0..40u64 {
                let pid = (k * 5) % PAGES;
                m.since.entry(pid).or_default().push(2 + k);
                match store.write_page(PageId(pid), &content(pid, 2 + k), &DirtyRanges::full(PS)) {
                    Ok(()) => {}
                    Err(e) => {
                        assert!(matches!(e, StoreError::Device(_)), "n={n}: {e}");
                        failed = Some(k);
                        break;
                    }
                }
            }
            let k = failed.unwrap_or_else(|| panic!("n={n}: no write failed"));
            // Fail-stop: every later call is refused.
            let mut buf = vec![0u8; PS];
            assert!(matches!(
                store.write_page(PageId(1), &content(1, 99), &DirtyRanges::full(PS)),
                Err(StoreError::Poisoned(_))
            ));
            assert!(matches!(store.sync(), Err(StoreError::Poisoned(_))));
            assert!(matches!(
                store.read_page(PageId(1), &mut buf),
                Err(StoreError::Poisoned(_))
            ));
            drop(store);
            // Power cut after the failure: synced pages intact.
            let img = dev.crash_image(CrashMode::LoseUnsynced);
            let s2 = StableBufferStore::open(FaultDevice::from_image(img), c.clone()).unwrap();
            verify(&s2, &m, &format!("EIO on write {n} (failed at op {k})"));
        }
    }
}

#[test]
fn injected_sync_failure_poisons() {
    let c = cfg(Recognition::Incremental, FlushMode::Passive);
    for n in 1..6u64 {
        let dev = Arc::new(FaultDevice::new(0));
        let store = StableBufferStore::create(Arc::clone(&dev), c.clone()).unwrap();
        dev.set_plan(FaultPlan {
            fail_sync: Some(n),
            ..FaultPlan::default()
        });
        // Flushes sync too; the n-th sync fails wherever it comes from.
        let mut err = None;
        for k in 0..200u64 {
            let pid = (k * 3) % PAGES;
            let r = store
                .write_page(PageId(pid), &content(pid, k + 1), &DirtyRanges::full(PS))
                .and_then(|()| if k % 10 == 9 { store.sync() } else { Ok(()) });
            if let Err(e) = r {
                err = Some(e);
                break;
            }
        }
        let e = err.unwrap_or_else(|| panic!("sync {n} never failed"));
        assert!(matches!(e, StoreError::Device(_)), "{e}");
        assert!(matches!(store.sync(), Err(StoreError::Poisoned(_))));
    }
}

#[test]
fn background_flusher_failure_poisons() {
    let c = cfg(Recognition::Incremental, FlushMode::Proactive);
    let dev = Arc::new(FaultDevice::new(0));
    let store = StableBufferStore::create(Arc::clone(&dev), c).unwrap();
    dev.set_plan(FaultPlan {
        fail_write: Some(3),
        sticky: true,
        ..FaultPlan::default()
    });
    // Page runs reach θ quickly, so the flusher writes home; whoever hits the fault
    // (a writer or the flusher), the store ends poisoned.
    let mut poisoned = false;
    for k in 0..200u64 {
        let pid = k % 30;
        match store.write_page(PageId(pid), &content(pid, k + 1), &DirtyRanges::full(PS)) {
            Ok(()) => {}
            Err(StoreError::Device(_) | StoreError::Poisoned(_)) => {
                poisoned = true;
                break;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(poisoned);
    assert!(matches!(store.sync(), Err(StoreError::Poisoned(_))));
    store.stop_flusher();
}

#[test]
fn recovered_copies_match_home_stamps() {
    // Staged copies already flushed home free their slots at recovery; newer ones stay.
    let c = cfg(Recognition::OnDemand, FlushMode::Passive);
    let dev = Arc::new(MemDevice::new(0));
    let s = StableBufferStore::create(Arc::clone(&dev), c.clone()).unwrap();
    stage_pages(&s, 8, 1);
    s.flush_all().unwrap();
    assert_eq!(s.staged(), 0);
    stage_pages(&s, 3, 2);
    drop(s);
    let s = StableBufferStore::open(Arc::clone(&dev), c).unwrap();
    let st = s.sb_stats();
    assert_eq!(st.recovered_staged, 3);
    assert_eq!(
        st.recovered_freed, 8,
        "the flushed copies are still in their slots"
    );
    let mut buf = vec![0u8; PS];
    for pid in 0..8 {
        s.read_page(PageId(pid), &mut buf).unwrap();
        let want = if pid < 3 { 2 } else { 1 };
        assert_eq!(page::version_of(&buf), want);
        assert!(matches!(
            page::check(&buf, PageId(pid)),
            Ok(PageState::Sealed(_))
        ));
    }
}
