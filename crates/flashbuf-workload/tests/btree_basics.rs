#![allow(clippy::unwrap_used)]
//! B+-tree basics: growth to several levels, deletes down to an empty tree, scans, big
//! entries refused, several trees in one space.

mod common;

use common::{mem_pool, SPACE};
use flashbuf_workload::btree::{check_space, BTree, PageSpace, TreeConfig, TreeError, TreeId};
use std::ops::Bound;

fn key(i: u32) -> Vec<u8> {
    format!("key{:08}", i.wrapping_mul(2_654_435_761) % 1_000_000).into_bytes()
}

#[test]
fn grows_and_shrinks_with_invariants() {
    let (_dev, pool) = mem_pool(1024, 64);
    let space = PageSpace::create(&pool, SPACE, 1 << 20).unwrap();
    let t = BTree::create(&pool, space, TreeId(1), TreeConfig::default()).unwrap();
    let n = 5000u32;
    for i in 0..n {
        let v = vec![(i % 251) as u8; (i % 37) as usize];
        assert!(t.insert(&key(i), &v).unwrap(), "insert {i}");
    }
    let s = t.check_invariants().unwrap();
    assert_eq!(s.entries, u64::from(n));
    assert!(s.height >= 3, "{s:?}");
    for i in 0..n {
        let v = vec![(i % 251) as u8; (i % 37) as usize];
        assert_eq!(t.get(&key(i)).unwrap(), Some(v), "get {i}");
    }
    let all = t.range(b"", None, usize::MAX).unwrap();
    assert_eq!(all.len(), n as usize);
    assert!(all.windows(2).all(|w| w[0].0 < w[1].0));
    for i in (0..n).filter(|i| i % 3 != 0) {
        assert!(t.delete(&key(i)).unwrap());
    }
    let s2 = t.check_invariants().unwrap();
    assert_eq!(s2.entries, u64::from(n.div_ceil(3)));
    assert!(
        s2.pages() < s.pages(),
        "merges freed pages: {s2:?} vs {s:?}"
    );
    check_space(&space, &[&t]).unwrap();
    for i in (0..n).filter(|i| i % 3 == 0) {
        assert!(t.delete(&key(i)).unwrap());
    }
    let s3 = t.check_invariants().unwrap();
    assert_eq!((s3.entries, s3.height, s3.pages()), (0, 1, 1));
    check_space(&space, &[&t]).unwrap();
    let u = space.usage(&pool).unwrap();
    assert_eq!(u.free_pages + 2, u.allocated_pages, "{u:?}");
}

#[test]
fn scans_respect_bounds_and_cross_leaves() {
    let (_dev, pool) = mem_pool(1024, 32);
    let space = PageSpace::create(&pool, SPACE, 1 << 16).unwrap();
    let t = BTree::create(&pool, space, TreeId(1), TreeConfig::default()).unwrap();
    for i in 0..2000u32 {
        t.put(&i.to_be_bytes(), &[7u8; 20]).unwrap();
    }
    let mut seen = Vec::new();
    t.scan(
        Bound::Excluded(&100u32.to_be_bytes()),
        Bound::Included(&1500u32.to_be_bytes()),
        |k, _| {
            seen.push(u32::from_be_bytes(k.try_into().unwrap()));
            true
        },
    )
    .unwrap();
    assert_eq!(seen, (101..=1500).collect::<Vec<_>>());
    let r = t.range(&1990u32.to_be_bytes(), None, 5).unwrap();
    assert_eq!(r.len(), 5);
    let n = t
        .scan_update(
            &10u32.to_be_bytes(),
            Bound::Excluded(&20u32.to_be_bytes()),
            |_, v| {
                let mut w = v.to_vec();
                w[0] = 9;
                (Some(w), true)
            },
        )
        .unwrap();
    assert_eq!(n, 10);
    assert_eq!(t.get(&15u32.to_be_bytes()).unwrap().unwrap()[0], 9);
    assert_eq!(t.get(&20u32.to_be_bytes()).unwrap().unwrap()[0], 7);
    t.check_invariants().unwrap();
}

#[test]
fn too_large_entries_are_refused_and_several_trees_share_a_space() {
    let (_dev, pool) = mem_pool(4096, 32);
    let space = PageSpace::create(&pool, SPACE, 1 << 16).unwrap();
    let a = BTree::create(&pool, space, TreeId(1), TreeConfig::default()).unwrap();
    let b = BTree::create(&pool, space, TreeId(2), TreeConfig::default()).unwrap();
    let big = vec![0u8; a.max_entry_bytes()];
    assert!(matches!(
        a.insert(b"k", &big),
        Err(TreeError::TooLarge { .. })
    ));
    assert!(a.insert(b"", &big[1..]).unwrap());
    for i in 0..3000u32 {
        a.put(&i.to_be_bytes(), b"a").unwrap();
        b.put(&(i * 7).to_be_bytes(), b"bb").unwrap();
    }
    assert!(BTree::create(&pool, space, TreeId(2), TreeConfig::default()).is_err());
    let b2 = BTree::open(&pool, space, TreeId(2), TreeConfig::default()).unwrap();
    assert_eq!(b2.get(&21u32.to_be_bytes()).unwrap(), Some(b"bb".to_vec()));
    assert_eq!(a.check_invariants().unwrap().entries, 3001);
    assert_eq!(b.check_invariants().unwrap().entries, 3000);
    check_space(&space, &[&a, &b]).unwrap();
}

#[test]
fn a_full_space_is_an_error() {
    let (_dev, pool) = mem_pool(1024, 32);
    let space = PageSpace::create(&pool, SPACE, 8).unwrap();
    let t = BTree::create(&pool, space, TreeId(1), TreeConfig::default()).unwrap();
    let mut err = None;
    for i in 0..10_000u32 {
        if let Err(e) = t.insert(&i.to_be_bytes(), &[0u8; 50]) {
            err = Some(e);
            break;
        }
    }
    assert!(matches!(err, Some(TreeError::SpaceFull { .. })), "{err:?}");
}
