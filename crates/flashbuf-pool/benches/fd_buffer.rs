//! FD-Buffer against LRU: references per second replaying the first 1 M references of
//! the shared TPC-C trace through the real pool (in-memory direct store, 512-byte pages)
//! with 3 % of the trace's 41,399 distinct pages (1,242 frames). The trace is decoded
//! once, outside the timed part. Also prints FD-Buffer's advisor overhead measured with
//! an injected clock, as a fraction of the replay time.
//!
//! A second group drives the policies alone over the whole trace (no pool: a page table
//! of frame numbers stands in for it, every frame evictable), built by name as the lab
//! builds them (`lru`, `fd-buffer`, `fd-buffer:cost=clustered`, default device facts):
//! the policy's own cost per reference, the part of the pool's time that differs between
//! policies.
//!
//! Run: `cargo bench -p flashbuf-pool --bench fd_buffer`.

#![allow(missing_docs, clippy::unwrap_used)]

#[path = "../tests/fd_buffer_support/mod.rs"]
mod support;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use flashbuf_core::{DeviceFacts, FrameId, PageId};
use flashbuf_pool::policy::fd_buffer::{Clustering, FdBuffer, FdBufferOptions};
use flashbuf_pool::policy::registry::{build_named, PolicyContext};
use flashbuf_pool::policy::{Access, Lru, Policy, Victim};
use flashbuf_pool::BufferPool;
use std::sync::Arc;
use std::time::Instant;

const REFS: usize = 1_000_000;
const FRAMES: usize = 1_242; // 3 % of 41,399 distinct pages

fn replay(policy: Box<dyn Policy>, trace: &[(bool, u64)]) -> u64 {
    let pool = BufferPool::new(support::small_store(), FRAMES, policy).unwrap();
    for &(w, p) in trace {
        if w {
            drop(pool.write(PageId(p)).unwrap());
        } else {
            drop(pool.read(PageId(p)).unwrap());
        }
    }
    pool.stats().misses
}

/// Replays `trace` (pages `0..pages`) through `policy` alone: hits, misses, victims, the
/// batch members' `on_clean`. Returns the misses.
fn replay_policy(policy: &mut dyn Policy, trace: &[(bool, u64)], pages: usize) -> u64 {
    let frames = policy.frames_count();
    let (mut frame_of, mut page_of) = (vec![u32::MAX; pages], vec![0usize; frames]);
    let mut dirty = vec![false; frames];
    let mut free: Vec<u32> = (0..frames as u32).rev().collect();
    let (mut misses, mut batch) = (0, Vec::new());
    for &(w, p) in trace {
        let access = if w { Access::Write } else { Access::Read };
        let f = frame_of[p as usize];
        if f != u32::MAX {
            dirty[f as usize] |= w;
            policy.on_hit(FrameId(f), access);
            continue;
        }
        misses += 1;
        policy.prepare_miss(PageId(p), access);
        let f = free.pop().unwrap_or_else(|| {
            let v = match policy.choose_victim(&|_| true).unwrap() {
                Victim::Evict(v) => v,
                Victim::Batch { evict, write_back } => {
                    batch.extend_from_slice(write_back);
                    evict
                }
            };
            for m in batch.drain(..) {
                if m != v && dirty[m.index()] {
                    dirty[m.index()] = false;
                    policy.on_clean(m);
                }
            }
            frame_of[page_of[v.index()]] = u32::MAX;
            policy.on_remove(v);
            v.0
        });
        (frame_of[p as usize], page_of[f as usize], dirty[f as usize]) = (f, p as usize, w);
        policy.on_insert(FrameId(f), PageId(p), access);
    }
    misses
}

fn policies_alone(c: &mut Criterion, trace: &[(bool, u64)]) {
    let pages = trace.iter().map(|e| e.1 as usize + 1).max().unwrap_or(0);
    let ctx = PolicyContext::new(FRAMES, 8192, DeviceFacts::default());
    let mut g = c.benchmark_group("tpcc-policy-alone-1242-frames");
    g.sample_size(10);
    g.throughput(Throughput::Elements(trace.len() as u64));
    for name in ["lru", "fd-buffer", "fd-buffer:cost=clustered"] {
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| replay_policy(&mut *build_named(name, &ctx).unwrap(), trace, pages))
        });
    }
    g.finish();
}

fn fd_options(clustering: Clustering) -> FdBufferOptions {
    FdBufferOptions::default()
        .fixed_r(136.0)
        .clustering(clustering)
}

fn advisor_overhead(trace: &[(bool, u64)]) {
    let origin = Instant::now();
    let clock = Arc::new(move || origin.elapsed().as_nanos() as u64);
    for (name, c) in [
        ("fd-buffer", Clustering::Off),
        (
            "fd-buffer drain-64",
            Clustering::Drain { cluster_pages: 64 },
        ),
    ] {
        let p = FdBuffer::new(FRAMES, fd_options(c).clock(clock.clone())).unwrap();
        let pool = BufferPool::new(
            support::small_store(),
            FRAMES,
            Box::new(p) as Box<dyn Policy>,
        )
        .unwrap();
        let t0 = Instant::now();
        for &(w, pg) in trace {
            if w {
                drop(pool.write(PageId(pg)).unwrap());
            } else {
                drop(pool.read(PageId(pg)).unwrap());
            }
        }
        let total_ns = t0.elapsed().as_nanos() as f64;
        let rep = pool.policy_report();
        let get = |k: &str| rep.iter().find(|e| e.0 == k).map_or(0.0, |e| e.1);
        eprintln!(
            "{name}: advisor {:.3} ms in {} windows = {:.4} % of {:.1} ms replay",
            get("advisor_ns") / 1e6,
            get("windows"),
            100.0 * get("advisor_ns") / total_ns,
            total_ns / 1e6
        );
    }
}

fn bench(c: &mut Criterion) {
    let Some(trace) = support::tpcc_compact() else {
        eprintln!("TPC-C trace absent: nothing to bench");
        return;
    };
    policies_alone(c, trace);
    let trace = &trace[..REFS.min(trace.len())];
    flashbuf_core::buildinfo::BuildInfo::record_bench(
        "fd_buffer",
        serde_json::json!({
            "trace": "../shared/traces/tpcc-pg15-w4.pagetrace.csv.zst (compacted)",
            "references": trace.len(), "frames": 1242,
        }),
    );
    advisor_overhead(trace);
    let mut g = c.benchmark_group("tpcc-1M-refs-1242-frames");
    g.sample_size(10);
    g.throughput(Throughput::Elements(trace.len() as u64));
    g.bench_function(BenchmarkId::from_parameter("lru"), |b| {
        b.iter(|| replay(Box::new(Lru::new(FRAMES)), trace))
    });
    for (name, cl) in [
        ("fd-buffer", Clustering::Off),
        (
            "fd-buffer-drain-64",
            Clustering::Drain { cluster_pages: 64 },
        ),
        (
            "fd-buffer-batch-64",
            Clustering::Batch { cluster_pages: 64 },
        ),
    ] {
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| {
                let p = FdBuffer::new(FRAMES, fd_options(cl)).unwrap();
                replay(Box::new(p), trace)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
