#![allow(clippy::unwrap_used)]
//! Regression (issue 11, found by the damage-at-rest fuzzer `fuzz_damage_at_rest.rs` with
//! `FLASHBUF_FUZZ_SEED=11`): the log-structured store, page size 1024, with one bit
//! flipped in its newest checkpoint (sector 24) and one in block 0 of segment 4 (sector
//! 100), served page 15 at an *older* version. Recovery fell back to the older
//! checkpoint; segment 4, free then, held the newest filling, but its block 0 failed its
//! check, so the segment was not taken for a new filling and not walked; its blocks'
//! sequences were missing and, after a fallback, skipped as if the segment had been
//! reused. Fixed: a damaged block 0 no longer hides a filling (the first valid block
//! decides), and after a fallback missing sequences are refused while a walked segment
//! holds an unexplained damaged block below its valid new ones.
//!
//! The class: the newest checkpoint damaged together with any one other sector.

use flashbuf_testkit::damage::{apply, check_damaged, image, Damage, DamageReport, SECTOR};
use flashbuf_testkit::CrashStore;

fn log_store() -> CrashStore {
    CrashStore::variants()
        .unwrap()
        .into_iter()
        .find(|f| f.name == "log-structured")
        .unwrap()
}

#[test]
fn the_fuzzers_case_is_reported_never_served_old() {
    let f = log_store();
    let base = image(&f, 1024, 20).unwrap();
    let sectors = base.len().div_ceil(SECTOR);
    let mut img = base.clone();
    for at in [41260usize, 6184] {
        apply(&mut img, at % sectors, Damage::BitFlip(0));
    }
    let mut rep = DamageReport::default();
    check_damaged(&f, 1024, 20, img, &mut rep).unwrap();
}

#[test]
fn a_damaged_checkpoint_with_any_other_damaged_sector_never_serves_old() {
    let f = log_store();
    let base = image(&f, 1024, 20).unwrap();
    let sectors = base.len().div_ceil(SECTOR);
    let mut rep = DamageReport::default();
    // Sector 24 opens the checkpoint slot the image's newest checkpoint is in.
    for other in 0..sectors {
        for d in [Damage::BitFlip(0), Damage::Zero] {
            let mut img = base.clone();
            apply(&mut img, 24, Damage::BitFlip(0));
            apply(&mut img, other, d);
            check_damaged(&f, 1024, 20, img, &mut rep)
                .unwrap_or_else(|e| panic!("checkpoint and sector {other} ({d:?}): {e}"));
        }
    }
    assert!(rep.refused > 0 && rep.images > 1000, "{rep:?}");
}
