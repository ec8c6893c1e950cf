//! TPC-B-like: pgbench's default transaction ("TPC-B (sort of)", PostgreSQL 15,
//! `src/bin/pgbench/pgbench.c`, built-in script `tpcb-like`) over four B+-trees.
//!
//! Tables as `pgbench -i` creates them, one tree each, keyed by the integer id:
//! `branches(bid, bbalance, filler char(88))` (`scale` rows), `tellers(tid, bid, tbalance,
//! filler char(84))` (10 per branch), `accounts(aid, bid, abalance, filler char(84))`
//! (`accounts` per branch, 100,000 by default), `history(tid, bid, aid, delta, mtime,
//! filler char(22))`, keyed by an insertion sequence number (PostgreSQL's history is a
//! heap without a key). Balances start at 0; `filler` is blank-padded as in `char(n)`.
//!
//! One transaction, with `aid`, `bid`, `tid` uniform over their tables and `delta`
//! uniform in `-5000..=5000`:
//! ```sql
//! UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
//! SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
//! UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
//! UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
//! INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (...);
//! ```
//!
//! Isolation: none beyond single rows. Each update is an atomic read-modify-write of one
//! row under its leaf's write latch; transactions do not lock and may interleave. The
//! check holds regardless, because every change is an increment and increments commute:
//! after the run, `sum(abalance) = sum(tbalance) = sum(bbalance) = sum(history.delta)`,
//! and the history holds one row per transaction. `mtime` is the transaction's sequence
//! number, not the wall clock (runs stay deterministic).

use crate::btree::{BTree, PageSpace, TreeConfig, TreeId};
use crate::codec::{get_i64, set_i64, stream_rng, uniform};
use crate::workload::{
    Consistency, EnginePool, EngineStore, Session, Worker, Workload, WorkloadEntry, WorkloadError,
};
use flashbuf_core::config::{OptKind, OptionSpec, Options};
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{ConfigError, PageId};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

const NAME: &str = "tpcb";

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "scale",
        kind: OptKind::UInt {
            min: 1,
            max: 100_000,
        },
        default: Some("1"),
        help: "pgbench's scale factor: branches (10 tellers and `accounts` accounts each)",
    },
    OptionSpec {
        key: "accounts",
        kind: OptKind::UInt {
            min: 1,
            max: 10_000_000,
        },
        default: Some("100000"),
        help: "accounts per branch (pgbench: 100000; smaller for quick runs)",
    },
];

/// The table entry.
pub const ENTRY: WorkloadEntry = WorkloadEntry {
    name: NAME,
    help: "TPC-B-like: pgbench's tpcb-like transaction, with the balance-sum check",
    options: OPTIONS,
    parse,
};

const KINDS: &[&str] = &["tpcb"];
const TELLERS_PER_BRANCH: u32 = 10;

const BRANCHES: TreeId = TreeId(1);
const TELLERS: TreeId = TreeId(2);
const ACCOUNTS: TreeId = TreeId(3);
const HISTORY: TreeId = TreeId(4);

/// Branch, teller and account rows are `bid u32, balance i64, filler`: the balance is at
/// byte 4.
const BALANCE_AT: usize = 4;

/// The configured TPC-B-like workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TpcB {
    /// Branches.
    pub scale: u32,
    /// Accounts per branch.
    pub accounts_per_branch: u32,
}

fn parse(o: &Options) -> Result<Box<dyn Workload>, ConfigError> {
    let scale = o.u64("scale").unwrap_or(1);
    let per = o.u64("accounts").unwrap_or(100_000);
    let total = scale.saturating_mul(per);
    if total > u64::from(u32::MAX) {
        return Err(o.invalid(format!(
            "{total} accounts ({scale} × {per}) exceed the 32-bit account ids"
        )));
    }
    Ok(Box::new(TpcB {
        scale: scale as u32,
        accounts_per_branch: per as u32,
    }))
}

fn row(bid: u32, filler: usize) -> Vec<u8> {
    let mut r = bid.to_le_bytes().to_vec();
    r.extend_from_slice(&0i64.to_le_bytes());
    r.extend(std::iter::repeat_n(b' ', filler));
    r
}

struct Tables<'p> {
    branches: BTree<'p, EngineStore>,
    tellers: BTree<'p, EngineStore>,
    accounts: BTree<'p, EngineStore>,
    history: BTree<'p, EngineStore>,
}

struct TpcbSession<'p> {
    cfg: TpcB,
    t: Tables<'p>,
    /// Next history sequence number (= transactions committed).
    seq: AtomicU64,
}

impl Workload for TpcB {
    fn name(&self) -> &'static str {
        NAME
    }
    fn kinds(&self) -> &'static [&'static str] {
        KINDS
    }
    fn load<'p>(
        &self,
        pool: &'p EnginePool,
        _seed: u64,
    ) -> Result<Box<dyn Session + 'p>, WorkloadError> {
        let space = PageSpace::create(pool, PageId(0), 1 << 40)?;
        let cfg = TreeConfig::default();
        let mk = |id| BTree::create(pool, space, id, cfg);
        let t = Tables {
            branches: mk(BRANCHES)?,
            tellers: mk(TELLERS)?,
            accounts: mk(ACCOUNTS)?,
            history: mk(HISTORY)?,
        };
        for b in 1..=self.scale {
            t.branches.insert(&b.to_be_bytes(), &row(b, 88))?;
        }
        for tid in 1..=self.scale * TELLERS_PER_BRANCH {
            let bid = (tid - 1) / TELLERS_PER_BRANCH + 1;
            t.tellers.insert(&tid.to_be_bytes(), &row(bid, 84))?;
        }
        for aid in 1..=self.scale * self.accounts_per_branch {
            let bid = (aid - 1) / self.accounts_per_branch + 1;
            t.accounts.insert(&aid.to_be_bytes(), &row(bid, 84))?;
        }
        Ok(Box::new(TpcbSession {
            cfg: *self,
            t,
            seq: AtomicU64::new(0),
        }))
    }
}

fn add_balance(tree: &BTree<'_, EngineStore>, id: u32, delta: i64) -> Result<(), WorkloadError> {
    let found = tree.update(&id.to_be_bytes(), |old| {
        let mut r = old.to_vec();
        set_i64(&mut r, BALANCE_AT, get_i64(old, BALANCE_AT) + delta);
        Some(r)
    })?;
    if !found {
        return Err(WorkloadError::data(NAME, format!("row {id} missing")));
    }
    Ok(())
}

struct TpcbWorker<'s> {
    s: &'s TpcbSession<'s>,
    rng: SplitMix64,
}

impl Worker for TpcbWorker<'_> {
    fn step(&mut self) -> Result<usize, WorkloadError> {
        let c = self.s.cfg;
        let aid = uniform(&mut self.rng, 1, u64::from(c.scale * c.accounts_per_branch)) as u32;
        let bid = uniform(&mut self.rng, 1, u64::from(c.scale)) as u32;
        let tid = uniform(&mut self.rng, 1, u64::from(c.scale * TELLERS_PER_BRANCH)) as u32;
        let delta = uniform(&mut self.rng, 0, 10_000) as i64 - 5000;
        let t = &self.s.t;
        add_balance(&t.accounts, aid, delta)?;
        let balance = t
            .accounts
            .get_with(&aid.to_be_bytes(), |v| v.map(|r| get_i64(r, BALANCE_AT)))?;
        if balance.is_none() {
            return Err(WorkloadError::data(NAME, format!("account {aid} vanished")));
        }
        add_balance(&t.tellers, tid, delta)?;
        add_balance(&t.branches, bid, delta)?;
        let seq = self.s.seq.fetch_add(1, Relaxed);
        let mut h = Vec::with_capacity(50);
        for v in [tid, bid, aid] {
            h.extend_from_slice(&v.to_le_bytes());
        }
        h.extend_from_slice(&delta.to_le_bytes());
        h.extend_from_slice(&seq.to_le_bytes());
        h.extend(std::iter::repeat_n(b' ', 22));
        t.history.insert(&seq.to_be_bytes(), &h)?;
        Ok(0)
    }
}

impl Session for TpcbSession<'_> {
    fn worker(&self, thread: usize, _threads: usize, seed: u64) -> Box<dyn Worker + '_> {
        Box::new(TpcbWorker {
            s: self,
            rng: stream_rng(seed, thread as u64 + 1),
        })
    }

    fn check(&self) -> Result<Consistency, WorkloadError> {
        let sum = |tree: &BTree<'_, EngineStore>, at: usize| -> Result<(i64, u64), WorkloadError> {
            let (mut s, mut n) = (0i64, 0u64);
            tree.scan(Bound::Unbounded, Bound::Unbounded, |_, v| {
                s += get_i64(v, at);
                n += 1;
                true
            })?;
            Ok((s, n))
        };
        let (a, na) = sum(&self.t.accounts, BALANCE_AT)?;
        let (t, nt) = sum(&self.t.tellers, BALANCE_AT)?;
        let (b, nb) = sum(&self.t.branches, BALANCE_AT)?;
        let (h, nh) = sum(&self.t.history, 12)?;
        let c = self.cfg;
        let mut out = Consistency::default();
        out.check("balances", a == t && t == b && b == h, || {
            format!("sum(abalance) {a}, sum(tbalance) {t}, sum(bbalance) {b}, sum(delta) {h}")
        });
        let want = (
            u64::from(c.scale) * u64::from(c.accounts_per_branch),
            u64::from(c.scale * TELLERS_PER_BRANCH),
            u64::from(c.scale),
        );
        out.check("row counts", (na, nt, nb) == want, || {
            format!("accounts/tellers/branches {na}/{nt}/{nb}, expected {want:?}")
        });
        let committed = self.seq.load(Relaxed);
        out.check("history rows", nh == committed, || {
            format!("{nh} history rows after {committed} transactions")
        });
        Ok(out)
    }
}
