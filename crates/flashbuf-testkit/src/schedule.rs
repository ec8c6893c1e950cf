//! Deterministic exploration of thread interleavings, crashing at every explored point
//! (issue 11: the class of bug C, an in-place update racing `sync`).
//!
//! The store runs over a [`GatedDevice`]: every device write, batch, sync and `set_len`
//! of every thread stops at a gate. A scheduler lets one gated operation through at a time,
//! chosen by a seeded generator among the threads waiting at gates — worker threads that
//! run scripted operations (writes of their own pages, syncs, flushes, reads) through a
//! [`ConcurrentFront`] (the store itself, or a buffer pool over it: evictions then write
//! other threads' pages), and the store's own threads (StableBuffer's background flusher).
//! Before each operation is let through, the scheduler takes crash images of the device
//! (seeded modes, torn writes included), reopens the store on each and judges every page
//! against the history so far ([`super::history`]). After the script, the live store must
//! read back every page's last write.
//!
//! A thread blocked inside the store (on a lock or condition another gated thread will
//! release) is recognised by silence: the scheduler waits until every worker is at a gate
//! or finished, or nothing changed for [`QUIET`]. The choice among gated threads is by
//! seed over their sorted names, so a schedule is reproducible from the seed as long as
//! the same threads reach their gates (the grant order is recorded and printed with any
//! failure). A run where no thread is at a gate for [`HANG`] while some worker has not
//! finished is reported as a hang.

use super::content::{fill, sealed_page};
use super::gate::lock;
pub use super::gate::{GatedDevice, Sched};
use super::history::{Allowed, Event};
use crate::CrashStore;
use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::fault::{CrashMode, FaultDevice, Tear};
use flashbuf_store::{PageStore, ReadOutcome};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Silence after which a worker not at a gate counts as blocked inside the store.
pub const QUIET: Duration = Duration::from_millis(4);
/// No gated thread for this long while workers are unfinished: a hang.
pub const HANG: Duration = Duration::from_secs(20);

/// What the workers go through: the store, or a cache over it. Shared by the workers.
pub trait ConcurrentFront: Send + Sync {
    /// A short description (`store`, `pool(3 frames)`).
    fn describe(&self) -> String;
    /// Writes `payload` (the page minus its header) as page `pid`, tagged `tag`.
    fn write(&self, pid: PageId, tag: u64, payload: &[u8]) -> Result<(), String>;
    /// Reads page `pid`'s payload.
    fn read(&self, pid: PageId, payload: &mut [u8]) -> Result<ReadOutcome, String>;
    /// Writes back what a cache holds (nothing for a store).
    fn flush(&self) -> Result<(), String>;
    /// Makes every write that returned before the call durable.
    fn sync(&self) -> Result<(), String>;
}

/// The store as its own front.
pub struct StoreWriter(pub Box<dyn PageStore>);

impl ConcurrentFront for StoreWriter {
    fn describe(&self) -> String {
        "store".to_string()
    }
    fn write(&self, pid: PageId, tag: u64, payload: &[u8]) -> Result<(), String> {
        let page = sealed_page(self.0.page_size(), pid, tag, payload);
        let full = DirtyRanges::full(page.len());
        self.0
            .write_page(pid, &page, &full)
            .map_err(|e| e.to_string())
    }
    fn read(&self, pid: PageId, payload: &mut [u8]) -> Result<ReadOutcome, String> {
        let mut page = vec![0u8; self.0.page_size()];
        let r = self
            .0
            .read_page(pid, &mut page)
            .map_err(|e| e.to_string())?;
        payload.copy_from_slice(&page[HEADER_BYTES..]);
        Ok(r)
    }
    fn flush(&self) -> Result<(), String> {
        Ok(())
    }
    fn sync(&self) -> Result<(), String> {
        self.0.sync().map_err(|e| e.to_string())
    }
}

/// Builds the front over a freshly created store.
pub type ConcurrentFrontBuilder<'a> =
    &'a dyn Fn(Box<dyn PageStore>) -> Result<Arc<dyn ConcurrentFront>, String>;

/// A front builder for [`StoreWriter`].
pub fn store_writer(store: Box<dyn PageStore>) -> Result<Arc<dyn ConcurrentFront>, String> {
    Ok(Arc::new(StoreWriter(store)))
}

/// One scripted operation of a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Write the worker's page `k` (of its own pages).
    Write(u32),
    /// Read the worker's page `k` and check it shows its last write.
    Read(u32),
    /// Write back what a cache holds.
    Flush,
    /// Sync.
    Sync,
}

/// Parameters of a schedule exploration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduleConfig {
    /// Page size.
    pub page_size: usize,
    /// Worker threads.
    pub workers: u32,
    /// Pages per worker (worker `w` owns pages `w * pages_per_worker ..`).
    pub pages_per_worker: u32,
    /// Steps per worker.
    pub steps: u32,
    /// Crash images per explored point.
    pub fanout: usize,
    /// Seed of the scripts, the schedule and the crash modes.
    pub seed: u64,
}

impl Default for ScheduleConfig {
    fn default() -> Self {
        Self {
            page_size: 512,
            workers: 2,
            pages_per_worker: 2,
            steps: 6,
            fanout: 2,
            seed: 0,
        }
    }
}

/// Counts of explored schedules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScheduleReport {
    /// Schedules run.
    pub schedules: u64,
    /// Gated operations let through (explored points).
    pub points: u64,
    /// Crash images reopened and judged.
    pub crash_images: u64,
    /// Points where some worker was blocked inside the store.
    pub blocked_points: u64,
}

impl ScheduleReport {
    /// Adds `o`'s counts.
    pub fn add(&mut self, o: &ScheduleReport) {
        self.schedules += o.schedules;
        self.points += o.points;
        self.crash_images += o.crash_images;
        self.blocked_points += o.blocked_points;
    }
}

/// The scripts of a seed: per worker, its steps.
pub fn scripts(cfg: &ScheduleConfig) -> Vec<Vec<Step>> {
    let mut rng = SplitMix64::new(cfg.seed ^ 0x5C8E_D01E);
    (0..cfg.workers)
        .map(|_| {
            (0..cfg.steps)
                .map(|_| match rng.below(20) {
                    0..=10 => Step::Write(rng.below(u64::from(cfg.pages_per_worker)) as u32),
                    11..=12 => Step::Read(rng.below(u64::from(cfg.pages_per_worker)) as u32),
                    13..=14 => Step::Flush,
                    _ => Step::Sync,
                })
                .collect()
        })
        .collect()
}

struct Worker {
    index: u64,
    name: String,
    first_page: u64,
    steps: Vec<Step>,
}

/// Runs one schedule of `cfg.seed` for the store `factory` makes, through the front
/// `builder` makes; `Err` describes the first broken promise with the grant order.
///
/// (Longer than most: the workers' spawn, the grant loop, the join and the final check
/// share the scheduler's state, and reading them in order is the point.)
pub fn explore(
    factory: &CrashStore,
    builder: ConcurrentFrontBuilder<'_>,
    cfg: &ScheduleConfig,
) -> Result<ScheduleReport, String> {
    let dev = Arc::new(FaultDevice::new(0));
    let sched = Arc::new(Sched::default());
    sched.set_open(true);
    let gated = GatedDevice {
        dev: Arc::clone(&dev),
        sched: Arc::clone(&sched),
    };
    let store = factory
        .create(Box::new(gated), cfg.page_size)
        .map_err(|e| format!("create: {e}"))?;
    let front = builder(store)?;
    let ppw = u64::from(cfg.pages_per_worker);
    let workers: Vec<Worker> = scripts(cfg)
        .into_iter()
        .enumerate()
        .map(|(w, steps)| Worker {
            index: w as u64,
            name: format!("sched-w{w}"),
            first_page: w as u64 * ppw,
            steps,
        })
        .collect();
    {
        let mut g = lock(&sched);
        g.live = workers.iter().map(|w| w.name.clone()).collect();
        g.open = false;
    }
    let mut run = Run {
        factory,
        cfg: *cfg,
        dev: &dev,
        sched: &sched,
        rng: SplitMix64::new(cfg.seed ^ 0xD1CE),
        report: ScheduleReport {
            schedules: 1,
            ..ScheduleReport::default()
        },
        grants: Vec::new(),
    };
    let tags = Arc::new(Mutex::new(0u64));
    let result = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for w in &workers {
            let (front, sched, tags) = (Arc::clone(&front), Arc::clone(&sched), Arc::clone(&tags));
            let seed = cfg.seed;
            let payload_len = cfg.page_size - HEADER_BYTES;
            let h = std::thread::Builder::new()
                .name(w.name.clone())
                .spawn_scoped(scope, move || {
                    let r = work(w, front.as_ref(), &sched, &tags, seed, payload_len);
                    sched.finish(&w.name);
                    r
                })
                .map_err(|e| format!("spawn: {e}"))?;
            handles.push(h);
        }
        let verdict = run.drive();
        if verdict.is_err() {
            // Let everyone finish (gates open) so the threads can be joined.
            sched.set_open(true);
        }
        let mut worker_err = None;
        for h in handles {
            match h.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => worker_err = worker_err.or(Some(e)),
                Err(_) => worker_err = worker_err.or(Some("a worker panicked".to_string())),
            }
        }
        verdict?;
        match worker_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    });
    sched.set_open(true);
    let grants = run.grants.join(", ");
    result.map_err(|e| {
        format!(
            "store '{}' via {} (seed {}, {} workers x {} steps): {e}\n  grant order: {grants}",
            factory.name,
            front.describe(),
            cfg.seed,
            cfg.workers,
            cfg.steps
        )
    })?;
    // The final crash point: everything done; then the live store shows every last write.
    run.crash_point("end")?;
    let history = lock(&sched).history.clone();
    let mut last: BTreeMap<PageId, u64> = BTreeMap::new();
    for e in &history {
        if let Event::WriteReturned { pid, tag } = *e {
            last.insert(pid, tag);
        }
    }
    let mut payload = vec![0u8; cfg.page_size - HEADER_BYTES];
    for (pid, tag) in last {
        let r = front
            .read(pid, &mut payload)
            .map_err(|e| format!("final read of {pid}: {e}"))?;
        if r != ReadOutcome::Found || !super::content::matches_fill(&payload, pid, tag, cfg.seed) {
            return Err(format!(
                "store '{}' via {} (seed {}): the live store does not show {pid}'s last write #{tag}",
                factory.name,
                front.describe(),
                cfg.seed
            ));
        }
    }
    Ok(run.report)
}

/// A worker's script; every write gets the next run-wide tag.
fn work(
    w: &Worker,
    front: &dyn ConcurrentFront,
    sched: &Sched,
    tags: &Mutex<u64>,
    seed: u64,
    payload_len: usize,
) -> Result<(), String> {
    let mut last: BTreeMap<u64, u64> = BTreeMap::new();
    let mut payload = vec![0u8; payload_len];
    let mut sync_id = 0u64;
    for step in &w.steps {
        match *step {
            Step::Write(k) => {
                let pid = PageId(w.first_page + u64::from(k));
                let tag = {
                    let mut t = tags
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    *t += 1;
                    *t
                };
                fill(&mut payload, pid, tag, seed);
                sched.log(Event::WriteInvoked { pid, tag });
                front
                    .write(pid, tag, &payload)
                    .map_err(|e| format!("{}: write of {pid}: {e}", w.name))?;
                sched.log(Event::WriteReturned { pid, tag });
                last.insert(pid.0, tag);
            }
            Step::Read(k) => {
                let pid = PageId(w.first_page + u64::from(k));
                let r = front
                    .read(pid, &mut payload)
                    .map_err(|e| format!("{}: read of {pid}: {e}", w.name))?;
                let want = last.get(&pid.0).copied();
                let ok = match (r, want) {
                    (ReadOutcome::Unwritten, None) => true,
                    (ReadOutcome::Found, Some(t)) => {
                        super::content::matches_fill(&payload, pid, t, seed)
                    }
                    _ => false,
                };
                if !ok {
                    return Err(format!(
                        "{}: live read of {pid} is not its last write (#{want:?})",
                        w.name
                    ));
                }
            }
            Step::Flush => front
                .flush()
                .map_err(|e| format!("{}: flush: {e}", w.name))?,
            Step::Sync => {
                sync_id += 1;
                let id = (w.index << 32) | sync_id;
                sched.log(Event::SyncInvoked { id });
                front.sync().map_err(|e| format!("{}: sync: {e}", w.name))?;
                sched.log(Event::SyncReturned { id });
            }
        }
    }
    Ok(())
}

struct Run<'a> {
    factory: &'a CrashStore,
    cfg: ScheduleConfig,
    dev: &'a FaultDevice,
    sched: &'a Sched,
    rng: SplitMix64,
    report: ScheduleReport,
    grants: Vec<String>,
}

impl Run<'_> {
    /// Waits until every live worker is at a gate or silence says it is blocked; returns
    /// the gated threads and whether some worker was blocked.
    fn settle(&self) -> (Vec<String>, bool, bool) {
        let mut g = lock(self.sched);
        let start = Instant::now();
        loop {
            let all_gated = g.live.iter().all(|w| g.waiting.contains_key(w));
            if all_gated || g.live.is_empty() {
                return (
                    g.waiting.keys().cloned().collect(),
                    false,
                    g.live.is_empty(),
                );
            }
            let seen = g.changes;
            let (ng, t) = self
                .sched
                .cv
                .wait_timeout(g, QUIET)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            g = ng;
            if t.timed_out()
                && g.changes == seen
                && (!g.waiting.is_empty() || start.elapsed() > HANG)
            {
                return (g.waiting.keys().cloned().collect(), true, g.live.is_empty());
            }
        }
    }

    /// Lets the workers and the store's threads through one gate at a time.
    fn drive(&mut self) -> Result<(), String> {
        loop {
            let (gated, blocked, done) = self.settle();
            if done && gated.is_empty() {
                return Ok(());
            }
            if gated.is_empty() {
                let g = lock(self.sched);
                return Err(format!(
                    "hang: workers {:?} made no progress for {HANG:?} and no thread is at a gate",
                    g.live
                ));
            }
            self.report.blocked_points += u64::from(blocked);
            let pick = gated[self.rng.below(gated.len() as u64) as usize].clone();
            let what = lock(self.sched)
                .waiting
                .get(&pick)
                .cloned()
                .unwrap_or_default();
            self.crash_point(&format!("before {pick}: {what}"))?;
            self.grants.push(format!("{pick}:{what}"));
            self.report.points += 1;
            let mut g = lock(self.sched);
            g.granted = Some(pick);
            g.changes += 1;
            self.sched.cv.notify_all();
            while g.granted.is_some() {
                g = self
                    .sched
                    .cv
                    .wait(g)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        }
    }

    /// Crash images of the device now, each reopened and judged against the history.
    fn crash_point(&mut self, at: &str) -> Result<(), String> {
        let (allowed, images) = {
            let g = lock(self.sched);
            let allowed = Allowed::of(&g.history);
            let pending = self.dev.pending_writes();
            let mut images = Vec::new();
            for k in 0..self.cfg.fanout.max(1) {
                let garbage = self.rng.below(2) == 0;
                let tear = Some(Tear {
                    sector_bytes: 512,
                    garbage,
                });
                let mode = match (k, self.rng.below(4)) {
                    (0, _) => CrashMode::Random {
                        seed: self.rng.next_u64(),
                        tear,
                    },
                    (_, 0) => CrashMode::KeepAll,
                    (_, 1) => CrashMode::LoseUnsynced,
                    _ => CrashMode::Prefix {
                        writes: self.rng.below(pending as u64 + 1) as usize,
                        tear,
                    },
                };
                images.push((mode, self.dev.crash_image(mode)));
            }
            (allowed, images)
        };
        let pages = u64::from(self.cfg.workers) * u64::from(self.cfg.pages_per_worker);
        let mut buf = vec![0u8; self.cfg.page_size];
        for (mode, img) in images {
            self.report.crash_images += 1;
            let store = self
                .factory
                .open(Box::new(FaultDevice::from_image(img)), self.cfg.page_size)
                .map_err(|e| format!("crash {at} ({mode:?}): reopen failed: {e}"))?;
            for pid in (0..pages).chain([pages + 3]).map(PageId) {
                buf.fill(0xEE);
                let r = store.read_page(pid, &mut buf);
                allowed
                    .judge(
                        pid,
                        r.as_ref().map(|o| *o),
                        &buf[HEADER_BYTES..],
                        self.cfg.seed,
                        self.factory.masks_torn_writes,
                    )
                    .map_err(|v| format!("crash {at} ({mode:?}): {v}"))?;
            }
            store
                .check_invariants()
                .map_err(|e| format!("crash {at} ({mode:?}): invariants: {e}"))?;
        }
        Ok(())
    }
}
