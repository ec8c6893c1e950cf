#![allow(clippy::unwrap_used)]
//! ICL's on-device structures under bad input *past their checksums*: valid images whose
//! log pages, generation records or double-write directory are mutated and then sealed
//! again with a correct checksum, so that the parsers behind the checksum (record
//! headers, range lists, counts, offsets, generations, sequence numbers) are what meets
//! the damage. Opening must answer `Ok` or `Err`, never panic; an opened store must serve
//! every call without panicking, and any page it returns as data must be exactly a version
//! written there. (Damage sealed with a valid checksum defeats the checksums, so it may
//! make a page read as an older version — a record relabelled to another page, say — but
//! never as bytes no write produced: reconstructions pass the page's own check.)
//!
//! `FLASHBUF_FUZZ_CASES=N` raises the number of inputs (soak).

mod icl_support;

use flashbuf_core::page::crc32c;
use flashbuf_core::PageId;
use flashbuf_device::fault::FaultDevice;
use flashbuf_store::icl::{IclConfig, IclStore};
use flashbuf_store::{PageStore, ReadOutcome};
use icl_support::{config, Model};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use std::sync::{Arc, OnceLock};

const PAGES: u64 = 12;

fn cases() -> u32 {
    std::env::var("FLASHBUF_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

struct Valid {
    cfg: IclConfig,
    img: Vec<u8>,
    model: Model,
    /// Every version written, per page.
    versions: std::collections::HashMap<PageId, Vec<Vec<u8>>>,
    /// Offsets of the log pages in use, the generation records and the directory.
    log_slots: Vec<u64>,
    meta: Vec<u64>,
}

/// A valid image per page size: pages written whole, then logs of every page (several
/// log pages, copy-forwards), one log-space merge behind it, synced.
fn valid(ps: usize) -> &'static Valid {
    static V: OnceLock<Vec<Valid>> = OnceLock::new();
    let all = V.get_or_init(|| {
        [512usize, 4096]
            .into_iter()
            .map(|ps| {
                let cfg = config(ps, 1, if ps == 512 { 6 } else { 3 }, 2);
                let dev = Arc::new(FaultDevice::new(0));
                let s = IclStore::create(dev.clone(), cfg).unwrap();
                let mut m = Model::new(ps);
                let mut versions: std::collections::HashMap<PageId, Vec<Vec<u8>>> =
                    std::collections::HashMap::new();
                for pid in 0..PAGES {
                    let (p, d) = m.whole(PageId(pid), pid);
                    s.write_page(PageId(pid), &p, &d).unwrap();
                    versions.entry(PageId(pid)).or_default().push(p);
                }
                // Rounds of small changes to every page until the log space has been
                // merged once, then eight more rounds.
                let mut extra = 8;
                for round in 0..400u64 {
                    for pid in 0..PAGES {
                        let e = [((pid * 31 + round * 7) as usize, 6 + (round % 5) as usize)];
                        let (p, d) = m.edit(PageId(pid), &e, round);
                        s.write_page(PageId(pid), &p, &d).unwrap();
                        versions.entry(PageId(pid)).or_default().push(p);
                    }
                    if round % 4 == 3 {
                        s.sync().unwrap();
                    }
                    if s.icl_stats().merges_bulk > 0 {
                        extra -= 1;
                        if extra == 0 {
                            break;
                        }
                    }
                }
                s.sync().unwrap();
                let st = s.icl_stats();
                assert!(st.merges_bulk > 0 && st.log_pages_used > 1, "{st:?}");
                let l = s.layout();
                let log_slots = (0..st.log_pages_used as u32)
                    .map(|i| l.log_slot_offset(i))
                    .collect();
                let meta = vec![
                    l.gen_record_offset(0),
                    l.gen_record_offset(1),
                    l.dw_dir_offset,
                ];
                Valid {
                    cfg,
                    img: dev.durable_image(),
                    model: m,
                    versions,
                    log_slots,
                    meta,
                }
            })
            .collect()
    });
    &all[usize::from(ps != 512)]
}

/// Overwrites `bytes` at `at` within the page at `page` (past its checksum), then seals
/// the page's checksum again.
fn mutate_and_reseal(img: &mut [u8], page: u64, ps: usize, at: usize, bytes: &[u8]) {
    let base = page as usize;
    for (i, b) in bytes.iter().enumerate() {
        let o = 4 + (at + i) % (ps - 4);
        img[base + o] = *b;
    }
    let c = crc32c(&img[base + 4..base + ps]);
    img[base..base + 4].copy_from_slice(&c.to_le_bytes());
}

fn exercise(v: &Valid, img: Vec<u8>) {
    let ps = v.cfg.page_size;
    let Ok(store) = IclStore::open(FaultDevice::from_image(img), v.cfg) else {
        return;
    };
    let _ = store.check_invariants();
    let mut buf = vec![0u8; ps];
    for pid in (0..PAGES + 2).map(PageId) {
        if let Ok(ReadOutcome::Found) = store.read_page(pid, &mut buf) {
            assert!(
                v.versions.get(&pid).is_some_and(|all| all.contains(&buf)),
                "{pid}: bytes that were never written there"
            );
        }
    }
    let mut m = v.model.clone();
    for pid in 0..4 {
        let (p, d) = m.edit(PageId(pid), &[(10, 20)], 77);
        let _ = store.write_page(PageId(pid), &p, &d);
    }
    let _ = store.sync();
    let _ = store.read_page(PageId(1), &mut buf);
    let _ = store.check_invariants();
}

fn proptest_config() -> Config {
    Config {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/icl_fuzz_log_pages.proptest-regressions",
        ))),
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn resealed_damage_never_panics_nor_returns_wrong_pages(
        big in any::<bool>(),
        target in any::<usize>(),
        meta in prop::bool::weighted(0.2),
        edits in prop::collection::vec((0usize..4096, prop::collection::vec(any::<u8>(), 1..9)), 1..5),
    ) {
        let v = valid(if big { 4096 } else { 512 });
        let ps = v.cfg.page_size;
        let pages = if meta { &v.meta } else { &v.log_slots };
        let page = pages[target % pages.len()];
        let mut img = v.img.clone();
        for (at, bytes) in &edits {
            // Mostly the header and the first records, where the fields are.
            let at = if ps > 512 { *at % 700 } else { *at };
            mutate_and_reseal(&mut img, page, ps, at, bytes);
        }
        exercise(v, img);
    }
}

#[test]
fn the_valid_images_serve_their_pages() {
    for ps in [512, 4096] {
        let v = valid(ps);
        let s = IclStore::open(FaultDevice::from_image(v.img.clone()), v.cfg).unwrap();
        v.model.verify(&s, &[]);
    }
}
