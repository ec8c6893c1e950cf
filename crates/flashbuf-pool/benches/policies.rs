//! Replay speed of every policy of the table (`flashbuf_pool::policy::POLICIES`, each
//! entry's golden specs) through the pool: the first 1,000,000 references of the TPC-C
//! page trace (`../shared/traces/tpcc-pg15-w4.pagetrace.csv.zst`), decoded into memory
//! once outside the timed part, at a buffer of 3% of the distinct pages of those
//! references, over a direct store on memory (512-byte pages, so that the policy's share
//! of the time is as large as it gets), policies built for a device whose writes cost 25
//! reads. Building a policy (offline policies read the whole trace) is not timed.
//! Throughput is in references per second. `FLASHBUF_BENCH_POLICIES=lru,cfdc` restricts
//! the run to the specs that start with one of the given names.
//!
//! `cargo bench -p flashbuf-pool --bench policies`. Target (issue 4): every policy at least
//! 0.5× LRU's references/s.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use flashbuf_core::{DeviceFacts, PageId};
use flashbuf_device::MemDevice;
use flashbuf_pool::policy::registry::{build_named, PolicyContext};
use flashbuf_pool::policy::{Policy, POLICIES};
use flashbuf_pool::BufferPool;
use flashbuf_store::{DirectStore, DirectStoreConfig};
use std::collections::{BTreeSet, HashSet};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;

const REFS: usize = 1_000_000;

/// The first `n` references, page numbers remapped order- and cluster-preservingly
/// (cluster `page / 64` → its rank among the distinct clusters) so the store stays small.
fn load(n: usize) -> Vec<(bool, u64)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/tpcc-pg15-w4.pagetrace.csv.zst");
    let file = std::fs::File::open(&path).expect("the shared TPC-C trace");
    let reader = BufReader::new(zstd::Decoder::new(file).expect("zstd"));
    let mut refs = Vec::with_capacity(n);
    for line in reader.lines().skip(1) {
        let line = line.expect("read");
        let (op, page) = line.trim().split_once(',').expect("op,page");
        refs.push((op == "W", page.parse::<u64>().expect("page number")));
        if refs.len() == n {
            break;
        }
    }
    let clusters: Vec<u64> = refs
        .iter()
        .map(|&(_, p)| p / 64)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    for r in &mut refs {
        let rank = clusters.binary_search(&(r.1 / 64)).expect("known cluster") as u64;
        r.1 = rank * 64 + r.1 % 64;
    }
    refs
}

fn replay(pool: &BufferPool<DirectStore<MemDevice>>, refs: &[(bool, u64)]) {
    for &(w, p) in refs {
        if w {
            pool.write(PageId(p))
                .expect("fix")
                .write(0, &p.to_le_bytes());
        } else {
            drop(pool.read(PageId(p)).expect("fix"));
        }
    }
}

/// The device the policies are built for (as in `tests/policies_golden.rs`).
const FACTS: DeviceFacts = DeviceFacts {
    erase_block_bytes: None,
    read_us: 1.0,
    write_us: 25.0,
    seq_write_us: None,
};

/// Every golden spec of every table entry (or those selected by `FLASHBUF_BENCH_POLICIES`).
fn specs() -> Vec<&'static str> {
    let only: Vec<String> = std::env::var("FLASHBUF_BENCH_POLICIES")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    POLICIES
        .iter()
        .flat_map(|e| e.golden.iter().copied())
        .filter(|s| only.is_empty() || only.iter().any(|o| s.starts_with(o.as_str())))
        .collect()
}

/// `spec` built through the policy table for `frames` frames (offline ones see `refs`).
fn policy(spec: &str, frames: usize, refs: &[(bool, u64)]) -> Box<dyn Policy> {
    let ctx = PolicyContext::new(frames, 512, FACTS).with_trace(refs);
    build_named(spec, &ctx).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn pool(spec: &str, frames: usize, refs: &[(bool, u64)]) -> BufferPool<DirectStore<MemDevice>> {
    let cfg = DirectStoreConfig {
        page_size: 512,
        grow_bytes: 64 << 20,
        ..Default::default()
    };
    let store = DirectStore::create(MemDevice::new(0), cfg).expect("store");
    BufferPool::new(store, frames, policy(spec, frames, refs)).expect("pool")
}

fn bench(c: &mut Criterion) {
    let refs = load(REFS);
    let distinct = refs.iter().map(|r| r.1).collect::<HashSet<_>>().len();
    let frames = (distinct * 3).div_ceil(100);
    flashbuf_core::buildinfo::BuildInfo::record_bench(
        "policies",
        serde_json::json!({
            "trace": "../shared/traces/tpcc-pg15-w4.pagetrace.csv.zst", "references": refs.len(),
            "distinct_pages": distinct, "frames": frames, "store": "direct", "device": "memory",
            "page_size": 512, "policies": specs(),
        }),
    );
    let mut group = c.benchmark_group(format!("replay-tpcc-1M-{frames}-frames"));
    group.throughput(Throughput::Elements(refs.len() as u64));
    group.sample_size(10);
    for spec in specs() {
        group.bench_function(spec, |b| {
            b.iter_batched(
                || pool(spec, frames, &refs),
                |pool| {
                    replay(&pool, &refs);
                    pool
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

/// Interleaved best-of-N: one replay of each policy per round, the best time of each kept.
/// On a shared machine this ratio is steadier than separate criterion runs, whose
/// background load differs. Prints references/s and the ratio to LRU.
fn interleaved_summary(_c: &mut Criterion) {
    let refs = load(REFS);
    let distinct = refs.iter().map(|r| r.1).collect::<HashSet<_>>().len();
    let frames = (distinct * 3).div_ceil(100);
    let rounds: usize = std::env::var("FLASHBUF_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let specs = specs();
    let mut best = vec![f64::INFINITY; specs.len()];
    for _ in 0..rounds {
        for (i, spec) in specs.iter().enumerate() {
            let pool = pool(spec, frames, &refs);
            let t0 = std::time::Instant::now();
            replay(&pool, &refs);
            best[i] = best[i].min(t0.elapsed().as_secs_f64());
        }
    }
    println!(
        "interleaved best of {rounds}: {} refs, {frames} frames (3% of {distinct} distinct pages)",
        refs.len()
    );
    println!("{:<48} {:>14} {:>10}", "policy", "refs/s", "vs first");
    for (i, spec) in specs.iter().enumerate() {
        println!(
            "{:<48} {:>14.0} {:>10.2}",
            spec,
            refs.len() as f64 / best[i],
            best[0] / best[i]
        );
    }
}

criterion_group!(benches, bench, interleaved_summary);
criterion_main!(benches);
