#![allow(clippy::unwrap_used)]
//! Regression (found by `fuzz_store_open`): `DirectStore::open` accepted any data offset a
//! checksummed superblock named, as long as it was past the superblock. A garbled (or
//! hostile) offset of ~2^61 made the first write grow the device to exabytes and write
//! there (the memory device aborted the process allocating its chunk table; a file fails
//! with EFBIG and poisons); a misaligned offset broke `O_DIRECT` and shifted every page.
//! Fixed: open refuses an offset that is not a multiple of `max(page size, 4096)` or lies
//! beyond the end of the device, with a message naming it. Since format version 2 (issue
//! 11) the state record lies behind the superblock and the only valid offset is the one
//! the store writes, `Superblock::reserved_bytes(page size)`.

use flashbuf_core::page::crc32c;
use flashbuf_core::{page, DirtyRanges, PageId};
use flashbuf_device::fault::FaultDevice;
use flashbuf_device::Device;
use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore, Superblock};
use std::sync::Arc;

fn image_with_offset(data_offset: u64) -> Vec<u8> {
    let dev = Arc::new(FaultDevice::new(0));
    let s = DirectStore::create(dev.clone(), DirectStoreConfig::with_page_size(4096)).unwrap();
    let mut p = vec![0u8; 4096];
    page::seal(&mut p, PageId(0), 1);
    s.write_page(PageId(0), &p, &DirtyRanges::full(4096))
        .unwrap();
    s.sync().unwrap();
    let mut img = dev.durable_image();
    img[32..40].copy_from_slice(&data_offset.to_le_bytes());
    let c = crc32c(&img[..Superblock::BYTES - 4]);
    img[Superblock::BYTES - 4..Superblock::BYTES].copy_from_slice(&c.to_le_bytes());
    img
}

#[test]
fn absurd_or_misaligned_data_offsets_are_refused() {
    for off in [
        1u64 << 61,
        u64::MAX - 4095,
        4096 + 512,
        6000,
        1 << 30,
        4096,
        8192,
    ] {
        let dev = FaultDevice::from_image(image_with_offset(off));
        let Err(e) = DirectStore::open(dev, DirectStoreConfig::with_page_size(4096)) else {
            panic!("data offset {off} was accepted");
        };
        assert!(e.to_string().contains("data offset"), "offset {off}: {e}");
    }
    // The offset the store itself writes still opens.
    let off = Superblock::reserved_bytes(4096);
    let dev = FaultDevice::from_image(image_with_offset(off));
    assert!(off <= dev.len());
    assert!(DirectStore::open(dev, DirectStoreConfig::with_page_size(4096)).is_ok());
}
