#![allow(clippy::unwrap_used)]
//! The StableBuffer store against a simple model (a `HashMap` of page contents), its
//! refusals, its options and its memory.

use flashbuf_core::page;
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::{FileDevice, FileDeviceOptions, MemDevice};
use flashbuf_store::stable_buffer::{
    FlushMode, PatternCosts, Recognition, StableBufferConfig, StableBufferStore,
};
use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore, ReadOutcome, StoreError};
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

fn small(ps: usize, slots: u64, recognition: Recognition, flush: FlushMode) -> StableBufferConfig {
    StableBufferConfig {
        page_size: ps,
        staging_bytes: slots * ps as u64,
        recognition,
        flush,
        costs: PatternCosts {
            theta_min_bytes: 2 * ps as u64,
            focused_area_bytes: 16 * ps as u64,
            ..PatternCosts::default()
        },
        align_bytes: ps as u64,
        grow_bytes: 16 * ps as u64,
        salt: None,
        ..StableBufferConfig::with_page_size(ps)
    }
}

fn sealed(pid: u64, version: u64, ps: usize) -> Vec<u8> {
    let mut p = vec![0u8; ps];
    let mut r = SplitMix64::new(pid * 1_000_003 + version);
    for b in p[page::HEADER_BYTES..].iter_mut() {
        *b = r.next_u64() as u8;
    }
    page::seal(&mut p, PageId(pid), version);
    p
}

/// Random writes, reads and syncs against a model; invariants checked throughout.
fn model_run(cfg: StableBufferConfig, seed: u64, ops: usize, pages: u64) {
    let ps = cfg.page_size;
    let store = StableBufferStore::create(MemDevice::new(0), cfg.clone()).unwrap();
    let mut model: HashMap<u64, u64> = HashMap::new();
    let mut rng = SplitMix64::new(seed);
    let mut buf = vec![0u8; ps];
    let full = DirtyRanges::full(ps);
    for i in 0..ops {
        let pid = if rng.below(3) == 0 {
            rng.below(4)
        } else {
            rng.below(pages)
        };
        match rng.below(10) {
            0..=5 => {
                let v = model.get(&pid).copied().unwrap_or(0) + 1;
                store
                    .write_page(PageId(pid), &sealed(pid, v, ps), &full)
                    .unwrap();
                model.insert(pid, v);
            }
            6..=8 => match (
                store.read_page(PageId(pid), &mut buf).unwrap(),
                model.get(&pid),
            ) {
                (ReadOutcome::Found, Some(&v)) => assert_eq!(buf, sealed(pid, v, ps), "op {i}"),
                (ReadOutcome::Unwritten, None) => assert!(buf.iter().all(|&b| b == 0)),
                (o, m) => panic!("op {i}: page {pid} read {o:?}, model {m:?}"),
            },
            _ => store.sync().unwrap(),
        }
        if i % 64 == 0 {
            store.check_invariants().unwrap();
        }
    }
    store.sync().unwrap();
    store.check_invariants().unwrap();
    assert!(store.staged() <= cfg.slots() as usize);
    // Everything survives a clean reopen, staged or home.
    let dev = store.into_device();
    let store = StableBufferStore::open(dev, cfg).unwrap();
    store.check_invariants().unwrap();
    for (&pid, &v) in &model {
        assert_eq!(
            store.read_page(PageId(pid), &mut buf).unwrap(),
            ReadOutcome::Found
        );
        assert_eq!(buf, sealed(pid, v, ps), "page {pid} after reopen");
    }
    // And after flushing everything home.
    store.flush_all().unwrap();
    assert_eq!(store.staged(), 0);
    for (&pid, &v) in &model {
        store.read_page(PageId(pid), &mut buf).unwrap();
        assert_eq!(buf, sealed(pid, v, ps), "page {pid} after flush_all");
    }
}

#[test]
fn model_ondemand_passive() {
    for seed in 0..4 {
        model_run(
            small(512, 8, Recognition::OnDemand, FlushMode::Passive),
            seed,
            3000,
            100,
        );
    }
}

#[test]
fn model_incremental_passive() {
    for seed in 0..4 {
        model_run(
            small(512, 8, Recognition::Incremental, FlushMode::Passive),
            seed,
            3000,
            100,
        );
    }
}

#[test]
fn model_incremental_proactive() {
    for seed in 0..4 {
        model_run(
            small(1024, 32, Recognition::Incremental, FlushMode::Proactive),
            seed,
            3000,
            200,
        );
    }
}

#[test]
fn model_one_slot() {
    model_run(
        small(512, 1, Recognition::OnDemand, FlushMode::Passive),
        7,
        500,
        10,
    );
    model_run(
        small(512, 1, Recognition::Incremental, FlushMode::Passive),
        8,
        500,
        10,
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn model_random_configs(seed in 0u64..1000, slots in 1u64..24, pages in 2u64..80,
                            incremental in any::<bool>(), proactive in any::<bool>()) {
        let recognition = if incremental || proactive { Recognition::Incremental } else { Recognition::OnDemand };
        let flush = if proactive { FlushMode::Proactive } else { FlushMode::Passive };
        model_run(small(512, slots, recognition, flush), seed, 600, pages);
    }
}

#[test]
fn updates_in_place_until_a_sync_then_out_of_place() {
    let cfg = small(512, 8, Recognition::Incremental, FlushMode::Passive);
    let s = StableBufferStore::create(MemDevice::new(0), cfg).unwrap();
    let full = DirtyRanges::full(512);
    s.write_page(PageId(3), &sealed(3, 1, 512), &full).unwrap();
    s.write_page(PageId(3), &sealed(3, 2, 512), &full).unwrap();
    let st = s.sb_stats();
    assert_eq!((st.new_stagings, st.in_place_updates), (1, 1));
    s.sync().unwrap();
    // The synced copy is promised: the update takes another slot, the old one is held.
    s.write_page(PageId(3), &sealed(3, 3, 512), &full).unwrap();
    let st = s.sb_stats();
    assert_eq!(st.out_of_place_updates, 1);
    assert_eq!(st.staged, 1);
    s.check_invariants().unwrap();
    // Reads: one device read each, from the slot.
    let r0 = s.device_stats().reads;
    let mut buf = vec![0u8; 512];
    s.read_page(PageId(3), &mut buf).unwrap();
    assert_eq!(buf, sealed(3, 3, 512));
    assert_eq!(s.device_stats().reads - r0, 1);
    assert_eq!(
        s.read_page(PageId(4), &mut buf).unwrap(),
        ReadOutcome::Unwritten
    );
}

#[test]
fn unsealed_or_misaddressed_writes_are_refused() {
    let s = StableBufferStore::create(
        MemDevice::new(0),
        small(512, 4, Recognition::OnDemand, FlushMode::Passive),
    )
    .unwrap();
    let full = DirtyRanges::full(512);
    let e = s
        .write_page(PageId(1), &sealed(2, 1, 512), &full)
        .unwrap_err();
    assert!(e.to_string().contains("page 2"), "{e}");
    let e = s.write_page(PageId(1), &[0u8; 512], &full).unwrap_err();
    assert!(e.to_string().contains("unsealed"), "{e}");
    let e = s.write_page(PageId(1), &[0u8; 100], &full).unwrap_err();
    assert!(e.to_string().contains("100 bytes"), "{e}");
    let mut p = sealed(1, 1, 512);
    p[200] ^= 1;
    let e = s.write_page(PageId(1), &p, &full).unwrap_err();
    assert!(e.to_string().contains("checksum"), "{e}");
    // Not poisoned by caller errors.
    s.write_page(PageId(1), &sealed(1, 1, 512), &full).unwrap();
}

#[test]
fn corrupt_staged_page_is_reported_never_returned() {
    let dev = Arc::new(MemDevice::new(0));
    let s = StableBufferStore::create(
        Arc::clone(&dev),
        small(512, 4, Recognition::OnDemand, FlushMode::Passive),
    )
    .unwrap();
    s.write_page(PageId(2), &sealed(2, 1, 512), &DirtyRanges::full(512))
        .unwrap();
    let off = s.layout().slot_offset(0) + 300;
    flashbuf_device::Device::write_at(dev.as_ref(), off, &[0xEE]).unwrap();
    let mut buf = vec![0u8; 512];
    let e = s.read_page(PageId(2), &mut buf).unwrap_err();
    assert!(
        matches!(e, StoreError::Corrupt { pid: PageId(2), .. }),
        "{e}"
    );
    assert!(buf.iter().all(|&b| b == 0));
}

#[test]
fn opening_with_another_format_is_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sb");
    let open = || FileDevice::open(&path, FileDeviceOptions::default()).unwrap();
    let cfg = small(4096, 16, Recognition::Incremental, FlushMode::Passive);
    {
        let s = StableBufferStore::create(open(), cfg.clone()).unwrap();
        s.write_page(PageId(1), &sealed(1, 1, 4096), &DirtyRanges::full(4096))
            .unwrap();
        s.sync().unwrap();
    }
    let e = StableBufferStore::open(
        open(),
        StableBufferConfig {
            page_size: 8192,
            staging_bytes: 16 * 8192,
            align_bytes: 8192,
            ..cfg.clone()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("page size 4096"), "{e}");
    let e = StableBufferStore::open(
        open(),
        StableBufferConfig {
            staging_bytes: 32 * 4096,
            ..cfg.clone()
        },
    )
    .unwrap_err();
    let m = e.to_string();
    assert!(m.contains("16 slots") && m.contains("32 slots"), "{m}");
    let e = DirectStore::open(open(), DirectStoreConfig::with_page_size(4096)).unwrap_err();
    assert!(e.to_string().contains("'stable-buffer' store"), "{e}");
    // Recognition and flushing may change between opens.
    let s = StableBufferStore::open(
        open(),
        StableBufferConfig {
            recognition: Recognition::OnDemand,
            ..cfg.clone()
        },
    )
    .unwrap();
    let mut buf = vec![0u8; 4096];
    assert_eq!(
        s.read_page(PageId(1), &mut buf).unwrap(),
        ReadOutcome::Found
    );
    drop(s);
    // A device holding a direct store, and an unformatted one.
    let d = MemDevice::new(0);
    let direct = DirectStore::create(d, DirectStoreConfig::with_page_size(4096)).unwrap();
    let e = StableBufferStore::open(direct.into_device(), cfg.clone()).unwrap_err();
    assert!(e.to_string().contains("'direct' store"), "{e}");
    let e = StableBufferStore::open(MemDevice::new(8192), cfg.clone()).unwrap_err();
    assert!(e.to_string().contains("not formatted"), "{e}");
    // The file lock refuses a second opener while the store is open.
    let _s = StableBufferStore::open(open(), cfg.clone()).unwrap();
    assert!(FileDevice::open(&path, FileDeviceOptions::default()).is_err());
}

#[test]
fn invalid_configurations_say_why() {
    let base = small(512, 4, Recognition::OnDemand, FlushMode::Proactive);
    let e = StableBufferStore::create(MemDevice::new(0), base.clone()).unwrap_err();
    assert!(e.to_string().contains("recognition=incremental"), "{e}");
    let e = StableBufferStore::create(
        MemDevice::new(0),
        StableBufferConfig {
            staging_bytes: 100,
            ..base.clone()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("slots"), "{e}");
    let e = StableBufferStore::create(
        MemDevice::new(0),
        StableBufferConfig {
            page_size: 1000,
            ..base.clone()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("power of two"), "{e}");
    assert!(Recognition::parse("greedy")
        .unwrap_err()
        .to_string()
        .contains("ondemand, incremental"));
    assert!(FlushMode::parse("lazy")
        .unwrap_err()
        .to_string()
        .contains("passive, proactive"));
}

#[test]
fn memory_is_at_most_16_bytes_per_slot() {
    for slots in [64u64, 256, 512, 1000, 1024, 4096, 65536] {
        let cfg = StableBufferConfig {
            staging_bytes: slots * 512,
            ..small(512, 1, Recognition::Incremental, FlushMode::Passive)
        };
        let s = StableBufferStore::create(MemDevice::new(0), cfg).unwrap();
        let m = s.memory();
        assert_eq!(u64::from(m.slots), slots);
        assert!(m.per_slot_bytes <= 16.0, "{slots} slots: {m:?}");
        eprintln!(
            "{slots} slots: {:.2} B/slot (SBTT {} B, bitmaps {} B)",
            m.per_slot_bytes, m.sbtt_bytes, m.bitmap_bytes
        );
    }
}

#[test]
fn flushes_choose_patterns_by_score() {
    // 16 slots; pages 100..116 form one run: the flush takes it whole (sequential).
    let cfg = small(512, 16, Recognition::OnDemand, FlushMode::Passive);
    let s = StableBufferStore::create(MemDevice::new(0), cfg).unwrap();
    let full = DirtyRanges::full(512);
    for pid in 100..116 {
        s.write_page(PageId(pid), &sealed(pid, 1, 512), &full)
            .unwrap();
    }
    s.write_page(PageId(5000), &sealed(5000, 1, 512), &full)
        .unwrap();
    let st = s.sb_stats();
    assert_eq!(st.flushes, [1, 0, 0]);
    assert_eq!(st.flushed_pages, [16, 0, 0]);
    assert_eq!(st.staged, 1);
    // 17 staging writes, 16 home writes, the superblock.
    let (staging, home, superblock) = (17, 16, 1);
    assert!(s.device_stats().writes >= staging + home + superblock);
}

#[test]
fn works_on_an_o_direct_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sb-direct");
    let opts = FileDeviceOptions {
        direct: true,
        ..FileDeviceOptions::default()
    };
    let Ok(dev) = FileDevice::open(&path, opts) else {
        eprintln!("skipped: the file system refuses O_DIRECT");
        return;
    };
    // Pages smaller than the device's alignment are refused up front.
    let e = StableBufferStore::create(
        dev,
        small(512, 8, Recognition::OnDemand, FlushMode::Passive),
    )
    .unwrap_err();
    assert!(e.to_string().contains("alignment"), "{e}");
    let cfg = small(4096, 8, Recognition::Incremental, FlushMode::Passive);
    let s = StableBufferStore::create(FileDevice::open(&path, opts).unwrap(), cfg.clone()).unwrap();
    let full = DirtyRanges::full(4096);
    for pid in 0..40u64 {
        s.write_page(PageId(pid), &sealed(pid, 1, 4096), &full)
            .unwrap();
    }
    s.sync().unwrap();
    drop(s);
    let s = StableBufferStore::open(FileDevice::open(&path, opts).unwrap(), cfg).unwrap();
    let mut buf = vec![0u8; 4096];
    for pid in 0..40u64 {
        s.read_page(PageId(pid), &mut buf).unwrap();
        assert_eq!(buf, sealed(pid, 1, 4096));
    }
    s.check_invariants().unwrap();
}
