#![allow(clippy::unwrap_used)]
//! Regression (issue 11, found by the damage-at-rest fuzzer `fuzz_damage_at_rest.rs`: the
//! direct store, page size 1024, sectors 48 and 49 of its image zeroed): a page that was
//! written and synced, then zeroed entirely at rest (a trimmed or unmapped block), read as
//! *never written* — the store served "unwritten" where it had promised data. The direct
//! store kept no record of which pages it had written. Fixed: the written-page map in the
//! state record (`written_map.rs`); such a page is reported corrupt (`Zeroed`), on every
//! open, while a page never written still reads unwritten.

use flashbuf_core::page::PageCheckError;
use flashbuf_core::{page, DirtyRanges, PageId};
use flashbuf_device::fault::FaultDevice;
use flashbuf_store::{
    DirectStore, DirectStoreConfig, PageStore, ReadOutcome, StoreError, Superblock,
};
use std::sync::Arc;

fn cfg(ps: usize) -> DirectStoreConfig {
    DirectStoreConfig {
        page_size: ps,
        grow_bytes: 64 << 10,
        ..Default::default()
    }
}

fn sealed(pid: u64, ps: usize) -> Vec<u8> {
    let mut p = vec![pid as u8 | 1; ps];
    page::seal(&mut p, PageId(pid), 1);
    p
}

#[test]
fn a_synced_page_zeroed_at_rest_is_reported_not_unwritten() {
    for ps in [1024usize, 8192] {
        let dev = Arc::new(FaultDevice::new(0));
        let s = DirectStore::create(dev.clone(), cfg(ps)).unwrap();
        // Two ranges of written pages with a hole between them.
        for pid in (0..6).chain(9..12) {
            s.write_page(PageId(pid), &sealed(pid, ps), &DirtyRanges::full(ps))
                .unwrap();
        }
        s.sync().unwrap();
        let mut img = dev.durable_image();
        let data = Superblock::reserved_bytes(ps) as usize;
        for pid in [0usize, 4, 10] {
            img[data + pid * ps..data + (pid + 1) * ps].fill(0);
        }
        for open in 0..2 {
            let s = DirectStore::open(FaultDevice::from_image(img.clone()), cfg(ps)).unwrap();
            let mut buf = vec![0u8; ps];
            for pid in [0u64, 4, 10] {
                match s.read_page(PageId(pid), &mut buf) {
                    Err(StoreError::Corrupt {
                        pid: p,
                        reason: PageCheckError::Zeroed,
                    }) => assert_eq!(p, PageId(pid)),
                    other => panic!("page size {ps}, open {open}: {pid} read {other:?}"),
                }
            }
            for pid in [1u64, 5, 9, 11] {
                assert_eq!(
                    s.read_page(PageId(pid), &mut buf).unwrap(),
                    ReadOutcome::Found
                );
            }
            for pid in [6u64, 8, 12, 1000] {
                assert_eq!(
                    s.read_page(PageId(pid), &mut buf).unwrap(),
                    ReadOutcome::Unwritten,
                    "{pid} was never written"
                );
            }
        }
    }
}

#[test]
fn a_page_written_but_never_synced_may_read_unwritten_after_a_crash() {
    let ps = 4096;
    let dev = Arc::new(FaultDevice::new(0));
    let s = DirectStore::create(dev.clone(), cfg(ps)).unwrap();
    s.write_page(PageId(0), &sealed(0, ps), &DirtyRanges::full(ps))
        .unwrap();
    s.sync().unwrap();
    // Written after the last sync: lost in the crash, and never promised.
    s.write_page(PageId(1), &sealed(1, ps), &DirtyRanges::full(ps))
        .unwrap();
    let s = DirectStore::open(FaultDevice::from_image(dev.durable_image()), cfg(ps)).unwrap();
    let mut buf = vec![0u8; ps];
    assert_eq!(
        s.read_page(PageId(0), &mut buf).unwrap(),
        ReadOutcome::Found
    );
    assert_eq!(
        s.read_page(PageId(1), &mut buf).unwrap(),
        ReadOutcome::Unwritten
    );
    // A sync that wrote no new page commits nothing.
    let writes = s.device_stats().writes;
    s.sync().unwrap();
    assert_eq!(s.device_stats().writes, writes);
}
