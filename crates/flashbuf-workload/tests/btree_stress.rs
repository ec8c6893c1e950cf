#![allow(clippy::unwrap_used)]
//! Many threads on two trees of one space, through a pool small enough to evict all the
//! time. Each thread owns the keys that end in its number (keys of all threads interleave
//! in the same leaves, so splits and merges race) and keeps a model of them; scans over the
//! whole key space must show the thread's own keys exactly as its model has them. At the
//! end: every tree's invariants, the space's accounting, and the union of the models.

mod common;

use common::{mem_pool, SPACE};
use flashbuf_core::rng::SplitMix64;
use flashbuf_workload::btree::{check_space, BTree, PageSpace, TreeConfig, TreeId};
use std::collections::BTreeMap;
use std::ops::Bound;

const THREADS: u8 = 4;
const OPS: u32 = 12_000;

fn key(n: u64, thread: u8, pad: usize) -> Vec<u8> {
    let mut k = (n as u16).to_be_bytes().to_vec();
    k.push(thread);
    k.extend(std::iter::repeat_n(b'p', pad));
    k
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn worker(trees: &[BTree<'_, common::MemStore>; 2], thread: u8, seed: u64) -> [Model; 2] {
    let mut rng = SplitMix64::new(seed ^ (u64::from(thread) << 32));
    let mut models = [Model::new(), Model::new()];
    for step in 0..OPS {
        let which = rng.below(2) as usize;
        let (t, m) = (&trees[which], &mut models[which]);
        let n = rng.below(1500);
        let k = key(n, thread, (n % 40) as usize);
        let roll = rng.below(100);
        if roll < 40 {
            let v = vec![thread; rng.below(120) as usize];
            assert_eq!(t.insert(&k, &v).unwrap(), !m.contains_key(&k));
            m.entry(k).or_insert(v);
        } else if roll < 55 {
            let v = vec![step as u8; rng.below(120) as usize];
            assert_eq!(t.put(&k, &v).unwrap(), m.contains_key(&k));
            m.insert(k, v);
        } else if roll < 85 {
            assert_eq!(
                t.delete(&k).unwrap(),
                m.remove(&k).is_some(),
                "delete {k:?}"
            );
        } else if roll < 97 {
            assert_eq!(t.get(&k).unwrap().as_ref(), m.get(&k));
        } else {
            let lo = key(n, 0, 0);
            let hi = key(n + 200, 0, 0);
            let mut mine = Vec::new();
            let mut last: Option<Vec<u8>> = None;
            t.scan(Bound::Included(&lo), Bound::Excluded(&hi), |k, v| {
                assert!(last.as_deref().is_none_or(|l| l < k), "scan out of order");
                last = Some(k.to_vec());
                if k[2] == thread {
                    mine.push((k.to_vec(), v.to_vec()));
                }
                true
            })
            .unwrap();
            let want: Vec<(Vec<u8>, Vec<u8>)> = m
                .range(lo..hi)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            assert_eq!(mine, want, "thread {thread} scan at step {step}");
        }
    }
    models
}

#[test]
fn four_threads_two_trees_small_pool() {
    for seed in [1u64, 2] {
        let (_dev, pool) = mem_pool(1024, 48);
        let space = PageSpace::create(&pool, SPACE, 1 << 20).unwrap();
        let cfg = TreeConfig::default();
        let trees = [
            BTree::create(&pool, space, TreeId(1), cfg).unwrap(),
            BTree::create(&pool, space, TreeId(2), cfg).unwrap(),
        ];
        let models: Vec<[Model; 2]> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..THREADS)
                .map(|t| {
                    let trees = &trees;
                    s.spawn(move || worker(trees, t, seed))
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (i, t) in trees.iter().enumerate() {
            let stats = t.check_invariants().unwrap();
            let mut union = Model::new();
            for m in &models {
                union.extend(m[i].iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            assert_eq!(stats.entries, union.len() as u64);
            let all = t.range(b"", None, usize::MAX).unwrap();
            let want: Vec<(Vec<u8>, Vec<u8>)> = union.into_iter().collect();
            assert!(
                all == want,
                "tree {i} differs from the union of the models (seed {seed})"
            );
            assert!(stats.height >= 2, "{stats:?}");
        }
        check_space(&space, &[&trees[0], &trees[1]]).unwrap();
        pool.check_invariants().unwrap();
        assert!(pool.stats().evictions > 1000, "{:?}", pool.stats());
    }
}
