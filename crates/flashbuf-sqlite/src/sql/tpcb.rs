//! TPC-B-like as SQL: pgbench's tables and its default transaction ("TPC-B (sort of)",
//! PostgreSQL 15 `pgbench`, built-in script `tpcb-like`), the same draws as the native
//! workload (`flashbuf_workload::tpcb`).
//!
//! ```sql
//! BEGIN;
//! UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
//! SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
//! UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
//! UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
//! INSERT INTO pgbench_history (tid, bid, aid, delta, mtime, filler) VALUES (...);
//! COMMIT;
//! ```
//!
//! `mtime` is the transaction's sequence number (1, 2, ...; the next one after a reopen
//! is one more than the largest in the table), so a journal of committed transactions
//! can be matched row by row ([`Txn`], used by the torture). Consistency:
//! `sum(abalance) = sum(tbalance) = sum(bbalance) = sum(delta)`, the row counts, and one
//! history row per committed transaction with sequence numbers `1..=n`.

use super::{in_transaction, SqlWorker, SqlWorkload};
use crate::error::Error;
use flashbuf_core::config::Options;
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::ConfigError;
use flashbuf_workload::codec::{stream_rng, uniform};
use flashbuf_workload::tpcb::TpcB;
use flashbuf_workload::Consistency;
use rusqlite::{params, Connection};

const NAME: &str = "tpcb";
const KINDS: &[&str] = &["tpcb"];
const TELLERS_PER_BRANCH: u32 = 10;

/// The tables, as `pgbench -i` creates them (SQLite types).
pub const SCHEMA: &str = "
CREATE TABLE pgbench_branches(bid INTEGER PRIMARY KEY, bbalance INTEGER NOT NULL, filler CHAR(88));
CREATE TABLE pgbench_tellers(tid INTEGER PRIMARY KEY, bid INTEGER NOT NULL, tbalance INTEGER NOT NULL, filler CHAR(84));
CREATE TABLE pgbench_accounts(aid INTEGER PRIMARY KEY, bid INTEGER NOT NULL, abalance INTEGER NOT NULL, filler CHAR(84));
CREATE TABLE pgbench_history(tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER, mtime INTEGER, filler CHAR(22));
";

/// The configured TPC-B-like workload (the native configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlTpcB(pub TpcB);

impl SqlTpcB {
    /// From the native workload's validated options (`scale`, `accounts`).
    pub fn from_options(o: &Options) -> Result<Self, ConfigError> {
        let scale = o.u64("scale").unwrap_or(1);
        let per = o.u64("accounts").unwrap_or(100_000);
        if scale.saturating_mul(per) > u64::from(u32::MAX) {
            return Err(o.invalid(format!("{scale} × {per} accounts exceed 32-bit ids")));
        }
        Ok(Self(TpcB {
            scale: scale as u32,
            accounts_per_branch: per as u32,
        }))
    }

    fn accounts(&self) -> u32 {
        self.0.scale * self.0.accounts_per_branch
    }
}

/// One TPC-B-like transaction's inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Txn {
    /// Sequence number (`mtime` of its history row).
    pub seq: u64,
    /// Account.
    pub aid: u32,
    /// Branch.
    pub bid: u32,
    /// Teller.
    pub tid: u32,
    /// Amount.
    pub delta: i64,
}

impl Txn {
    /// Draws the inputs as the native workload does (aid, bid, tid, delta, uniform).
    pub fn draw(cfg: &SqlTpcB, rng: &mut SplitMix64, seq: u64) -> Self {
        let aid = uniform(rng, 1, u64::from(cfg.accounts())) as u32;
        let bid = uniform(rng, 1, u64::from(cfg.0.scale)) as u32;
        let tid = uniform(rng, 1, u64::from(cfg.0.scale * TELLERS_PER_BRANCH)) as u32;
        let delta = uniform(rng, 0, 10_000) as i64 - 5000;
        Txn {
            seq,
            aid,
            bid,
            tid,
            delta,
        }
    }

    /// Runs the transaction and commits it.
    pub fn run(&self, conn: &mut Connection) -> Result<(), Error> {
        in_transaction(conn, |tx| {
            let changed = tx
                .prepare_cached(
                    "UPDATE pgbench_accounts SET abalance = abalance + ?1 WHERE aid = ?2",
                )?
                .execute(params![self.delta, self.aid])?;
            let _balance: i64 = tx
                .prepare_cached("SELECT abalance FROM pgbench_accounts WHERE aid = ?1")?
                .query_row([self.aid], |r| r.get(0))?;
            let t = tx
                .prepare_cached(
                    "UPDATE pgbench_tellers SET tbalance = tbalance + ?1 WHERE tid = ?2",
                )?
                .execute(params![self.delta, self.tid])?;
            let b = tx
                .prepare_cached(
                    "UPDATE pgbench_branches SET bbalance = bbalance + ?1 WHERE bid = ?2",
                )?
                .execute(params![self.delta, self.bid])?;
            if (changed, t, b) != (1, 1, 1) {
                return Err(Error::data(NAME, format!("rows missing for {self:?}")));
            }
            tx.prepare_cached(
                "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime, filler) \
                 VALUES (?1, ?2, ?3, ?4, ?5, '                      ')",
            )?
            .execute(params![
                self.tid,
                self.bid,
                self.aid,
                self.delta,
                self.seq as i64
            ])?;
            Ok(true)
        })?;
        Ok(())
    }
}

/// The largest sequence number in the history (0 if empty).
pub fn last_seq(conn: &Connection) -> Result<u64, Error> {
    let v: i64 = conn.query_row(
        "SELECT coalesce(max(mtime), 0) FROM pgbench_history",
        [],
        |r| r.get(0),
    )?;
    Ok(v as u64)
}

/// The history row of transaction `seq`, as a [`Txn`], if present.
pub fn history_row(conn: &Connection, seq: u64) -> Result<Option<Txn>, Error> {
    let mut st =
        conn.prepare_cached("SELECT aid, bid, tid, delta FROM pgbench_history WHERE mtime = ?1")?;
    let mut rows = st.query([seq as i64])?;
    let Some(r) = rows.next()? else {
        return Ok(None);
    };
    Ok(Some(Txn {
        seq,
        aid: r.get(0)?,
        bid: r.get(1)?,
        tid: r.get(2)?,
        delta: r.get(3)?,
    }))
}

struct Worker {
    cfg: SqlTpcB,
    rng: SplitMix64,
    seq: u64,
}

impl SqlWorker for Worker {
    fn step(&mut self, conn: &mut Connection) -> Result<usize, Error> {
        let t = Txn::draw(&self.cfg, &mut self.rng, self.seq + 1);
        t.run(conn)?;
        self.seq += 1;
        Ok(0)
    }
}

impl SqlWorkload for SqlTpcB {
    fn name(&self) -> &'static str {
        NAME
    }
    fn kinds(&self) -> &'static [&'static str] {
        KINDS
    }

    fn load(&self, conn: &mut Connection, _seed: u64) -> Result<(), Error> {
        let c = self.0;
        // One transaction: a killed load leaves nothing behind.
        in_transaction(conn, |tx| {
            tx.execute_batch(SCHEMA)?;
            let pad = |n: usize| " ".repeat(n);
            for b in 1..=c.scale {
                tx.prepare_cached("INSERT INTO pgbench_branches VALUES (?1, 0, ?2)")?
                    .execute(params![b, pad(88)])?;
            }
            for t in 1..=c.scale * TELLERS_PER_BRANCH {
                tx.prepare_cached("INSERT INTO pgbench_tellers VALUES (?1, ?2, 0, ?3)")?
                    .execute(params![t, (t - 1) / TELLERS_PER_BRANCH + 1, pad(84)])?;
            }
            let filler = pad(84);
            let mut ins =
                tx.prepare_cached("INSERT INTO pgbench_accounts VALUES (?1, ?2, 0, ?3)")?;
            for a in 1..=self.accounts() {
                ins.execute(params![a, (a - 1) / c.accounts_per_branch + 1, filler])?;
            }
            Ok(true)
        })?;
        Ok(())
    }

    fn worker(&self, conn: &Connection, seed: u64) -> Result<Box<dyn SqlWorker>, Error> {
        Ok(Box::new(Worker {
            cfg: *self,
            rng: stream_rng(seed, 1),
            seq: last_seq(conn)?,
        }))
    }

    fn check(&self, conn: &Connection) -> Result<Consistency, Error> {
        let sum = |sql: &str| -> Result<(i64, i64), Error> {
            Ok(conn.query_row(sql, [], |r| Ok((r.get(0)?, r.get(1)?)))?)
        };
        let (a, na) = sum("SELECT coalesce(sum(abalance), 0), count(*) FROM pgbench_accounts")?;
        let (t, nt) = sum("SELECT coalesce(sum(tbalance), 0), count(*) FROM pgbench_tellers")?;
        let (b, nb) = sum("SELECT coalesce(sum(bbalance), 0), count(*) FROM pgbench_branches")?;
        let (h, nh) = sum("SELECT coalesce(sum(delta), 0), count(*) FROM pgbench_history")?;
        let (lo, hi): (i64, i64) = conn.query_row(
            "SELECT coalesce(min(mtime), 1), coalesce(max(mtime), 0) FROM pgbench_history",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let mut out = Consistency::default();
        out.check("balances", a == t && t == b && b == h, || {
            format!("sum(abalance) {a}, sum(tbalance) {t}, sum(bbalance) {b}, sum(delta) {h}")
        });
        let c = self.0;
        let want = (
            i64::from(self.accounts()),
            i64::from(c.scale * TELLERS_PER_BRANCH),
            i64::from(c.scale),
        );
        out.check("row counts", (na, nt, nb) == want, || {
            format!("accounts/tellers/branches {na}/{nt}/{nb}, expected {want:?}")
        });
        out.check("history rows", lo == 1 && hi == nh, || {
            format!("{nh} history rows with sequence numbers {lo}..={hi}")
        });
        Ok(out)
    }
}
