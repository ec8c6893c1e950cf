//! Generators of the ICL images (`icl-*`) of `fuzz_corrupt_images`.

use super::{reseal, CrashStore, ICL, PAGES, SEED};
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::fault::{CrashMode, FaultDevice};
use flashbuf_store::icl::layout::{DwDirectory, Layout};
use flashbuf_store::{PageStore, Superblock};
use flashbuf_testkit::content::filled_page;
use std::sync::Arc;

/// Writes pages `0..PAGES` to an ICL store so that each has a log: first whole with bytes
/// 100..150 zeroed (version = page), then the final page (version = page + 1) with only
/// those bytes dirty; syncs after page 2 and at the end (log pages 0 and 1).
fn icl_pages(s: &dyn PageStore, ps: usize) {
    for pid in 0..PAGES {
        let p = filled_page(ps, PageId(pid), pid + 1, SEED);
        let mut before = p.clone();
        before[100..150].fill(0);
        flashbuf_core::page::seal(&mut before, PageId(pid), pid);
        s.write_page(PageId(pid), &before, &DirtyRanges::full(ps))
            .unwrap();
        let mut d = DirtyRanges::new();
        d.add(0, 32);
        d.add(100, 50);
        s.write_page(PageId(pid), &p, &d).unwrap();
        if pid == 2 {
            s.sync().unwrap();
        }
    }
    s.sync().unwrap();
}

/// A valid ICL store (see [`icl_pages`]) and its device.
fn valid_icl(ps: usize) -> (Arc<FaultDevice>, Box<dyn PageStore>) {
    let dev = Arc::new(FaultDevice::new(0));
    let f = CrashStore::from_spec(ICL).unwrap();
    let s = f.create(Box::new(dev.clone()), ps).unwrap();
    icl_pages(s.as_ref(), ps);
    (dev, s)
}

/// The ICL layout of the crash variant at page size `ps`.
fn icl_layout(ps: usize) -> Layout {
    Layout::new(ps, 6, 2, Superblock::reserved_bytes(ps))
}

/// The generator of each ICL image.
pub(super) fn build_icl(name: &str, ps: usize) -> Vec<u8> {
    let (dev, s) = valid_icl(ps);
    let l = icl_layout(ps);
    let at = |o: u64| o as usize;
    let mut img = dev.durable_image();
    match name {
        "icl-valid-512.img" => {}
        "icl-damaged-promised-log-page.img" => img[at(l.log_slot_offset(0)) + 60] ^= 0x08,
        "icl-misdirected-log-page.img" => {
            let (a, b) = (at(l.log_slot_offset(0)), at(l.log_slot_offset(1)));
            let src = img[a..a + ps].to_vec();
            img[b..b + ps].copy_from_slice(&src);
        }
        "icl-torn-unsynced-log-page.img" => {
            // Later changes flushed into log pages 2.. but not synced; the first of
            // those pages torn (garbage): they are all dropped, the synced pages stand.
            for pid in 0..PAGES {
                let mut p = filled_page(ps, PageId(pid), pid + 1, SEED);
                p[300..340].fill(0xAB);
                flashbuf_core::page::seal(&mut p, PageId(pid), pid + 100);
                let mut d = DirtyRanges::new();
                d.add(0, 32);
                d.add(300, 40);
                s.write_page(PageId(pid), &p, &d).unwrap();
            }
            img = dev.crash_image(CrashMode::KeepAll);
            let o = at(l.log_slot_offset(2));
            for (i, b) in img[o + 128..o + 256].iter_mut().enumerate() {
                *b = (i as u8).wrapping_mul(29) ^ 0x3C;
            }
        }
        "icl-one-generation-record-damaged.img" => {
            // The newer record (it says log pages 0..2 are durable); the older one stands.
            let newer =
                if img[at(l.gen_record_offset(0)) + 36] > img[at(l.gen_record_offset(1)) + 36] {
                    0
                } else {
                    1
                };
            img[at(l.gen_record_offset(newer)) + 40] ^= 0x01;
        }
        "icl-both-generation-records-damaged.img" => {
            img[at(l.gen_record_offset(0)) + 40] ^= 0x01;
            img[at(l.gen_record_offset(1)) + 40] ^= 0x01;
        }
        "icl-torn-home-page.img" => {
            // Garbage in page 3's home page outside its logged bytes.
            let o = at(l.data_offset) + 3 * ps + 400;
            img[o..o + 16].fill(0x5A);
        }
        "icl-torn-home-page-under-its-log.img" => {
            // Garbage in page 4's home page inside its logged bytes 100..150: the log
            // rebuilds them.
            let o = at(l.data_offset) + 4 * ps + 110;
            img[o..o + 30].fill(0x5A);
        }
        "icl-interrupted-merge.img" => {
            // A log-space merge of page 2 that wrote its double-write slot and directory
            // and tore the home page: recovery restores it.
            let salt = Superblock::decode(&img[..Superblock::BYTES]).unwrap().salt;
            let p = filled_page(ps, PageId(2), 3, SEED);
            let o = at(l.dw_slot_offset(0));
            img[o..o + ps].copy_from_slice(&p);
            let mut dir = vec![0u8; ps];
            let crc = flashbuf_core::page::read_header(&p).checksum;
            DwDirectory {
                gen: 1,
                entries: vec![(PageId(2), crc)],
            }
            .encode(&mut dir, salt);
            let o = at(l.dw_dir_offset);
            img[o..o + ps].copy_from_slice(&dir);
            let h = at(l.data_offset) + 2 * ps;
            img[h + 64..h + 192].fill(0xEE);
        }
        "icl-truncated-log-space.img" => img.truncate(at(l.log_slot_offset(3)) + 100),
        "icl-other-log-space-size.img" => {
            // Superblock extra (from byte 64): format u16, log pages u32 (at byte 66), with a
            // valid CRC.
            img[66..70].copy_from_slice(&7u32.to_le_bytes());
            reseal(&mut img);
        }
        other => panic!("no generator for {other}"),
    }
    img
}
