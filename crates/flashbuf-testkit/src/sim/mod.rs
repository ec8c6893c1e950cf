//! Operation sequences with crash points, run against the [`Model`](crate::model::Model).
//!
//! [`run`] formats a store on a [`FaultDevice`](flashbuf_device::fault::FaultDevice), applies [`Op`]s through a [`Front`] (the
//! store itself via [`StoreFront`], or a buffer pool over it — the lab provides one), and
//! at every [`Op::Crash`] (and once after the last op) builds several crash images from
//! the device's pending writes: the op's own [`CrashChoice`], then "nothing unsynced",
//! "everything", and seeded prefixes and subsets, each possibly torn at 512 B or 4 KB with
//! old bytes or garbage. It reopens the store on every image, reads every page (and a few
//! never-written probe pages) and judges each read with [`Model::check_recovered`](crate::model::Model::check_recovered). Each
//! image checked is one *crash point*. The run continues on the op's own image.
//!
//! Everything is deterministic from the ops and [`SimConfig::seed`]; a failure names the
//! op, the crash mode and the page, so a test reproduces it from the same inputs.
//!
//! A store configuration in metadata-only mode ([`CrashStore::with_data`](crate::CrashStore::with_data), `--data none`)
//! runs the same scenarios on its 64-byte metadata pages: payloads are the store's buffer
//! less the header, and the device sees the whole page's requests as it does in a replay.

use super::model::Verdict;
pub use crate::fronts::{
    is_whole, store_front, BatchPage, Front, FrontBuilder, FrontError, StoreFront,
};
use flashbuf_core::rng::SplitMix64;
use flashbuf_device::fault::{CrashMode, Tear};
use std::collections::BTreeMap;
use std::fmt;

mod ops;
mod runner;
#[cfg(test)]
mod tests;

pub use ops::{random_ops, torn_overwrite_ops, torn_overwrites};
pub use runner::run;

/// How a write changes a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edit {
    /// Rewrite the whole payload (else a random byte range plus the stamp).
    pub whole: bool,
    /// Seed of the range and the bytes.
    pub seed: u64,
}

/// A crash, as drawn by a test: mapped onto a [`CrashMode`] once the number of pending
/// writes is known (see [`CrashChoice::mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrashChoice {
    /// 0: lose unsynced, 1: keep all, 2: prefix, 3: seeded subset (modulo 4).
    pub kind: u8,
    /// Where a prefix ends (modulo pending writes + 1).
    pub at: u16,
    /// Seed of a subset.
    pub seed: u64,
    /// 0: no tear, 1: 512 B old bytes, 2: 512 B garbage, 3: 4 KB old, 4: 4 KB garbage
    /// (modulo 5).
    pub tear: u8,
}

impl CrashChoice {
    /// The crash mode for a device with `pending` unsynced writes.
    pub fn mode(&self, pending: usize) -> CrashMode {
        let tear = match self.tear % 5 {
            0 => None,
            t => Some(Tear {
                sector_bytes: if t <= 2 { 512 } else { 4096 },
                garbage: t % 2 == 0,
            }),
        };
        match self.kind % 4 {
            0 => CrashMode::LoseUnsynced,
            1 => CrashMode::KeepAll,
            2 => CrashMode::Prefix {
                writes: usize::from(self.at) % (pending + 1),
                tear,
            },
            _ => CrashMode::Random {
                seed: self.seed,
                tear,
            },
        }
    }

    /// A random choice.
    pub fn random(rng: &mut SplitMix64) -> Self {
        Self {
            kind: rng.below(4) as u8,
            at: rng.below(u64::from(u16::MAX)) as u16,
            seed: rng.next_u64(),
            tear: rng.below(5) as u8,
        }
    }
}

/// A short label of a crash mode for counts (`prefix/torn-512/garbage`, ...).
pub fn mode_label(mode: &CrashMode) -> &'static str {
    let tear_label = |t: &Option<Tear>, prefix: bool| -> &'static str {
        match (prefix, t.map(|t| (t.sector_bytes, t.garbage))) {
            (true, None) => "prefix",
            (true, Some((512, false))) => "prefix/torn-512",
            (true, Some((512, true))) => "prefix/torn-512/garbage",
            (true, Some((_, false))) => "prefix/torn-4k",
            (true, Some((_, true))) => "prefix/torn-4k/garbage",
            (false, None) => "subset",
            (false, Some((512, false))) => "subset/torn-512",
            (false, Some((512, true))) => "subset/torn-512/garbage",
            (false, Some((_, false))) => "subset/torn-4k",
            (false, Some((_, true))) => "subset/torn-4k/garbage",
        }
    };
    match mode {
        CrashMode::LoseUnsynced => "lose-unsynced",
        CrashMode::KeepAll => "keep-all",
        CrashMode::Prefix { tear, .. } => tear_label(tear, true),
        CrashMode::Random { tear, .. } => tear_label(tear, false),
    }
}

/// One step of a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Write one page (modulo [`SimConfig::pages`]).
    Write {
        /// Page number.
        page: u32,
        /// What changes.
        edit: Edit,
    },
    /// Write several pages in one batch (duplicates dropped).
    Batch {
        /// Pages and changes.
        writes: Vec<(u32, Edit)>,
    },
    /// Read a page and check it shows its latest write.
    Read {
        /// Page number.
        page: u32,
    },
    /// Write back what a cache holds.
    Flush,
    /// Make everything durable.
    Sync,
    /// Power cut, then reopen and verify.
    Crash(CrashChoice),
}

/// Scenario parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimConfig {
    /// Page size in bytes.
    pub page_size: usize,
    /// Pages used: ids `0..pages`.
    pub pages: u32,
    /// Crash images checked per crash point (the op's own, lose-unsynced, keep-all, then
    /// seeded others); at least 1.
    pub fanout: usize,
    /// Seed of the page bytes and the extra crash modes.
    pub seed: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            page_size: 4096,
            pages: 24,
            fanout: 8,
            seed: 0,
        }
    }
}

/// Counts of a run (sums over runs with [`SimReport::add`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimReport {
    /// Scenarios run.
    pub scenarios: u64,
    /// Ops applied.
    pub ops: u64,
    /// Crash images reopened and verified.
    pub crash_points: u64,
    /// Page reads judged after crashes.
    pub pages_checked: u64,
    /// Reads showing the durable state of a page not written since.
    pub synced: u64,
    /// Reads showing the old state of a page written since.
    pub old: u64,
    /// Reads showing a page's latest write.
    pub newest: u64,
    /// Reads showing an earlier unsynced write.
    pub intermediate: u64,
    /// Reads reporting a page written since as corrupt (torn and detected).
    pub corrupt_unsynced: u64,
    /// Crash points per crash-mode label.
    pub by_mode: BTreeMap<&'static str, u64>,
}

impl SimReport {
    /// Adds `o`'s counts to these.
    pub fn add(&mut self, o: &SimReport) {
        self.scenarios += o.scenarios;
        self.ops += o.ops;
        self.crash_points += o.crash_points;
        self.pages_checked += o.pages_checked;
        self.synced += o.synced;
        self.old += o.old;
        self.newest += o.newest;
        self.intermediate += o.intermediate;
        self.corrupt_unsynced += o.corrupt_unsynced;
        for (k, v) in &o.by_mode {
            *self.by_mode.entry(k).or_default() += v;
        }
    }

    fn count(&mut self, v: Verdict) {
        self.pages_checked += 1;
        match v {
            Verdict::Synced => self.synced += 1,
            Verdict::Old => self.old += 1,
            Verdict::Newest => self.newest += 1,
            Verdict::Intermediate => self.intermediate += 1,
            Verdict::CorruptUnsynced => self.corrupt_unsynced += 1,
        }
    }
}

/// Why a scenario failed, with what it takes to reproduce it.
#[derive(Debug, Clone)]
pub struct SimFailure {
    /// Store name.
    pub store: String,
    /// Front description.
    pub front: String,
    /// The configuration.
    pub config: SimConfig,
    /// Index of the op (`ops.len()` for the final crash).
    pub op_index: usize,
    /// The op, formatted.
    pub op: String,
    /// The crash mode, if the failure was found after a crash.
    pub crash_mode: Option<String>,
    /// The broken promise.
    pub detail: String,
}

impl fmt::Display for SimFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "store '{}' via {} (page size {}, {} pages, seed {}): op #{} {}",
            self.store,
            self.front,
            self.config.page_size,
            self.config.pages,
            self.config.seed,
            self.op_index,
            self.op
        )?;
        if let Some(m) = &self.crash_mode {
            write!(f, ", crash mode {m}")?;
        }
        write!(f, ": {}", self.detail)
    }
}

impl std::error::Error for SimFailure {}
