//! Operation sequences with crash points, run against the [`Model`].
//!
//! [`run`] formats a store on a [`FaultDevice`], applies [`Op`]s through a [`Front`] (the
//! store itself via [`StoreFront`], or a buffer pool over it — the lab provides one), and
//! at every [`Op::Crash`] (and once after the last op) builds several crash images from
//! the device's pending writes: the op's own [`CrashChoice`], then "nothing unsynced",
//! "everything", and seeded prefixes and subsets, each possibly torn at 512 B or 4 KB with
//! old bytes or garbage. It reopens the store on every image, reads every page (and a few
//! never-written probe pages) and judges each read with [`Model::check_recovered`]. Each
//! image checked is one *crash point*. The run continues on the op's own image.
//!
//! Everything is deterministic from the ops and [`SimConfig::seed`]; a failure names the
//! op, the crash mode and the page, so a test reproduces it from the same inputs.
//!
//! A store configuration in metadata-only mode ([`CrashStore::with_data`], `--data none`)
//! runs the same scenarios on its 64-byte metadata pages: payloads are the store's buffer
//! less the header, and the device sees the whole page's requests as it does in a replay.

use super::content::{fill, write_stamp, STAMP_BYTES};
use super::model::{Model, PageValue, Verdict, Violation};
use super::CrashStore;
pub use crate::fronts::{
    is_whole, store_front, BatchPage, Front, FrontBuilder, FrontError, StoreFront,
};
use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::PageId;
use flashbuf_device::fault::{CrashMode, FaultDevice, Tear};
use flashbuf_store::{PageStore, ReadOutcome};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

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

/// Never-written pages probed after every crash, beyond `0..pages` (phantom check).
fn probes(pages: u32) -> [PageId; 3] {
    let p = u64::from(pages);
    [PageId(p), PageId(p + 17), PageId(1 << 20)]
}

struct Runner<'a> {
    factory: &'a CrashStore,
    builder: FrontBuilder<'a>,
    cfg: SimConfig,
    model: Model,
    next_tag: u64,
    report: SimReport,
    payload_len: usize,
}

/// A store reopened after a crash: its device, the store, and what each page holds.
type Recovered = (
    Arc<FaultDevice>,
    Box<dyn PageStore>,
    Vec<(PageId, PageValue)>,
);

struct Up {
    dev: Arc<FaultDevice>,
    front: Box<dyn Front>,
}

/// Runs `ops` on a fresh store built by `factory`, through the front `builder` makes, and
/// checks it against the model; see the module documentation.
pub fn run(
    factory: &CrashStore,
    builder: FrontBuilder<'_>,
    cfg: &SimConfig,
    ops: &[Op],
) -> Result<SimReport, Box<SimFailure>> {
    let mut r = Runner {
        factory,
        builder,
        cfg: *cfg,
        model: Model::new(),
        next_tag: 1,
        report: SimReport {
            scenarios: 1,
            ..SimReport::default()
        },
        payload_len: cfg.page_size.saturating_sub(HEADER_BYTES),
    };
    let mut front_name = String::from("?");
    let fail =
        |r: &Runner<'_>, front: &str, i: usize, op: String, mode: Option<String>, d: String| {
            Box::new(SimFailure {
                store: r.factory.name.clone(),
                front: front.to_string(),
                config: r.cfg,
                op_index: i,
                op,
                crash_mode: mode,
                detail: d,
            })
        };
    if cfg.pages == 0 || cfg.page_size < HEADER_BYTES + STAMP_BYTES + 8 {
        return Err(fail(
            &r,
            &front_name,
            0,
            "setup".into(),
            None,
            format!("no pages or page size {} too small", cfg.page_size),
        ));
    }
    let dev = Arc::new(FaultDevice::new(0));
    let store = factory
        .create(Box::new(dev.clone()), cfg.page_size)
        .map_err(|e| fail(&r, &front_name, 0, "create".into(), None, e.to_string()))?;
    // The store's buffers: the page, or its metadata page in metadata-only mode.
    let buf_bytes = store.page_size();
    if buf_bytes < HEADER_BYTES + STAMP_BYTES + 8 {
        let d = format!("store buffers of {buf_bytes} bytes are too small");
        return Err(fail(&r, &front_name, 0, "create".into(), None, d));
    }
    r.payload_len = buf_bytes - HEADER_BYTES;
    let front = builder(store)
        .map_err(|e| fail(&r, &front_name, 0, "front".into(), None, e.to_string()))?;
    front_name = front.describe();
    let mut up = Up { dev, front };
    for (i, op) in ops.iter().enumerate() {
        r.report.ops += 1;
        let res = match op {
            Op::Crash(choice) => r.crash(&mut up, i, Some(*choice)),
            _ => r.apply(&mut up, op).map_err(|d| (None, d)),
        };
        if let Err((mode, d)) = res {
            return Err(fail(&r, &front_name, i, format!("{op:?}"), mode, d));
        }
    }
    if let Err((mode, d)) = r.crash(&mut up, ops.len(), None) {
        return Err(fail(
            &r,
            &front_name,
            ops.len(),
            "final crash".into(),
            mode,
            d,
        ));
    }
    Ok(r.report)
}

impl Runner<'_> {
    fn pid(&self, page: u32) -> PageId {
        PageId(u64::from(page % self.cfg.pages))
    }

    /// The new payload of `pid` after `edit`, and the ranges it changed; `None` if the
    /// page cannot be written through this front (reported corrupt, read-before-write).
    fn edited(
        &mut self,
        pid: PageId,
        edit: Edit,
        front: &dyn Front,
    ) -> Option<(u64, Vec<u8>, Vec<Range<usize>>)> {
        let base = self.model.latest(pid);
        if base == PageValue::Corrupt && !front.can_overwrite_corrupt() {
            return None;
        }
        let tag = self.next_tag;
        self.next_tag += 1;
        let n = self.payload_len;
        let mut rng = SplitMix64::new(edit.seed ^ tag.wrapping_mul(0xA24B_AED4_963E_E407));
        match base {
            PageValue::Data { payload, .. } if !edit.whole => {
                let mut p = payload.to_vec();
                write_stamp(&mut p, pid, tag);
                let start = STAMP_BYTES + rng.below((n - STAMP_BYTES) as u64) as usize;
                let len = 1 + rng.below((n - start).min(700) as u64) as usize;
                for b in &mut p[start..start + len] {
                    *b = rng.next_u64() as u8;
                }
                Some((tag, p, vec![0..STAMP_BYTES, start..start + len]))
            }
            _ => {
                let mut p = vec![0u8; n];
                fill(&mut p, pid, tag, self.cfg.seed ^ edit.seed);
                let whole: Range<usize> = 0..n;
                Some((tag, p, vec![whole]))
            }
        }
    }

    fn apply(&mut self, up: &mut Up, op: &Op) -> Result<(), String> {
        match op {
            Op::Write { page, edit } => {
                let pid = self.pid(*page);
                if let Some((tag, p, changed)) = self.edited(pid, *edit, up.front.as_ref()) {
                    up.front
                        .write(pid, tag, &p, &changed)
                        .map_err(|e| format!("write of {pid} failed: {e}"))?;
                    self.model.write(pid, tag, p.into());
                }
            }
            Op::Batch { writes } => {
                let mut seen = Vec::new();
                let mut edits = Vec::new();
                for (page, edit) in writes {
                    let pid = self.pid(*page);
                    if seen.contains(&pid) {
                        continue;
                    }
                    seen.push(pid);
                    if let Some(e) = self.edited(pid, *edit, up.front.as_ref()) {
                        edits.push((pid, e));
                    }
                }
                let batch: Vec<BatchPage<'_>> = edits
                    .iter()
                    .map(|(pid, (tag, p, changed))| BatchPage {
                        pid: *pid,
                        tag: *tag,
                        payload: p,
                        changed: changed.clone(),
                    })
                    .collect();
                if !batch.is_empty() {
                    up.front
                        .write_batch(&batch)
                        .map_err(|e| format!("batch write failed: {e}"))?;
                }
                for (pid, (tag, p, _)) in edits {
                    self.model.write(pid, tag, p.into());
                }
            }
            Op::Read { page } => {
                let pid = self.pid(*page);
                let mut p = vec![0u8; self.payload_len];
                let r = up.front.read(pid, &mut p);
                let r = match &r {
                    Ok(o) => Ok(*o),
                    Err(FrontError::Store(e)) => Err(e),
                    Err(FrontError::Other(s)) => return Err(format!("read of {pid}: {s}")),
                };
                self.model
                    .check_live(pid, r, &p)
                    .map_err(|v| format!("live read: {v}"))?;
            }
            Op::Flush => up.front.flush().map_err(|e| format!("flush failed: {e}"))?,
            Op::Sync => {
                up.front.sync().map_err(|e| format!("sync failed: {e}"))?;
                self.model.sync();
            }
            Op::Crash(_) => {}
        }
        Ok(())
    }

    /// Checks crash images of the current device; continues on the first one's store.
    fn crash(
        &mut self,
        up: &mut Up,
        op_index: usize,
        choice: Option<CrashChoice>,
    ) -> Result<(), (Option<String>, String)> {
        up.front
            .check_invariants()
            .map_err(|e| (None, format!("invariants before the crash: {e}")))?;
        let pending = up.dev.pending_writes();
        let mut rng = SplitMix64::new(
            self.cfg.seed ^ (op_index as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D),
        );
        let first = choice.unwrap_or(CrashChoice {
            kind: 3,
            at: 0,
            seed: rng.next_u64(),
            tear: 2,
        });
        let mut modes = vec![
            first.mode(pending),
            CrashMode::LoseUnsynced,
            CrashMode::KeepAll,
        ];
        while modes.len() < self.cfg.fanout {
            modes.push(CrashChoice::random(&mut rng).mode(pending));
        }
        modes.truncate(self.cfg.fanout.max(1));
        let mut next: Option<Recovered> = None;
        for mode in &modes {
            let img = up.dev.crash_image(*mode);
            let m = || Some(format!("{mode:?}"));
            let dev = Arc::new(FaultDevice::from_image(img));
            let store = self
                .factory
                .open(Box::new(dev.clone()), self.cfg.page_size)
                .map_err(|e| (m(), format!("reopen after the crash failed: {e}")))?;
            store
                .check_invariants()
                .map_err(|e| (m(), format!("invariants after recovery: {e}")))?;
            let seen = self
                .verify(store.as_ref())
                .map_err(|v| (m(), v.to_string()))?;
            self.report.crash_points += 1;
            *self.report.by_mode.entry(mode_label(mode)).or_default() += 1;
            if next.is_none() {
                next = Some((dev, store, seen));
            }
        }
        let Some((dev, store, seen)) = next else {
            return Err((None, "no crash mode".into()));
        };
        for (pid, v) in seen {
            self.model.recovered(pid, v);
        }
        let front = (self.builder)(store).map_err(|e| (None, format!("front: {e}")))?;
        *up = Up { dev, front };
        Ok(())
    }

    /// Reads every page and probe of a recovered store and judges it.
    fn verify(&mut self, store: &dyn PageStore) -> Result<Vec<(PageId, PageValue)>, Violation> {
        let mut page = vec![0u8; HEADER_BYTES + self.payload_len];
        let mut seen = Vec::with_capacity(self.cfg.pages as usize);
        let pids = (0..u64::from(self.cfg.pages))
            .map(PageId)
            .chain(probes(self.cfg.pages));
        for pid in pids {
            page.fill(0xEE);
            let r = store.read_page(pid, &mut page);
            let (v, value) =
                self.model
                    .check_recovered(pid, r.as_ref().map(|o| *o), &page[HEADER_BYTES..])?;
            if let Ok(ReadOutcome::Unwritten) = r {
                if page.iter().any(|&b| b != 0) {
                    return Err(Violation {
                        pid,
                        kind: "unwritten not zeroed",
                        detail: "read reported unwritten but left bytes in the buffer".into(),
                    });
                }
            }
            self.report.count(v);
            if pid.0 < u64::from(self.cfg.pages) {
                seen.push((pid, value));
            }
        }
        Ok(seen)
    }
}

/// Two pages written and synced, both rewritten, then a crash that keeps a seeded subset
/// of the pending writes torn with `tear` (1–4: 512 B / 4 KB, old bytes / garbage), then
/// both read: the torn-overwrite scenario of the crash suites.
pub fn torn_overwrite_ops(seed: u64, tear: u8) -> Vec<Op> {
    let w = |page, seed| Op::Write {
        page,
        edit: Edit { whole: true, seed },
    };
    vec![
        w(0, 1),
        w(1, 2),
        Op::Sync,
        w(0, 3),
        w(1, 4),
        Op::Crash(CrashChoice {
            kind: 3,
            at: 0,
            seed,
            tear,
        }),
        Op::Read { page: 0 },
        Op::Read { page: 1 },
    ]
}

/// A random op sequence of `n` ops over `pages` pages (for soak runs; tests draw theirs
/// with proptest so that failures shrink).
pub fn random_ops(rng: &mut SplitMix64, pages: u32, n: usize) -> Vec<Op> {
    let page = |rng: &mut SplitMix64| {
        // Half the writes go to a hot quarter of the pages.
        if rng.below(2) == 0 {
            rng.below(u64::from(pages.div_ceil(4))) as u32
        } else {
            rng.below(u64::from(pages)) as u32
        }
    };
    let edit = |rng: &mut SplitMix64| Edit {
        whole: rng.below(3) == 0,
        seed: rng.next_u64(),
    };
    (0..n)
        .map(|_| match rng.below(100) {
            0..=39 => Op::Write {
                page: page(rng),
                edit: edit(rng),
            },
            40..=49 => Op::Batch {
                writes: (0..2 + rng.below(6))
                    .map(|_| (page(rng), edit(rng)))
                    .collect(),
            },
            50..=64 => Op::Read { page: page(rng) },
            65..=72 => Op::Flush,
            73..=87 => Op::Sync,
            _ => Op::Crash(CrashChoice::random(rng)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CrashStore;

    #[test]
    fn a_short_scenario_passes_and_counts_crash_points() {
        let mut rng = SplitMix64::new(5);
        let ops = random_ops(&mut rng, 8, 60);
        let cfg = SimConfig {
            page_size: 512,
            pages: 8,
            fanout: 4,
            seed: 5,
        };
        let direct = &CrashStore::variants().unwrap()[0];
        let rep = run(direct, &store_front, &cfg, &ops).unwrap();
        let crashes = ops.iter().filter(|o| matches!(o, Op::Crash(_))).count() as u64;
        assert_eq!(rep.crash_points, (crashes + 1) * 4);
        assert_eq!(rep.pages_checked, rep.crash_points * 11);
    }

    #[test]
    fn crash_choice_maps_onto_every_mode() {
        let c = |kind, tear| CrashChoice {
            kind,
            at: 7,
            seed: 1,
            tear,
        };
        assert_eq!(c(0, 0).mode(3), CrashMode::LoseUnsynced);
        assert_eq!(c(1, 0).mode(3), CrashMode::KeepAll);
        assert_eq!(
            c(2, 0).mode(3),
            CrashMode::Prefix {
                writes: 3,
                tear: None
            }
        );
        assert_eq!(mode_label(&c(3, 2).mode(3)), "subset/torn-512/garbage");
        assert_eq!(mode_label(&c(2, 3).mode(3)), "prefix/torn-4k");
    }
}
