//! The SQLite torture: TPC-B-like transactions as SQL on a store on a file, each commit
//! journalled to an fsynced side file, run until the process is killed; then a check
//! that SQLite's `PRAGMA integrity_check` is `ok`, the balance sums and row counts hold,
//! and every journalled commit is in the database.
//!
//! Files in the torture's directory: `store` (the store, on a file device with its
//! exclusive lock), `flashbuf.db-wal` or `flashbuf.db-journal` (SQLite's, plain files
//! through the default VFS), and `commits.journal`:
//!
//! ```text
//! H <configuration>             written (and fsynced) before the store is created
//! L                             after the load committed
//! C <seq> <aid> <bid> <tid> <delta>   after transaction <seq> committed (COMMIT returned)
//! ```
//!
//! Every line ends with ` #<crc32c of the text before it, hex>`; each append is fsynced
//! before the next transaction starts. A last line without its newline or with a bad
//! checksum is a torn append (the process died during it): it is not a promise and a
//! resumed run cuts it; a bad line elsewhere is corruption. So at most one committed
//! transaction is missing from the journal (committed, killed before its line was synced);
//! a resumed run journals it (from the database) before its first transaction.
//!
//! [`run`] resumes an existing directory (SQLite recovers its journal or WAL when the
//! database is opened); [`check`] verifies one. Draws are seeded by the configuration's
//! seed and the sequence number the run resumes at.

use crate::backend::Cache;
use crate::database::{store_on, Database, JournalMode, OpenOptions};
use crate::db::FlashDb;
use crate::error::Error;
use crate::sql::tpcb::{history_row, last_seq, SqlTpcB, Txn};
use crate::sql::SqlWorkload;
use flashbuf_core::page::crc32c;
use flashbuf_device::{FileDevice, FileDeviceOptions};
use flashbuf_pool::policy::{Cfdc, Cflru, Lru, Policy};
use flashbuf_store::registry::StoreContext;
use flashbuf_workload::codec::stream_rng;
use flashbuf_workload::tpcb::TpcB;
use std::fs::{File, OpenOptions as FsOpen};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Name of the side journal in the torture's directory.
pub const JOURNAL_FILE: &str = "commits.journal";
/// Name of the store's file.
pub const STORE_FILE: &str = "store";

/// What a torture runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TortureConfig {
    /// Store spec of the store table (`direct`, `stable-buffer:slots=16`).
    pub store: String,
    /// Pool mode: frames and policy (`lru`, `cflru`, `cfdc`); `None`: pass-through.
    pub pool: Option<(usize, String)>,
    /// SQLite's journal mode.
    pub journal_mode: JournalMode,
    /// Branches.
    pub scale: u32,
    /// Accounts per branch.
    pub accounts: u32,
    /// Page size (SQLite's and the store's).
    pub page_size: usize,
    /// Seed of the draws.
    pub seed: u64,
}

impl TortureConfig {
    /// The header text (one line, no spaces inside values).
    pub fn header(&self) -> String {
        let pool = match &self.pool {
            Some((frames, policy)) => format!("{policy}:{frames}"),
            None => "none".to_string(),
        };
        let jm = match self.journal_mode {
            JournalMode::Wal => "wal",
            JournalMode::Delete => "delete",
        };
        format!(
            "store={} pool={pool} journal={jm} scale={} accounts={} page_size={} seed={}",
            self.store, self.scale, self.accounts, self.page_size, self.seed
        )
    }

    /// Parses [`TortureConfig::header`] text.
    pub fn from_header(text: &str) -> Result<Self, Error> {
        let bad = |m: String| Error::Format(format!("torture journal header '{text}': {m}"));
        let get = |key: &str| -> Result<String, Error> {
            text.split(' ')
                .find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
                .map(str::to_string)
                .ok_or_else(|| bad(format!("no {key}")))
        };
        let num = |v: String| v.parse::<u64>().map_err(|e| bad(format!("{v}: {e}")));
        let pool = match get("pool")?.as_str() {
            "none" => None,
            p => {
                let (policy, frames) =
                    p.rsplit_once(':').ok_or_else(|| bad(format!("pool {p}")))?;
                Some((num(frames.to_string())? as usize, policy.to_string()))
            }
        };
        let journal_mode = match get("journal")?.as_str() {
            "wal" => JournalMode::Wal,
            "delete" => JournalMode::Delete,
            j => return Err(bad(format!("journal mode {j}"))),
        };
        Ok(Self {
            store: get("store")?,
            pool,
            journal_mode,
            scale: num(get("scale")?)? as u32,
            accounts: num(get("accounts")?)? as u32,
            page_size: num(get("page_size")?)? as usize,
            seed: num(get("seed")?)?,
        })
    }

    fn workload(&self) -> SqlTpcB {
        SqlTpcB(TpcB {
            scale: self.scale,
            accounts_per_branch: self.accounts,
        })
    }

    fn cache(&self) -> Result<Cache, Error> {
        Ok(match &self.pool {
            None => Cache::PassThrough,
            Some((frames, policy)) => Cache::Pool {
                frames: *frames,
                policy: policy_by_name(policy, *frames)?,
            },
        })
    }
}

/// The torture's policies by name: `lru`, `cflru`, `cfdc` with their defaults (the lab
/// builds any policy of its table and passes it as [`Cache::Pool`]).
pub fn policy_by_name(name: &str, frames: usize) -> Result<Box<dyn Policy>, Error> {
    Ok(match name {
        "lru" => Box::new(Lru::new(frames)),
        "cflru" => Box::new(Cflru::new(frames)),
        "cfdc" => Box::new(Cfdc::new(frames)),
        other => {
            return Err(Error::Unsupported(format!(
                "torture policy '{other}'; valid: lru, cflru, cfdc"
            )))
        }
    })
}

/// One line of the side journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// The configuration.
    Header(String),
    /// The load committed.
    Loaded,
    /// A committed transaction.
    Commit(Txn),
}

fn seal_line(text: &str) -> String {
    format!("{text} #{:08x}\n", crc32c(text.as_bytes()))
}

fn parse_line(line: &str) -> Option<Entry> {
    let (text, crc) = line.rsplit_once(" #")?;
    if u32::from_str_radix(crc, 16).ok()? != crc32c(text.as_bytes()) {
        return None;
    }
    if let Some(h) = text.strip_prefix("H ") {
        return Some(Entry::Header(h.to_string()));
    }
    if text == "L" {
        return Some(Entry::Loaded);
    }
    let f: Vec<&str> = text.strip_prefix("C ")?.split(' ').collect();
    if f.len() != 5 {
        return None;
    }
    Some(Entry::Commit(Txn {
        seq: f[0].parse().ok()?,
        aid: f[1].parse().ok()?,
        bid: f[2].parse().ok()?,
        tid: f[3].parse().ok()?,
        delta: f[4].parse().ok()?,
    }))
}

/// The side journal as read: its entries and the byte length of its valid part.
#[derive(Debug, Clone, Default)]
pub struct Journal {
    /// Valid entries, in order.
    pub entries: Vec<Entry>,
    /// Bytes of the valid lines (a torn last line follows them).
    pub valid_bytes: u64,
}

impl Journal {
    /// Reads `path` (empty if missing); a bad line before the last is an error.
    pub fn read(path: &Path) -> Result<Self, Error> {
        let text = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(Error::io(path.display(), e)),
        };
        let mut j = Journal::default();
        let mut at = 0usize;
        while at < text.len() {
            let Some(nl) = text[at..].iter().position(|&b| b == b'\n') else {
                break; // torn last line
            };
            let line = String::from_utf8_lossy(&text[at..at + nl]);
            match parse_line(&line) {
                Some(e) => j.entries.push(e),
                None if at + nl + 1 == text.len() => break, // torn last line
                None => {
                    return Err(Error::Format(format!(
                        "{}: line at byte {at} is damaged and not the last: '{line}'",
                        path.display()
                    )))
                }
            }
            at += nl + 1;
            j.valid_bytes = at as u64;
        }
        Ok(j)
    }

    /// The configuration line.
    pub fn header(&self) -> Option<&str> {
        match self.entries.first() {
            Some(Entry::Header(h)) => Some(h),
            _ => None,
        }
    }

    /// Whether the load was journalled.
    pub fn loaded(&self) -> bool {
        self.entries.contains(&Entry::Loaded)
    }

    /// The journalled transactions.
    pub fn commits(&self) -> impl Iterator<Item = &Txn> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Commit(t) => Some(t),
            _ => None,
        })
    }
}

/// The side journal, open for appending.
struct JournalWriter {
    file: File,
    path: PathBuf,
}

impl JournalWriter {
    /// Opens `path`, cutting it to `valid_bytes` (drops a torn last line).
    fn open(path: &Path, valid_bytes: u64) -> Result<Self, Error> {
        let io = |e| Error::io(path.display(), e);
        let file = FsOpen::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        file.set_len(valid_bytes).map_err(io)?;
        file.sync_all().map_err(io)?;
        if let Some(dir) = path.parent() {
            File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| Error::io(dir.display(), e))?;
        }
        Ok(Self {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Appends `text` as a line and fsyncs.
    fn append(&mut self, text: &str) -> Result<(), Error> {
        let io = |e| Error::io(self.path.display(), e);
        self.file
            .write_all(seal_line(text).as_bytes())
            .map_err(io)?;
        self.file.sync_data().map_err(io)
    }
}

fn open_database(dir: &Path, cfg: &TortureConfig, create: bool) -> Result<Database, Error> {
    let dev = FileDevice::open(&dir.join(STORE_FILE), FileDeviceOptions::default())
        .map_err(|e| Error::Store(e.into()))?;
    let store = store_on(
        &cfg.store,
        Box::new(dev),
        &StoreContext::new(cfg.page_size),
        create,
    )?;
    let db = FlashDb::open(store, cfg.cache()?)?;
    Database::open(db, OpenOptions::in_dir(dir).journal_mode(cfg.journal_mode))
}

/// What a run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSummary {
    /// Sequence number the run started after.
    pub resumed_at: u64,
    /// Transactions committed and journalled by this run.
    pub committed: u64,
}

/// Runs the torture in `dir` (created or resumed) for `transactions` transactions, or
/// until the process is killed (`None`).
pub fn run(
    dir: &Path,
    cfg: &TortureConfig,
    transactions: Option<u64>,
) -> Result<RunSummary, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    let path = dir.join(JOURNAL_FILE);
    let journal = Journal::read(&path)?;
    let mut w = JournalWriter::open(&path, journal.valid_bytes)?;
    match journal.header() {
        Some(h) if h == cfg.header() => {}
        Some(h) => {
            return Err(Error::Format(format!(
                "{} was written by another configuration: '{h}', not '{}'",
                path.display(),
                cfg.header()
            )))
        }
        None => w.append(&format!("H {}", cfg.header()))?,
    }
    let mut db = if journal.loaded() {
        open_database(dir, cfg, false)?
    } else {
        // Nothing was promised yet: a store a killed run left half-made is made anew.
        match open_database(dir, cfg, false) {
            Ok(db) => db,
            Err(_) => open_database(dir, cfg, true)?,
        }
    };
    let r = transactions_loop(&mut db, &mut w, cfg, &journal, transactions);
    let r = r.map_err(|e| match e {
        Error::Sqlite(e) => db.explain(e),
        e => e,
    })?;
    db.close()?;
    Ok(r)
}

/// Loads (if the journal has no load) and runs transactions, journalling each commit.
fn transactions_loop(
    db: &mut Database,
    w: &mut JournalWriter,
    cfg: &TortureConfig,
    journal: &Journal,
    transactions: Option<u64>,
) -> Result<RunSummary, Error> {
    let workload = cfg.workload();
    if !journal.loaded() {
        let exists: bool = db.query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'pgbench_history'",
            [],
            |r| r.get(0),
        )?;
        if !exists {
            workload.load(db, cfg.seed)?;
        }
        w.append("L")?;
    }
    let resumed_at = last_seq(db)?;
    // A transaction that committed while its line was being appended (the line was cut
    // as torn): it is in the database, so it is journalled now, before anything else.
    let journalled = journal.commits().last().map_or(0, |t| t.seq);
    for seq in journalled + 1..=resumed_at {
        let t = history_row(db, seq)?
            .ok_or_else(|| Error::Format(format!("transaction {seq} is not in the database")))?;
        w.append(&format!(
            "C {} {} {} {} {}",
            t.seq, t.aid, t.bid, t.tid, t.delta
        ))?;
    }
    let mut rng = stream_rng(cfg.seed, resumed_at + 1);
    let mut seq = resumed_at;
    while transactions.is_none_or(|n| seq - resumed_at < n) {
        let t = Txn::draw(&workload, &mut rng, seq + 1);
        t.run(db)?;
        w.append(&format!(
            "C {} {} {} {} {}",
            t.seq, t.aid, t.bid, t.tid, t.delta
        ))?;
        seq += 1;
    }
    Ok(RunSummary {
        resumed_at,
        committed: seq - resumed_at,
    })
}
/// What a check found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Transactions in the side journal.
    pub journalled: u64,
    /// Transactions in the database (history rows).
    pub in_database: u64,
    /// `PRAGMA integrity_check`'s answer (`ok`), empty if nothing was loaded yet.
    pub integrity: String,
    /// Everything wrong: failed integrity check, failed consistency condition, a
    /// journalled commit missing or different, more than one unjournalled commit.
    pub violations: Vec<String>,
}

impl CheckReport {
    /// Whether nothing is wrong.
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
    }
}

/// Opens (recovers) the database in `dir` and checks it against the side journal.
pub fn check(dir: &Path) -> Result<CheckReport, Error> {
    let journal = Journal::read(&dir.join(JOURNAL_FILE))?;
    let Some(h) = journal.header() else {
        return Ok(CheckReport::default()); // killed before anything was written
    };
    let cfg = TortureConfig::from_header(h)?;
    let mut r = CheckReport {
        journalled: journal.commits().count() as u64,
        ..CheckReport::default()
    };
    let db = match open_database(dir, &cfg, false) {
        Ok(db) => db,
        Err(_) if !journal.loaded() => return Ok(r), // killed while making the store
        Err(e) => return Err(e),
    };
    r.integrity = db.query_row("PRAGMA integrity_check", [], |row| row.get(0))?;
    if r.integrity != "ok" {
        r.violations
            .push(format!("integrity_check: {}", r.integrity));
    }
    let loaded: bool = db.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'pgbench_history'",
        [],
        |row| row.get(0),
    )?;
    if !loaded {
        if journal.loaded() {
            r.violations
                .push("the journalled load is missing".to_string());
        }
        return Ok(r);
    }
    let c = cfg.workload().check(&db)?;
    r.violations.extend(c.failed);
    r.in_database = last_seq(&db)?;
    for t in journal.commits() {
        match history_row(&db, t.seq)? {
            Some(found) if found == *t => {}
            Some(found) => r
                .violations
                .push(format!("commit {t:?} reads back as {found:?}")),
            None => r
                .violations
                .push(format!("journalled commit {} is missing", t.seq)),
        }
    }
    if r.in_database > r.journalled + 1 {
        r.violations.push(format!(
            "{} transactions in the database, {} journalled: at most one may be unjournalled",
            r.in_database, r.journalled
        ));
    }
    db.close()?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_torn_ones_are_refused() {
        let l = seal_line("C 5 10 1 3 -42");
        let e = parse_line(l.trim_end()).unwrap();
        assert_eq!(
            e,
            Entry::Commit(Txn {
                seq: 5,
                aid: 10,
                bid: 1,
                tid: 3,
                delta: -42
            })
        );
        assert!(parse_line(&l.trim_end().replace("10", "11")).is_none());
        assert!(parse_line("C 5 10").is_none());
    }

    #[test]
    fn headers_round_trip() {
        let c = TortureConfig {
            store: "stable-buffer:grow_pages=8,slots=16".into(),
            pool: Some((64, "cfdc".into())),
            journal_mode: JournalMode::Delete,
            scale: 1,
            accounts: 1000,
            page_size: 4096,
            seed: 9,
        };
        assert_eq!(TortureConfig::from_header(&c.header()).unwrap(), c);
    }
}
