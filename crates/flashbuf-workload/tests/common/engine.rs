//! Pools for the engine workloads: every policy over the direct store on a memory device
//! or a small simulated device.

use flashbuf_device::{MemDevice, SimDevice};
use flashbuf_pool::policy::{Casa, Cfdc, Cflru, FdBuffer, FdBufferOptions, Lru, Policy};
use flashbuf_pool::BufferPool;
use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore};
use flashbuf_workload::{EnginePool, EngineStore};

/// The policies every engine test runs.
pub const POLICIES: &[&str] = &["lru", "cflru", "cfdc", "casa", "fd-buffer"];

/// The devices every engine test runs on.
pub const DEVICES: &[&str] = &["memory", "sim:mtron"];

/// A policy by name, through its constructor.
pub fn policy(name: &str, frames: usize) -> Box<dyn Policy> {
    match name {
        "lru" => Box::new(Lru::new(frames)),
        "cflru" => Box::new(Cflru::new(frames)),
        "cfdc" => Box::new(Cfdc::new(frames)),
        "casa" => Box::new(Casa::new(frames, 1.0, 8.0).expect("casa")),
        "fd-buffer" => Box::new(FdBuffer::new(frames, FdBufferOptions::default()).expect("fd")),
        other => panic!("unknown policy {other}"),
    }
}

/// A direct store of 4 KiB pages on `device` (`memory`, or `sim:PROFILE` of 48 MiB).
pub fn store(device: &str) -> Box<dyn PageStore> {
    let cfg = DirectStoreConfig {
        page_size: 4096,
        grow_bytes: 1 << 20,
        ..Default::default()
    };
    match device.strip_prefix("sim:") {
        None => Box::new(DirectStore::create(MemDevice::new(0), cfg).expect("store")),
        Some(p) => {
            let dev = SimDevice::by_name(p, 48 << 20, 1).expect("sim device");
            Box::new(DirectStore::create(dev, cfg).expect("store"))
        }
    }
}

/// An engine pool of `frames` frames.
pub fn pool(policy_name: &str, device: &str, frames: usize) -> EnginePool {
    BufferPool::new(
        EngineStore::new(store(device)),
        frames,
        policy(policy_name, frames),
    )
    .expect("pool")
}
