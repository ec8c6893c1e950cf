//! Stores with metadata-only pages (`--data none`, `DataMode::Metadata`): the direct store
//! and StableBuffer (both recognition methods, flushes happening) agree with a `HashMap`
//! model over a seeded mix of single writes, batches, reads and syncs; the same sequence
//! with whole pages costs a simulated device exactly the same and gives the same store
//! figures; a reopened StableBuffer recovers every synced page from its metadata-only
//! slots; a store formatted in one mode is refused in the other; a damaged head reads
//! corrupt; the store table refuses the mode for the stores that do not take it.

use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{page, DataMode, DirtyRanges, PageId, METADATA_PAGE_BYTES};
use flashbuf_device::sim::{Precondition, SimDevice};
use flashbuf_device::{Device, MemDevice};
use flashbuf_store::registry::{self, MetadataOnly, StoreContext, STORES};
use flashbuf_store::stable_buffer::{PatternCosts, Recognition};
use flashbuf_store::{
    DirectStore, DirectStoreConfig, PageStore, ReadOutcome, StableBufferConfig, StableBufferStore,
    StoreError, Superblock,
};
use std::collections::HashMap;
use std::sync::Arc;

mod metadata_support;
use metadata_support::{sealed, write_batch, write_one};

const PS: usize = 4096;

fn cfg(data: DataMode) -> DirectStoreConfig {
    DirectStoreConfig {
        data,
        ..DirectStoreConfig::with_page_size(PS)
    }
}

/// Runs a seeded mix on `store` against a model; returns the store's device counters.
fn model_run<S: PageStore>(store: &S, seed: u64) -> flashbuf_core::DeviceStats {
    let len = store.page_size();
    let mut rng = SplitMix64::new(seed);
    let mut model: HashMap<u64, u64> = HashMap::new();
    let mut buf = vec![0u8; len];
    for step in 1..=800u64 {
        let pid = rng.below(300);
        match rng.below(10) {
            0..=3 => {
                write_one(store, pid, step);
                model.insert(pid, step);
            }
            4..=5 => {
                let pids: Vec<u64> = (0..1 + rng.below(6)).map(|k| (pid + k) % 300).collect();
                let mut pids = pids;
                pids.dedup();
                write_batch(store, &pids, step);
                for q in pids {
                    model.insert(q, step);
                }
            }
            6..=8 => {
                let got = store.read_page(PageId(pid), &mut buf).expect("read");
                match model.get(&pid) {
                    Some(&v) => {
                        assert_eq!(got, ReadOutcome::Found, "{pid}");
                        assert_eq!(page::version_of(&buf), v, "{pid}");
                        assert_eq!(
                            buf[page::HEADER_BYTES..page::HEADER_BYTES + 8],
                            v.to_le_bytes()
                        );
                    }
                    None => assert_eq!(got, ReadOutcome::Unwritten, "{pid}"),
                }
            }
            _ => store.sync().expect("sync"),
        }
    }
    store.check_invariants().expect("invariants");
    store.device_stats()
}

/// A StableBuffer of 24 slots (flushes every few dozen writes) in mode `data`.
fn sb_cfg(recognition: Recognition, data: DataMode) -> StableBufferConfig {
    StableBufferConfig {
        staging_bytes: 24 * PS as u64,
        recognition,
        costs: PatternCosts {
            theta_min_bytes: 2 * PS as u64,
            focused_area_bytes: 16 * PS as u64,
            ..PatternCosts::default()
        },
        align_bytes: PS as u64,
        grow_bytes: 16 * PS as u64,
        salt: Some(7),
        data,
        ..StableBufferConfig::with_page_size(PS)
    }
}

#[test]
fn stable_buffer_metadata_pages_match_a_model_and_cost_what_whole_pages_cost() {
    for recognition in [Recognition::OnDemand, Recognition::Incremental] {
        for seed in [4, 5] {
            let meta = StableBufferStore::create(sim(), sb_cfg(recognition, DataMode::Metadata))
                .expect("create");
            assert_eq!(meta.page_size(), METADATA_PAGE_BYTES);
            let bytes = StableBufferStore::create(sim(), sb_cfg(recognition, DataMode::Bytes))
                .expect("create");
            let (m, b) = (model_run(&meta, seed), model_run(&bytes, seed));
            assert_eq!(
                m, b,
                "{recognition:?} seed {seed}: the device saw other requests"
            );
            assert_eq!(meta.stats(), bytes.stats());
            // Memory figures aside (the kept I/O buffers hold heads in one mode, pages in
            // the other), the same report.
            let report = |s: &StableBufferStore<_>| {
                let mut r = s.report();
                r.retain(|(k, _)| !k.ends_with("_memory_bytes"));
                r
            };
            assert_eq!(report(&meta), report(&bytes), "flushes, patterns, slots");
            let flushes = meta
                .report()
                .iter()
                .find(|(k, _)| k.contains("flush"))
                .cloned();
            assert!(flushes.is_some_and(|(_, v)| v > 0.0), "flushes happened");
        }
    }
}

#[test]
fn stable_buffer_recovers_metadata_only_slots() {
    let dev = Arc::new(MemDevice::new(0));
    let cfg = sb_cfg(Recognition::Incremental, DataMode::Metadata);
    let s = StableBufferStore::create(dev.clone(), cfg.clone()).expect("create");
    let mut want = HashMap::new();
    for step in 1..=60u64 {
        let pid = PageId(step * 7 % 40);
        let p = sealed(METADATA_PAGE_BYTES, pid, step);
        s.write_page(pid, &p, &DirtyRanges::full(p.len()))
            .expect("write");
        want.insert(pid, step);
    }
    s.sync().expect("sync");
    drop(s);
    let s = StableBufferStore::open(dev.clone(), cfg).expect("reopen");
    let mut buf = vec![0u8; METADATA_PAGE_BYTES];
    for (&pid, &v) in &want {
        assert_eq!(
            s.read_page(pid, &mut buf).expect("read"),
            ReadOutcome::Found
        );
        assert_eq!(page::version_of(&buf), v, "{pid}");
    }
    drop(s);
    let e = match StableBufferStore::open(dev, sb_cfg(Recognition::Incremental, DataMode::Bytes)) {
        Ok(_) => panic!("a metadata-only store opened for bytes"),
        Err(e) => e,
    };
    assert!(e.to_string().contains("--data bytes"), "{e}");
}

fn sim() -> SimDevice {
    let d = SimDevice::by_name("sd-card", 8 << 20, 1).expect("sim");
    d.precondition_as(Precondition::Sequential);
    d
}

#[test]
fn direct_metadata_pages_match_a_model_and_cost_what_whole_pages_cost() {
    for seed in [1, 2, 3] {
        let meta = DirectStore::create(sim(), cfg(DataMode::Metadata)).expect("create");
        assert_eq!(meta.page_size(), METADATA_PAGE_BYTES);
        let bytes = DirectStore::create(sim(), cfg(DataMode::Bytes)).expect("create");
        assert_eq!(bytes.page_size(), PS);
        let (m, b) = (model_run(&meta, seed), model_run(&bytes, seed));
        assert_eq!(m, b, "seed {seed}: the device saw different requests");
        assert!(
            m.device_time_us > 0.0 && m.erases > 0,
            "the workload reached the flash"
        );
        assert_eq!(meta.stats(), bytes.stats());
    }
}

#[test]
fn a_store_is_refused_in_the_other_mode() {
    for (made, asked) in [
        (DataMode::Metadata, DataMode::Bytes),
        (DataMode::Bytes, DataMode::Metadata),
    ] {
        let dev = Arc::new(MemDevice::new(0));
        let s = DirectStore::create(dev.clone(), cfg(made)).expect("create");
        let p = sealed(made.buffer_bytes(PS), PageId(1), 1);
        s.write_page(PageId(1), &p, &DirtyRanges::full(p.len()))
            .expect("write");
        s.sync().expect("sync");
        drop(s);
        let e = DirectStore::open(dev.clone(), cfg(asked)).expect_err("other mode");
        assert!(
            matches!(&e, StoreError::Format(m) if m.contains(&format!("--data {asked}"))),
            "{e}"
        );
        DirectStore::open(dev, cfg(made)).expect("same mode opens");
    }
}

#[test]
fn a_damaged_head_reads_corrupt() {
    let dev = Arc::new(MemDevice::new(0));
    let s = DirectStore::create(dev.clone(), cfg(DataMode::Metadata)).expect("create");
    let p = sealed(METADATA_PAGE_BYTES, PageId(5), 3);
    s.write_page(PageId(5), &p, &DirtyRanges::full(p.len()))
        .expect("write");
    s.sync().expect("sync");
    // Flip a stamp byte of page 5 at rest: page 5 starts at the data offset + 5 pages.
    let data_offset = Superblock::reserved_bytes(PS);
    let at = data_offset + 5 * PS as u64 + page::HEADER_BYTES as u64;
    let mut b = [0u8; 1];
    dev.read_at(at, &mut b).expect("read");
    dev.write_at(at, &[b[0] ^ 0xFF]).expect("damage");
    let mut buf = vec![0u8; METADATA_PAGE_BYTES];
    let e = s.read_page(PageId(5), &mut buf).expect_err("corrupt");
    assert!(
        matches!(e, StoreError::Corrupt { pid: PageId(5), .. }),
        "{e}"
    );
    assert!(
        buf.iter().all(|&x| x == 0),
        "corrupt bytes are never handed out"
    );
}

#[test]
fn the_store_table_says_which_stores_take_metadata_only_pages() {
    let ctx = StoreContext {
        data: DataMode::Metadata,
        data_pages: 256, // the log-structured store sizes itself by the data
        ..StoreContext::new(PS)
    };
    for entry in STORES {
        let parsed = registry::parse_text(entry.name).expect("parse");
        let made = parsed.create(Box::new(MemDevice::new(0)), &ctx);
        match entry.metadata_only {
            MetadataOnly::Supported => {
                let store = made.expect("supported");
                assert_eq!(store.page_size(), METADATA_PAGE_BYTES, "{}", entry.name);
            }
            MetadataOnly::Unsupported(why) => {
                let e = made.err().expect("refused").to_string();
                assert!(
                    e.contains("--data none is not supported") && e.contains(why),
                    "{e}"
                );
            }
        }
    }
    assert!(STORES
        .iter()
        .any(|e| e.metadata_only == MetadataOnly::Supported));
}
