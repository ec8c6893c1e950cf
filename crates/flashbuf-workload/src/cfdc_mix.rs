//! CFDC's baseline workload (Ou, Härder, Jin, "CFDC: A Flash-aware Replacement Policy for
//! Database Buffer Management", DaMoN 2009, §4.1, with the update-intensity knob of §4.4
//! and the scan fraction of §4.5).
//!
//! As printed: one B*-tree of one million records with 4-byte integer keys and 256-byte
//! values, loaded so that half of the leaf space is unused (here: keys inserted in order,
//! append splits leaving [`CfdcMix::fill`] = 0.5 of the left leaf used); transactions are
//! point queries, point updates, range queries and range updates, mixed in random order.
//! The baseline is 100,000 + 100,000 point transactions and 200 + 200 range transactions
//! of 256 records each: an update intensity of 50% and a scan fraction of
//! 400 / 200,400 ≈ 0.2%. Point keys follow an 80–20 self-similar distribution (Gray et
//! al., SIGMOD 1994: `N · u^(ln h / ln(1 − h))`, h = 0.2, so 80% of the keys fall in the
//! first 20% of the key space); range starts are uniform.
//!
//! Readings: `update` is the fraction of update transactions among both the point and the
//! range transactions (§4.4 keeps the two sets in proportion: "for a 20% update intensity
//! 160,000 point queries, 40,000 point updates, 320 range queries, and 80 range
//! updates"); `scan` is the fraction of range transactions among all (Fig. 8's x-axis
//! counts range transactions, half queries and half updates at the baseline's 50%). An
//! update writes a whole new value: the record's version goes up by one and the other
//! 252 bytes are regenerated from (key, version) — the paper says a point update
//! "changes the corresponding value". A range that reaches the last key stops there.
//! A range update rewrites its records in place, coupling leaf write latches left to
//! right.
//!
//! Isolation: single records (each update is atomic under its leaf latch). Check: every
//! key `0..records` is present once, in order, each value is the one its (key, version)
//! generates, and the versions add up to the number of record updates performed.

use crate::btree::{BTree, PageSpace, TreeConfig, TreeId};
use crate::codec::{get_u32, stream_rng};
use crate::workload::{
    Consistency, EnginePool, EngineStore, Session, Worker, Workload, WorkloadEntry, WorkloadError,
};
use flashbuf_core::config::{OptKind, OptionSpec, Options};
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{ConfigError, PageId};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

const NAME: &str = "cfdc";

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "records",
        kind: OptKind::UInt { min: 1, max: 100_000_000 },
        default: Some("1000000"),
        help: "records in the B-tree (the paper: one million)",
    },
    OptionSpec {
        key: "value_bytes",
        kind: OptKind::UInt { min: 8, max: 900 },
        default: Some("256"),
        help: "bytes per value (the paper: 256)",
    },
    OptionSpec {
        key: "scan",
        kind: OptKind::Float { min: 0.0, max: 1.0 },
        default: Some("0.001996"),
        help: "fraction of range transactions (the baseline: 400 of 200,400)",
    },
    OptionSpec {
        key: "update",
        kind: OptKind::Float { min: 0.0, max: 1.0 },
        default: Some("0.5"),
        help: "update intensity: fraction of update transactions (the baseline: 0.5)",
    },
    OptionSpec {
        key: "range",
        kind: OptKind::UInt { min: 1, max: 1_000_000 },
        default: Some("256"),
        help: "records per range query or update (the paper: 256)",
    },
    OptionSpec {
        key: "hot",
        kind: OptKind::Float { min: 0.01, max: 0.5 },
        default: Some("0.2"),
        help: "self-similar skew h: a fraction 1-h of point keys falls in the first h of the key space",
    },
    OptionSpec {
        key: "fill",
        kind: OptKind::Float { min: 0.5, max: 1.0 },
        default: Some("0.5"),
        help: "leaf fill after the sequential load (the paper: half of the leaf space unused)",
    },
];

/// The table entry.
pub const ENTRY: WorkloadEntry = WorkloadEntry {
    name: NAME,
    help: "CFDC's baseline: point and range queries and updates over one B-tree (scan fraction, update intensity)",
    options: OPTIONS,
    parse,
};

const KINDS: &[&str] = &["point_query", "point_update", "range_query", "range_update"];
const TREE: TreeId = TreeId(1);

/// The configured CFDC mix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CfdcMix {
    /// Records.
    pub records: u32,
    /// Bytes per value.
    pub value_bytes: usize,
    /// Fraction of range transactions.
    pub scan: f64,
    /// Fraction of update transactions.
    pub update: f64,
    /// Records per range transaction.
    pub range: u32,
    /// Self-similar skew.
    pub hot: f64,
    /// Leaf fill of the load.
    pub fill: f64,
}

fn parse(o: &Options) -> Result<Box<dyn Workload>, ConfigError> {
    Ok(Box::new(CfdcMix {
        records: o.u64("records").unwrap_or(1_000_000) as u32,
        value_bytes: o.usize("value_bytes").unwrap_or(256),
        scan: o.f64("scan").unwrap_or(0.001996),
        update: o.f64("update").unwrap_or(0.5),
        range: o.u64("range").unwrap_or(256) as u32,
        hot: o.f64("hot").unwrap_or(0.2),
        fill: o.f64("fill").unwrap_or(0.5),
    }))
}

/// The value of `key` at `version`: version, key, then bytes generated from both.
fn value(key: u32, version: u32, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    v.extend_from_slice(&version.to_le_bytes());
    v.extend_from_slice(&key.to_le_bytes());
    let mut rng = SplitMix64::new((u64::from(key) << 32) | u64::from(version));
    while v.len() < len {
        let r = rng.next_u64().to_le_bytes();
        let n = (len - v.len()).min(8);
        v.extend_from_slice(&r[..n]);
    }
    v
}

/// The next version of a stored value.
fn bumped(old: &[u8]) -> Vec<u8> {
    value(get_u32(old, 4), get_u32(old, 0) + 1, old.len())
}

struct CfdcSession<'p> {
    cfg: CfdcMix,
    tree: BTree<'p, EngineStore>,
    /// Record updates performed (point updates + records of range updates).
    updates: AtomicU64,
}

impl Workload for CfdcMix {
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
        let tree = BTree::create(
            pool,
            space,
            TREE,
            TreeConfig {
                append_fill: self.fill,
            },
        )?;
        for k in 0..self.records {
            tree.insert(&k.to_be_bytes(), &value(k, 0, self.value_bytes))?;
        }
        Ok(Box::new(CfdcSession {
            cfg: *self,
            tree,
            updates: AtomicU64::new(0),
        }))
    }
}

struct CfdcWorker<'s> {
    s: &'s CfdcSession<'s>,
    rng: SplitMix64,
    exponent: f64,
}

impl CfdcWorker<'_> {
    fn point_key(&mut self) -> u32 {
        let n = f64::from(self.s.cfg.records);
        let k = (n * self.rng.unit().powf(self.exponent)) as u32;
        k.min(self.s.cfg.records - 1)
    }
}

impl Worker for CfdcWorker<'_> {
    fn step(&mut self) -> Result<usize, WorkloadError> {
        let c = self.s.cfg;
        let range = self.rng.chance(c.scan);
        let update = self.rng.chance(c.update);
        let t = &self.s.tree;
        if !range {
            let k = self.point_key().to_be_bytes();
            if update {
                if !t.update(&k, |old| Some(bumped(old)))? {
                    return Err(WorkloadError::data(NAME, format!("key {k:?} missing")));
                }
                self.s.updates.fetch_add(1, Relaxed);
                return Ok(1);
            }
            if t.get_with(&k, |v| v.is_none())? {
                return Err(WorkloadError::data(NAME, format!("key {k:?} missing")));
            }
            return Ok(0);
        }
        let start = (self.rng.below(u64::from(c.records)) as u32).to_be_bytes();
        let mut left = c.range;
        if update {
            let n = t.scan_update(&start, Bound::Unbounded, |_, old| {
                left -= 1;
                (Some(bumped(old)), left > 0)
            })?;
            self.s.updates.fetch_add(n, Relaxed);
            return Ok(3);
        }
        let mut sum = 0u64;
        t.scan(Bound::Included(&start), Bound::Unbounded, |_, v| {
            sum += u64::from(get_u32(v, 0));
            left -= 1;
            left > 0
        })?;
        std::hint::black_box(sum);
        Ok(2)
    }
}

impl Session for CfdcSession<'_> {
    fn worker(&self, thread: usize, _threads: usize, seed: u64) -> Box<dyn Worker + '_> {
        let h = self.cfg.hot;
        Box::new(CfdcWorker {
            s: self,
            rng: stream_rng(seed, thread as u64 + 1),
            exponent: h.ln() / (1.0 - h).ln(),
        })
    }

    fn check(&self) -> Result<Consistency, WorkloadError> {
        let (mut next, mut bad, mut versions) = (0u32, Vec::new(), 0u64);
        self.tree.scan(Bound::Unbounded, Bound::Unbounded, |k, v| {
            let key = u32::from_be_bytes([k[0], k[1], k[2], k[3]]);
            if key != next && bad.len() < 5 {
                bad.push(format!("key {key} where {next} was expected"));
            }
            let version = get_u32(v, 0);
            if v != value(key, version, v.len()).as_slice() && bad.len() < 5 {
                bad.push(format!("value of key {key} is not its version {version}'s"));
            }
            versions += u64::from(version);
            next = key.wrapping_add(1);
            true
        })?;
        let mut out = Consistency::default();
        out.check(
            "records",
            bad.is_empty() && next == self.cfg.records,
            || format!("{} records scanned; {}", next, bad.join("; ")),
        );
        let updates = self.updates.load(Relaxed);
        out.check("versions", versions == updates, || {
            format!("versions add up to {versions} after {updates} record updates")
        });
        Ok(out)
    }
}
