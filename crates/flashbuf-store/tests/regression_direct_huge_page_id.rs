#![allow(clippy::unwrap_used)]
//! Regression (found by `fuzz_store_open`): reading or writing a page id whose offset fits
//! in a `u64` but whose *end* does not (`pid ≈ u64::MAX / page_size`) overflowed
//! `offset + page_size` in `DirectStore::read_page`: a panic with overflow checks, and in
//! release builds a wrapped end that sent the read to the device, whose out-of-range error
//! then *poisoned the store* — one bad page id took the whole store down.
//! Fixed: `offset_of` refuses any page whose end is not addressable (`StoreError::Invalid`),
//! and an invalid request never poisons.

use flashbuf_core::{page, DirtyRanges, PageId};
use flashbuf_device::MemDevice;
use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore, ReadOutcome, StoreError};

#[test]
fn page_ids_at_the_end_of_the_address_space_are_invalid_not_fatal() {
    for ps in [512usize, 4096, 8192] {
        let s =
            DirectStore::create(MemDevice::new(0), DirectStoreConfig::with_page_size(ps)).unwrap();
        let mut good = vec![0u8; ps];
        page::seal(&mut good, PageId(1), 1);
        s.write_page(PageId(1), &good, &DirtyRanges::full(ps))
            .unwrap();
        let mut buf = vec![0u8; ps];
        let p = ps as u64;
        for pid in [
            u64::MAX,
            u64::MAX / p,
            u64::MAX / p - 1,
            (u64::MAX - 4096) / p,
            (u64::MAX - p - 4096) / p + 1,
        ] {
            let e = s.read_page(PageId(pid), &mut buf).unwrap_err();
            assert!(matches!(e, StoreError::Invalid(_)), "read {pid}: {e}");
            let mut bad = vec![0u8; ps];
            page::seal(&mut bad, PageId(pid), 1);
            let e = s
                .write_page(PageId(pid), &bad, &DirtyRanges::full(ps))
                .unwrap_err();
            assert!(matches!(e, StoreError::Invalid(_)), "write {pid}: {e}");
        }
        // The store is not poisoned: page 1 still reads.
        assert_eq!(
            s.read_page(PageId(1), &mut buf).unwrap(),
            ReadOutcome::Found
        );
        s.sync().unwrap();
    }
}

/// Regression (issue 6's leftover): a page id whose offset is addressable but far beyond
/// any memory (`pid = 2^40` with 4 KiB pages: byte 2^52) made the memory device size its
/// chunk index for that offset, an allocation that aborted the process. The memory device
/// now has a 1 TiB address space (`max_len`), and the direct store refuses a write beyond
/// its device's capacity as `Full`, before any I/O and without poisoning.
#[test]
fn page_ids_beyond_the_device_capacity_are_full_not_fatal() {
    let ps = 4096usize;
    let s = DirectStore::create(MemDevice::new(0), DirectStoreConfig::with_page_size(ps)).unwrap();
    let full = DirtyRanges::full(ps);
    let mut good = vec![0u8; ps];
    page::seal(&mut good, PageId(1), 1);
    s.write_page(PageId(1), &good, &full).unwrap();
    let cap_pages = flashbuf_device::MEM_DEVICE_MAX_BYTES / ps as u64;
    for pid in [1u64 << 40, cap_pages + 1, u64::MAX / ps as u64 / 2] {
        let mut bad = vec![0u8; ps];
        page::seal(&mut bad, PageId(pid), 1);
        let e = s.write_page(PageId(pid), &bad, &full).unwrap_err();
        assert!(matches!(e, StoreError::Full(_)), "write {pid}: {e}");
        let e = s
            .write_pages(&[flashbuf_store::PageWrite {
                pid: PageId(pid),
                page: &bad,
                dirty: full,
            }])
            .unwrap_err();
        assert!(matches!(e, StoreError::Full(_)), "batch {pid}: {e}");
        // Reading it is fine: never written.
        let mut buf = vec![0u8; ps];
        assert_eq!(
            s.read_page(PageId(pid), &mut buf).unwrap(),
            ReadOutcome::Unwritten
        );
    }
    let mut buf = vec![0u8; ps];
    assert_eq!(
        s.read_page(PageId(1), &mut buf).unwrap(),
        ReadOutcome::Found
    );
    s.sync().unwrap();
}
