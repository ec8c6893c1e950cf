#![allow(clippy::unwrap_used)]
//! Regression (found by the damage-at-rest fuzzer, `fuzz_damage_at_rest.rs`, once the log
//! store joined the store table): a block written before a caller's `sync` and damaged at
//! rest came back as its page's *older* version. Recovery knew what was promised only from
//! the durable horizons later blocks carry; the blocks of the last sync's tail have no
//! later block, so a damaged one looked like a torn, never-promised tail: it and every
//! block after it were cut, and their pages read their previous copies. Fixed: a caller's
//! sync records what it promised in the state record (A/B, `crate::state`) unless a
//! checkpoint covers it, and recovery refuses to cut below that promise (a damaged
//! promised block is then reported, or the open refused).

use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::fault::FaultDevice;
use flashbuf_device::Device;
use flashbuf_store::log_store::{LogStore, LogStoreConfig, TimeBase};
use flashbuf_store::{PageStore, ReadOutcome, StoreError};
use flashbuf_testkit::content::{filled_page, stamp_of};
use std::sync::Arc;

const PS: usize = 4096;

fn config() -> LogStoreConfig {
    let mut c = LogStoreConfig {
        segment_bytes: 8 * PS as u64,
        capacity_bytes: Some(64 * 8 * PS as u64),
        logical_pages: Some(64),
        align_bytes: PS as u64,
        time_base: TimeBase::Writes,
        checkpoint_segments: Some(1000),
        ..LogStoreConfig::with_page_size(PS)
    };
    c.cleaner.background = false;
    c
}

#[test]
fn a_damaged_block_of_the_synced_tail_is_never_served_old() {
    for victim in [9u64, 7, 5] {
        let dev = Arc::new(FaultDevice::new(0));
        let store = LogStore::create(dev.clone(), config()).unwrap();
        for round in 0..2u64 {
            for pid in 0..10u64 {
                let p = filled_page(PS, PageId(pid), round * 100 + pid + 1, 3);
                store
                    .write_page(PageId(pid), &p, &DirtyRanges::full(PS))
                    .unwrap();
            }
            store.sync().unwrap();
        }
        // The newest copy of `victim` is in the last sync's tail: flip a byte of its data.
        let at = store
            .layout()
            .addr_byte_offset(store.location(PageId(victim)).unwrap());
        drop(store);
        let mut img = dev.durable_image();
        img[at as usize + 1000] ^= 0x40;
        let damaged = FaultDevice::from_image(img);
        assert_eq!(damaged.len(), dev.len());
        let reopened = match LogStore::open(damaged, config()) {
            Ok(s) => s,
            Err(StoreError::Format(_)) => continue,
            Err(e) => panic!("{e}"),
        };
        let mut buf = vec![0u8; PS];
        for pid in 0..10u64 {
            match reopened.read_page(PageId(pid), &mut buf) {
                Ok(ReadOutcome::Found) => {
                    let tag = stamp_of(&buf[flashbuf_core::page::HEADER_BYTES..]).map(|s| s.1);
                    assert_eq!(
                        tag,
                        Some(100 + pid + 1),
                        "page {pid} (victim {victim}) served old"
                    );
                }
                Ok(ReadOutcome::Unwritten) => panic!("page {pid} reads unwritten"),
                Err(StoreError::Corrupt { .. }) => assert_eq!(pid, victim),
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(reopened.recovery_report().unwrap().damaged_blocks, 1);
    }
}
