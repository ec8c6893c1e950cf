#![allow(clippy::unwrap_used)]
//! FD-Buffer's `check_invariants` after every call, driven directly (no pool) with pinned
//! frames, flushes and batch write-backs; victims must be evictable members, and the pool
//! sizes must approach their targets as Algorithm 2 says.

use flashbuf_core::{FrameId, PageId};
use flashbuf_pool::policy::fd_buffer::{
    ClusterVictim, Clustering, FdBuffer, FdBufferOptions, OrderKind,
};
use flashbuf_pool::policy::{Access, Policy, Victim};
use proptest::prelude::*;
use std::collections::HashMap;

fn drive(frames: usize, opts: FdBufferOptions, ops: &[(u8, u64, u8)]) {
    let mut p = FdBuffer::from_options(frames, opts).unwrap();
    let mut table: HashMap<u64, FrameId> = HashMap::new();
    let mut holds: Vec<Option<u64>> = vec![None; frames];
    let mut dirty = vec![false; frames];
    let mut free: Vec<FrameId> = (0..frames as u32).rev().map(FrameId).collect();
    for &(kind, page, pin) in ops {
        let access = if kind % 3 == 0 {
            Access::Write
        } else {
            Access::Read
        };
        if kind == 7 {
            // A flush: every dirty page becomes clean, stays resident.
            for (f, d) in dirty.iter_mut().enumerate() {
                if *d {
                    *d = false;
                    p.on_clean(FrameId(f as u32));
                }
            }
            p.check_invariants().unwrap();
            continue;
        }
        if let Some(&f) = table.get(&page) {
            p.on_hit(f, access);
            dirty[f.index()] |= access.is_write();
        } else {
            let f = if let Some(f) = free.pop() {
                f
            } else {
                let pinned = FrameId(u32::from(pin) % frames as u32);
                let evictable = |f: FrameId| f != pinned || frames == 1;
                p.prepare_miss(PageId(u64::MAX), access);
                let v = p.choose_victim(&evictable).expect("a victim");
                let (victim, batch): (FrameId, Vec<FrameId>) = match v {
                    Victim::Evict(f) => (f, vec![]),
                    Victim::Batch { evict, write_back } => (evict, write_back.to_vec()),
                };
                assert!(evictable(victim) && holds[victim.index()].is_some());
                // Batches are sorted by page number.
                if !batch.is_empty() {
                    assert!(batch
                        .windows(2)
                        .all(|w| holds[w[0].index()] < holds[w[1].index()]));
                }
                for b in batch {
                    assert!(dirty[b.index()], "batch member {b} is clean");
                    if b != victim {
                        dirty[b.index()] = false;
                        p.on_clean(b);
                    }
                }
                p.on_remove(victim);
                table.remove(&holds[victim.index()].take().unwrap());
                dirty[victim.index()] = false;
                victim
            };
            p.on_insert(f, PageId(page), access);
            holds[f.index()] = Some(page);
            dirty[f.index()] = access.is_write();
            table.insert(page, f);
        }
        p.check_invariants().unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn invariants_hold_after_every_call(
        frames in 1usize..12,
        window in 1u64..30,
        group in prop_oneof![Just(1usize), Just(3), Just(64)],
        clus in 0u8..3,
        fifo in any::<bool>(),
        order_victim in any::<bool>(),
        ops in proptest::collection::vec((0u8..8, 0u64..40, any::<u8>()), 1..400),
    ) {
        let clustering = match clus {
            0 => Clustering::Off,
            1 => Clustering::Drain { cluster_pages: 4 },
            _ => Clustering::Batch { cluster_pages: 4 },
        };
        let opts = FdBufferOptions::default()
            .window_refs(window)
            .group_size(group)
            .fixed_r(50.0)
            .clustering(clustering)
            .cluster_victim(if order_victim { ClusterVictim::OrderVictim } else { ClusterVictim::Priority })
            .inner(if fifo { OrderKind::Fifo } else { OrderKind::Lru })
            .track_accuracy(true);
        drive(frames, opts, &ops);
    }
}

#[test]
fn pools_follow_algorithm_2() {
    // M = 4, M_c = 2 (initial ratio 0.5, long window). Fill with 3 clean + 1 dirty.
    let mut p = FdBuffer::new(
        4,
        FdBufferOptions::default().fixed_r(10.0).window_refs(1_000),
    )
    .unwrap();
    p.on_insert(FrameId(0), PageId(100), Access::Write);
    for f in 1..4u32 {
        p.on_insert(FrameId(f), PageId(u64::from(f)), Access::Read);
    }
    assert_eq!((p.pool_sizes(), p.m_c()), ((3, 1), 2));
    // Write miss, |C| = 3 > M_c: FindVictimForDirty takes C's LRU page (frame 1).
    p.prepare_miss(PageId(u64::MAX), Access::Write);
    assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
    p.on_remove(FrameId(1));
    p.on_insert(FrameId(1), PageId(101), Access::Write);
    assert_eq!(p.pool_sizes(), (2, 2));
    // |C| = M_c: a write miss now evicts from D (frame 0, LRU dirty page) ...
    p.prepare_miss(PageId(u64::MAX), Access::Write);
    assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
    // ... and a read miss from C (frame 2).
    p.prepare_miss(PageId(u64::MAX), Access::Read);
    assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(2))));
    // A write hit moves a clean page to D: |D| = 3 > M_d, so a read miss evicts from D.
    p.on_hit(FrameId(3), Access::Write);
    assert_eq!(p.pool_sizes(), (1, 3));
    p.prepare_miss(PageId(u64::MAX), Access::Read);
    assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
    // Unannounced misses are taken as reads and counted (a reference clears the
    // announcement).
    p.on_hit(FrameId(3), Access::Read);
    assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
    assert_eq!(p.advisor_stats().unhinted_misses, 1);
    p.check_invariants().unwrap();
}
