#![allow(clippy::unwrap_used)]
//! Regression (issue 11, found by the damage-at-rest fuzzer `fuzz_damage_at_rest.rs`,
//! `FLASHBUF_FUZZ_SEED=7`, once the direct store's twin bug was fixed): the ICL store,
//! page size 1024, with the two 512-byte sectors of page 19's home page zeroed at rest
//! (page 19 had no log left: its newest bytes were all at home) read page 19 as *never
//! written*. Fixed as for the direct store (`regression_direct_zeroed_page`): ICL records
//! the pages it wrote in its state record, and such a page is reported corrupt.

use flashbuf_testkit::damage::{apply, check_damaged, image, Damage, DamageReport, SECTOR};
use flashbuf_testkit::CrashStore;

#[test]
fn a_synced_icl_home_page_zeroed_at_rest_is_reported_not_unwritten() {
    let f = CrashStore::variants()
        .unwrap()
        .into_iter()
        .find(|f| f.name == "icl")
        .unwrap();
    let base = image(&f, 1024, 20).unwrap();
    let sectors = base.len().div_ceil(SECTOR);
    let mut img = base.clone();
    // The fuzzer's case: hits (1494, Zero) and (45487, Zero).
    for at in [1494usize, 45487] {
        apply(&mut img, at % sectors, Damage::Zero);
    }
    let mut rep = DamageReport::default();
    check_damaged(&f, 1024, 20, img, &mut rep).unwrap();
    assert!(rep.pages_reported > 0, "{rep:?}");
}
