//! Runs one engine workload over a buffer pool on each of several stores (built through
//! the store table) and compares their page I/O: ICL against the direct store (issue 15).
//!
//! ```text
//! cargo run --release -p flashbuf-workload --example icl_vs_direct -- \
//!     WORKLOAD [txns=N] [frames=N] [device=memory|sim:PROFILE] [capacity_mib=N] \
//!     [stores='direct;direct@1600;icl;icl:wob=256KiB'] [page=4096] [seed=N]
//! ```
//! `SPEC@N` runs that store with a pool of `N` frames instead of `frames` (the paper gives
//! the direct store's buffer the WOB and the mapping table's memory, §3).
//! Counted from the end of the load (after its sync) to the end of the run (after the
//! final flush and sync), one driver thread (deterministic): the device's page reads and
//! writes (every request is one page), its erases and time, each store's own counters by
//! kind, the dirty ranges of the pool's write-backs, and ICL's memory (WOB capacity and
//! mapping table, per page of the database).

use flashbuf_device::{Device, MemDevice, SimDevice};
use flashbuf_pool::policy::Lru;
use flashbuf_pool::BufferPool;
use flashbuf_store::registry::{parse_text, StoreContext};
use flashbuf_store::PageStore;
use flashbuf_workload::{parse_workload, run_session, EngineStore, RunConfig, RunLimit};
use std::collections::BTreeMap;

/// What one store's run measured.
struct Row {
    store: String,
    reads: u64,
    writes: u64,
    erases: u64,
    device_ms: f64,
    misses: u64,
    write_backs: u64,
    dirty_mean: f64,
    dirty_p50: u64,
    counters: Vec<(String, u64)>,
    after: Vec<(String, f64)>,
    db_pages: u64,
}

fn delta(a: &[(String, f64)], b: &[(String, f64)]) -> Vec<(String, u64)> {
    b.iter()
        .map(|(name, value)| {
            let before = a.iter().find(|x| &x.0 == name).map_or(0.0, |x| x.1);
            (name.clone(), (value - before).max(0.0) as u64)
        })
        .collect()
}

fn device(name: &str, mib: u64, seed: u64) -> Result<Box<dyn Device>, String> {
    match name.strip_prefix("sim:") {
        None if name == "memory" => Ok(Box::new(MemDevice::new(0))),
        None => Err(format!("device '{name}': memory or sim:PROFILE")),
        Some(p) => Ok(Box::new(
            SimDevice::by_name(p, mib << 20, seed).map_err(|e| e.to_string())?,
        )),
    }
}

fn measure(
    spec: &str,
    workload: &str,
    opts: &BTreeMap<String, String>,
) -> Result<Row, Box<dyn std::error::Error>> {
    let get = |k: &str, d: &str| opts.get(k).cloned().unwrap_or_else(|| d.to_string());
    let (spec, frames) = match spec.split_once('@') {
        Some((s, n)) => (s, n.parse()?),
        None => (spec, get("frames", "1024").parse()?),
    };
    let page: usize = get("page", "4096").parse()?;
    let seed: u64 = get("seed", "1").parse()?;
    let txns: u64 = get("txns", "20000").parse()?;
    let dev = device(
        &get("device", "memory"),
        get("capacity_mib", "2048").parse()?,
        seed,
    )?;
    let parsed = parse_text(spec)?;
    let store = parsed.factory.create(dev, &StoreContext::new(page))?;
    let pool = BufferPool::new(EngineStore::new(store), frames, Box::new(Lru::new(frames)))?;
    let w = parse_workload(workload)?;
    let session = w.load(&pool, seed)?;
    pool.sync()?;
    let (c0, d0) = (pool.store().report(), pool.store().device_stats());
    let cfg = RunConfig {
        threads: 1,
        limit: RunLimit::Transactions(txns),
        seed,
    };
    let r = run_session(&*w, &*session, &pool, &cfg)?;
    if !r.consistency.ok() {
        return Err(format!("{spec}: consistency failed: {:?}", r.consistency.failed).into());
    }
    let (c1, d1) = (pool.store().report(), pool.store().device_stats());
    let d = d1 - d0;
    let after = c1.clone();
    Ok(Row {
        store: format!("{spec} ({frames} frames)"),
        reads: d.reads,
        writes: d.writes,
        erases: d.erases,
        device_ms: d.device_time_us / 1e3,
        misses: r.pool.misses,
        write_backs: r.pool.page_writes,
        dirty_mean: r.write_backs.run.bytes_mean,
        dirty_p50: r.write_backs.run.bytes_p50,
        counters: delta(&c0, &c1),
        after,
        // Every page the workload created was first read as never written.
        db_pages: pool.store().stats().unwritten_reads.max(1),
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let workload = args
        .next()
        .ok_or("usage: icl_vs_direct WORKLOAD [key=value ...]")?;
    let opts: BTreeMap<String, String> = args
        .map(|a| match a.split_once('=') {
            Some((k, v)) => Ok((k.to_string(), v.to_string())),
            None => Err(format!("argument '{a}' is not key=value")),
        })
        .collect::<Result<_, _>>()?;
    let stores = opts
        .get("stores")
        .cloned()
        .unwrap_or_else(|| "direct;icl".to_string());
    let mut rows = Vec::new();
    for spec in stores.split(';').filter(|s| !s.is_empty()) {
        rows.push(measure(spec, &workload, &opts)?);
    }
    let base = &rows[0];
    println!(
        "| store | page reads | page writes | reads ÷ {0} | writes ÷ {0} | erases | device ms | pool misses | write-backs | dirty bytes mean / p50 |",
        base.store
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| `{}` | {} | {} | {:.3} | {:.3} | {} | {:.1} | {} | {} | {:.0} / {} |",
            r.store,
            r.reads,
            r.writes,
            r.reads as f64 / base.reads.max(1) as f64,
            r.writes as f64 / base.writes.max(1) as f64,
            r.erases,
            r.device_ms,
            r.misses,
            r.write_backs,
            r.dirty_mean,
            r.dirty_p50
        );
    }
    for r in &rows {
        if r.counters.is_empty() {
            continue;
        }
        println!("\n`{}` counters during the run:", r.store);
        let line: Vec<String> = r
            .counters
            .iter()
            .filter(|(_, v)| *v > 0)
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        println!("{}", line.join(" "));
        let now = |n: &str| r.after.iter().find(|c| c.0 == n).map_or(0, |c| c.1 as u64);
        let (wob, map, entries) = (
            now("wob_capacity_bytes"),
            now("mapping_memory_bytes"),
            now("mapping_entries"),
        );
        println!(
            "memory: WOB {wob} B (peak {} B) + mapping table {map} B ({entries} entries, {:.1} B each) = {:.2} B per page of a {}-page database",
            now("wob_peak_bytes"),
            map as f64 / entries.max(1) as f64,
            (wob + map) as f64 / r.db_pages as f64,
            r.db_pages
        );
    }
    Ok(())
}
