//! Generators of the StableBuffer images (`sb-*`) of `fuzz_corrupt_images`.

use super::{reseal, PAGES, SEED};
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::fault::FaultDevice;
use flashbuf_store::stable_buffer::{Recognition, StableBufferConfig, StableBufferStore};
use flashbuf_store::{PageStore, Superblock};
use flashbuf_testkit::content::filled_page;
use std::sync::Arc;

/// StableBuffer as the harness factory opens it (16 slots), formatted with small alignment
/// so that the images stay small.
fn sb_config(ps: usize) -> StableBufferConfig {
    StableBufferConfig {
        staging_bytes: 16 * ps as u64,
        recognition: Recognition::OnDemand,
        align_bytes: ps as u64,
        grow_bytes: 8 * ps as u64,
        salt: Some(0x5A17),
        ..StableBufferConfig::with_page_size(ps)
    }
}

/// A StableBuffer image: version `pid + 1` of pages `0..PAGES` home, version `pid + 2`
/// staged and promised; also the slot of each staged page.
fn sb_valid(ps: usize) -> (Vec<u8>, Vec<u64>) {
    let dev = Arc::new(FaultDevice::new(0));
    let s = StableBufferStore::create(dev.clone(), sb_config(ps)).unwrap();
    for v in 1..=2 {
        for pid in 0..PAGES {
            let p = filled_page(ps, PageId(pid), pid + v, SEED);
            s.write_page(PageId(pid), &p, &DirtyRanges::full(ps))
                .unwrap();
        }
        if v == 1 {
            s.flush_all().unwrap();
        }
    }
    s.sync().unwrap();
    let l = s.layout();
    drop(s);
    let img = dev.durable_image();
    let slots = (0..PAGES)
        .map(|pid| {
            (0..l.slots)
                .map(|i| l.slot_offset(i))
                .rfind(|&o| {
                    let h = flashbuf_core::page::read_header(&img[o as usize..o as usize + ps]);
                    h.page_id == PageId(pid) && h.version == pid + 2
                })
                .unwrap()
        })
        .collect();
    (img, slots)
}

/// The generator of each StableBuffer image.
pub(super) fn build_sb(name: &str, ps: usize) -> Vec<u8> {
    let (mut img, slot_at) = sb_valid(ps);
    let slot = |pid: u64| slot_at[pid as usize] as usize;
    let state = Superblock::BYTES;
    let copy = Superblock::read(&flashbuf_device::MemDevice::from_bytes(
        img[..4096].to_vec(),
    ))
    .unwrap()
    .state_copy_bytes as usize;
    let newest_copy = {
        let g = |k: usize| {
            u64::from_le_bytes(
                img[state + k * copy + 12..state + k * copy + 20]
                    .try_into()
                    .unwrap(),
            )
        };
        if g(1) > g(0) {
            1
        } else {
            0
        }
    };
    match name {
        "sb-valid-512.img" => {}
        "sb-promised-slot-bitflip.img" => img[slot(2) + 300] ^= 0x04,
        "sb-promised-slot-zeroed.img" => img[slot(3)..slot(3) + ps].fill(0),
        "sb-promised-slot-random.img" => {
            let mut r = flashbuf_core::rng::SplitMix64::new(4);
            img[slot(4)..slot(4) + ps]
                .iter_mut()
                .for_each(|b| *b = r.next_u64() as u8);
        }
        "sb-promised-slot-copied.img" => {
            let src = img[slot(1)..slot(1) + ps].to_vec();
            img[slot(5)..slot(5) + ps].copy_from_slice(&src);
        }
        "sb-dead-slot-damaged.img" => {
            // The flushed version-1 copies of pages 0..6 are dead slots (numbered below
            // the promise, unlisted): damage to them changes nothing.
            let first_slot = Superblock::area_bytes(ps, copy as u64) as usize;
            for i in 0..PAGES as usize {
                img[first_slot + i * ps + 200] ^= 0xFF;
            }
        }
        "sb-state-newest-damaged.img" => img[state + newest_copy * copy + 70] ^= 0x01,
        "sb-state-both-damaged.img" => {
            img[state + 70] ^= 0x01;
            img[state + copy + 70] ^= 0x01;
        }
        "sb-truncated-whole-page.img" => img.truncate(img.len() - ps),
        "sb-truncated-mid-page.img" => img.truncate(img.len() - ps / 2),
        "sb-home-damaged-staged-newer.img" => {
            // Page 1's home copy (version 2) damaged; its staged version 3 is newer.
            let data = u64::from_le_bytes(img[32..40].try_into().unwrap()) as usize;
            img[data + ps + 100] ^= 0x10;
        }
        "sb-format-v3.img" => {
            img[8..12].copy_from_slice(&3u32.to_le_bytes());
            reseal(&mut img);
        }
        other => panic!("no generator for {other}"),
    }
    img
}
