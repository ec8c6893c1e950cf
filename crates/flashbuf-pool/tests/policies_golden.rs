#![allow(clippy::unwrap_used)]
//! Golden counts of every entry of the policy table (`flashbuf_pool::policy::POLICIES`,
//! each entry's `golden` specs) on the TPC-C sample: the first 200,000 references of
//! `../shared/traces/tpcc-pg15-w4.pagetrace.csv.zst` (the bundled
//! `testdata/traces/tpcc-sample.pagetrace.csv.zst` when present: the same references),
//! replayed through the pool over a direct store on memory, 1,024 frames of 512 bytes,
//! policies built for a device with reads costing 1 and writes 25 (the FD-Buffer paper's
//! flash-25: CASA's costs, FD-Buffer's `R`). Any change in a policy's decisions changes
//! these numbers. The rows are in `tests/golden/policies.txt`; a table entry (or golden
//! spec) without a row fails, naming it. To regenerate after a deliberate change, run
//! `FLASHBUF_REGEN_GOLDEN=1 cargo test -p flashbuf-pool --test policies_golden`.
//!
//! Page numbers are remapped before the replay, order- and cluster-preserving: cluster
//! `page / 64` becomes its rank among the trace's distinct clusters, the offset in the
//! cluster is kept (`rank · 64 + page mod 64`). Every policy here sees the same cluster
//! membership (for any cluster size dividing 64), the same distances inside a cluster and
//! the same page order, so the counts equal those of the raw page numbers, while the store
//! stays small (the raw numbers reach 1.4·10⁹, one relation per 2²⁴ pages).

mod common;
mod golden_rows;

use common::{Call, Recording};
use flashbuf_core::config::{Options, Spec};
use flashbuf_core::{DeviceFacts, PageId};
use flashbuf_device::MemDevice;
use flashbuf_pool::policy::registry::{self, PolicyContext};
use flashbuf_pool::policy::{Policy, POLICIES};
use flashbuf_pool::{BufferPool, PoolStats};
use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore};
use golden_rows::Row;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;

const REFS: usize = 200_000;
const FRAMES: usize = 1024;
/// The device the policies are built for: writes 25× reads (the FD-Buffer paper's
/// flash-25), no erase block (clusters of 64 pages).
const FACTS: DeviceFacts = DeviceFacts {
    erase_block_bytes: None,
    read_us: 1.0,
    write_us: 25.0,
    seq_write_us: None,
};
/// Page size of the store.
const PAGE_SIZE: usize = 512;
/// The golden file.
const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/policies.txt");
/// The command that regenerates it.
const REGEN: &str = "FLASHBUF_REGEN_GOLDEN=1 cargo test -p flashbuf-pool --test policies_golden";

fn trace_path() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let bundled = root.join("testdata/traces/tpcc-sample.pagetrace.csv.zst");
    if bundled.exists() {
        return bundled;
    }
    root.join("../shared/traces/tpcc-pg15-w4.pagetrace.csv.zst")
}

/// The first `n` references as (write, page), page numbers remapped (see the module doc).
fn load(n: usize) -> Vec<(bool, u64)> {
    let path = trace_path();
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let reader = BufReader::new(zstd::Decoder::new(file).unwrap());
    let mut refs = Vec::with_capacity(n);
    for (i, line) in reader.lines().enumerate() {
        let line = line.unwrap();
        if i == 0 {
            assert_eq!(line.trim(), "op,page", "unexpected header");
            continue;
        }
        let (op, page) = line.trim().split_once(',').unwrap();
        let write = match op {
            "W" => true,
            "R" => false,
            _ => panic!("line {}: bad op {op:?}", i + 1),
        };
        refs.push((write, page.parse::<u64>().unwrap()));
        if refs.len() == n {
            break;
        }
    }
    assert_eq!(refs.len(), n, "trace shorter than {n} references");
    let clusters: Vec<u64> = refs
        .iter()
        .map(|&(_, p)| p / 64)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    for r in &mut refs {
        let rank = clusters.binary_search(&(r.1 / 64)).unwrap() as u64;
        r.1 = rank * 64 + r.1 % 64;
    }
    refs
}

fn store() -> DirectStore<MemDevice> {
    let cfg = DirectStoreConfig {
        page_size: PAGE_SIZE,
        grow_bytes: 4 << 20,
        ..Default::default()
    };
    DirectStore::create(MemDevice::new(0), cfg).unwrap()
}

fn replay<S: PageStore>(pool: &BufferPool<S>, refs: &[(bool, u64)]) {
    for &(w, p) in refs {
        if w {
            pool.write(PageId(p)).unwrap().write(0, &p.to_le_bytes());
        } else {
            drop(pool.read(PageId(p)).unwrap());
        }
    }
    pool.check_invariants().unwrap();
}

/// Builds `spec` through the policy table for `frames` frames (offline entries get
/// `refs`).
fn build(spec: &str, frames: usize, refs: &[(bool, u64)]) -> Box<dyn Policy> {
    let ctx = PolicyContext::new(frames, PAGE_SIZE, FACTS).with_trace(refs);
    let parsed = Spec::parse(spec, |_| false).unwrap();
    let (_, factory) = registry::parse(&parsed).unwrap_or_else(|e| panic!("{spec}: {e}"));
    factory
        .build(&ctx)
        .unwrap_or_else(|e| panic!("{spec}: {e}"))
}

#[test]
fn golden_counts_on_the_tpcc_sample() {
    let refs = load(REFS);
    let mut rows = Vec::new();
    for entry in POLICIES {
        assert!(
            !entry.golden.is_empty(),
            "{} has no golden spec",
            entry.name
        );
        for &spec in entry.golden {
            let pool = BufferPool::new(store(), FRAMES, build(spec, FRAMES, &refs)).unwrap();
            replay(&pool, &refs);
            let s: PoolStats = pool.stats();
            assert_eq!(s.hits + s.misses, REFS as u64);
            rows.push(Row {
                key: spec.to_string(),
                values: format!(
                    "hits={} misses={} page_writes={} write_batches={} dirty_evictions={}",
                    s.hits, s.misses, s.page_writes, s.write_batches, s.dirty_evictions
                ),
            });
        }
    }
    golden_rows::check(
        std::path::Path::new(GOLDEN),
        REGEN,
        &[
            "Golden counts of every policy table entry's golden specs (tests/policies_golden.rs):",
            "first 200,000 references of the TPC-C sample, 1,024 frames of 512 bytes, reads 1 / writes 25.",
        ],
        &rows,
    );
}

/// Every entry's schema is well formed and every documented default parses: the bare
/// name of every entry (all defaults) parses.
#[test]
fn every_entry_has_a_sound_schema_and_its_defaults_parse() {
    let mut names = BTreeSet::new();
    for e in POLICIES {
        assert!(names.insert(e.name), "{} registered twice", e.name);
        assert!(!e.help.is_empty(), "{} has no help", e.name);
        Options::check_schema(e.options).unwrap_or_else(|m| panic!("{}: {m}", e.name));
        let bare = Spec::parse(e.name, |_| false).unwrap();
        let o = Options::validate(&bare, e.options).unwrap();
        for opt in e.options {
            if opt.default.is_some() {
                assert!(!o.given(opt.key), "{}", opt.key);
            }
        }
        e.parse_spec(&bare)
            .unwrap_or_else(|err| panic!("{} with its defaults: {err}", e.name));
        assert_eq!(
            e.golden.first(),
            Some(&e.name),
            "{}: golden specs start with the bare name",
            e.name
        );
        for spec in e.golden {
            let s = Spec::parse(spec, |_| false).unwrap();
            assert_eq!(s.name, e.name, "{spec} is not a spec of {}", e.name);
            e.parse_spec(&s)
                .unwrap_or_else(|err| panic!("{spec}: {err}"));
        }
        assert_eq!(e.help_lines().len(), e.options.len() + 1);
    }
    // A typo is refused at parse time, naming the option and the valid keys.
    let e = registry::parse(&Spec::parse("cfdc:windw=0.5", |_| false).unwrap()).unwrap_err();
    assert!(
        e.to_string().contains("'windw'") && e.to_string().contains("window, cluster_size"),
        "{e}"
    );
    let e = registry::lookup("lruu").unwrap_err();
    assert!(
        e.to_string()
            .contains("lru, cflru, cfdc, casa, fd-buffer, belady, offline"),
        "{e}"
    );
}

/// On the real trace too, each policy and its naive version make the same decisions
/// (a prefix, at a buffer small enough for the naive scans): every golden spec of every
/// entry with a reference that models it.
#[test]
fn naive_versions_agree_on_a_tpcc_prefix() {
    let refs = load(40_000);
    let frames = 96;
    let run = |p: Box<dyn Policy>| {
        let pool = BufferPool::new(Recording::new(store()), frames, p).unwrap();
        replay(&pool, &refs);
        let calls: Vec<Call> = pool.store().take();
        (pool.stats(), calls)
    };
    // CFDC really chooses clusters by priority on this trace (not only drains them).
    let pool = BufferPool::new(store(), frames, build("cfdc", frames, &refs)).unwrap();
    replay(&pool, &refs);
    let scans = pool.policy_report_full().get("priority_scans").unwrap();
    assert!(scans > 100.0, "{scans}");
    let ctx = PolicyContext::new(frames, PAGE_SIZE, FACTS);
    let mut compared = 0;
    for entry in POLICIES.iter().filter(|e| e.reference.is_some()) {
        for spec in entry.golden {
            let (_, factory) = registry::parse(&Spec::parse(spec, |_| false).unwrap()).unwrap();
            let Some(naive) = factory.build_reference(&ctx) else {
                continue;
            };
            let fast = factory.build(&ctx).unwrap();
            assert!(
                run(fast) == run(naive.unwrap()),
                "{spec} differs from its naive version"
            );
            compared += 1;
        }
    }
    assert!(compared >= 10, "{compared} golden specs compared");
}
