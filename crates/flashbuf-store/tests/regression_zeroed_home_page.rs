#![allow(clippy::unwrap_used)]
//! Regressions (issue 11, found by the damage-at-rest fuzzer `fuzz_damage_at_rest.rs` with
//! `FLASHBUF_FUZZ_SEED=7` and `=9`, once the direct store's twin bug was fixed): the ICL
//! store and the StableBuffer store, page size 1024, with the two 512-byte sectors of a
//! home page zeroed at rest (the page's newest bytes all at home: no log, no staged copy)
//! read that page as *never written*. Fixed as for the direct store
//! (`regression_direct_zeroed_page`): each records the pages it wrote in its state record,
//! and such a page is reported corrupt.

use flashbuf_testkit::damage::{apply, check_damaged, image, Damage, DamageReport, SECTOR};
use flashbuf_testkit::CrashStore;

/// Zeroes every aligned 1024-byte block of the image in turn (each page, slot and record
/// of a store with 1024-byte pages): each image must be refused, or serve every page
/// exactly or report it, never unwritten.
fn every_zeroed_page_is_reported(store: &str) {
    let f = CrashStore::variants()
        .unwrap()
        .into_iter()
        .find(|f| f.name == store)
        .unwrap();
    let base = image(&f, 1024, 20).unwrap();
    let sectors = base.len().div_ceil(SECTOR);
    let mut rep = DamageReport::default();
    for k in (0..sectors - 1).step_by(2) {
        let mut img = base.clone();
        apply(&mut img, k, Damage::Zero);
        apply(&mut img, k + 1, Damage::Zero);
        check_damaged(&f, 1024, 20, img, &mut rep)
            .unwrap_or_else(|e| panic!("{store}: sectors {k} and {}: {e}", k + 1));
    }
    assert!(rep.pages_reported > 0, "{store}: {rep:?}");
}

#[test]
fn a_synced_icl_home_page_zeroed_at_rest_is_reported_not_unwritten() {
    // The fuzzer's case was hits (1494, Zero) and (45487, Zero): page 19's home.
    every_zeroed_page_is_reported("icl");
}

#[test]
fn a_synced_stable_buffer_home_page_zeroed_at_rest_is_reported_not_unwritten() {
    // The fuzzer's case was hits (37283, Zero) and (55586, Zero): page 1's home.
    every_zeroed_page_is_reported("stable-buffer");
}

#[test]
fn a_synced_direct_page_zeroed_at_rest_is_reported_not_unwritten() {
    every_zeroed_page_is_reported("direct");
}

/// The class: every other store of the table (the three above run once, by name).
#[test]
fn every_other_store_reports_every_zeroed_page() {
    for f in CrashStore::variants().unwrap() {
        if !["direct", "icl", "stable-buffer"].contains(&f.name.as_str()) {
            every_zeroed_page_is_reported(&f.name);
        }
    }
}
