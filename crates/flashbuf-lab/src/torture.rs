//! Crash torture for every store (issue 6): the library side of `flashbuf torture` and
//! `flashbuf check`.
//!
//! - [`torture_sim`]: soak mode of the crash harness in `flashbuf_testkit` —
//!   scenarios of random ops with crash points (every crash mode, torn writes), straight
//!   to the store or through a [`BufferPool`] ([`PoolFront`]), until a number of crash
//!   points per store is reached; counts per store and per crash mode.
//! - [`real::torture`]: writes and syncs pages of a store on real files until killed or
//!   out of time, journaling intents and acknowledged versions ([`journal`]); resumable.
//! - [`real::check`]: recovers the store and verifies it against the journal: every
//!   acknowledged page at least at its acknowledged version, nothing newer than what was
//!   intended, no torn or mixed page, no corrupt page that was synced, no phantom.
//!
//! Stores come from the one store table (`flashbuf_store::STORES`, through
//! [`CrashStore`]); a store listed there is tortured here with no change to this file.

pub mod dirlock;
pub mod journal;
pub mod real;
mod setup;

use crate::LabError;
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{DataMode, PageId};
use flashbuf_pool::policy::Lru;
use flashbuf_pool::{BufferPool, PoolError};
use flashbuf_store::{PageStore, ReadOutcome};
use flashbuf_testkit::sim::{
    is_whole, random_ops, run, store_front, BatchPage, Front, FrontError, SimConfig, SimFailure,
    SimReport,
};
use flashbuf_testkit::CrashStore;
use std::ops::Range;

/// A [`Front`] that goes through a buffer pool with an LRU policy: writes modify cached
/// pages, write-backs happen on eviction, `flush` and `sync`.
pub struct PoolFront {
    pool: BufferPool<Box<dyn PageStore>>,
}

impl PoolFront {
    /// A pool of `frames` frames over `store`.
    pub fn new(store: Box<dyn PageStore>, frames: usize) -> Result<Self, PoolError> {
        Ok(Self {
            pool: BufferPool::new(store, frames, Box::new(Lru::new(frames)))?,
        })
    }
}

fn pool_err(e: PoolError) -> FrontError {
    match e {
        PoolError::Store(s) => FrontError::Store(s),
        other => FrontError::Other(other.to_string()),
    }
}

impl Front for PoolFront {
    fn describe(&self) -> String {
        format!("pool({} frames, lru)", self.pool.frames_count())
    }

    fn write(
        &mut self,
        pid: PageId,
        _tag: u64,
        payload: &[u8],
        changed: &[Range<usize>],
    ) -> Result<(), FrontError> {
        let mut g = self.pool.write(pid).map_err(pool_err)?;
        if is_whole(payload.len(), changed) {
            // The whole logical page (more than the frame holds in metadata-only mode).
            g.touch_all();
        }
        for r in changed {
            g.data_mut_range(r.start, r.len())
                .copy_from_slice(&payload[r.clone()]);
        }
        Ok(())
    }

    fn write_batch(&mut self, pages: &[BatchPage<'_>]) -> Result<(), FrontError> {
        for p in pages {
            self.write(p.pid, p.tag, p.payload, &p.changed)?;
        }
        Ok(())
    }

    fn read(&mut self, pid: PageId, payload: &mut [u8]) -> Result<ReadOutcome, FrontError> {
        let g = self.pool.read(pid).map_err(pool_err)?;
        payload.copy_from_slice(g.data());
        // The pool hands out a zeroed fresh page for a page never written; written
        // payloads always carry a non-zero stamp.
        Ok(if payload.iter().all(|&b| b == 0) {
            ReadOutcome::Unwritten
        } else {
            ReadOutcome::Found
        })
    }

    fn flush(&mut self) -> Result<(), FrontError> {
        self.pool.flush_all().map(|_| ()).map_err(pool_err)
    }

    fn sync(&mut self) -> Result<(), FrontError> {
        self.pool.sync().map_err(pool_err)
    }

    fn can_overwrite_corrupt(&self) -> bool {
        false
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.pool.check_invariants()
    }
}

/// Which fronts the simulated torture uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// Straight to the store.
    Store,
    /// Through a buffer pool.
    Pool,
    /// Alternating, scenario by scenario.
    Both,
}

impl std::str::FromStr for Via {
    type Err = LabError;
    fn from_str(s: &str) -> Result<Self, LabError> {
        match s {
            "store" => Ok(Via::Store),
            "pool" => Ok(Via::Pool),
            "both" => Ok(Via::Both),
            _ => Err(LabError::Usage(format!(
                "--via '{s}': expected store, pool or both"
            ))),
        }
    }
}

/// Parameters of [`torture_sim`].
#[derive(Debug, Clone)]
pub struct SimTortureConfig {
    /// Stores to torture (default: every crash variant of every store).
    pub stores: Vec<CrashStore>,
    /// Crash points to reach per store.
    pub crash_points: u64,
    /// Seed of everything.
    pub seed: u64,
    /// Fronts.
    pub via: Via,
    /// Crash images checked per crash point.
    pub fanout: usize,
}

impl SimTortureConfig {
    /// The stores `name` selects (see [`CrashStore::select`]): every crash variant of
    /// every store, a store's crash variants, one variant by its label, or a spec with
    /// options laid over a store's crash variants.
    pub fn stores_named(name: Option<&str>) -> Result<Vec<CrashStore>, LabError> {
        Ok(CrashStore::select(name)?)
    }

    /// [`SimTortureConfig::stores_named`] in data mode `data`: in metadata-only mode, with
    /// no name, the stores that take the mode; a named store that does not is refused.
    pub fn stores_in(name: Option<&str>, data: DataMode) -> Result<Vec<CrashStore>, LabError> {
        let all = Self::stores_named(name)?;
        let mut out = Vec::with_capacity(all.len());
        for s in all {
            if name.is_none() && !s.takes_metadata() && data == DataMode::Metadata {
                continue;
            }
            out.push(s.with_data(data)?);
        }
        Ok(out)
    }
}

/// Result of one store's simulated torture.
#[derive(Debug, Clone)]
pub struct StoreTorture {
    /// Store name.
    pub store: String,
    /// Counts over every scenario.
    pub report: SimReport,
    /// Scenarios run through the pool.
    pub pool_scenarios: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl StoreTorture {
    /// The result as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let r = &self.report;
        serde_json::json!({
            "store": self.store,
            "scenarios": r.scenarios,
            "pool_scenarios": self.pool_scenarios,
            "ops": r.ops,
            "crash_points": r.crash_points,
            "pages_checked": r.pages_checked,
            "synced": r.synced,
            "old": r.old,
            "newest": r.newest,
            "intermediate": r.intermediate,
            "corrupt_unsynced": r.corrupt_unsynced,
            "by_mode": r.by_mode,
            "seconds": self.seconds,
        })
    }
}

/// A scenario's parameters, drawn from the torture seed and the scenario number.
fn scenario(seed: u64, store_index: usize, n: u64) -> (SimConfig, u64, usize, usize) {
    let mut rng = SplitMix64::new(
        seed ^ (store_index as u64).wrapping_mul(0xA076_1D64_78BD_642F)
            ^ n.wrapping_mul(0xE703_7ED1_A0B4_28DB),
    );
    let page_size = [512usize, 4096, 8192][rng.below(3) as usize];
    let pages = 2 + rng.below(30) as u32;
    let ops = 20 + rng.below(130) as usize;
    let frames = 1 + rng.below(6) as usize;
    let cfg = SimConfig {
        page_size,
        pages,
        fanout: 8,
        seed: rng.next_u64(),
    };
    (cfg, rng.next_u64(), ops, frames)
}

/// Runs scenarios per store until each reached `crash_points`; calls `progress` after
/// every scenario. The first violation stops the run and is returned (it names the store,
/// scenario parameters, op and crash mode; the same command reproduces it).
pub fn torture_sim(
    cfg: &SimTortureConfig,
    progress: &mut dyn FnMut(&StoreTorture),
) -> Result<Vec<StoreTorture>, Box<SimFailure>> {
    let mut out = Vec::new();
    for (si, factory) in cfg.stores.iter().enumerate() {
        let t0 = std::time::Instant::now();
        let mut st = StoreTorture {
            store: factory.name.clone(),
            report: SimReport::default(),
            pool_scenarios: 0,
            seconds: 0.0,
        };
        let mut n = 0u64;
        while st.report.crash_points < cfg.crash_points {
            let (mut sim, ops_seed, n_ops, frames) = scenario(cfg.seed, si, n);
            sim.fanout = cfg.fanout.max(1);
            let mut rng = SplitMix64::new(ops_seed);
            let ops = random_ops(&mut rng, sim.pages, n_ops);
            let through_pool = match cfg.via {
                Via::Store => false,
                Via::Pool => true,
                Via::Both => n % 2 == 1,
            };
            let pool_front = move |s: Box<dyn PageStore>| -> Result<Box<dyn Front>, FrontError> {
                Ok(Box::new(PoolFront::new(s, frames).map_err(pool_err)?))
            };
            let r = if through_pool {
                st.pool_scenarios += 1;
                run(factory, &pool_front, &sim, &ops)
            } else {
                run(factory, &store_front, &sim, &ops)
            };
            match r {
                Ok(rep) => st.report.add(&rep),
                Err(mut f) => {
                    f.detail = format!(
                        "{} [scenario {n} of torture seed {}; rerun the same command to reproduce]",
                        f.detail, cfg.seed
                    );
                    return Err(f);
                }
            }
            n += 1;
            st.seconds = t0.elapsed().as_secs_f64();
            progress(&st);
        }
        out.push(st);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sim_torture_through_store_and_pool_reaches_its_crash_points() {
        let cfg = SimTortureConfig {
            stores: SimTortureConfig::stores_named(None).unwrap(),
            crash_points: 300,
            seed: 9,
            via: Via::Both,
            fanout: 8,
        };
        let out = torture_sim(&cfg, &mut |_| {}).unwrap();
        assert_eq!(out.len(), CrashStore::variants().unwrap().len());
        for s in &out {
            assert!(s.report.crash_points >= 300);
            assert!(s.pool_scenarios > 0);
            assert!(s.to_json()["crash_points"].as_u64().unwrap() >= 300);
        }
        assert!(SimTortureConfig::stores_named(Some("nope")).is_err());
        assert!("pool".parse::<Via>().is_ok() && "x".parse::<Via>().is_err());
    }
}
