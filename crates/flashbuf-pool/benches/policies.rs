//! Replay speed of every policy through the pool: the first 1,000,000 references of the
//! TPC-C page trace (`../shared/traces/tpcc-pg15-w4.pagetrace.csv.zst`), decoded into
//! memory once outside the timed part, at a buffer of 3% of the distinct pages of those
//! references, over a direct store on memory (512-byte pages, so that the policy's share
//! of the time is as large as it gets). Throughput is in references per second.
//!
//! `cargo bench -p flashbuf-pool --bench policies`. Target (issue 4): every policy at least
//! 0.5× LRU's references/s.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use flashbuf_core::PageId;
use flashbuf_device::MemDevice;
use flashbuf_pool::policy::{
    Casa, Cfdc, Cflru, ClusterChoice, Clustered, ClusteringConfig, Lru, Policy,
};
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

fn policy(name: &str, frames: usize) -> Box<dyn Policy> {
    match name {
        "lru" => Box::new(Lru::new(frames)),
        "cflru" => Box::new(Cflru::new(frames)),
        "cfdc" => Box::new(Cfdc::new(frames)),
        "casa" => Box::new(Casa::new(frames, 1.0, 25.0).expect("costs")),
        "lru+batch" => {
            Box::new(Clustered::new(Lru::new(frames), ClusteringConfig::batch(64)).expect("config"))
        }
        "lru+drain" => {
            Box::new(Clustered::new(Lru::new(frames), ClusteringConfig::drain(64)).expect("config"))
        }
        "casa+drain-metric" => Box::new(
            Clustered::new(
                Casa::new(frames, 1.0, 25.0).expect("costs"),
                ClusteringConfig::drain(64).with_choice(ClusterChoice::Metric),
            )
            .expect("config"),
        ),
        _ => unreachable!("unknown policy {name}"),
    }
}

const POLICIES: [&str; 7] = [
    "lru",
    "cflru",
    "cfdc",
    "casa",
    "lru+batch",
    "lru+drain",
    "casa+drain-metric",
];

fn bench(c: &mut Criterion) {
    let refs = load(REFS);
    let distinct = refs.iter().map(|r| r.1).collect::<HashSet<_>>().len();
    let frames = (distinct * 3).div_ceil(100);
    let mut group = c.benchmark_group(format!("replay-tpcc-1M-{frames}-frames"));
    group.throughput(Throughput::Elements(refs.len() as u64));
    group.sample_size(10);
    for name in POLICIES {
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    let cfg = DirectStoreConfig {
                        page_size: 512,
                        grow_bytes: 64 << 20,
                    };
                    let store = DirectStore::create(MemDevice::new(0), cfg).expect("store");
                    BufferPool::new(store, frames, policy(name, frames)).expect("pool")
                },
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
    let mut best = [f64::INFINITY; POLICIES.len()];
    for _ in 0..rounds {
        for (i, name) in POLICIES.iter().enumerate() {
            let cfg = DirectStoreConfig {
                page_size: 512,
                grow_bytes: 64 << 20,
            };
            let store = DirectStore::create(MemDevice::new(0), cfg).expect("store");
            let pool = BufferPool::new(store, frames, policy(name, frames)).expect("pool");
            let t0 = std::time::Instant::now();
            replay(&pool, &refs);
            best[i] = best[i].min(t0.elapsed().as_secs_f64());
        }
    }
    println!(
        "interleaved best of {rounds}: {} refs, {frames} frames (3% of {distinct} distinct pages)",
        refs.len()
    );
    println!("{:<20} {:>14} {:>10}", "policy", "refs/s", "vs LRU");
    for (i, name) in POLICIES.iter().enumerate() {
        println!(
            "{:<20} {:>14.0} {:>10.2}",
            name,
            refs.len() as f64 / best[i],
            best[0] / best[i]
        );
    }
}

criterion_group!(benches, bench, interleaved_summary);
criterion_main!(benches);
