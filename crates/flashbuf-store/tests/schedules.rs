#![allow(clippy::unwrap_used)]
//! Concurrency schedules, every crash variant of the store table (`flashbuf_testkit::CrashStore`) plus
//! StableBuffer with proactive (background) flushing (issue 11): two or three worker
//! threads write their own pages (new stagings, in-place updates), sync and read, while a
//! seeded scheduler lets one device operation through at a time — the background
//! flusher's included — and crash images taken before every operation are judged against
//! the history (`flashbuf_testkit::schedule`). The pool over each store is
//! explored by the lab (`crates/flashbuf-lab/tests/schedules_pool.rs`).
//!
//! Meta-test: with the promise fence of bug C removed (`simulate_bug_unfenced_sync`), the
//! exploration finds a schedule that loses a promised version.
//!
//! `FLASHBUF_SCHEDULES=N` sets the schedules per store (default 40; soak with more).

use flashbuf_core::ConfigError;
use flashbuf_device::Device;
use flashbuf_store::registry::{StoreContext, StoreFactory};
use flashbuf_store::stable_buffer::{
    FlushMode, PatternCosts, Recognition, StableBufferConfig, StableBufferStore,
};
use flashbuf_store::{PageStore, StoreError};
use flashbuf_testkit::schedule::{explore, store_writer, ScheduleConfig, ScheduleReport};
use flashbuf_testkit::CrashStore;
use std::sync::Arc;

fn schedules() -> u64 {
    std::env::var("FLASHBUF_SCHEDULES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40)
}

/// StableBuffer with the background flusher, thresholds low enough that it flushes often.
fn proactive(ps: usize) -> StableBufferConfig {
    StableBufferConfig {
        staging_bytes: 6 * ps as u64,
        recognition: Recognition::Incremental,
        flush: FlushMode::Proactive,
        costs: PatternCosts {
            source: "test".into(),
            t_seq_us: 1.0,
            t_par_us: 1.5,
            t_focus_us: 2.0,
            theta_min_bytes: 2 * ps as u64,
            focused_area_bytes: 8 * ps as u64,
            partitions: 2,
        },
        align_bytes: ps as u64,
        grow_bytes: 4 * ps as u64,
        ..StableBufferConfig::with_page_size(ps)
    }
}

/// StableBuffer with a configuration the table's options do not reach (test pattern
/// costs), optionally with the fence of bug C removed.
#[derive(Debug)]
struct SbFactory {
    config: fn(usize) -> StableBufferConfig,
    unfenced: bool,
}

impl StoreFactory for SbFactory {
    fn create(
        &self,
        d: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        let s = StableBufferStore::create(d, (self.config)(ctx.page_size))?;
        if self.unfenced {
            s.simulate_bug_unfenced_sync(true);
        }
        Ok(Box::new(s))
    }
    fn open(
        &self,
        d: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        Ok(Box::new(StableBufferStore::open(
            d,
            (self.config)(ctx.page_size),
        )?))
    }
    fn check(&self, _page_size: usize) -> Result<(), ConfigError> {
        Ok(())
    }
}

fn sb(name: &str, config: fn(usize) -> StableBufferConfig, unfenced: bool) -> CrashStore {
    CrashStore::from_factory(name, Arc::new(SbFactory { config, unfenced }), true)
}

fn cfg(seed: u64) -> ScheduleConfig {
    ScheduleConfig {
        page_size: 512,
        workers: 2 + (seed % 2) as u32,
        pages_per_worker: 2,
        steps: 6,
        fanout: 2,
        seed,
    }
}

#[test]
fn every_store_survives_every_explored_schedule() {
    let mut all = ScheduleReport::default();
    let mut stores = CrashStore::variants().unwrap();
    stores.push(sb("stable-buffer-proactive", proactive, false));
    for f in &stores {
        let mut rep = ScheduleReport::default();
        for seed in 0..schedules() {
            let r = explore(f, &store_writer, &cfg(seed)).unwrap_or_else(|e| panic!("{e}"));
            rep.add(&r);
        }
        eprintln!("store {}: {rep:?}", f.name);
        assert!(rep.points > schedules() * 4, "{}: {rep:?}", f.name);
        all.add(&rep);
    }
    eprintln!("schedules: {all:?}");
}

/// The harness's staging configuration.
fn harness_cfg(ps: usize) -> StableBufferConfig {
    StableBufferConfig {
        staging_bytes: 16 * ps as u64,
        recognition: Recognition::OnDemand,
        align_bytes: ps as u64,
        grow_bytes: 8 * ps as u64,
        ..StableBufferConfig::with_page_size(ps)
    }
}

#[test]
fn meta_the_exploration_catches_an_unfenced_sync() {
    // StableBuffer (the harness's staging configuration) with the fence of bug C removed.
    let f = sb("stable-buffer-unfenced", harness_cfg, true);
    let mut caught = None;
    let mut explored = 0;
    for seed in 0..400 {
        explored += 1;
        let c = ScheduleConfig {
            workers: 2,
            pages_per_worker: 1,
            steps: 6,
            ..cfg(seed)
        };
        if let Err(e) = explore(&f, &store_writer, &c) {
            caught = Some(e);
            break;
        }
    }
    let e = caught.unwrap_or_else(|| panic!("{explored} schedules explored, bug C not found"));
    eprintln!("bug C found after {explored} schedules: {e}");
    assert!(e.contains("corrupt") || e.contains("lost"), "{e}");
}
