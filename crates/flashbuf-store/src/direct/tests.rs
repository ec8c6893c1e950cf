//! Unit tests of the direct store.

use super::*;
use flashbuf_device::{FileDevice, FileDeviceOptions, MemDevice};

fn sealed(pid: u64, fill: u8, ps: usize) -> Vec<u8> {
    let mut p = vec![fill; ps];
    page::seal(&mut p, PageId(pid), 1);
    p
}

#[test]
fn corrupt_page_is_reported_never_returned() {
    let s = DirectStore::create(MemDevice::new(0), DirectStoreConfig::default()).unwrap();
    s.write_page(PageId(2), &sealed(2, 0x5a, 4096), &DirtyRanges::full(4096))
        .unwrap();
    // Flip one byte of the stored page behind the store's back.
    let off = s.offset_of(PageId(2)).unwrap() + 1000;
    s.device().write_at(off, &[0xa5]).unwrap();
    let mut buf = vec![0u8; 4096];
    let e = s.read_page(PageId(2), &mut buf).unwrap_err();
    assert!(
        matches!(e, StoreError::Corrupt { pid: PageId(2), .. }),
        "{e}"
    );
    assert!(e.to_string().contains("page 2 is corrupt"), "{e}");
    assert!(
        buf.iter().all(|&b| b == 0),
        "corrupt bytes leaked to the caller"
    );
}

#[test]
fn misdirected_page_is_corrupt() {
    let s = DirectStore::create(MemDevice::new(0), DirectStoreConfig::default()).unwrap();
    let p = sealed(5, 1, 4096);
    s.write_page(PageId(5), &p, &DirtyRanges::full(4096))
        .unwrap();
    // Copy page 5's bytes into page 6's slot.
    s.device().set_len(s.device().len() + 4096).unwrap();
    let off6 = s.offset_of(PageId(6)).unwrap();
    s.device().write_at(off6, &p).unwrap();
    let mut buf = vec![0u8; 4096];
    let e = s.read_page(PageId(6), &mut buf).unwrap_err();
    assert!(e.to_string().contains("holds page 5"), "{e}");
}

#[test]
fn wrong_page_size_and_wrong_magic_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    {
        let d = FileDevice::open(&path, FileDeviceOptions::default()).unwrap();
        let s = DirectStore::create(d, DirectStoreConfig::with_page_size(8192)).unwrap();
        s.write_page(PageId(0), &sealed(0, 3, 8192), &DirtyRanges::full(8192))
            .unwrap();
        s.sync().unwrap();
    }
    let d = FileDevice::open(&path, FileDeviceOptions::default()).unwrap();
    let e = DirectStore::open(d, DirectStoreConfig::with_page_size(4096)).unwrap_err();
    assert!(e.to_string().contains("page size 8192"), "{e}");
    // Reopen with the right size works and serves the page.
    let d = FileDevice::open(&path, FileDeviceOptions::default()).unwrap();
    let s = DirectStore::open(d, DirectStoreConfig::with_page_size(8192)).unwrap();
    let mut buf = vec![0u8; 8192];
    assert_eq!(
        s.read_page(PageId(0), &mut buf).unwrap(),
        ReadOutcome::Found
    );
    // Garble the magic.
    s.device().write_at(0, b"NOTFLASH").unwrap();
    drop(s);
    let d = FileDevice::open(&path, FileDeviceOptions::default()).unwrap();
    let e = DirectStore::open(d, DirectStoreConfig::with_page_size(8192)).unwrap_err();
    assert!(e.to_string().contains("wrong magic"), "{e}");
}

#[test]
fn unsealed_or_misaddressed_writes_are_refused() {
    let s = DirectStore::create(MemDevice::new(0), DirectStoreConfig::default()).unwrap();
    let e = s
        .write_page(PageId(1), &sealed(2, 0, 4096), &DirtyRanges::new())
        .unwrap_err();
    assert!(matches!(e, StoreError::Invalid(_)));
    let e = s
        .write_page(PageId(1), &[0u8; 100], &DirtyRanges::new())
        .unwrap_err();
    assert!(e.to_string().contains("100 bytes"));
}

#[test]
fn batch_write_and_stats() {
    let s = DirectStore::create(MemDevice::new(0), DirectStoreConfig::with_page_size(512)).unwrap();
    let pages: Vec<Vec<u8>> = (0..4).map(|i| sealed(i, i as u8, 512)).collect();
    let batch: Vec<PageWrite<'_>> = pages
        .iter()
        .enumerate()
        .map(|(i, p)| PageWrite {
            pid: PageId(i as u64),
            page: p,
            dirty: DirtyRanges::full(512),
        })
        .collect();
    s.write_pages(&batch).unwrap();
    let mut buf = vec![0u8; 512];
    for i in 0..4u64 {
        assert_eq!(
            s.read_page(PageId(i), &mut buf).unwrap(),
            ReadOutcome::Found
        );
        assert_eq!(buf[100], i as u8);
    }
    let st = s.stats();
    assert_eq!((st.page_writes, st.batches, st.page_reads), (4, 1, 4));
    s.check_invariants().unwrap();
}

#[test]
fn prefetch_page_is_only_a_hint() {
    let s = DirectStore::create(MemDevice::new(0), DirectStoreConfig::default()).unwrap();
    s.write_page(PageId(3), &sealed(3, 7, 4096), &DirtyRanges::full(4096))
        .unwrap();
    let (stats, dev) = (s.stats(), s.device_stats());
    // Written, never written, beyond the device, beyond the addressable range.
    for pid in [3, 4, 1 << 30, u64::MAX] {
        s.prefetch_page(PageId(pid));
    }
    assert_eq!((s.stats(), s.device_stats()), (stats, dev));
    let mut buf = vec![0u8; 4096];
    assert_eq!(
        s.read_page(PageId(3), &mut buf).unwrap(),
        ReadOutcome::Found
    );
    assert_eq!(buf, sealed(3, 7, 4096));
}
