#![allow(clippy::unwrap_used)]
//! Regression (issue 11, bug E): StableBuffer accepted a store file truncated mid-page
//! (the direct store refused it: "not whole pages") and the cut page read as `Unwritten`;
//! both stores read a file truncated by whole pages as `Unwritten` — only the torture
//! journal noticed. Now every store keeps a durable record of its data area's extent (an
//! A/B state record behind the superblock, format version 2) and refuses, from the store
//! alone, a file shorter than that extent.

use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::fault::FaultDevice;
use flashbuf_store::{ReadOutcome, StoreError};
use flashbuf_testkit::content::filled_page;
use flashbuf_testkit::CrashStore;
use std::sync::Arc;

/// A synced store image with pages `0..n` written (enough to grow the data area).
fn image(store: &CrashStore, ps: usize, n: u64) -> Vec<u8> {
    let dev = Arc::new(FaultDevice::new(0));
    let s = store.create(Box::new(dev.clone()), ps).unwrap();
    for pid in 0..n {
        let p = filled_page(ps, PageId(pid), 1, 9);
        s.write_page(PageId(pid), &p, &DirtyRanges::full(ps))
            .unwrap();
    }
    s.sync().unwrap();
    drop(s);
    dev.durable_image()
}

#[test]
fn a_truncated_store_is_refused_from_the_store_alone() {
    for f in &CrashStore::variants().unwrap() {
        for ps in [512usize, 4096] {
            // 40 pages: more than the 16 staging slots, so StableBuffer flushes home too.
            let img = image(f, ps, 40);
            let intact = f
                .open(Box::new(FaultDevice::from_image(img.clone())), ps)
                .unwrap();
            let mut buf = vec![0u8; ps];
            for pid in 0..40 {
                assert_eq!(
                    intact.read_page(PageId(pid), &mut buf).unwrap(),
                    ReadOutcome::Found,
                    "{} {ps}: page {pid}",
                    f.name
                );
            }
            drop(intact);
            for cut in [ps / 2, ps, 2 * ps + ps / 2, 8 * ps] {
                let mut short = img.clone();
                short.truncate(img.len() - cut);
                match f.open(Box::new(FaultDevice::from_image(short)), ps) {
                    Err(e @ StoreError::Format(_)) => assert!(
                        e.to_string().contains("truncated"),
                        "{} {ps}, cut {cut}: {e}",
                        f.name
                    ),
                    Err(e) => panic!("{} {ps}, cut {cut}: refused with {e}", f.name),
                    Ok(s) => {
                        let unwritten = (0..40)
                            .filter(|&p| {
                                matches!(
                                    s.read_page(PageId(p), &mut buf),
                                    Ok(ReadOutcome::Unwritten)
                                )
                            })
                            .count();
                        panic!(
                            "{} {ps}: a file cut by {cut} bytes opened ({unwritten} synced pages read as unwritten)",
                            f.name
                        );
                    }
                }
            }
        }
    }
}
