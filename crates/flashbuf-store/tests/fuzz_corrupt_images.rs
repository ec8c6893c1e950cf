#![allow(clippy::unwrap_used)]
//! Checked-in corrupt store images (`testdata/corrupt/*.img`, described in its README) of
//! the direct store and of ICL (its log pages, generation records, double-write area):
//! each must be refused at open with the message documented there, or open and report the
//! damaged pages as corrupt while serving the intact ones exactly. The images are bytes
//! on disk, not regenerated per run, so a change of the on-device format that would
//! misread them fails here.
//!
//! `FLASHBUF_REGEN_CORRUPT=1` rewrites the images from the generators below (only when
//! a case is added or the format version is bumped on purpose). `direct-old-format-v1.img`
//! is a real image of format version 1 (kept from before the bump; it is never
//! regenerated).
//!
//! StableBuffer images (`sb-*`) hold two versions of every page: version `pid + 1` flushed
//! home, then version `pid + 2` staged and promised by a sync. A damaged promised slot
//! must be reported (never served as the older home copy); damage no sync depended on
//! must change nothing.

use flashbuf_core::page::crc32c;
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::fault::FaultDevice;
use flashbuf_device::Device;
use flashbuf_store::{PageStore, ReadOutcome, StoreError, Superblock};
use flashbuf_testkit::content::filled_page;
use flashbuf_testkit::CrashStore;
use std::path::PathBuf;
use std::sync::Arc;

#[path = "corrupt_images/icl.rs"]
mod icl;
#[path = "corrupt_images/sb.rs"]
mod sb;

/// Pages written in every image, and the content seed.
const PAGES: u64 = 6;
const SEED: u64 = 0xC0DE;

enum Expect {
    /// Open is refused with a message containing this.
    Refused(&'static str),
    /// Opens; these pages are reported corrupt (message containing the text); every
    /// other written page reads exactly.
    Corrupt(&'static [(u64, &'static str)]),
    /// Opens; every written page reads exactly (the baseline).
    Intact,
}

/// The direct store's and ICL's configurations (ICL's crash variant: a one-page WOB, six
/// log pages, two double-write slots).
const DIRECT: &str = "direct:grow_pages=8";
const ICL: &str = "icl:wob_pages=1,log_pages=6,dw_pages=2,grow_pages=8";

/// (file name, page size the image was made with, page size to open with, expectation);
/// the store is named by the file's prefix (`direct-`, `sb-`, `icl-`).
const CASES: &[(&str, usize, usize, Expect)] = &[
    ("direct-valid-512.img", 512, 512, Expect::Intact),
    ("direct-valid-4096.img", 4096, 4096, Expect::Intact),
    ("direct-empty.img", 512, 512, Expect::Refused("too small")),
    (
        "direct-truncated-superblock.img",
        512,
        512,
        Expect::Refused("too small"),
    ),
    (
        "direct-zeroed-superblock.img",
        512,
        512,
        Expect::Refused("not formatted"),
    ),
    (
        "direct-bad-magic.img",
        512,
        512,
        Expect::Refused("wrong magic"),
    ),
    (
        "direct-superblock-bitflip.img",
        512,
        512,
        Expect::Refused("checksum mismatch"),
    ),
    (
        "direct-format-v3.img",
        512,
        512,
        Expect::Refused("format version 3, this build reads version 2"),
    ),
    (
        "direct-old-format-v1.img",
        512,
        512,
        Expect::Refused("format version 1, this build reads version 2"),
    ),
    (
        "direct-truncated-whole-page.img",
        512,
        512,
        Expect::Refused("truncated"),
    ),
    ("direct-state-a-damaged.img", 512, 512, Expect::Intact),
    (
        "direct-state-both-damaged.img",
        512,
        512,
        Expect::Refused("both copies of the state record are damaged"),
    ),
    (
        "direct-wrong-kind.img",
        512,
        512,
        Expect::Refused("holds a 'icl' store, not a 'direct' store"),
    ),
    (
        "direct-valid-4096.img",
        4096,
        512,
        Expect::Refused("formatted with page size 4096 bytes, but page size 512"),
    ),
    (
        "direct-invalid-page-size.img",
        512,
        512,
        Expect::Refused("invalid page size 1000"),
    ),
    (
        "direct-huge-data-offset.img",
        512,
        512,
        Expect::Refused("data offset"),
    ),
    (
        "direct-truncated-mid-page.img",
        512,
        512,
        Expect::Refused("truncated"),
    ),
    (
        "direct-no-written-map-v1.img",
        512,
        512,
        Expect::Refused("earlier flashbuf (its state record has no written-page map"),
    ),
    (
        "direct-zeroed-page.img",
        512,
        512,
        Expect::Corrupt(&[(3, "reads as all zeros, but it was written and synced")]),
    ),
    (
        "direct-torn-page.img",
        4096,
        4096,
        Expect::Corrupt(&[(2, "checksum mismatch")]),
    ),
    (
        "direct-garbage-sector.img",
        512,
        512,
        Expect::Corrupt(&[(4, "checksum mismatch")]),
    ),
    (
        "direct-misdirected-page.img",
        512,
        512,
        Expect::Corrupt(&[(3, "holds page 1")]),
    ),
    (
        "direct-bad-page-magic.img",
        512,
        512,
        Expect::Corrupt(&[(0, "bad page magic")]),
    ),
    ("sb-valid-512.img", 512, 512, Expect::Intact),
    (
        "sb-no-written-map-v1.img",
        512,
        512,
        Expect::Refused("this stable-buffer store was formatted by an earlier flashbuf"),
    ),
    (
        "sb-promised-slot-bitflip.img",
        512,
        512,
        Expect::Corrupt(&[(2, "a completed sync promised")]),
    ),
    (
        "sb-promised-slot-zeroed.img",
        512,
        512,
        Expect::Corrupt(&[(3, "a completed sync promised")]),
    ),
    (
        "sb-promised-slot-random.img",
        512,
        512,
        Expect::Corrupt(&[(4, "a completed sync promised")]),
    ),
    (
        "sb-promised-slot-copied.img",
        512,
        512,
        Expect::Corrupt(&[(5, "a completed sync promised")]),
    ),
    ("sb-dead-slot-damaged.img", 512, 512, Expect::Intact),
    ("sb-state-newest-damaged.img", 512, 512, Expect::Intact),
    (
        "sb-state-both-damaged.img",
        512,
        512,
        Expect::Refused("both copies of the state record are damaged"),
    ),
    (
        "sb-truncated-whole-page.img",
        512,
        512,
        Expect::Refused("truncated"),
    ),
    (
        "sb-truncated-mid-page.img",
        512,
        512,
        Expect::Refused("truncated"),
    ),
    ("sb-home-damaged-staged-newer.img", 512, 512, Expect::Intact),
    (
        "sb-format-v3.img",
        512,
        512,
        Expect::Refused("format version 3, this build reads version 2"),
    ),
    ("icl-valid-512.img", 512, 512, Expect::Intact),
    (
        "icl-no-written-map-v1.img",
        512,
        512,
        Expect::Refused("this ICL store was formatted by an earlier flashbuf"),
    ),
    (
        "icl-damaged-promised-log-page.img",
        512,
        512,
        Expect::Refused("ICL log page 0 of generation 1 is damaged or missing"),
    ),
    (
        "icl-misdirected-log-page.img",
        512,
        512,
        Expect::Refused("ICL log page 1 of generation 1 is damaged or missing"),
    ),
    ("icl-torn-unsynced-log-page.img", 512, 512, Expect::Intact),
    (
        "icl-one-generation-record-damaged.img",
        512,
        512,
        Expect::Intact,
    ),
    (
        "icl-both-generation-records-damaged.img",
        512,
        512,
        Expect::Refused("both ICL generation records are damaged"),
    ),
    (
        "icl-torn-home-page.img",
        512,
        512,
        Expect::Corrupt(&[(3, "checksum mismatch")]),
    ),
    (
        "icl-torn-home-page-under-its-log.img",
        512,
        512,
        Expect::Intact,
    ),
    ("icl-interrupted-merge.img", 512, 512, Expect::Intact),
    (
        "icl-truncated-log-space.img",
        512,
        512,
        Expect::Refused("does not hold the log space"),
    ),
    (
        "icl-other-log-space-size.img",
        512,
        512,
        Expect::Refused("does not follow from 7 log pages"),
    ),
];

fn dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/corrupt"
    ))
}

fn store_of(name: &str) -> CrashStore {
    if name.starts_with("icl-") {
        CrashStore::from_spec(ICL).unwrap()
    } else if name.starts_with("sb-") {
        CrashStore::by_label("stable-buffer").unwrap()
    } else {
        CrashStore::from_spec(DIRECT).unwrap()
    }
}

/// A valid direct store: pages `0..PAGES` written (version = page + 1) and synced.
fn valid(ps: usize) -> Vec<u8> {
    let dev = Arc::new(FaultDevice::new(0));
    let f = CrashStore::from_spec(DIRECT).unwrap();
    let s = f.create(Box::new(dev.clone()), ps).unwrap();
    for pid in 0..PAGES {
        let p = filled_page(ps, PageId(pid), pid + 1, SEED);
        s.write_page(PageId(pid), &p, &DirtyRanges::full(ps))
            .unwrap();
    }
    s.sync().unwrap();
    dev.durable_image()
}

/// The version every page holds in an image of `store` (StableBuffer images also hold the
/// previous version, home).
fn newest(name: &str, pid: u64) -> u64 {
    if name.starts_with("sb-") {
        pid + 2
    } else {
        pid + 1
    }
}

fn reseal(img: &mut [u8]) {
    let c = crc32c(&img[..Superblock::BYTES - 4]);
    img[Superblock::BYTES - 4..Superblock::BYTES].copy_from_slice(&c.to_le_bytes());
}

fn page_at(ps: usize, pid: u64) -> usize {
    Superblock::reserved_bytes(ps) as usize + pid as usize * ps
}

/// The generator of each image.
fn build(name: &str, ps: usize) -> Vec<u8> {
    if name.starts_with("sb-") {
        return sb::build_sb(name, ps);
    }
    if name.starts_with("icl-") {
        return icl::build_icl(name, ps);
    }
    let mut img = valid(ps);
    let state = Superblock::BYTES;
    match name {
        "direct-valid-512.img" | "direct-valid-4096.img" => {}
        "direct-empty.img" => img.clear(),
        "direct-truncated-superblock.img" => img.truncate(1000),
        "direct-zeroed-superblock.img" => img[..Superblock::BYTES].fill(0),
        "direct-bad-magic.img" => img[0..8].copy_from_slice(b"NOTFLASH"),
        "direct-superblock-bitflip.img" => img[30] ^= 0x10,
        "direct-format-v3.img" => {
            img[8..12].copy_from_slice(&3u32.to_le_bytes());
            reseal(&mut img);
        }
        "direct-old-format-v1.img" => panic!("{name} is a real version-1 image, not generated"),
        "direct-truncated-whole-page.img" => img.truncate(img.len() - ps),
        "direct-state-a-damaged.img" => img[state + 30] ^= 0x01,
        "direct-state-both-damaged.img" => {
            img[state + 30] ^= 0x01;
            img[state + 4096 + 30] ^= 0x01;
        }
        "direct-wrong-kind.img" => {
            img[12..28].fill(0);
            img[12..15].copy_from_slice(b"icl");
            reseal(&mut img);
        }
        "direct-invalid-page-size.img" => {
            img[28..32].copy_from_slice(&1000u32.to_le_bytes());
            reseal(&mut img);
        }
        "direct-huge-data-offset.img" => {
            img[32..40].copy_from_slice(&(1u64 << 61).to_le_bytes());
            reseal(&mut img);
        }
        "direct-truncated-mid-page.img" => img.truncate(page_at(ps, 3) + ps / 2),
        "direct-torn-page.img" => {
            // Page 2 rewritten (version 10), but only its first 512-byte sector landed.
            let new = filled_page(ps, PageId(2), 10, SEED);
            let at = page_at(ps, 2);
            img[at..at + 512].copy_from_slice(&new[..512]);
        }
        "direct-garbage-sector.img" => {
            let at = page_at(ps, 4) + 128;
            for (i, b) in img[at..at + 64].iter_mut().enumerate() {
                *b = (i as u8).wrapping_mul(37) ^ 0x5A;
            }
        }
        "direct-zeroed-page.img" => {
            let at = page_at(ps, 3);
            img[at..at + ps].fill(0);
        }
        "direct-misdirected-page.img" => {
            let (a, b) = (page_at(ps, 1), page_at(ps, 3));
            let src = img[a..a + ps].to_vec();
            img[b..b + ps].copy_from_slice(&src);
        }
        "direct-bad-page-magic.img" => {
            let at = page_at(ps, 0);
            img[at + 4..at + 8].copy_from_slice(b"XXXX");
        }
        other => panic!("no generator for {other}"),
    }
    img
}

#[test]
fn checked_in_corrupt_images_fail_as_documented() {
    let regen = std::env::var("FLASHBUF_REGEN_CORRUPT").is_ok_and(|v| v == "1");
    for (name, made_ps, open_ps, expect) in CASES {
        let f = store_of(name);
        let path = dir().join(name);
        if regen && !name.contains("-v1.") {
            std::fs::create_dir_all(dir()).unwrap();
            std::fs::write(&path, build(name, *made_ps)).unwrap();
        }
        let img = std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (regenerate with FLASHBUF_REGEN_CORRUPT=1)",
                path.display()
            )
        });
        let opened = f.open(Box::new(FaultDevice::from_image(img)), *open_ps);
        match (expect, opened) {
            (Expect::Refused(msg), Err(e)) => {
                assert!(
                    matches!(e, StoreError::Format(_)) && e.to_string().contains(msg),
                    "{name}: refused with '{e}', expected '{msg}'"
                );
            }
            (Expect::Refused(msg), Ok(_)) => panic!("{name}: opened; expected refusal '{msg}'"),
            (_, Err(e)) => panic!("{name}: refused ({e}); expected it to open"),
            (Expect::Corrupt(bad), Ok(s)) => check_pages(name, s.as_ref(), *open_ps, bad),
            (Expect::Intact, Ok(s)) => check_pages(name, s.as_ref(), *open_ps, &[]),
        }
    }
}

fn check_pages(name: &str, s: &dyn PageStore, ps: usize, bad: &[(u64, &str)]) {
    let mut buf = vec![0u8; ps];
    for pid in 0..PAGES + 2 {
        let r = s.read_page(PageId(pid), &mut buf);
        let want = newest(name, pid);
        if let Some((_, msg)) = bad.iter().find(|(p, _)| *p == pid) {
            match r {
                Err(e @ StoreError::Corrupt { .. }) => {
                    assert!(e.to_string().contains(msg), "{name}: page {pid}: '{e}'");
                    assert!(buf.iter().all(|&b| b == 0), "{name}: corrupt bytes leaked");
                }
                other => panic!("{name}: page {pid}: expected corrupt, got {other:?}"),
            }
        } else if pid < PAGES {
            assert_eq!(r.unwrap(), ReadOutcome::Found, "{name}: page {pid}");
            assert_eq!(
                buf,
                filled_page(ps, PageId(pid), want, SEED),
                "{name}: page {pid} (an older version served?)"
            );
        } else {
            assert_eq!(r.unwrap(), ReadOutcome::Unwritten, "{name}: page {pid}");
        }
    }
    // The damaged store still takes writes and syncs (the damage is per page).
    let p = filled_page(ps, PageId(1), 77, SEED);
    for (pid, _) in bad {
        // A reported page is repaired by a new write.
        let q = filled_page(ps, PageId(*pid), 78, SEED);
        s.write_page(PageId(*pid), &q, &DirtyRanges::full(ps))
            .unwrap();
        assert_eq!(
            s.read_page(PageId(*pid), &mut buf).unwrap(),
            ReadOutcome::Found,
            "{name}"
        );
    }
    s.write_page(PageId(1), &p, &DirtyRanges::full(ps)).unwrap();
    s.sync().unwrap();
}

/// Every image is listed in the README, and every image in the directory is tested.
#[test]
fn the_readme_lists_every_image() {
    let readme = std::fs::read_to_string(dir().join("README.md")).unwrap();
    for (name, ..) in CASES {
        assert!(readme.contains(name), "README.md does not describe {name}");
    }
    for e in std::fs::read_dir(dir()).unwrap() {
        let n = e.unwrap().file_name().into_string().unwrap();
        if n.ends_with(".img") {
            assert!(CASES.iter().any(|c| c.0 == n), "{n} is not tested");
        }
    }
    let d = FaultDevice::new(0);
    assert!(d.is_empty());
}
