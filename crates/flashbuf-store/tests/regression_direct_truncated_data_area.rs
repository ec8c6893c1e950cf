#![allow(clippy::unwrap_used)]
//! Regression (found with the corrupt-image corpus in `testdata/corrupt/`): a direct store
//! whose file was cut in the middle of a page opened without complaint; the cut page and
//! every page after it then read as *never written* — synced data silently gone — while
//! the store's own `check_invariants` called the same state a violation ("data area is
//! not whole pages"). The store only ever grows its data area by whole pages, so such a
//! length means outside damage. Fixed: open refuses it, naming the length.
//! A cut exactly at a page boundary could not be told from a shorter store by format
//! version 1; since version 2 (issue 11, `regression_truncated_store`) the state record's
//! durable extent refuses it too.

use flashbuf_core::{page, DirtyRanges, PageId};
use flashbuf_device::fault::FaultDevice;
use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore, Superblock};
use std::sync::Arc;

#[test]
fn a_data_area_cut_mid_page_is_refused() {
    for ps in [512usize, 4096, 8192] {
        let dev = Arc::new(FaultDevice::new(0));
        let s = DirectStore::create(dev.clone(), DirectStoreConfig::with_page_size(ps)).unwrap();
        for pid in 0..4 {
            let mut p = vec![7u8; ps];
            page::seal(&mut p, PageId(pid), 1);
            s.write_page(PageId(pid), &p, &DirtyRanges::full(ps))
                .unwrap();
        }
        s.sync().unwrap();
        let img = dev.durable_image();
        let data = Superblock::reserved_bytes(ps) as usize;
        for cut in [data + 1, data + ps / 2, data + 3 * ps + 100, img.len() - 1] {
            let d = FaultDevice::from_image(img[..cut].to_vec());
            let Err(e) = DirectStore::open(d, DirectStoreConfig::with_page_size(ps)) else {
                panic!("page size {ps}: a store cut at byte {cut} opened");
            };
            assert!(e.to_string().contains("truncated"), "{e}");
        }
        // Whole pages below the recorded extent are refused as well; the full image opens.
        let d = FaultDevice::from_image(img[..data + 2 * ps].to_vec());
        let e = DirectStore::open(d, DirectStoreConfig::with_page_size(ps)).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
        assert!(DirectStore::open(
            FaultDevice::from_image(img),
            DirectStoreConfig::with_page_size(ps)
        )
        .is_ok());
    }
}
