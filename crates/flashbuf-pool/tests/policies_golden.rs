#![allow(clippy::unwrap_used)]
//! Golden counts per policy on the TPC-C sample: the first 200,000 references of
//! `../shared/traces/tpcc-pg15-w4.pagetrace.csv.zst` (the bundled
//! `testdata/traces/tpcc-sample.pagetrace.csv.zst` when present: the same references),
//! replayed through the pool over a direct store on memory, 1,024 frames of 512 bytes.
//! Any change in a policy's decisions changes these numbers.
//!
//! To regenerate after a deliberate change, run
//! `FLASHBUF_REGEN_GOLDEN=1 cargo test -p flashbuf-pool --test policies_golden -- --nocapture`
//! and paste the printed table over `GOLDEN`.
//!
//! Page numbers are remapped before the replay, order- and cluster-preserving: cluster
//! `page / 64` becomes its rank among the trace's distinct clusters, the offset in the
//! cluster is kept (`rank · 64 + page mod 64`). Every policy here sees the same cluster
//! membership (for any cluster size dividing 64), the same distances inside a cluster and
//! the same page order, so the counts equal those of the raw page numbers, while the store
//! stays small (the raw numbers reach 1.4·10⁹, one relation per 2²⁴ pages).

mod common;

use common::{Call, Recording};
use flashbuf_core::PageId;
use flashbuf_device::MemDevice;
use flashbuf_pool::policy::reference::{
    NaiveCasa, NaiveCfdc, NaiveCflru, NaiveClustered, NaiveLru,
};
use flashbuf_pool::policy::{
    Casa, CasaConfig, Cfdc, CfdcConfig, Cflru, CflruConfig, Clustered, ClusteringConfig, Lru,
    Policy,
};
use flashbuf_pool::{BufferPool, PoolStats};
use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;

const REFS: usize = 200_000;
const FRAMES: usize = 1024;
/// CASA's costs in the golden runs: writes 25× reads (the FD-Buffer paper's flash-25).
const CASA_COSTS: (f64, f64) = (1.0, 25.0);

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
        page_size: 512,
        grow_bytes: 4 << 20,
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

fn casa(frames: usize) -> Casa {
    Casa::new(frames, CASA_COSTS.0, CASA_COSTS.1).unwrap()
}

fn policies(frames: usize) -> Vec<(&'static str, Box<dyn Policy>)> {
    vec![
        ("lru", Box::new(Lru::new(frames))),
        ("cflru", Box::new(Cflru::new(frames))),
        ("cfdc", Box::new(Cfdc::new(frames))),
        ("casa", Box::new(casa(frames))),
        (
            "lru+batch",
            Box::new(Clustered::new(Lru::new(frames), ClusteringConfig::batch(64)).unwrap()),
        ),
        (
            "lru+drain",
            Box::new(Clustered::new(Lru::new(frames), ClusteringConfig::drain(64)).unwrap()),
        ),
        (
            "cflru+batch",
            Box::new(Clustered::new(Cflru::new(frames), ClusteringConfig::batch(64)).unwrap()),
        ),
    ]
}

/// (policy, hits, misses, page_writes, write_batches, dirty_evictions)
type Row = (&'static str, u64, u64, u64, u64, u64);

const GOLDEN: &[Row] = &[
    ("lru", 167989, 32011, 13768, 0, 13768),
    ("cflru", 166507, 33493, 12764, 0, 12764),
    ("cfdc", 166039, 33961, 13105, 0, 13105),
    ("casa", 166323, 33677, 12749, 0, 12749),
    ("lru+batch", 167989, 32011, 14414, 3202, 6629),
    ("lru+drain", 167947, 32053, 14236, 0, 14236),
    ("cflru+batch", 166455, 33545, 12981, 2732, 4236),
];

#[test]
fn golden_counts_on_the_tpcc_sample() {
    let refs = load(REFS);
    let mut rows: Vec<Row> = Vec::new();
    for (name, policy) in policies(FRAMES) {
        let pool = BufferPool::new(store(), FRAMES, policy).unwrap();
        replay(&pool, &refs);
        let s: PoolStats = pool.stats();
        assert_eq!(s.hits + s.misses, REFS as u64);
        rows.push((
            name,
            s.hits,
            s.misses,
            s.page_writes,
            s.write_batches,
            s.dirty_evictions,
        ));
    }
    if std::env::var_os("FLASHBUF_REGEN_GOLDEN").is_some() {
        println!("const GOLDEN: &[Row] = &[");
        for r in &rows {
            println!("    {r:?},");
        }
        println!("];");
        return;
    }
    assert_eq!(
        rows, GOLDEN,
        "golden counts changed; see the module doc to regenerate"
    );
}

/// On the real trace too, each policy and its naive version make the same decisions
/// (a prefix, at a buffer small enough for the naive scans).
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
    let cfdc = CfdcConfig::default();
    let cflru = CflruConfig::default();
    let casa_cfg = CasaConfig {
        read_cost: CASA_COSTS.0,
        write_cost: CASA_COSTS.1,
        ..CasaConfig::default()
    };
    let pairs: Vec<(Box<dyn Policy>, Box<dyn Policy>)> = vec![
        (
            Box::new(Cflru::with_config(frames, cflru).unwrap()),
            Box::new(NaiveCflru::new(frames, cflru).unwrap()),
        ),
        (
            Box::new(Cfdc::with_config(frames, cfdc).unwrap()),
            Box::new(NaiveCfdc::new(frames, cfdc).unwrap()),
        ),
        (
            Box::new(Casa::with_config(frames, casa_cfg).unwrap()),
            Box::new(NaiveCasa::new(frames, casa_cfg).unwrap()),
        ),
        (
            Box::new(Clustered::new(Lru::new(frames), ClusteringConfig::drain(64)).unwrap()),
            Box::new(
                NaiveClustered::new(NaiveLru::new(frames), ClusteringConfig::drain(64)).unwrap(),
            ),
        ),
    ];
    // The kinetic tournament really works on this trace: orders flip as globaltime grows.
    let pool = BufferPool::new(
        store(),
        frames,
        Box::new(Cfdc::with_config(frames, cfdc).unwrap()),
    )
    .unwrap();
    replay(&pool, &refs);
    let report = pool.policy_report();
    let events = report
        .iter()
        .find(|(k, _)| *k == "kinetic_events")
        .unwrap()
        .1;
    assert!(events > 100.0, "{report:?}");
    for (fast, naive) in pairs {
        let name = fast.name();
        assert!(
            run(fast) == run(naive),
            "{name} differs from its naive version"
        );
    }
}
