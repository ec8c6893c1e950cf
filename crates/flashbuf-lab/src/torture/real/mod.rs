//! Real-process crash torture on files: [`torture`] writes and syncs until killed, and
//! [`check`] verifies what a kill (or power cut) left against the journal.
//!
//! Layout of the directory: `store.flashbuf` (the store, on a [`FileDevice`] holding an
//! exclusive lock while open), `torture.journal` (see [`super::journal`]) and
//! `.flashbuf.lock`, the directory lock both commands hold while they run
//! ([`super::dirlock`]; starting and resuming: `super::setup`).
//!
//! A round: choose 1..=`max_pages_per_round` distinct pages, give each its next version,
//! append and fsync the intent, write the pages (one by one, as a batch, or through a
//! buffer pool that may evict them early), `sync()`, then append and fsync the ack. Page
//! payloads are [`content::fill`] of (page, version, journal seed), so `check` can tell a
//! page's version and whether its bytes are exactly that version's.

use crate::torture::journal::JournalState;
use crate::LabError;
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::{FileDevice, FileDeviceOptions};
use flashbuf_pool::policy::Lru;
use flashbuf_pool::BufferPool;
use flashbuf_store::{PageStore, PageWrite};
use flashbuf_testkit::content::{self, filled_page};
use flashbuf_testkit::CrashStore;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod check;
#[cfg(test)]
mod tests;

use check::verify;
pub use check::{check, CheckConfig, CheckReport};

/// File name of the store in the torture directory.
pub const STORE_FILE: &str = "store.flashbuf";
/// File name of the journal in the torture directory.
pub const JOURNAL_FILE: &str = "torture.journal";

/// Parameters of [`torture`].
#[derive(Debug, Clone)]
pub struct TortureConfig {
    /// The store.
    pub store: CrashStore,
    /// Directory holding the store and the journal (created if absent).
    pub dir: PathBuf,
    /// Seed of the page choices (and of the contents of a new journal).
    pub seed: u64,
    /// Stop after this long (else run until killed or `rounds`).
    pub duration: Option<Duration>,
    /// Stop after this many rounds.
    pub rounds: Option<u64>,
    /// Page size of a new store (default 4096); on resume, `Some` must match the run's.
    pub page_size: Option<usize>,
    /// Pages of a new store (`0..pages` are written; default 256, at most
    /// [`MAX_PAGES`](crate::torture::journal::MAX_PAGES)); on resume, `Some` must match the run's.
    pub pages: Option<u64>,
    /// Frames of the buffer pool the writes go through; 0 writes straight to the store.
    /// Capped at the run's pages (it never uses more); refused if the machine cannot
    /// hold it.
    pub pool_frames: usize,
    /// Most pages written per round.
    pub max_pages_per_round: usize,
    /// Open the store file with `O_DIRECT`.
    pub direct_io: bool,
}

/// What a [`torture`] run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TortureReport {
    /// Rounds completed (acknowledged) in this run.
    pub rounds: u64,
    /// Pages written in this run.
    pub pages_written: u64,
    /// The round this run started at (1 for a new store).
    pub first_round: u64,
    /// Whether the run resumed an existing store and journal (after verifying them).
    pub resumed: bool,
    /// Frames of the pool used (`pool_frames` capped at the run's pages; 0: no pool).
    pub pool_frames: usize,
}

pub(crate) fn file_device(
    path: &Path,
    direct_io: bool,
    create: bool,
) -> Result<FileDevice, LabError> {
    let opts = FileDeviceOptions {
        create,
        direct: direct_io,
        lock: true,
    };
    Ok(FileDevice::open(path, opts)?)
}

/// The writer of a run: straight to the store or through a pool.
enum Writer {
    Store(Box<dyn PageStore>),
    Pool(Box<BufferPool<Box<dyn PageStore>>>),
}

impl Writer {
    fn write_round(
        &self,
        entries: &[(u64, u64)],
        page_size: usize,
        seed: u64,
        batch: bool,
    ) -> Result<(), LabError> {
        match self {
            Writer::Store(s) => {
                let pages: Vec<Vec<u8>> = entries
                    .iter()
                    .map(|&(p, v)| filled_page(page_size, PageId(p), v, seed))
                    .collect();
                if batch {
                    let b: Vec<PageWrite<'_>> = entries
                        .iter()
                        .zip(&pages)
                        .map(|(&(p, _), bytes)| PageWrite {
                            pid: PageId(p),
                            page: bytes,
                            dirty: DirtyRanges::full(page_size),
                        })
                        .collect();
                    s.write_pages(&b)?;
                } else {
                    for (&(p, _), bytes) in entries.iter().zip(&pages) {
                        s.write_page(PageId(p), bytes, &DirtyRanges::full(page_size))?;
                    }
                }
                s.sync()?;
            }
            Writer::Pool(pool) => {
                for &(p, v) in entries {
                    let mut g = pool.write(PageId(p))?;
                    content::fill(g.data_mut(), PageId(p), v, seed);
                }
                pool.sync()?;
            }
        }
        Ok(())
    }
}

/// Writes and syncs pages until killed, out of time or out of rounds; see the module
/// documentation. Resumes an existing directory after verifying it with [`check`]
/// (a violation stops it with [`LabError::Invariant`]). `on_round` runs after each
/// acknowledged round.
pub fn torture(
    cfg: &TortureConfig,
    on_round: &mut dyn FnMut(&TortureReport),
) -> Result<TortureReport, LabError> {
    let verify_resumed = |store: &dyn PageStore, st: &JournalState| {
        let verdict = verify(store, Some(st));
        if verdict.violations.is_empty() {
            Ok(())
        } else {
            Err(LabError::Invariant(format!(
                "cannot resume {}: {}",
                cfg.dir.display(),
                verdict.violations.join("; ")
            )))
        }
    };
    let run = super::setup::start(cfg, &verify_resumed)?;
    let (header, mut journal, mut versions, first_round) =
        (run.header, run.journal, run.versions, run.first_round);
    let mut report = TortureReport {
        resumed: run.resumed,
        first_round,
        ..TortureReport::default()
    };
    let frames = super::setup::check_pool(cfg, header.page_size, header.pages)?;
    report.pool_frames = frames;
    let writer = if frames > 0 {
        Writer::Pool(Box::new(BufferPool::new(
            run.store,
            frames,
            Box::new(Lru::new(frames)),
        )?))
    } else {
        Writer::Store(run.store)
    };
    let mut rng = SplitMix64::new(cfg.seed ^ first_round.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let start = Instant::now();
    let max_k = cfg.max_pages_per_round.clamp(1, header.pages as usize);
    let mut round = first_round;
    loop {
        if cfg.rounds.is_some_and(|r| report.rounds >= r)
            || cfg.duration.is_some_and(|d| start.elapsed() >= d)
        {
            break;
        }
        let k = 1 + rng.below(max_k as u64) as usize;
        let mut entries: Vec<(u64, u64)> = Vec::with_capacity(k);
        while entries.len() < k {
            // Half the pages from a hot eighth, so pages see many versions.
            let p = if rng.below(2) == 0 {
                rng.below(header.pages.div_ceil(8))
            } else {
                rng.below(header.pages)
            };
            if !entries.iter().any(|e| e.0 == p) {
                entries.push((p, versions[p as usize] + 1));
            }
        }
        journal.intent(round, &entries)?;
        writer.write_round(&entries, header.page_size, header.seed, rng.below(2) == 0)?;
        journal.ack(round, &entries)?;
        for &(p, v) in &entries {
            versions[p as usize] = v;
        }
        report.rounds += 1;
        report.pages_written += entries.len() as u64;
        on_round(&report);
        round += 1;
    }
    Ok(report)
}
