//! Regression: the VFS record was sealed with the same version (`epoch << 32`) every time
//! it was written within one opening, so StableBuffer's recovery — which keeps a staged
//! copy only if its version is larger than the home copy's — could serve an older record
//! (a stale file size) after a reopen: SQLite then reported "database disk image is
//! malformed". Every write of the record now takes the next version of the epoch.
#![allow(clippy::unwrap_used)]

use flashbuf_device::MemDevice;
use flashbuf_sqlite::{store_on, Cache, FlashDb};
use flashbuf_store::registry::StoreContext;
use std::sync::Arc;

#[test]
fn regression_meta_version_file_size_survives_reopen_on_stable_buffer() {
    let dev = Arc::new(MemDevice::new(0));
    let ctx = StoreContext::new(4096);
    let spec = "stable-buffer:slots=16";
    let mut page = vec![0u8; 4096];
    page[..16].copy_from_slice(b"SQLite format 3\0");
    page[16..18].copy_from_slice(&4096u16.to_be_bytes());
    page[20] = 32;
    let mut expected = 0;
    for round in 1..=6u64 {
        let store = store_on(spec, Box::new(dev.clone()), &ctx, round == 1).unwrap();
        let db = FlashDb::open(store, Cache::PassThrough).unwrap();
        assert_eq!(db.file_size(), expected, "round {round}");
        // Grow the file twice per opening, by more pages than the 16 staging slots hold
        // (so the record's earlier copy is flushed home): record writes in one epoch.
        for _ in 0..2 {
            for _ in 0..20 {
                db.write(db.file_size(), &page).unwrap();
            }
            db.sync().unwrap();
        }
        expected = db.file_size();
        db.check_invariants().unwrap();
    }
    assert_eq!(expected, 6 * 40 * 4096);
}
