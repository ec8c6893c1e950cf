#![allow(clippy::unwrap_used)]
//! Damage at rest, every crash variant of every store in the table (`flashbuf_testkit::CrashStore`) (issue 11): every
//! data-holding 512-byte sector of a store image that also holds older versions of its
//! pages — superblock, state record copies, staging slots, home pages — is damaged in turn
//! (bit flip, zeros, random bytes, a copy of another sector), and then random
//! combinations of sectors (`FLASHBUF_FUZZ_CASES`, seeded by `FLASHBUF_FUZZ_SEED`).
//!
//! A random run once found the direct store, page size 1024, with sectors 48 and 49 (one
//! whole page) zeroed, reading that page as never written: fixed with the written-page map
//! (regression test `regression_direct_zeroed_page`). Each damaged image must be refused,
//! or serve every page exactly at its newest synced version or report it corrupt — never
//! an older version, never unwritten — and report it again on the next open.
//!
//! Meta-test: a store that serves the older copy it still has when the real one is
//! damaged (bug B's behaviour) is caught.

use flashbuf_core::ConfigError;
use flashbuf_core::{DeviceStats, DirtyRanges, PageId};
use flashbuf_device::Device;
use flashbuf_store::registry::{StoreContext, StoreFactory};
use flashbuf_store::{PageStore, ReadOutcome, StoreError, StoreStats};
use flashbuf_testkit::damage::{apply, check_damaged, image, sweep, Damage, DamageReport, SECTOR};
use flashbuf_testkit::CrashStore;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;

const PAGES: u64 = 20;

/// The proptest seed (`FLASHBUF_FUZZ_SEED`, default fixed so that CI runs the same cases;
/// soak runs set their own).
fn seed() -> u64 {
    std::env::var("FLASHBUF_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0xDA3A_5EED)
}

fn cases() -> u32 {
    std::env::var("FLASHBUF_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

#[test]
fn every_damaged_sector_of_every_store_is_reported_never_served_old() {
    let mut total = DamageReport::default();
    for f in &CrashStore::variants().unwrap() {
        for ps in [4096usize, 1024] {
            let rep = sweep(f, ps, PAGES, 8, 11).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                rep.images > 100,
                "{} {ps}: only {} images",
                f.name,
                rep.images
            );
            assert!(
                rep.refused > 0,
                "{} {ps}: no damage refused the open",
                f.name
            );
            assert!(rep.pages_reported > 0, "{} {ps}: no page reported", f.name);
            eprintln!("store {} page size {ps}: {rep:?}", f.name);
            total.add(&rep);
        }
    }
    eprintln!("damage at rest: {total:?}");
}

proptest! {
    #![proptest_config(Config {
        cases: cases(),
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed()),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/fuzz_damage_at_rest.proptest-regressions",
        ))),
        ..Config::default()
    })]

    /// Several sectors damaged at once, anywhere.
    #[test]
    fn random_damage_combinations(
        store in 0usize..CrashStore::variants().unwrap().len(),
        hits in prop::collection::vec((any::<u16>(), 0u8..4, any::<u64>()), 1..4),
    ) {
        let all = CrashStore::variants().unwrap();
        let f = &all[store];
        let base = image(f, 1024, PAGES).unwrap();
        let sectors = base.len().div_ceil(SECTOR);
        let mut img = base.clone();
        for (at, kind, seed) in &hits {
            let at = usize::from(*at) % sectors;
            let d = match kind {
                0 => Damage::BitFlip(*seed as usize),
                1 => Damage::Zero,
                2 => Damage::Random(*seed),
                _ => Damage::CopyOf((*seed as usize) % sectors),
            };
            apply(&mut img, at, d);
        }
        let mut rep = DamageReport::default();
        check_damaged(f, 1024, PAGES, img, &mut rep).map_err(|e| TestCaseError::fail(format!("{}: {hits:?}: {e}", f.name)))?;
    }
}

/// Bug B's behaviour, simulated: a store that keeps the first copy written of every page
/// and serves it whenever the real copy is reported corrupt.
struct ServesOld {
    inner: Box<dyn PageStore>,
    first: Mutex<HashMap<u64, Vec<u8>>>,
}

impl PageStore for ServesOld {
    fn name(&self) -> &'static str {
        "serves-old"
    }
    fn page_size(&self) -> usize {
        self.inner.page_size()
    }
    fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
        match self.inner.read_page(pid, buf) {
            Err(StoreError::Corrupt { .. }) => {
                // The older copy: version 1 of the page, as the image wrote it first.
                let old = flashbuf_testkit::content::filled_page(buf.len(), pid, pid.0 + 1, 0xDA3A);
                buf.copy_from_slice(&old);
                Ok(ReadOutcome::Found)
            }
            r => r,
        }
    }
    fn write_page(&self, pid: PageId, page: &[u8], dirty: &DirtyRanges) -> Result<(), StoreError> {
        self.first
            .lock()
            .unwrap()
            .entry(pid.0)
            .or_insert_with(|| page.to_vec());
        self.inner.write_page(pid, page, dirty)
    }
    fn sync(&self) -> Result<(), StoreError> {
        self.inner.sync()
    }
    fn stats(&self) -> StoreStats {
        self.inner.stats()
    }
    fn device_stats(&self) -> DeviceStats {
        self.inner.device_stats()
    }
}

/// Builds [`ServesOld`] over the direct store's crash variant.
#[derive(Debug)]
struct ServesOldFactory(CrashStore);

impl StoreFactory for ServesOldFactory {
    fn create(
        &self,
        d: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        Ok(Box::new(ServesOld {
            inner: self.0.create(d, ctx.page_size)?,
            first: Mutex::new(HashMap::new()),
        }))
    }
    fn open(
        &self,
        d: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        Ok(Box::new(ServesOld {
            inner: self.0.open(d, ctx.page_size)?,
            first: Mutex::new(HashMap::new()),
        }))
    }
    fn check(&self, _page_size: usize) -> Result<(), ConfigError> {
        Ok(())
    }
}

#[test]
fn meta_a_store_serving_the_older_copy_is_caught() {
    let direct = CrashStore::by_label("direct").unwrap();
    let f = CrashStore::from_factory("serves-old", Arc::new(ServesOldFactory(direct)), false);
    let e = sweep(&f, 4096, PAGES, 0, 11).unwrap_err();
    assert!(e.contains("served an older version"), "{e}");
}
