#![allow(clippy::unwrap_used)]
mod common;
mod fd_buffer_support;
use common::mem_store;
use flashbuf_core::PageId;
use flashbuf_pool::policy::fd_buffer::*;
use flashbuf_pool::policy::offline::*;
use flashbuf_pool::policy::{Access, Lru, Policy};
use flashbuf_pool::BufferPool;

fn run(p: Box<dyn Policy>, h: Option<FdBufferHandle>, frames: usize, trace: &[(bool, u64)]) -> (flashbuf_pool::PoolStats, Vec<(&'static str, f64)>, f64) {
    let pool = BufferPool::new(mem_store(512), frames, p).unwrap();
    let t0 = std::time::Instant::now();
    for &(w, pg) in trace {
        if let Some(h) = &h { h.set_next_access(if w { Access::Write } else { Access::Read }); }
        if w { drop(pool.write(PageId(pg)).unwrap()); } else { drop(pool.read(PageId(pg)).unwrap()); }
    }
    let dt = t0.elapsed().as_secs_f64();
    (pool.stats(), pool.policy_report(), trace.len() as f64 / dt)
}

#[test]
fn explore() {
    let trace = fd_buffer_support::tpcc_compact().unwrap();
    let n: usize = std::env::var("N").ok().and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let trace = &trace[..n.min(trace.len())];
    let frames: usize = std::env::var("F").ok().and_then(|s| s.parse().ok()).unwrap_or(1242);
    let r: f64 = std::env::var("R").ok().and_then(|s| s.parse().ok()).unwrap_or(136.0);
    let cost = |s: &flashbuf_pool::PoolStats| s.page_reads as f64 + r * s.page_writes as f64;
    let (s, _, rps) = run(Box::new(Lru::new(frames)), None, frames, trace);
    println!("LRU reads {} writes {} cost {:.0} refs/s {:.0}", s.page_reads, s.page_writes, cost(&s), rps);
    for (name, opts) in [
        ("fdb", FdBufferOptions::default().fixed_r(r).track_accuracy(true)),
        ("fdb-z1", FdBufferOptions::default().fixed_r(r).group_size(1).track_accuracy(true)),
        ("fdb-drain64", FdBufferOptions::default().fixed_r(r).clustering(Clustering::Drain{cluster_pages:64})),
        ("fdb-batch64", FdBufferOptions::default().fixed_r(r).clustering(Clustering::Batch{cluster_pages:64})),
    ] {
        let p = FdBuffer::new(frames, opts).unwrap();
        let h = p.handle();
        let (s, rep, rps) = run(Box::new(p), Some(h.clone()), frames, trace);
        println!("{name} reads {} writes {} cost {:.0} refs/s {:.0}", s.page_reads, s.page_writes, cost(&s), rps);
        println!("   {:?}", rep);
        let recs = h.window_records();
        if !recs.is_empty() {
            println!("   errors {:?}", mean_errors(&recs));
            let mcs: Vec<usize> = recs.iter().step_by(recs.len()/20+1).map(|r| r.m_c).collect();
            println!("   m_c samples {:?}", mcs);
        }
    }
    let b = bounds(trace, frames, CostModel::with_r(r));
    println!("bounds lower {:.0} upper {:.0} min_misses {} wlb {} best {:?}", b.lower, b.upper, b.min_misses, b.min_write_backs, b.best_rule);
    for c in &b.candidates { println!("   {:?} {:?} {:.0}", c.0, c.1, c.2); }
}
