#![allow(clippy::unwrap_used)]
//! The B+-tree against a `BTreeMap` model under proptest: inserts, puts, updates,
//! deletes, gets and ranges, with the pool synced, dropped and reopened over the same
//! store in between; the invariants and the space accounting are checked at every reopen
//! and at the end.
//!
//! The proptest seed is fixed (`FLASHBUF_BTREE_SEED` overrides it, `FLASHBUF_BTREE_CASES`
//! the number of cases) so that CI runs the same cases; soak runs set their own seeds.

mod common;

use common::{mem_pool, reopen, SPACE};
use flashbuf_workload::btree::{check_space, BTree, Change, PageSpace, TreeConfig, TreeId};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, RngSeed};
use std::collections::BTreeMap;

const PAGE: usize = 1024;
const FRAMES: usize = 12;

/// The proptest seed (`FLASHBUF_BTREE_SEED`, default fixed so that CI runs the same
/// cases; soak runs set their own).
fn seed() -> u64 {
    std::env::var("FLASHBUF_BTREE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0xB7EE_5EED)
}

/// Cases per run (`FLASHBUF_BTREE_CASES`, default 512: with the default seed, the first
/// case that redistributes internal nodes is past 128 and the first whose redistribution
/// splits the parent past 256; 512 cases take about a second).
fn cases() -> u32 {
    std::env::var("FLASHBUF_BTREE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

#[derive(Debug, Clone)]
enum Op {
    Insert(Vec<u8>, Vec<u8>),
    Put(Vec<u8>, Vec<u8>),
    Update(Vec<u8>, u8, usize),
    Delete(Vec<u8>),
    DeleteRange(Vec<u8>, usize),
    Get(Vec<u8>),
    Range(Vec<u8>, Vec<u8>, usize),
    Reopen,
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    // A small alphabet: collisions, shared prefixes, the empty key; long keys make the
    // internal nodes' fan-out small, so trees reach three and four levels.
    prop::collection::vec(
        prop::sample::select(vec![b'a', b'b', b'c', 0u8, 255u8]),
        0..12,
    )
    .prop_flat_map(|k| (Just(k), 0usize..100))
    .prop_map(|(mut k, pad)| {
        k.extend(std::iter::repeat_n(b'x', pad));
        k
    })
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    (0usize..100, any::<u8>()).prop_map(|(n, b)| vec![b; n])
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (key(), value()).prop_map(|(k, v)| Op::Insert(k, v)),
        3 => (key(), value()).prop_map(|(k, v)| Op::Put(k, v)),
        2 => (key(), any::<u8>(), 0usize..100).prop_map(|(k, b, n)| Op::Update(k, b, n)),
        3 => key().prop_map(Op::Delete),
        1 => (key(), 0usize..40).prop_map(|(k, n)| Op::DeleteRange(k, n)),
        2 => key().prop_map(Op::Get),
        1 => (key(), key(), 0usize..60).prop_map(|(a, b, n)| Op::Range(a, b, n)),
        1 => Just(Op::Reopen),
    ]
}

fn apply(t: &BTree<'_, common::MemStore>, model: &mut BTreeMap<Vec<u8>, Vec<u8>>, op: &Op) {
    match op {
        Op::Insert(k, v) => {
            let fresh = !model.contains_key(k);
            assert_eq!(t.insert(k, v).unwrap(), fresh);
            model.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Op::Put(k, v) => {
            assert_eq!(t.put(k, v).unwrap(), model.contains_key(k));
            model.insert(k.clone(), v.clone());
        }
        Op::Update(k, b, n) => {
            let new = vec![*b; *n];
            assert_eq!(
                t.update(k, |_| Some(new.clone())).unwrap(),
                model.contains_key(k)
            );
            if let Some(v) = model.get_mut(k) {
                *v = new;
            }
        }
        Op::Delete(k) => {
            assert_eq!(t.delete(k).unwrap(), model.remove(k).is_some());
        }
        Op::DeleteRange(k, n) => {
            let victims: Vec<Vec<u8>> = model
                .range(k.clone()..)
                .take(*n)
                .map(|e| e.0.clone())
                .collect();
            for v in victims {
                t.modify(&v, |old| {
                    assert!(old.is_some());
                    Change::Delete
                })
                .unwrap();
                model.remove(&v);
            }
        }
        Op::Get(k) => assert_eq!(t.get(k).unwrap().as_ref(), model.get(k)),
        Op::Range(a, b, n) => {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            let got = t.range(lo, Some(hi), *n).unwrap();
            let want: Vec<(Vec<u8>, Vec<u8>)> = model
                .range(lo.clone()..hi.clone())
                .take(*n)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            assert_eq!(got, want);
        }
        Op::Reopen => unreachable!("handled by the caller"),
    }
}

fn check_all(
    t: &BTree<'_, common::MemStore>,
    space: &PageSpace,
    model: &BTreeMap<Vec<u8>, Vec<u8>>,
) {
    let stats = t.check_invariants().unwrap();
    assert_eq!(stats.entries, model.len() as u64);
    check_space(space, &[t]).unwrap();
    let all = t.range(b"", None, usize::MAX).unwrap();
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(all, want);
}

proptest! {
    #![proptest_config(Config {
        cases: cases(),
        rng_seed: RngSeed::Fixed(seed()),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/btree_model.proptest-regressions",
        ))),
        ..Config::default()
    })]
    #[test]
    fn btree_matches_a_btreemap(ops in prop::collection::vec(op(), 1..700)) {
        let (dev, mut pool) = mem_pool(PAGE, FRAMES);
        let cfg = TreeConfig::default();
        let space = PageSpace::create(&pool, SPACE, 1 << 20).unwrap();
        BTree::create(&pool, space, TreeId(3), cfg).unwrap();
        let mut model = BTreeMap::new();
        for op in &ops {
            if let Op::Reopen = op {
                {
                    let t = BTree::open(&pool, space, TreeId(3), cfg).unwrap();
                    check_all(&t, &space, &model);
                }
                pool.sync().unwrap();
                drop(pool);
                pool = reopen(&dev, PAGE, FRAMES);
                let space2 = PageSpace::open(&pool, SPACE).unwrap();
                prop_assert_eq!(space2, space);
                continue;
            }
            let t = BTree::open(&pool, space, TreeId(3), cfg).unwrap();
            apply(&t, &mut model, op);
        }
        let t = BTree::open(&pool, space, TreeId(3), cfg).unwrap();
        check_all(&t, &space, &model);
        pool.check_invariants().unwrap();
    }
}
