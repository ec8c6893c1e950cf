#![allow(clippy::unwrap_used)]
//! ICL recovery, case by case: a full log space (and how long its recovery takes), the
//! pick of an older record when the newest lost its home page, damaged log pages a sync
//! promised (reported, never skipped) and unpromised ones (torn, ignored), damaged
//! generation records, stale log pages after a gap, a reformatted device, and refusals
//! of other configurations.

mod icl_support;

use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::fault::{CrashMode, FaultDevice};
use flashbuf_device::{Device, SimDevice};
use flashbuf_store::icl::{IclConfig, IclStore};
use flashbuf_store::{PageStore, ReadOutcome, StoreError};
use icl_support::{config, Model};
use std::sync::Arc;
use std::time::Instant;

/// Flips one byte of `img` at `at`.
fn flip(img: &mut [u8], at: u64) {
    img[at as usize] ^= 0x40;
}

fn open(img: Vec<u8>, cfg: IclConfig) -> Result<IclStore<FaultDevice>, StoreError> {
    IclStore::open(FaultDevice::from_image(img), cfg)
}

/// Log pages of the full-log-space test (`FLASHBUF_ICL_RECOVERY_LOG_PAGES`, default 256;
/// the default store has 4,096).
fn recovery_log_pages() -> u32 {
    std::env::var("FLASHBUF_ICL_RECOVERY_LOG_PAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

#[test]
fn a_full_log_space_recovers_every_page_and_its_time_is_measured() {
    let ps = 4096;
    let log_pages = recovery_log_pages();
    let cfg = IclConfig {
        wob_bytes: 8 << 10,
        log_pages,
        salt: Some(7),
        ..IclConfig::with_page_size(ps)
    };
    let dev = SimDevice::by_name("mtron", 1 << 30, 1).unwrap();
    let store = IclStore::create(dev, cfg).unwrap();
    let mut m = Model::new(ps);
    let pages = 12 * u64::from(log_pages);
    for pid in 0..pages {
        let (p, d) = m.whole(PageId(pid), pid);
        store.write_page(PageId(pid), &p, &d).unwrap();
    }
    let mut rng = flashbuf_core::rng::SplitMix64::new(3);
    // Partial writes until the log space is full but for a flush or two (a flush of the
    // 8 KiB WOB takes a few log pages), without a log-space merge.
    let full = u64::from(log_pages) - 8;
    while store.icl_stats().log_pages_used < full {
        let pid = PageId(rng.below(pages));
        let edits = [(rng.below(4000) as usize, 20 + rng.below(200) as usize)];
        let (p, d) = m.edit(pid, &edits, rng.next_u64());
        store.write_page(pid, &p, &d).unwrap();
    }
    store.sync().unwrap();
    let before = store.icl_stats();
    assert_eq!(before.merges_bulk, 0, "{before:?}");
    let dev = store.into_device();
    let t0 = Instant::now();
    let store = IclStore::open(dev, cfg).unwrap();
    let wall = t0.elapsed();
    let s = store.icl_stats();
    eprintln!(
        "recovery of {} log pages ({} records, {} pages): {:.1} ms wall, {} µs device time (sim:mtron); mapping table {} bytes for {} entries",
        s.recovered_log_pages,
        s.recovered_records,
        s.mapping_entries,
        wall.as_secs_f64() * 1e3,
        s.recovery_device_us,
        s.mapping_memory_bytes,
        s.mapping_entries
    );
    assert_eq!(s.recovered_log_pages, before.log_pages_used);
    assert_eq!(
        s.log_reads_recovery,
        u64::from(log_pages),
        "one scan of the log space"
    );
    assert!(s.recovery_device_us > 0);
    m.verify(&store, &[PageId(pages)]);
    // Once picked, every read needs at most one log page.
    let picked = store.icl_stats();
    assert!(
        picked.resolutions > 0 && picked.resolved_older == 0,
        "{picked:?}"
    );
    let mut buf = vec![0u8; ps];
    for pid in 0..pages {
        let a = store.icl_stats();
        store.read_page(PageId(pid), &mut buf).unwrap();
        let b = store.icl_stats();
        assert!(b.log_reads - a.log_reads <= 1 && b.log_reads_resolve == a.log_reads_resolve);
    }
    store.check_invariants().unwrap();
}

/// Page 0 after: whole write (H1), sync; partial write (L1), sync; whole write (H2);
/// partial write (L2) flushed into a log page. Returns the device and the bytes after L1.
fn older_record_scenario() -> (Arc<FaultDevice>, IclConfig, Vec<u8>, Vec<u8>) {
    let ps = 4096;
    let cfg = config(ps, 2, 8, 2);
    let dev = Arc::new(FaultDevice::new(0));
    let store = IclStore::create(dev.clone(), cfg).unwrap();
    let mut m = Model::new(ps);
    let pid = PageId(0);
    let (h1, d) = m.whole(pid, 1);
    store.write_page(pid, &h1, &d).unwrap();
    store.sync().unwrap();
    let (l1, d) = m.edit(pid, &[(100, 50)], 2);
    store.write_page(pid, &l1, &d).unwrap();
    store.sync().unwrap();
    let (h2, d) = m.whole(pid, 3);
    store.write_page(pid, &h2, &d).unwrap();
    let (l2, d) = m.edit(pid, &[(900, 40)], 4);
    store.write_page(pid, &l2, &d).unwrap();
    // Fill the WOB with other pages' logs so that it flushes (no sync).
    for other in 1..200u64 {
        let (p, d) = m.whole(PageId(other), other);
        store.write_page(PageId(other), &p, &d).unwrap();
        let (p, d) = m.edit(PageId(other), &[(other as usize * 7, 30)], other);
        store.write_page(PageId(other), &p, &d).unwrap();
    }
    assert!(store.icl_stats().log_writes >= 2, "{:?}", store.icl_stats());
    (dev, cfg, l1, l2)
}

#[test]
fn an_older_record_applies_when_the_newest_lost_its_home_page() {
    let (dev, cfg, l1, _l2) = older_record_scenario();
    // The crash keeps the unsynced log pages but loses the home write of H2.
    let store0 = IclStore::open(FaultDevice::from_image(dev.live_image()), cfg).unwrap();
    let layout = store0.layout();
    drop(store0);
    let mut img = dev.durable_image();
    let live = dev.live_image();
    let (a, b) = (layout.log_offset as usize, layout.data_offset as usize);
    img[a..b].copy_from_slice(&live[a..b]);
    let store = open(img, cfg).unwrap();
    let mut buf = vec![0u8; 4096];
    assert_eq!(
        store.read_page(PageId(0), &mut buf).unwrap(),
        ReadOutcome::Found
    );
    assert!(
        buf == l1,
        "page 0 must read as its synced version (H1 + L1)"
    );
    let s = store.icl_stats();
    assert_eq!(s.resolved_older, 1, "{s:?}");
    // The pick is written again at the next flush: after a sync the newest record of
    // page 0 applies at once.
    store.sync().unwrap();
    let dev = store.into_device();
    let store = open(dev.crash_image(CrashMode::LoseUnsynced), cfg).unwrap();
    store.read_page(PageId(0), &mut buf).unwrap();
    assert!(buf == l1);
    assert_eq!(store.icl_stats().resolved_older, 0);
}

#[test]
fn everything_kept_reads_the_newest_version() {
    let (dev, cfg, _l1, l2) = older_record_scenario();
    let store = open(dev.live_image(), cfg).unwrap();
    let mut buf = vec![0u8; 4096];
    store.read_page(PageId(0), &mut buf).unwrap();
    assert!(buf == l2);
}

/// Two syncs that each flushed log pages (slots 0 and 1), then log pages written and not
/// synced. Returns the device and the store's layout offsets of the log slots.
fn promised_scenario() -> (Arc<FaultDevice>, IclConfig, Model, Vec<u64>) {
    let ps = 512;
    let cfg = config(ps, 1, 8, 2);
    let dev = Arc::new(FaultDevice::new(0));
    let store = IclStore::create(dev.clone(), cfg).unwrap();
    let mut m = Model::new(ps);
    for pid in 0..4 {
        let (p, d) = m.whole(PageId(pid), pid);
        store.write_page(PageId(pid), &p, &d).unwrap();
    }
    store.sync().unwrap();
    for round in 0..2u64 {
        let (p, d) = m.edit(PageId(round), &[(10, 20)], 10 + round);
        store.write_page(PageId(round), &p, &d).unwrap();
        store.sync().unwrap();
        assert_eq!(store.icl_stats().log_pages_used, round + 1);
    }
    let slots = (0..8).map(|s| store.layout().log_slot_offset(s)).collect();
    (dev, cfg, m, slots)
}

#[test]
fn a_damaged_log_page_a_later_page_vouches_for_is_reported() {
    let (dev, cfg, m, slots) = promised_scenario();
    // A third synced log page records that slots 0..2 were durable.
    let store = IclStore::open(dev.clone(), cfg).unwrap();
    let mut m = m;
    let (p, d) = m.edit(PageId(2), &[(30, 5)], 99);
    store.write_page(PageId(2), &p, &d).unwrap();
    store.sync().unwrap();
    drop(store);
    let mut img = dev.durable_image();
    flip(&mut img, slots[0] + 100);
    let e = open(img, cfg).unwrap_err().to_string();
    assert!(
        e.contains("ICL log page 0") && e.contains("made log pages 0..") && e.contains("refusing"),
        "{e}"
    );
}

#[test]
fn damage_to_the_last_synced_log_page_is_reported_through_the_generation_record() {
    let (dev, cfg, _m, slots) = promised_scenario();
    let mut img = dev.durable_image();
    flip(&mut img, slots[1] + 60);
    let e = open(img, cfg).unwrap_err().to_string();
    assert!(
        e.contains("ICL log page 1") && e.contains("the generation record"),
        "{e}"
    );
}

#[test]
fn a_torn_unsynced_log_page_is_ignored_and_synced_pages_read_exactly() {
    let (dev, cfg, m, slots) = promised_scenario();
    let store = IclStore::open(dev.clone(), cfg).unwrap();
    let mut later = m.clone();
    for k in 0..12u64 {
        let (p, d) = later.edit(PageId(k % 4), &[(40 * k as usize, 30)], 50 + k);
        store.write_page(PageId(k % 4), &p, &d).unwrap();
    }
    assert!(store.icl_stats().log_pages_used > 2);
    drop(store);
    let mut img = dev.crash_image(CrashMode::KeepAll);
    flip(&mut img, slots[2] + 70);
    // Slot 2 was never synced: the pages come back as synced (every later log page is
    // after the gap).
    let store = open(img, cfg).unwrap();
    m.verify(&store, &[]);
}

#[test]
fn a_log_page_damaged_while_open_is_an_error_never_an_older_page() {
    let (dev, cfg, _m, slots) = promised_scenario();
    let store = IclStore::open(dev.clone(), cfg).unwrap();
    let mut buf = vec![0u8; 512];
    store.read_page(PageId(1), &mut buf).unwrap();
    // Damage slot 1 (page 1's record) behind the store's back.
    let mut b = vec![0u8; 1];
    dev.read_at(slots[1] + 80, &mut b).unwrap();
    dev.write_at(slots[1] + 80, &[b[0] ^ 1]).unwrap();
    buf.fill(0xEE);
    match store.read_page(PageId(1), &mut buf) {
        Err(e @ StoreError::DamagedLog { .. }) => {
            assert!(e.to_string().contains("log page 1"), "{e}")
        }
        other => panic!("expected a damaged log page, got {other:?}"),
    }
    assert!(
        buf.iter().all(|&x| x == 0),
        "no half-built page in the buffer"
    );
}

#[test]
fn one_damaged_generation_record_is_survived_two_are_refused() {
    let (dev, cfg, m, _slots) = promised_scenario();
    let store = IclStore::open(dev.clone(), cfg).unwrap();
    let l = store.layout();
    drop(store);
    let img = dev.durable_image();
    // The newest record is damaged: the older one (fewer synced pages) stands.
    for i in 0..2 {
        let mut one = img.clone();
        flip(&mut one, l.gen_record_offset(i) + 30);
        let s = open(one, cfg).unwrap();
        m.verify(&s, &[]);
    }
    let mut both = img;
    flip(&mut both, l.gen_record_offset(0) + 30);
    flip(&mut both, l.gen_record_offset(1) + 30);
    let e = open(both, cfg).unwrap_err().to_string();
    assert!(e.contains("both ICL generation records are damaged"), "{e}");
}

#[test]
fn log_pages_after_a_gap_never_rejoin_the_log() {
    let ps = 512;
    let cfg = config(ps, 1, 8, 2);
    let dev = Arc::new(FaultDevice::new(0));
    let store = IclStore::create(dev.clone(), cfg).unwrap();
    let mut m = Model::new(ps);
    for pid in 0..4 {
        let (p, d) = m.whole(PageId(pid), pid);
        store.write_page(PageId(pid), &p, &d).unwrap();
    }
    let (p, d) = m.edit(PageId(0), &[(0, 20)], 1);
    store.write_page(PageId(0), &p, &d).unwrap();
    store.sync().unwrap(); // slot 0
    let synced = m.clone();
    // Two unsynced log pages: slot 1 (page 1) and slot 2 (page 2), records of 248 bytes
    // each (two do not fit a 512-byte log page); page 3's log fills the WOB.
    let mut lost = m.clone();
    for pid in [1u64, 2] {
        for (k, off) in [50usize, 300].into_iter().enumerate() {
            let (p, d) = lost.edit(PageId(pid), &[(off, 90)], 7 + pid * 2 + k as u64);
            store.write_page(PageId(pid), &p, &d).unwrap();
        }
    }
    let (p, d) = lost.edit(PageId(3), &[(0, 40)], 3);
    store.write_page(PageId(3), &p, &d).unwrap();
    assert_eq!(
        store.icl_stats().log_pages_used,
        3,
        "{:?}",
        store.icl_stats()
    );
    let layout = store.layout();
    drop(store);
    // The crash loses slot 1 and keeps slot 2.
    let mut img = dev.crash_image(CrashMode::KeepAll);
    let s1 = layout.log_slot_offset(1) as usize;
    img[s1..s1 + ps].fill(0);
    let store = open(img, cfg).unwrap();
    synced.verify(&store, &[]);
    // One new log page (slot 1) and a sync; then reopen: slot 2, older than slot 1, must
    // stay out, or page 2 would come back as a version recovery did not show.
    let mut m = synced.clone();
    let (p, d) = m.edit(PageId(0), &[(200, 10)], 3);
    store.write_page(PageId(0), &p, &d).unwrap();
    store.sync().unwrap();
    assert_eq!(store.icl_stats().log_pages_used, 2);
    let dev = store.into_device();
    let store = open(dev.crash_image(CrashMode::LoseUnsynced), cfg).unwrap();
    m.verify(&store, &[]);
}

#[test]
fn a_reformatted_device_resurrects_nothing() {
    let (dev, cfg, m, slots) = promised_scenario();
    let old = dev.durable_image();
    let store = IclStore::create(dev.clone(), IclConfig { salt: None, ..cfg }).unwrap();
    let mut buf = vec![0u8; 512];
    for pid in m.pages.keys() {
        assert_eq!(
            store.read_page(*pid, &mut buf).unwrap(),
            ReadOutcome::Unwritten
        );
    }
    store.sync().unwrap();
    let salt_cfg = *store.config();
    drop(store);
    // Even the old log pages copied back into the new log space are not taken.
    let mut img = dev.durable_image();
    let (a, b) = (slots[0] as usize, slots[2] as usize);
    img[a..b].copy_from_slice(&old[a..b]);
    let store = open(img, salt_cfg).unwrap();
    for pid in m.pages.keys() {
        assert_eq!(
            store.read_page(*pid, &mut buf).unwrap(),
            ReadOutcome::Unwritten
        );
    }
}

#[test]
fn other_sizes_kinds_and_page_sizes_are_refused_saying_which() {
    let (dev, cfg, _m, _slots) = promised_scenario();
    let img = dev.durable_image();
    let e = open(
        img.clone(),
        IclConfig {
            log_pages: 9,
            ..cfg
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("formatted with 8 log pages and 2 double-write slots"),
        "{e}"
    );
    let e = open(img.clone(), IclConfig { dw_pages: 3, ..cfg })
        .unwrap_err()
        .to_string();
    assert!(e.contains("but 8 and 3 were requested"), "{e}");
    let e = open(img.clone(), config(4096, 1, 8, 2))
        .unwrap_err()
        .to_string();
    assert!(e.contains("page size 512"), "{e}");
    // Reopen as is works; the WOB size and the threshold do not matter on the device.
    let s = open(
        img,
        IclConfig {
            wob_bytes: 4096,
            merge_threshold: 0.3,
            ..cfg
        },
    )
    .unwrap();
    let mut buf = vec![0u8; 512];
    assert_eq!(
        s.read_page(PageId(0), &mut buf).unwrap(),
        ReadOutcome::Found
    );
    let e = s
        .write_page(PageId(0), &[0u8; 100], &DirtyRanges::new())
        .unwrap_err();
    assert!(matches!(e, StoreError::Invalid(_)), "{e}");
}
