//! Preconditioning of simulated flash devices: how a [`SimDevice`](super::SimDevice)
//! starts ([`Precondition`]), the steady-state test, and a process-wide cache of
//! preconditioned FTL states.
//!
//! # The steady state (our reading of SNIA SSS PTS)
//! SNIA's Solid State Storage Performance Test Specification (PTS 2.0, §3 and the
//! write-saturation test) purges the drive, fills it, then writes until a tracked variable
//! is steady: over a *measurement window* of 5 rounds, the excursion (max − min) is at
//! most 20% of the window's average, and the excursion of the least-squares line across
//! the window (slope × 4 rounds) is at most 10% of the average. We track the FTL's write
//! amplification (flash programs per host program) and read the PTS as follows:
//! - **fill**: every logical page written once, in order (the [`Precondition::Sequential`]
//!   state on its own);
//! - **round**: [`window_pages`] host page writes, each to a uniformly random logical page
//!   (a SplitMix64 stream seeded from the device's seed), about an eighth of the capacity;
//! - **steady**: the last [`STEADY_ROUNDS`] rounds meet [`STEADY_EXCURSION`] and
//!   [`STEADY_SLOPE`] ([`is_steady`]);
//! - **cap**: at most [`STEADY_CAP_CAPACITIES`] × the logical pages of random writes; a
//!   device that is not steady by then stays as it is and its [`SteadyReport`] says so.
//!
//! No virtual time or counters are charged: the device resets its counters and clock
//! afterwards and keeps the wear. The disk model has no state to age: nothing happens.
//!
//! # Cache
//! Preconditioning a 1 GiB device to steady state writes more than a capacity of pages
//! through the FTL (a hybrid FTL merges a whole block per random write). The result
//! depends only on the flash model (profile and options), the logical pages, the seed and
//! the mode, so [`SimDevice::precondition_as`](super::SimDevice::precondition_as) computes
//! it once per process and hands out clones ([`Ftl::clone_box`]: the FTL state is plain
//! vectors, a copy). Tests compare the cached and the slow way ([`precondition_ftl`]) on
//! later workloads.

use super::ftl::Ftl;
use super::profiles::FlashModel;
use super::SplitMix64;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// How a simulated device starts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precondition {
    /// Never written: every block free (the state the profiles' latencies were calibrated
    /// on, and the default before issue 16).
    Fresh,
    /// Every logical page written once, in order: a full, sequentially written drive.
    Sequential,
    /// Filled, then randomly overwritten until the write amplification is steady (the
    /// default; see the module docs).
    #[default]
    Steady,
}

impl Precondition {
    /// The words the `precondition=` option accepts: the three modes, and `true`
    /// (= `steady`) and `false` (= `fresh`) as aliases.
    pub const WORDS: &'static [&'static str] = &["steady", "sequential", "fresh", "true", "false"];

    /// The mode a word of [`Self::WORDS`] names.
    pub fn from_word(word: &str) -> Option<Self> {
        match word {
            "steady" | "true" => Some(Self::Steady),
            "sequential" => Some(Self::Sequential),
            "fresh" | "false" => Some(Self::Fresh),
            _ => None,
        }
    }

    /// The mode's name (`fresh`, `sequential`, `steady`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Fresh => "fresh",
            Self::Sequential => "sequential",
            Self::Steady => "steady",
        }
    }
}

/// Rounds of the steady-state measurement window (SNIA PTS: 5).
pub const STEADY_ROUNDS: usize = 5;
/// Largest excursion (max − min) of the window's write amplifications, as a fraction of
/// their average (SNIA PTS: 20%).
pub const STEADY_EXCURSION: f64 = 0.20;
/// Largest excursion of the window's least-squares line, as a fraction of the average
/// (SNIA PTS: 10%).
pub const STEADY_SLOPE: f64 = 0.10;
/// A round is this fraction of the logical pages (at least [`MIN_WINDOW_PAGES`]).
pub const WINDOW_DIVISOR: u32 = 8;
/// Smallest round, host page writes (small test devices).
pub const MIN_WINDOW_PAGES: u32 = 1024;
/// Random writes stop after this many capacities even if not steady.
pub const STEADY_CAP_CAPACITIES: u64 = 32;

/// Host page writes per round for an FTL of `logical_pages`.
pub fn window_pages(logical_pages: u32) -> u32 {
    (logical_pages / WINDOW_DIVISOR).max(MIN_WINDOW_PAGES)
}

/// Whether the last [`STEADY_ROUNDS`] values of `rounds` are steady: excursion within
/// [`STEADY_EXCURSION`] and least-squares excursion within [`STEADY_SLOPE`] of their
/// average. Fewer rounds: not steady.
pub fn is_steady(rounds: &[f64]) -> bool {
    let Some(from) = rounds.len().checked_sub(STEADY_ROUNDS) else {
        return false;
    };
    let w = &rounds[from..];
    let n = w.len() as f64;
    let avg = w.iter().sum::<f64>() / n;
    let (lo, hi) = w
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
    let x_mean = (n - 1.0) / 2.0;
    let (sxy, sxx) = w
        .iter()
        .enumerate()
        .fold((0.0, 0.0), |(sxy, sxx), (i, &y)| {
            let dx = i as f64 - x_mean;
            (sxy + dx * (y - avg), sxx + dx * dx)
        });
    let fit_excursion = (sxy / sxx * (n - 1.0)).abs();
    hi - lo <= STEADY_EXCURSION * avg && fit_excursion <= STEADY_SLOPE * avg
}

/// What preconditioning did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyReport {
    /// The mode.
    pub mode: Precondition,
    /// Pages written in order (the fill).
    pub fill_pages: u64,
    /// Random page writes after the fill.
    pub random_pages: u64,
    /// Write amplification of each random round, in order.
    pub round_wa: Vec<f64>,
    /// Whether the last rounds met the steady-state test (`false` for the fresh and
    /// sequential modes, and when the cap stopped the random writes).
    pub steady: bool,
}

impl SteadyReport {
    /// Average write amplification of the last [`STEADY_ROUNDS`] rounds (`None` without
    /// random rounds).
    pub fn steady_wa(&self) -> Option<f64> {
        let from = self.round_wa.len().saturating_sub(STEADY_ROUNDS);
        let w = &self.round_wa[from..];
        (!w.is_empty()).then(|| w.iter().sum::<f64>() / w.len() as f64)
    }
}

/// Preconditions `ftl` (the slow way) as `mode` says, numbering host writes from `*seq`;
/// random writes draw from `seed`. Leaves the counters as they are (the caller resets).
pub fn precondition_ftl(
    ftl: &mut dyn Ftl,
    seq: &mut u64,
    mode: Precondition,
    seed: u64,
) -> SteadyReport {
    let mut report = SteadyReport {
        mode,
        fill_pages: 0,
        random_pages: 0,
        round_wa: Vec::new(),
        steady: false,
    };
    if mode == Precondition::Fresh {
        return report;
    }
    let pages = ftl.logical_pages();
    for lpn in 0..pages {
        *seq += 1;
        ftl.write(lpn, *seq);
    }
    ftl.nand_mut().discard_cost();
    report.fill_pages = u64::from(pages);
    if mode == Precondition::Sequential {
        return report;
    }
    // Distinct from the free-block shuffle's stream.
    let mut rng = SplitMix64::new(seed ^ 0x5354_4541_4459_5354);
    let window = window_pages(pages);
    let cap_pages = STEADY_CAP_CAPACITIES * u64::from(pages);
    while !report.steady && report.random_pages < cap_pages {
        let before = ftl.stats();
        for _ in 0..window {
            *seq += 1;
            ftl.write(rng.below(u64::from(pages)) as u32, *seq);
        }
        ftl.nand_mut().discard_cost();
        let after = ftl.stats();
        let host = after.host_programs - before.host_programs;
        let flash = after.flash_programs - before.flash_programs;
        report.round_wa.push(flash as f64 / host.max(1) as f64);
        report.random_pages += u64::from(window);
        report.steady = is_steady(&report.round_wa);
    }
    report
}

/// A preconditioned state: the FTL, the last host write number, the report.
#[derive(Debug)]
pub(crate) struct Preconditioned {
    pub(crate) ftl: Box<dyn Ftl>,
    pub(crate) seq: u64,
    pub(crate) report: SteadyReport,
}

type Slot = Arc<Mutex<Option<Preconditioned>>>;

/// Preconditioned states by key, oldest first (at most [`CACHE_ENTRIES`]).
static CACHE: Mutex<BTreeMap<u64, (String, Slot)>> = Mutex::new(BTreeMap::new());

/// Preconditioned states kept per process (each a few bytes per physical page).
pub const CACHE_ENTRIES: usize = 8;

/// The cache's slot for `key`, created (and the oldest evicted) if new.
fn slot(key: &str) -> Slot {
    let mut cache = CACHE.lock();
    if let Some((_, s)) = cache.values().find(|(k, _)| k == key) {
        return Arc::clone(s);
    }
    while cache.len() >= CACHE_ENTRIES {
        cache.pop_first();
    }
    let age = cache.last_key_value().map_or(0, |(&a, _)| a + 1);
    let s: Slot = Arc::new(Mutex::new(None));
    cache.insert(age, (key.to_string(), Arc::clone(&s)));
    s
}

/// `fresh` (an FTL of `model` as built with `seed`, never written) preconditioned as
/// `mode`: computed once per (flash model, logical pages, seed, mode) per process, cloned
/// afterwards. The counters of the returned FTL are reset and no cost is pending.
pub(crate) fn preconditioned(
    model: &FlashModel,
    fresh: &dyn Ftl,
    mode: Precondition,
    seed: u64,
) -> Preconditioned {
    let key = format!(
        "{}|{}|{seed}|{}",
        serde_json::to_string(model).unwrap_or_else(|_| format!("{model:?}")),
        fresh.logical_pages(),
        mode.name()
    );
    let slot = slot(&key);
    let mut entry = slot.lock();
    if let Some(done) = entry.as_ref() {
        return Preconditioned {
            ftl: done.ftl.clone_box(),
            seq: done.seq,
            report: done.report.clone(),
        };
    }
    let mut ftl = fresh.clone_box();
    let mut seq = 0;
    let report = precondition_ftl(ftl.as_mut(), &mut seq, mode, seed);
    ftl.reset_stats();
    ftl.nand_mut().discard_cost();
    let out = Preconditioned {
        ftl: ftl.clone_box(),
        seq,
        report: report.clone(),
    };
    *entry = Some(Preconditioned { ftl, seq, report });
    out
}
