//! Runs one engine workload and prints its result as JSON (until `flashbuf run` exists).
//!
//! ```text
//! cargo run --release -p flashbuf-workload --example engine_run -- \
//!     WORKLOAD [threads=N] [txns=N | seconds=S] [frames=N] [policy=lru] \
//!     [device=memory|sim:PROFILE] [capacity_mib=N] [page=4096] [seed=N] [exact=true]
//! ```
//! `exact=true` also diffs every write-back against the page's previous image (memory:
//! one copy of the data).

use flashbuf_device::{MemDevice, SimDevice};
use flashbuf_pool::policy::{Casa, Cfdc, Cflru, FdBuffer, FdBufferOptions, Lru, Policy};
use flashbuf_pool::BufferPool;
use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore};
use flashbuf_workload::{parse_workload, run, EngineStore, RunConfig, RunLimit};
use std::collections::BTreeMap;

fn policy(name: &str, frames: usize) -> Result<Box<dyn Policy>, String> {
    Ok(match name {
        "lru" => Box::new(Lru::new(frames)),
        "cflru" => Box::new(Cflru::new(frames)),
        "cfdc" => Box::new(Cfdc::new(frames)),
        "casa" => Box::new(Casa::new(frames, 1.0, 8.0).map_err(|e| e.to_string())?),
        "fd-buffer" => {
            Box::new(FdBuffer::new(frames, FdBufferOptions::default()).map_err(|e| e.to_string())?)
        }
        other => return Err(format!("unknown policy {other}")),
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let spec = args
        .next()
        .ok_or("usage: engine_run WORKLOAD [key=value ...]")?;
    let opts: BTreeMap<String, String> = args
        .map(|a| match a.split_once('=') {
            Some((k, v)) => Ok((k.to_string(), v.to_string())),
            None => Err(format!("argument '{a}' is not key=value")),
        })
        .collect::<Result<_, _>>()?;
    let get = |k: &str, d: &str| opts.get(k).cloned().unwrap_or_else(|| d.to_string());
    let threads: usize = get("threads", "1").parse()?;
    let frames: usize = get("frames", "1024").parse()?;
    let page: usize = get("page", "4096").parse()?;
    let seed: u64 = get("seed", "1").parse()?;
    let limit = match opts.get("seconds") {
        Some(s) => RunLimit::Seconds(s.parse()?),
        None => RunLimit::Transactions(get("txns", "10000").parse()?),
    };
    let cfg = DirectStoreConfig::with_page_size(page);
    let device = get("device", "memory");
    let store: Box<dyn PageStore> = match device.strip_prefix("sim:") {
        None => Box::new(DirectStore::create(MemDevice::new(0), cfg)?),
        Some(p) => {
            let mib: u64 = get("capacity_mib", "1024").parse()?;
            Box::new(DirectStore::create(
                SimDevice::by_name(p, mib << 20, seed)?,
                cfg,
            )?)
        }
    };
    let store = if get("exact", "false") == "true" {
        EngineStore::with_exact_diff(store)
    } else {
        EngineStore::new(store)
    };
    let pool = BufferPool::new(store, frames, policy(&get("policy", "lru"), frames)?)?;
    let w = parse_workload(&spec)?;
    let r = run(
        &*w,
        &pool,
        &RunConfig {
            threads,
            limit,
            seed,
        },
    )?;
    println!("{}", serde_json::to_string_pretty(&r)?);
    if !r.consistency.ok() {
        return Err(format!("consistency failed: {:?}", r.consistency.failed).into());
    }
    Ok(())
}
