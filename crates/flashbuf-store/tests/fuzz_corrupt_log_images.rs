#![allow(clippy::unwrap_used)]
//! Checked-in corrupt images of the log-structured store (`testdata/corrupt/log/*.img`,
//! described in `testdata/corrupt/README.md`), opened as the crash variant
//! `log-structured` opens them: each is refused with the documented message, or opens
//! with the damaged pages reported corrupt and every other page exactly its newest
//! version (never an older copy, though one is on the device).
//!
//! Every image holds two versions of pages 0..6 (512-byte pages): version `page + 1`,
//! synced, then version `page + 2`, synced (the tail of the second sync is covered by the
//! promise in the state record, not by a checkpoint). `FLASHBUF_REGEN_CORRUPT=1`
//! rewrites them from the generators below.

use flashbuf_core::config::{Options, Spec};
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::fault::FaultDevice;
use flashbuf_store::log_store::options::{LogStoreOptions, OPTIONS};
use flashbuf_store::log_store::LogStore;
use flashbuf_store::registry::StoreContext;
use flashbuf_store::{PageStore, ReadOutcome, StoreError, Superblock, STORES};
use flashbuf_testkit::content::filled_page;
use flashbuf_testkit::CrashStore;
use std::path::PathBuf;
use std::sync::Arc;

const PS: usize = 512;
const PAGES: u64 = 6;
const SEED: u64 = 0x106C;
const LABEL: &str = "log-structured";

enum Expect {
    Refused(&'static str),
    Corrupt(&'static [(u64, &'static str)]),
    Intact,
}

const CASES: &[(&str, Expect)] = &[
    ("log-valid-512.img", Expect::Intact),
    ("log-checkpoint-a-damaged.img", Expect::Intact),
    (
        "log-checkpoints-both-damaged.img",
        Expect::Refused("no valid checkpoint"),
    ),
    (
        "log-promised-block-bitflip.img",
        Expect::Corrupt(&[(3, "checksum mismatch")]),
    ),
    (
        "log-promised-block-zeroed.img",
        Expect::Refused("promised durable by a sync are missing"),
    ),
    ("log-old-copy-damaged.img", Expect::Intact),
    ("log-summary-damaged.img", Expect::Intact),
    (
        "log-state-both-damaged.img",
        Expect::Refused("both copies of the state record are damaged"),
    ),
    ("log-truncated-whole-page.img", Expect::Refused("truncated")),
];

fn dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/corrupt/log"
    ))
}

/// The two-version image and the byte offsets of each page's newest and older copy.
fn valid() -> (Vec<u8>, Vec<(usize, usize)>, usize) {
    let entry = STORES.iter().find(|e| e.name == "log-structured").unwrap();
    let variant = entry
        .crash_variants
        .iter()
        .find(|v| v.label == LABEL)
        .unwrap();
    let spec = Spec::parse(&entry.variant_spec(variant), |_| false).unwrap();
    let opts = LogStoreOptions::from_options(&Options::validate(&spec, OPTIONS).unwrap()).unwrap();
    let dev = Arc::new(FaultDevice::new(0));
    let cfg = opts.config(dev.as_ref(), &StoreContext::new(PS)).unwrap();
    let s = LogStore::create(dev.clone(), cfg).unwrap();
    let l = s.layout();
    let mut at = vec![(0, 0); PAGES as usize];
    for v in 1..=2 {
        for pid in 0..PAGES {
            let p = filled_page(PS, PageId(pid), pid + v, SEED);
            s.write_page(PageId(pid), &p, &DirtyRanges::full(PS))
                .unwrap();
            let off = l.addr_byte_offset(s.location(PageId(pid)).unwrap()) as usize;
            if v == 1 {
                at[pid as usize].1 = off;
            } else {
                at[pid as usize].0 = off;
            }
        }
        s.sync().unwrap();
    }
    let summary_of_segment_0 = l.block_byte_offset(
        flashbuf_store::log_store::SegmentId(0),
        s.config().data_blocks_per_segment(),
    ) as usize;
    assert!(s.log_stats().promises >= 1);
    drop(s);
    (dev.durable_image(), at, summary_of_segment_0)
}

fn build(name: &str) -> Vec<u8> {
    let (mut img, at, summary) = valid();
    let slot = |k: usize| {
        let sb = Superblock::read(&flashbuf_device::MemDevice::from_bytes(
            img[..4096].to_vec(),
        ))
        .unwrap();
        // Slots follow the state records; the superblock's data offset is segment 0.
        let first = Superblock::reserved_bytes(PS) as usize;
        let slot_bytes = (sb.data_offset as usize - first) / 2;
        first + k * slot_bytes
    };
    let state = Superblock::BYTES;
    match name {
        "log-valid-512.img" => {}
        "log-checkpoint-a-damaged.img" => {
            let a = slot(0);
            img[a + 40] ^= 0x08;
        }
        "log-checkpoints-both-damaged.img" => {
            let (a, b) = (slot(0), slot(1));
            img[a + 40] ^= 0x08;
            img[b + 40] ^= 0x08;
        }
        "log-promised-block-bitflip.img" => img[at[3].0 + 300] ^= 0x04,
        "log-promised-block-zeroed.img" => img[at[4].0..at[4].0 + PS].fill(0),
        "log-old-copy-damaged.img" => img[at[1].1 + 200] ^= 0xFF,
        "log-summary-damaged.img" => img[summary + 100] ^= 0x20,
        "log-state-both-damaged.img" => {
            img[state + 30] ^= 0x01;
            img[state + 4096 + 30] ^= 0x01;
        }
        "log-truncated-whole-page.img" => img.truncate(img.len() - PS),
        other => panic!("no generator for {other}"),
    }
    img
}

fn check_pages(name: &str, s: &dyn PageStore, bad: &[(u64, &str)]) {
    let mut buf = vec![0u8; PS];
    for pid in 0..PAGES + 2 {
        let r = s.read_page(PageId(pid), &mut buf);
        match bad.iter().find(|(p, _)| *p == pid) {
            Some((_, msg)) => match r {
                Err(e @ StoreError::Corrupt { .. }) => {
                    assert!(e.to_string().contains(msg), "{name}: page {pid}: '{e}'");
                    assert!(buf.iter().all(|&b| b == 0), "{name}: corrupt bytes leaked");
                }
                other => panic!("{name}: page {pid}: expected corrupt, got {other:?}"),
            },
            None if pid < PAGES => {
                assert_eq!(r.unwrap(), ReadOutcome::Found, "{name}: page {pid}");
                let want = filled_page(PS, PageId(pid), pid + 2, SEED);
                assert!(buf == want, "{name}: page {pid} is not its newest version");
            }
            None => assert_eq!(r.unwrap(), ReadOutcome::Unwritten, "{name}: page {pid}"),
        }
    }
    // A reported page is repaired by a new write; the store takes writes and syncs.
    for (pid, _) in bad {
        let q = filled_page(PS, PageId(*pid), 78, SEED);
        s.write_page(PageId(*pid), &q, &DirtyRanges::full(PS))
            .unwrap();
        assert_eq!(
            s.read_page(PageId(*pid), &mut buf).unwrap(),
            ReadOutcome::Found
        );
    }
    s.sync().unwrap();
}

#[test]
fn checked_in_log_store_images_fail_as_documented() {
    let regen = std::env::var("FLASHBUF_REGEN_CORRUPT").is_ok_and(|v| v == "1");
    let f = CrashStore::by_label(LABEL).unwrap();
    let readme = std::fs::read_to_string(dir().with_file_name("README.md")).unwrap();
    for (name, expect) in CASES {
        assert!(readme.contains(name), "README.md does not describe {name}");
        let path = dir().join(name);
        if regen {
            std::fs::create_dir_all(dir()).unwrap();
            std::fs::write(&path, build(name)).unwrap();
        }
        let img = std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (regenerate with FLASHBUF_REGEN_CORRUPT=1)",
                path.display()
            )
        });
        match (expect, f.open(Box::new(FaultDevice::from_image(img)), PS)) {
            (Expect::Refused(msg), Err(e)) => assert!(
                matches!(e, StoreError::Format(_)) && e.to_string().contains(msg),
                "{name}: refused with '{e}', expected '{msg}'"
            ),
            (Expect::Refused(msg), Ok(_)) => panic!("{name}: opened; expected refusal '{msg}'"),
            (_, Err(e)) => panic!("{name}: refused ({e}); expected it to open"),
            (Expect::Corrupt(bad), Ok(s)) => check_pages(name, s.as_ref(), bad),
            (Expect::Intact, Ok(s)) => check_pages(name, s.as_ref(), &[]),
        }
    }
    for e in std::fs::read_dir(dir()).unwrap() {
        let n = e.unwrap().file_name().into_string().unwrap();
        assert!(CASES.iter().any(|c| c.0 == n), "{n} is not tested");
    }
}
