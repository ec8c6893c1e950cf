#![allow(clippy::unwrap_used)]
//! The write-clustering decorator by hand-worked examples through the pool: batch mode
//! writes the victim's cluster in one sorted batch, drain mode empties the cluster over
//! the following faults, the metric choice picks CFDC's lowest-priority cluster, and the
//! configuration is checked.

mod common;

use common::{mem_store, Call, Recording};
use flashbuf_core::{FrameId, PageId};
use flashbuf_device::MemDevice;
use flashbuf_pool::policy::{
    Access, ClusterChoice, Clustered, ClusteringConfig, Lru, Policy, Victim,
};
use flashbuf_pool::BufferPool;
use flashbuf_store::DirectStore;

type Pool = BufferPool<Recording<DirectStore<MemDevice>>>;

fn pool(cfg: ClusteringConfig, frames: usize) -> Pool {
    let p = Clustered::new(Lru::new(frames), cfg).unwrap();
    BufferPool::new(Recording::new(mem_store(512)), frames, Box::new(p)).unwrap()
}

fn write(p: &Pool, pg: u64) {
    p.write(PageId(pg)).unwrap().write(0, &pg.to_le_bytes());
}

fn read(p: &Pool, pg: u64) {
    drop(p.read(PageId(pg)).unwrap());
}

fn written(calls: &[Call]) -> Vec<Vec<u64>> {
    calls
        .iter()
        .filter_map(|c| match c {
            Call::Write(p, _) => Some(vec![p.0]),
            Call::Batch(ps) => Some(ps.iter().map(|p| p.0).collect()),
            _ => None,
        })
        .collect()
}

#[test]
fn batch_mode_writes_the_cluster_sorted_in_one_batch() {
    let p = pool(ClusteringConfig::batch(8), 6);
    // LRU order: 13 (victim) 9 20 15 11(clean) 12; cluster 1 = pages 8..16.
    for pg in [13, 9, 20, 15] {
        write(&p, pg);
    }
    read(&p, 11);
    write(&p, 12);
    p.store().take();
    read(&p, 100);
    // 13 goes; 9, 12, 13, 15 (dirty, cluster 1) are written together, by page number.
    assert_eq!(written(&p.store().take()), vec![vec![9, 12, 13, 15]]);
    let s = p.stats();
    assert_eq!((s.page_writes, s.write_batches, s.evictions), (4, 1, 1));
    p.check_invariants().unwrap();
    // 9, 12, 15 are clean now: the next victim (9) costs nothing.
    read(&p, 101);
    assert_eq!(written(&p.store().take()), Vec::<Vec<u64>>::new());
}

#[test]
fn drain_mode_empties_the_cluster_over_the_following_faults() {
    let p = pool(ClusteringConfig::drain(8), 6);
    for pg in [13, 9, 20, 15] {
        write(&p, pg);
    }
    read(&p, 11);
    write(&p, 12);
    p.store().take();
    // Fault 1: LRU victim 13 (dirty) leaves alone; cluster 1 starts draining.
    read(&p, 100);
    // Fault 2: LRU would take 9 (cluster 1 anyway). Fault 3: LRU would take 20 (cluster 2),
    // but cluster 1 still holds 12 and 15 (in the order they became dirty: 15, then 12).
    read(&p, 101);
    read(&p, 102);
    read(&p, 103);
    assert_eq!(
        written(&p.store().take()),
        vec![vec![13], vec![9], vec![15], vec![12]]
    );
    // Fault 5: cluster 1 is empty; the LRU victim is 20 (dirty): a new drain begins.
    read(&p, 104);
    assert_eq!(written(&p.store().take()), vec![vec![20]]);
    p.check_invariants().unwrap();
}

#[test]
fn clean_victims_are_not_held_back_by_a_drain() {
    let p = pool(ClusteringConfig::drain(8), 3);
    write(&p, 1);
    read(&p, 40);
    write(&p, 2);
    p.store().take();
    read(&p, 50); // victim 1 (dirty): cluster 0 drains
    read(&p, 51); // LRU victim 40 is clean: taken, cluster 0 still holds 2
    read(&p, 52); // LRU victim 2
    assert_eq!(written(&p.store().take()), vec![vec![1], vec![2]]);
    assert_eq!(p.stats().evictions, 3);
}

#[test]
fn metric_choice_takes_the_lowest_cfdc_priority() {
    let cfg = ClusteringConfig::drain(64).with_choice(ClusterChoice::Metric);
    let mut c = Clustered::new(Lru::new(6), cfg).unwrap();
    // Dirty in order: 0 (cluster 0), 64, 65, 66, 67 (cluster 1, sequential), 1 (cluster 0).
    for (f, pg) in [(0u32, 0u64), (1, 64), (2, 65), (3, 66), (4, 67), (5, 1)] {
        c.on_insert(FrameId(f), PageId(pg), Access::Write);
    }
    // globaltime 6. Cluster 0 {0, 1}: 1/(4·6) = 1/24; cluster 1 {64..67}: 3/(16·5) = 3/80.
    // 3/80 < 1/24: cluster 1 goes first (sequential and large), from its first page, even
    // though LRU's victim is page 0.
    let d = c.dirty_clusters();
    assert_eq!((d[0].cluster, d[0].numerator, d[0].denominator), (1, 3, 80));
    assert_eq!((d[1].cluster, d[1].numerator, d[1].denominator), (0, 1, 24));
    assert_eq!(c.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
    c.on_remove(FrameId(1));
    assert_eq!(c.choose_victim(&|_| true), Some(Victim::Evict(FrameId(2))));
    c.check_invariants().unwrap();
    // The victim choice: LRU's victim's cluster (0), first page in dirty order.
    let mut v = Clustered::new(Lru::new(6), ClusteringConfig::batch(64)).unwrap();
    for (f, pg) in [(0u32, 0u64), (1, 64), (2, 65), (3, 66), (4, 67), (5, 1)] {
        v.on_insert(FrameId(f), PageId(pg), Access::Write);
    }
    assert_eq!(
        v.choose_victim(&|f| f != FrameId(5)),
        Some(Victim::Evict(FrameId(0))),
        "its cluster mate is pinned: a batch of one is a plain eviction"
    );
}

#[test]
fn configuration_is_checked() {
    assert!(Clustered::new(Lru::new(4), ClusteringConfig::batch(0)).is_err());
    assert!(Clustered::new(Lru::new(4), ClusteringConfig::batch(1 << 20)).is_err());
    assert_eq!(
        ClusteringConfig::cluster_size_of(256 << 10, 4096).unwrap(),
        64
    );
    assert!(ClusteringConfig::cluster_size_of(1000, 4096).is_err());
}
