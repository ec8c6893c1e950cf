//! [`check`]: what a kill (or power cut) left, verified against the journal.

use super::{file_device, JOURNAL_FILE, STORE_FILE};
use crate::torture::dirlock::DirLock;
use crate::torture::journal::{read_journal, JournalState, MAX_PAGES};
use crate::LabError;
use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::PageId;
use flashbuf_store::{PageStore, ReadOutcome, StoreError};
use flashbuf_testkit::content::{self, matches_fill};
use flashbuf_testkit::CrashStore;
use std::path::{Path, PathBuf};

/// Parameters of [`check`].
#[derive(Debug, Clone)]
pub struct CheckConfig {
    /// The store.
    pub store: CrashStore,
    /// The torture directory.
    pub dir: PathBuf,
    /// Page size to open with (default: the journal's, else 4096).
    pub page_size: Option<usize>,
    /// Pages to check without a journal (default 1024, at most [`MAX_PAGES`]).
    pub pages: Option<u64>,
    /// Open the store file with `O_DIRECT`.
    pub direct_io: bool,
}

/// What [`check`] verified.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Store name.
    pub store: String,
    /// Whether a journal was found (else only store-level checks ran).
    pub journal: bool,
    /// Journal records read.
    pub journal_records: u64,
    /// Rounds the journal acknowledged.
    pub rounds_acked: u64,
    /// Whether the last round was in flight (intent without ack).
    pub last_round_open: bool,
    /// Whether a torn last journal line was ignored.
    pub torn_tail: bool,
    /// Pages read.
    pub pages_checked: u64,
    /// Pages at exactly their acknowledged version.
    pub at_acked: u64,
    /// Pages newer than acknowledged (an unsynced write that survived).
    pub newer_unsynced: u64,
    /// Pages never acknowledged that read unwritten.
    pub unwritten: u64,
    /// Pages with a write in flight that read corrupt (allowed; counted).
    pub corrupt_unsynced: u64,
    /// Pages found holding data (without a journal).
    pub found: u64,
    /// Never-written pages probed beyond the range (phantom check).
    pub probes: u64,
    /// Every broken promise, one line each.
    pub violations: Vec<String>,
}

impl CheckReport {
    /// The report as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "store": self.store,
            "journal": self.journal,
            "journal_records": self.journal_records,
            "rounds_acked": self.rounds_acked,
            "last_round_open": self.last_round_open,
            "torn_tail": self.torn_tail,
            "pages_checked": self.pages_checked,
            "at_acked": self.at_acked,
            "newer_unsynced": self.newer_unsynced,
            "unwritten": self.unwritten,
            "corrupt_unsynced": self.corrupt_unsynced,
            "found": self.found,
            "probes": self.probes,
            "violations": self.violations,
        })
    }

    /// A human summary (one paragraph, then one line per violation).
    pub fn to_text(&self, dir: &Path) -> String {
        let mut s = if self.journal {
            format!(
                "checked {} pages of store '{}' in {} against its journal ({} records, {} rounds acknowledged{}{}):\n  {} at their acknowledged version, {} newer (unsynced writes that survived), {} never acknowledged and unwritten, {} corrupt after an unsynced write; {} never-written probes unwritten\n",
                self.pages_checked,
                self.store,
                dir.display(),
                self.journal_records,
                self.rounds_acked,
                if self.last_round_open { ", last round in flight" } else { "" },
                if self.torn_tail { ", torn last line ignored" } else { "" },
                self.at_acked,
                self.newer_unsynced,
                self.unwritten,
                self.corrupt_unsynced,
                self.probes,
            )
        } else {
            format!(
                "checked {} pages of store '{}' in {} (no journal: store-level checks only): {} hold data, {} unwritten\n",
                self.pages_checked,
                self.store,
                dir.display(),
                self.found,
                self.unwritten
            )
        };
        if self.violations.is_empty() {
            s.push_str("  0 violations\n");
        } else {
            s.push_str(&format!("  {} VIOLATIONS:\n", self.violations.len()));
            for v in &self.violations {
                s.push_str(&format!("  - {v}\n"));
            }
        }
        s
    }
}

/// Reads every page of `store` and judges it against the journal (if any).
pub(super) fn verify(store: &dyn PageStore, st: Option<&JournalState>) -> CheckReport {
    let mut r = CheckReport {
        store: store.name().to_string(),
        journal: st.is_some(),
        ..CheckReport::default()
    };
    let ps = store.page_size();
    let mut buf = vec![0u8; ps];
    let pages = st.map(|s| s.header.pages).unwrap_or(0);
    for pid in 0..pages {
        r.pages_checked += 1;
        let (acked, intended, seed) = match st {
            Some(s) => (
                s.acked[pid as usize],
                s.intended[pid as usize],
                s.header.seed,
            ),
            None => (0, 0, 0),
        };
        let res = store.read_page(PageId(pid), &mut buf);
        let v = |msg: String| format!("page {pid}: {msg}");
        match res {
            Ok(ReadOutcome::Found) => {
                let payload = &buf[HEADER_BYTES..];
                let Some((spid, ver)) = content::stamp_of(payload) else {
                    r.violations.push(v("short payload".into()));
                    continue;
                };
                if spid != PageId(pid) || !matches_fill(payload, PageId(pid), ver, seed) {
                    r.violations.push(v(format!(
                        "bytes match no version written (stamped {spid} version {ver}): torn or mixed"
                    )));
                } else if ver < acked {
                    r.violations.push(v(format!(
                        "lost an acknowledged write: holds version {ver}, the journal acknowledged version {acked}"
                    )));
                } else if ver > intended {
                    r.violations.push(v(format!(
                        "holds version {ver}, newer than anything written (highest intended {intended})"
                    )));
                } else if ver == acked {
                    r.at_acked += 1;
                } else {
                    r.newer_unsynced += 1;
                }
            }
            Ok(ReadOutcome::Unwritten) => {
                if acked > 0 {
                    r.violations.push(v(format!(
                        "lost an acknowledged write: reads unwritten, the journal acknowledged version {acked}"
                    )));
                } else {
                    r.unwritten += 1;
                }
            }
            Err(StoreError::Corrupt { reason, .. }) => {
                if intended > acked {
                    r.corrupt_unsynced += 1;
                } else {
                    r.violations.push(v(format!(
                        "corrupt ({reason}) although no write was in flight (acknowledged version {acked})"
                    )));
                }
            }
            Err(e) => r.violations.push(v(format!("read failed: {e}"))),
        }
    }
    for pid in [pages, pages + 1, pages + 1000] {
        r.probes += 1;
        match store.read_page(PageId(pid), &mut buf) {
            Ok(ReadOutcome::Unwritten) => {}
            Ok(ReadOutcome::Found) => r.violations.push(format!(
                "page {pid}: phantom (never written, reads as data)"
            )),
            Err(e) => r.violations.push(format!("page {pid}: probe failed: {e}")),
        }
    }
    if let Err(e) = store.check_invariants() {
        r.violations.push(format!("store invariants: {e}"));
    }
    r
}

/// Without a journal: reads `pages` pages and reports corrupt ones.
fn verify_bare(store: &dyn PageStore, pages: u64) -> CheckReport {
    let mut r = CheckReport {
        store: store.name().to_string(),
        ..CheckReport::default()
    };
    let mut buf = vec![0u8; store.page_size()];
    for pid in 0..pages {
        r.pages_checked += 1;
        match store.read_page(PageId(pid), &mut buf) {
            Ok(ReadOutcome::Found) => r.found += 1,
            Ok(ReadOutcome::Unwritten) => r.unwritten += 1,
            Err(e) => r.violations.push(format!("page {pid}: {e}")),
        }
    }
    if let Err(e) = store.check_invariants() {
        r.violations.push(format!("store invariants: {e}"));
    }
    r
}

/// Opens (recovers) the store in `cfg.dir` and verifies it against the journal. Errors
/// (store missing, locked by another process, refused: wrong page size, format, kind)
/// are `Err`; broken promises are listed in the report's `violations`.
pub fn check(cfg: &CheckConfig) -> Result<CheckReport, LabError> {
    let store_path = cfg.dir.join(STORE_FILE);
    let journal_path = cfg.dir.join(JOURNAL_FILE);
    if let Some(n) = cfg.pages.filter(|&n| n > MAX_PAGES) {
        return Err(LabError::Usage(format!(
            "--pages {n}: check reads at most {MAX_PAGES} pages without a journal"
        )));
    }
    if !cfg.dir.is_dir() {
        return Err(LabError::Usage(format!(
            "no store in {}: not a directory",
            cfg.dir.display()
        )));
    }
    // Recovery writes to the store: hold the directory like torture does.
    let _lock = DirLock::acquire(&cfg.dir)?;
    let st = if journal_path.exists() {
        Some(read_journal(&journal_path)?)
    } else {
        None
    };
    if let Some(s) = &st {
        if s.header.store != cfg.store.name {
            return Err(LabError::Usage(format!(
                "the journal in {} is of store '{}', not '{}'",
                cfg.dir.display(),
                s.header.store,
                cfg.store.name
            )));
        }
    }
    if !store_path.exists() {
        return match &st {
            // A run stopped while starting: nothing was ever acknowledged.
            Some(s) if s.records == 0 => Ok(CheckReport {
                store: cfg.store.name.to_string(),
                journal: true,
                torn_tail: s.torn_tail,
                ..CheckReport::default()
            }),
            Some(s) => Ok(CheckReport {
                store: cfg.store.name.to_string(),
                journal: true,
                journal_records: s.records,
                rounds_acked: s.rounds_acked,
                violations: vec![format!(
                    "the store file {STORE_FILE} is missing although the journal holds {} records",
                    s.records
                )],
                ..CheckReport::default()
            }),
            None => Err(LabError::Usage(format!(
                "no store in {} (expected {STORE_FILE})",
                cfg.dir.display()
            ))),
        };
    }
    let page_size = cfg
        .page_size
        .or(st.as_ref().map(|s| s.header.page_size))
        .unwrap_or(4096);
    let dev = file_device(&store_path, cfg.direct_io, false)?;
    let store = cfg.store.open(Box::new(dev), page_size)?;
    let mut r = match &st {
        Some(s) => {
            let mut r = verify(store.as_ref(), Some(s));
            r.journal_records = s.records;
            r.rounds_acked = s.rounds_acked;
            r.last_round_open = s.last_round_open;
            r.torn_tail = s.torn_tail;
            r
        }
        None => verify_bare(store.as_ref(), cfg.pages.unwrap_or(1024)),
    };
    r.store = cfg.store.name.to_string();
    Ok(r)
}
