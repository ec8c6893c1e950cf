//! Shared harness of the policy differential tests: random traces with read/write mixes,
//! pages drawn from a few ranges (so that clusters hold several pages), pins held across
//! fixes and occasional flushes, replayed through the real pool; policies and their naive
//! references built from their specs through the policy table.
#![allow(dead_code)]

use crate::common::{Call, Recording};
use flashbuf_core::config::Spec;
use flashbuf_core::{DeviceFacts, PageId};
use flashbuf_device::MemDevice;
use flashbuf_pool::policy::registry::{self, PolicyContext};
use flashbuf_pool::policy::Policy;
use flashbuf_pool::{BufferPool, PageReadGuard, PoolStats};
use flashbuf_store::{DirectStore, DirectStoreConfig};
use proptest::prelude::*;
use std::collections::VecDeque;

/// One step of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Fix for reading and release.
    Read(u64),
    /// Fix for writing (stamp the page) and release.
    Write(u64),
    /// Fix for reading and keep the pin for a while (a pinned, unevictable frame).
    Hold(u64),
    /// Write back every dirty page (the policy sees `on_clean` for each).
    Flush,
}

/// Bases of the page ranges: with clusters of 64 pages, 60..72 straddles clusters 0 and 1.
pub const BASES: [u64; 4] = [0, 60, 130, 4100];

/// A random trace: a write percentage, then steps over pages `BASES[b] + 0..20`.
pub fn trace(max_len: usize) -> impl Strategy<Value = Vec<Op>> {
    trace_over(max_len, 20)
}

/// A random trace over pages `BASES[b] + 0..span`.
pub fn trace_over(max_len: usize, span: u64) -> impl Strategy<Value = Vec<Op>> {
    (
        0u8..=100,
        proptest::collection::vec((0u8..100, 0u8..100, 0usize..4, 0..span), 1..max_len),
    )
        .prop_map(|(wpct, steps)| {
            steps
                .into_iter()
                .map(|(kind, rw, b, off)| {
                    let p = BASES[b] + off;
                    match kind {
                        0..2 => Op::Flush,
                        2..10 => Op::Hold(p),
                        _ if rw < wpct => Op::Write(p),
                        _ => Op::Read(p),
                    }
                })
                .collect()
        })
}

type Pool = BufferPool<Recording<DirectStore<MemDevice>>>;

/// A small in-memory direct store (grows 256 KiB at a time: the traces' pages fit in a
/// few steps, and no test pays for zeroing the default 64 MiB).
pub fn small_store() -> DirectStore<MemDevice> {
    let cfg = DirectStoreConfig {
        page_size: 512,
        grow_bytes: 256 << 10,
        ..Default::default()
    };
    DirectStore::create(MemDevice::new(0), cfg).unwrap()
}

/// Replays `ops` through a pool of `frames` frames managed by `policy`; checks the pool's
/// and the policy's invariants after every step. Returns the counters and every store
/// call in order.
pub fn replay(policy: Box<dyn Policy>, frames: usize, ops: &[Op]) -> (PoolStats, Vec<Call>) {
    let pool: Pool = BufferPool::new(Recording::new(small_store()), frames, policy).unwrap();
    let max_held = frames / 2;
    {
        let mut held: VecDeque<PageReadGuard<'_, _>> = VecDeque::new();
        for &op in ops {
            // Never fix a page this thread already pins (the latch is not reentrant).
            if let Op::Read(p) | Op::Write(p) | Op::Hold(p) = op {
                held.retain(|g| g.page_id() != PageId(p));
            }
            match op {
                Op::Read(p) => drop(pool.read(PageId(p)).unwrap()),
                Op::Write(p) => pool.write(PageId(p)).unwrap().write(0, &p.to_le_bytes()),
                Op::Hold(p) => {
                    if held.len() >= max_held {
                        held.pop_front();
                    }
                    if max_held > 0 {
                        held.push_back(pool.read(PageId(p)).unwrap());
                    } else {
                        drop(pool.read(PageId(p)).unwrap());
                    }
                }
                Op::Flush => {
                    held.clear();
                    pool.flush_all().unwrap();
                }
            }
            pool.check_invariants().unwrap();
        }
    }
    pool.check_invariants().unwrap();
    (pool.stats(), pool.store().take())
}

/// Page size of the harness's store.
pub const PAGE_SIZE: usize = 512;

/// The context policies are built with: `frames` frames of [`PAGE_SIZE`] bytes on a device
/// with `facts`.
pub fn context(frames: usize, facts: DeviceFacts) -> PolicyContext<'static> {
    PolicyContext::new(frames, PAGE_SIZE, facts)
}

/// The policy named by `spec` and its naive reference, both built through the policy
/// table (`flashbuf_pool::policy::POLICIES`). Panics if the spec does not parse or the
/// entry has no reference for it.
pub fn pair(spec: &str, ctx: &PolicyContext<'_>) -> (Box<dyn Policy>, Box<dyn Policy>) {
    let parsed = Spec::parse(spec, |_| false).unwrap();
    let (_, factory) = registry::parse(&parsed).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let fast = factory.build(ctx).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let naive = factory
        .build_reference(ctx)
        .unwrap_or_else(|| panic!("{spec}: no naive reference"))
        .unwrap_or_else(|e| panic!("{spec} (reference): {e}"));
    (fast, naive)
}
