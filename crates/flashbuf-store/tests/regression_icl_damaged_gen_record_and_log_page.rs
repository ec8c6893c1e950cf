#![allow(clippy::unwrap_used)]
//! Regression (found by `fuzz_store_open` in CI, stop 20): an ICL store whose newest
//! generation record and one promised log page were both damaged at rest served an older
//! version of a page. With one copy per generation record, losing the newest fell back to
//! the previous record, which knows nothing of the last sync's log pages, so the damaged
//! log page read as an unsynced tail and page 2's newest change was silently dropped
//! ("store 'icl' returned bytes for page 2 that were never written there"). Each record now
//! goes to both pages (the second after the first is synced): the promise survives.

use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::fault::FaultDevice;
use flashbuf_store::{ReadOutcome, Superblock};
use flashbuf_testkit::content::filled_page;
use flashbuf_testkit::CrashStore;

#[test]
fn regression_icl_damaged_gen_record_and_log_page() {
    let ps = 512;
    let icl = CrashStore::variants()
        .unwrap()
        .into_iter()
        .find(|f| f.name.starts_with("icl"))
        .unwrap();
    let dev = std::sync::Arc::new(FaultDevice::new(0));
    let s = icl.create(Box::new(dev.clone()), ps).unwrap();
    for pid in 0..6u64 {
        let p = filled_page(ps, PageId(pid), pid + 1, 3);
        let mut before = p.clone();
        before[100..150].fill(0);
        flashbuf_core::page::seal(&mut before, PageId(pid), pid);
        s.write_page(PageId(pid), &before, &DirtyRanges::full(ps))
            .unwrap();
        if pid == 2 {
            s.sync().unwrap();
        }
        let mut d = DirtyRanges::new();
        d.add(0, HEADER_BYTES);
        d.add(100, 50);
        s.write_page(PageId(pid), &p, &d).unwrap();
    }
    s.sync().unwrap();
    let mut img = dev.durable_image();
    // The fuzzer's case: block 2 (the double-write directory) over block 1 (a generation
    // record), block 0 (the other generation record) over block 6 (log page 1).
    let base = Superblock::reserved_bytes(ps) as usize;
    for (from, to) in [(2usize, 1usize), (0, 6)] {
        let src = img[base + from * ps..base + (from + 1) * ps].to_vec();
        img[base + to * ps..base + (to + 1) * ps].copy_from_slice(&src);
    }
    let Ok(store) = icl.open(Box::new(FaultDevice::from_image(img)), ps) else {
        return; // refusing is allowed; serving an older version is not
    };
    let mut buf = vec![0u8; ps];
    for pid in 0..6u64 {
        if let Ok(ReadOutcome::Found) = store.read_page(PageId(pid), &mut buf) {
            let want = filled_page(ps, PageId(pid), pid + 1, 3);
            assert!(
                buf[HEADER_BYTES..] == want[HEADER_BYTES..],
                "page {pid}: an older version was served"
            );
        }
    }
}
