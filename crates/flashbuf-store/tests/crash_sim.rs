#![allow(clippy::unwrap_used)]
//! Crash suite, every crash variant of every store in `flashbuf_store::STORES`: random op sequences
//! (whole and partial page writes of random pages with random bytes, batches, reads,
//! syncs, crashes), each crash point checked under several crash modes (lose unsynced,
//! keep all, prefixes and seeded subsets, torn at 512 B / 4 KB with old bytes or garbage),
//! page sizes 512, 4096 and 8192 (so 4 KB tears split 8 KB pages), against the model
//! ("synced pages exact; later pages old or new or reported corrupt; no phantoms").
//!
//! `FLASHBUF_CRASH_CASES=N` raises the number of scenarios per store (soak); the lab's
//! `flashbuf torture --sim` runs the same harness for longer.

use flashbuf_testkit::sim::{
    run, store_front, torn_overwrites, CrashChoice, Edit, Op, SimConfig, SimReport,
};
use flashbuf_testkit::CrashStore;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
use std::cell::RefCell;

/// Crash points the fast suite must reach per store.
const MIN_CRASH_POINTS: u64 = 1_000;

fn edit() -> impl Strategy<Value = Edit> {
    (prop::bool::weighted(0.3), any::<u64>()).prop_map(|(whole, seed)| Edit { whole, seed })
}

fn crash() -> impl Strategy<Value = CrashChoice> {
    (0u8..4, any::<u16>(), any::<u64>(), 0u8..5).prop_map(|(kind, at, seed, tear)| CrashChoice {
        kind,
        at,
        seed,
        tear,
    })
}

fn op() -> impl Strategy<Value = Op> {
    let page = prop_oneof![0u32..4, 0u32..64];
    prop_oneof![
        8 => (page.clone(), edit()).prop_map(|(page, edit)| Op::Write { page, edit }),
        2 => prop::collection::vec((page.clone(), edit()), 1..8)
            .prop_map(|writes| Op::Batch { writes }),
        3 => page.prop_map(|page| Op::Read { page }),
        1 => Just(Op::Flush),
        3 => Just(Op::Sync),
        2 => crash().prop_map(Op::Crash),
    ]
}

fn scenario() -> impl Strategy<Value = (SimConfig, Vec<Op>)> {
    (
        prop::sample::select(vec![512usize, 4096, 8192]),
        2u32..24,
        any::<u64>(),
        prop::collection::vec(op(), 1..80),
    )
        .prop_map(|(page_size, pages, seed, ops)| {
            (
                SimConfig {
                    page_size,
                    pages,
                    fanout: 8,
                    seed,
                },
                ops,
            )
        })
}

fn cases() -> u32 {
    std::env::var("FLASHBUF_CRASH_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40)
}

#[test]
fn every_store_keeps_synced_pages_and_returns_old_or_new_after_any_crash() {
    for factory in &CrashStore::variants().unwrap() {
        let total = RefCell::new(SimReport::default());
        let config = Config {
            cases: cases(),
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
                "tests/crash_sim.proptest-regressions",
            ))),
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        let result = runner.run(&scenario(), |(cfg, ops)| {
            let rep = run(factory, &store_front, &cfg, &ops)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            total.borrow_mut().add(&rep);
            Ok(())
        });
        if let Err(e) = result {
            panic!("store '{}': {e}", factory.name);
        }
        let t = total.into_inner();
        eprintln!(
            "crash suite, store '{}': {} scenarios, {} ops, {} crash points, {} page reads judged \
             (synced {}, old {}, newest {}, intermediate {}, corrupt-after-unsynced {}); by mode {:?}",
            factory.name,
            t.scenarios,
            t.ops,
            t.crash_points,
            t.pages_checked,
            t.synced,
            t.old,
            t.newest,
            t.intermediate,
            t.corrupt_unsynced,
            t.by_mode
        );
        assert!(
            t.crash_points >= MIN_CRASH_POINTS,
            "store '{}': only {} crash points",
            factory.name,
            t.crash_points
        );
        // The suite must actually exercise the interesting outcomes; a store that masks
        // torn writes must never report a corrupt page at all.
        assert!(t.old > 0 && t.newest > 0, "{t:?}");
        if factory.masks_torn_writes {
            assert_eq!(
                t.corrupt_unsynced, 0,
                "store '{}' showed a torn write: {t:?}",
                factory.name
            );
        } else {
            assert!(t.corrupt_unsynced > 0, "{t:?}");
        }
        assert!(
            t.by_mode.len() >= 10,
            "crash modes covered: {:?}",
            t.by_mode
        );
    }
}

/// The write that a crash tears is never returned as data: a synced page rewritten and torn
/// reads as its old bytes, its new bytes, or a corrupt-page error — checked explicitly for
/// every tear shape and many seeds.
#[test]
fn a_torn_overwrite_of_a_synced_page_is_old_new_or_corrupt() {
    for factory in &CrashStore::variants().unwrap() {
        for page_size in [512usize, 4096, 8192] {
            let total = torn_overwrites(factory, page_size).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                total.old > 0 && total.newest > 0,
                "store '{}', page size {page_size}: {total:?}",
                factory.name
            );
            assert_eq!(
                total.corrupt_unsynced == 0,
                factory.masks_torn_writes,
                "store '{}', page size {page_size}: torn writes {} but the factory says {}: {total:?}",
                factory.name,
                if total.corrupt_unsynced == 0 { "never seen" } else { "seen" },
                if factory.masks_torn_writes { "masked" } else { "visible" }
            );
        }
    }
}

/// The harness itself: a store that skips the device sync, or hands out the bytes of a page
/// that failed its check, must be caught.
mod harness_catches_broken_stores {
    use super::*;
    use flashbuf_core::config::ConfigError;
    use flashbuf_core::{DeviceStats, DirtyRanges, PageId};
    use flashbuf_device::Device;
    use flashbuf_store::{
        DirectStore, DirectStoreConfig, PageStore, ReadOutcome, StoreContext, StoreError,
        StoreFactory, StoreStats,
    };
    use std::sync::Arc;

    /// Breaks one promise of the direct store.
    struct Broken {
        inner: DirectStore<Box<dyn Device>>,
        skip_sync: bool,
    }

    impl PageStore for Broken {
        fn name(&self) -> &'static str {
            "broken"
        }
        fn page_size(&self) -> usize {
            self.inner.page_size()
        }
        fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
            match self.inner.read_page(pid, buf) {
                // Return what the device holds instead of the error.
                Err(StoreError::Corrupt { .. }) if !self.skip_sync => {
                    let off = flashbuf_store::Superblock::reserved_bytes(buf.len())
                        + pid.0 * buf.len() as u64;
                    self.inner.device().read_at(off, buf)?;
                    Ok(ReadOutcome::Found)
                }
                r => r,
            }
        }
        fn write_page(&self, pid: PageId, page: &[u8], d: &DirtyRanges) -> Result<(), StoreError> {
            self.inner.write_page(pid, page, d)
        }
        fn sync(&self) -> Result<(), StoreError> {
            if self.skip_sync {
                Ok(())
            } else {
                self.inner.sync()
            }
        }
        fn stats(&self) -> StoreStats {
            self.inner.stats()
        }
        fn device_stats(&self) -> DeviceStats {
            self.inner.device_stats()
        }
    }

    fn cfg(ps: usize) -> DirectStoreConfig {
        DirectStoreConfig {
            page_size: ps,
            grow_bytes: 8 * ps as u64,
            ..Default::default()
        }
    }

    /// Builds [`Broken`] stores.
    #[derive(Debug)]
    struct BrokenFactory {
        skip_sync: bool,
    }

    impl StoreFactory for BrokenFactory {
        fn create(
            &self,
            d: Box<dyn Device>,
            ctx: &StoreContext<'_>,
        ) -> Result<Box<dyn PageStore>, StoreError> {
            let inner = DirectStore::create(d, cfg(ctx.page_size))?;
            Ok(Box::new(Broken {
                inner,
                skip_sync: self.skip_sync,
            }))
        }
        fn open(
            &self,
            d: Box<dyn Device>,
            ctx: &StoreContext<'_>,
        ) -> Result<Box<dyn PageStore>, StoreError> {
            let inner = DirectStore::open(d, cfg(ctx.page_size))?;
            Ok(Box::new(Broken {
                inner,
                skip_sync: self.skip_sync,
            }))
        }
        fn check(&self, _page_size: usize) -> Result<(), ConfigError> {
            Ok(())
        }
    }

    fn first_failure(factory: &CrashStore) -> String {
        let mut rng = flashbuf_core::rng::SplitMix64::new(1);
        for seed in 0..200 {
            let ops = flashbuf_testkit::sim::random_ops(&mut rng, 6, 60);
            let cfg = SimConfig {
                page_size: 4096,
                pages: 6,
                fanout: 8,
                seed,
            };
            if let Err(e) = run(factory, &store_front, &cfg, &ops) {
                return e.to_string();
            }
        }
        panic!("store '{}' passed the crash suite", factory.name);
    }

    #[test]
    fn a_store_that_does_not_sync_loses_synced_writes() {
        let f = CrashStore::from_factory(
            "no-sync",
            Arc::new(BrokenFactory { skip_sync: true }),
            false,
        );
        let e = first_failure(&f);
        assert!(
            e.contains("lost synced write") || e.contains("rolled back"),
            "{e}"
        );
    }

    #[test]
    fn a_store_that_returns_torn_pages_is_caught() {
        let f = CrashStore::from_factory(
            "no-check",
            Arc::new(BrokenFactory { skip_sync: false }),
            false,
        );
        let e = first_failure(&f);
        assert!(
            e.contains("mixed bytes") || e.contains("misdirected") || e.contains("unknown write"),
            "{e}"
        );
    }
}
