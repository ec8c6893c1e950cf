#![allow(clippy::unwrap_used)]
//! Regression (found by `btree_model` with seed 5 and 2000 cases, about one seed in twenty
//! at 200 cases): after a delete merged the last two leaves under an internal node, that
//! node was left with no separator (one child) and, being underfull, was to be merged with
//! its left sibling; the separator coming down from the root (an 89-byte key, a 101-byte
//! cell with its slot) did not fit next to the sibling's 878 used bytes (968 usable on
//! 1 KiB pages), so the merge was skipped and the node kept its single child. Deleting the
//! entries of that only leaf then left an empty non-root leaf: it had no sibling under its
//! parent to merge with ("page 6: empty non-root leaf"). Fixed: when two siblings do not
//! fit in one node, their entries are redistributed evenly (the parent takes the new
//! separator, splitting if it is longer and does not fit), so every internal node keeps
//! two children; `check_invariants` now also refuses a non-root internal node with a
//! single child.
//!
//! The sequence is the proptest's shrunk failure, minimized further by deleting
//! operations one at a time (every operation left is needed): keys are a stem and
//! `pad` bytes `x`, values `len` bytes `v`, on 1 KiB pages with a 12-frame pool.

mod common;

use common::{mem_pool, SPACE};
use flashbuf_workload::btree::{check_space, BTree, PageSpace, TreeConfig, TreeId, TreeStats};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy)]
enum Act {
    Insert,
    Delete,
}
use Act::{Delete, Insert};

/// (operation, key stem, key padding in bytes, value length in bytes).
const OPS: &[(Act, &[u8], usize, usize)] = &[
    (Insert, b"\x00ac", 50, 97),
    (Insert, b"\x00a\xffa", 81, 21),
    (Insert, b"\x00\x00", 29, 48),
    (Insert, b"c\xff", 13, 80),
    (Insert, b"b", 65, 58),
    (Insert, b"aa\x00cc", 88, 97),
    (Insert, b"a\xffc\xff", 12, 74),
    (Insert, b"bcb\xff\x00bac\x00\xffc", 32, 44),
    (Insert, b"aa\xff\xff", 40, 16),
    (Insert, b"ab\x00baac", 74, 66),
    (Insert, b"\x00\xffa\x00\x00\x00bc\xffc\xff", 67, 73),
    (Insert, b"\x00\x00", 62, 21),
    (Insert, b"\x00\x00\xff\xff", 86, 63),
    (Insert, b"a\x00", 89, 87),
    (Insert, b"aac\x00aa", 64, 22),
    (Insert, b"\x00\x00\xff", 64, 61),
    (Insert, b"acbc\xff\xffc\xff", 91, 2),
    (Delete, b"bcb\xff\x00bac\x00\xffc", 32, 0),
    (Delete, b"b", 65, 0),
    (Delete, b"c\xff", 13, 0),
    (Insert, b"\x00\x00", 32, 91),
    (Insert, b"\xff\x00\x00\xff\x00b\xff\xff\x00b\xff", 58, 12),
    (Insert, b"cbac\xffc\x00\x00ca\xff", 50, 99),
    (Insert, b"bca\x00", 80, 7),
    (Insert, b"a\xffa", 69, 55),
    (Insert, b"\x00\x00c\xff\x00", 41, 11),
    (Insert, b"c\xffcacababa", 79, 83),
    (Insert, b"baac\x00bb", 4, 15),
    (Insert, b"\x00\xff\x00b\x00", 36, 63),
    (Insert, b"", 34, 67),
    (Insert, b"", 25, 37),
    (Insert, b"\xffbc\xff\x00", 71, 0),
    (Insert, b"bcc\xffca\xffb", 35, 77),
    (Insert, b"\x00ab\xff\xff\xff", 26, 56),
    (Insert, b"abbc", 95, 8),
    (Insert, b"ac\x00\x00", 4, 9),
    (Insert, b"\x00\x00", 70, 94),
    (Insert, b"\x00\x00\xffbc\x00abba\x00", 88, 32),
    (Insert, b"\x00ca\xff\xffca", 31, 49),
    (Insert, b"cb\xff\xffbb\x00b", 89, 9),
    (Insert, b"\x00", 67, 40),
    (Insert, b"\x00\xffac\xffb\xffc\x00", 23, 9),
    (Insert, b"\x00b\xff\xffa\xffacba\xff", 38, 28),
    (Insert, b"b\x00b\x00ac\x00", 70, 12),
    (Insert, b"\xff\xff", 6, 94),
    (Insert, b"b\x00c\xff\xffcac", 15, 8),
    (Insert, b"\xff\x00cc\x00\xff\x00", 38, 9),
    (Insert, b"\xffb\xffc\x00b", 61, 32),
    (Insert, b"abbcaaa\xff\x00\xff", 49, 15),
    (Insert, b"bbc\xffcbaa", 32, 37),
    (Insert, b"a\xffc\x00c\x00b\xffa", 34, 80),
    (Insert, b"acaaaa", 11, 82),
    (Insert, b"b\x00c", 99, 52),
    (Insert, b"\x00\xffbc\x00\xff\x00aac", 17, 36),
    (Insert, b"\x00\x00\xffc\xff", 63, 82),
    (Insert, b"\xffbc\x00bcc", 79, 82),
    (Insert, b"aaa\x00\xffc", 78, 45),
    (Delete, b"", 25, 0),
    (Delete, b"", 34, 0),
    (Delete, b"\xff\x00\x00\xff\x00b\xff\xff\x00b\xff", 58, 0),
    (Delete, b"\xff\x00cc\x00\xff\x00", 38, 0),
    (Delete, b"\xffbc\x00bcc", 79, 0),
    (Delete, b"\xffbc\xff\x00", 71, 0),
    (Delete, b"\xffb\xffc\x00b", 61, 0),
    (Delete, b"\xff\xff", 6, 0),
    (Delete, b"c\xffcacababa", 79, 0),
];

/// A sequence (a seeded random one, minimized) whose last delete redistributes two leaves
/// and gives their parent a separator longer than the old one by more than the parent's
/// free bytes: the parent splits during a delete.
const PARENT_SPLIT_OPS: &[(Act, &[u8], usize, usize)] = &[
    (Insert, b"acb", 79, 19),
    (Insert, b"baa", 3, 91),
    (Insert, b"b", 13, 82),
    (Insert, b"aba", 50, 56),
    (Insert, b"", 43, 0),
    (Insert, b"bba", 62, 72),
    (Insert, b"bbc", 18, 65),
    (Insert, b"ba", 93, 92),
    (Insert, b"ac", 4, 62),
    (Insert, b"c", 86, 65),
    (Delete, b"bba", 62, 0),
    (Insert, b"bc", 71, 98),
    (Insert, b"ac", 63, 46),
    (Insert, b"cc", 73, 58),
    (Insert, b"", 3, 18),
    (Insert, b"", 80, 0),
    (Insert, b"cca", 30, 48),
    (Insert, b"", 17, 80),
    (Insert, b"b", 21, 5),
    (Insert, b"", 93, 23),
    (Insert, b"c", 68, 97),
    (Insert, b"acc", 56, 14),
    (Insert, b"cc", 63, 88),
    (Insert, b"bca", 37, 96),
    (Insert, b"bcc", 47, 83),
    (Insert, b"ba", 0, 48),
    (Insert, b"b", 88, 94),
    (Insert, b"caa", 18, 93),
    (Insert, b"cb", 53, 93),
    (Insert, b"b", 54, 4),
    (Insert, b"", 55, 28),
    (Insert, b"ca", 72, 43),
    (Insert, b"b", 18, 95),
    (Insert, b"ca", 47, 43),
    (Insert, b"aaa", 12, 45),
    (Insert, b"abb", 34, 25),
    (Insert, b"c", 92, 41),
    (Insert, b"", 45, 30),
    (Delete, b"b", 88, 0),
    (Insert, b"b", 71, 70),
    (Insert, b"a", 34, 83),
    (Insert, b"", 97, 20),
    (Insert, b"ccb", 45, 35),
    (Insert, b"", 19, 84),
    (Insert, b"bc", 18, 75),
    (Insert, b"a", 89, 5),
    (Insert, b"", 18, 27),
    (Insert, b"bcc", 72, 67),
    (Insert, b"", 48, 94),
    (Insert, b"cb", 97, 26),
    (Insert, b"b", 91, 61),
    (Insert, b"a", 71, 66),
    (Insert, b"a", 82, 59),
    (Insert, b"", 71, 68),
    (Insert, b"bcc", 61, 5),
    (Insert, b"b", 92, 79),
    (Insert, b"cbb", 30, 99),
    (Insert, b"bbb", 52, 49),
    (Insert, b"", 56, 56),
    (Insert, b"cca", 84, 1),
    (Delete, b"bcc", 72, 0),
    (Insert, b"", 66, 82),
    (Delete, b"bc", 18, 0),
];

fn key(stem: &[u8], pad: usize) -> Vec<u8> {
    let mut k = stem.to_vec();
    k.extend(std::iter::repeat_n(b'x', pad));
    k
}

/// Runs `ops` on a fresh tree of 1 KiB pages, checking the answers against a model and
/// the invariants after every operation; returns the tree's shape after each.
fn run(ops: &[(Act, &[u8], usize, usize)]) -> Vec<TreeStats> {
    let (_dev, pool) = mem_pool(1024, 12);
    let space = PageSpace::create(&pool, SPACE, 1 << 20).unwrap();
    let t = BTree::create(&pool, space, TreeId(3), TreeConfig::default()).unwrap();
    let mut model = BTreeMap::new();
    let mut shapes = Vec::with_capacity(ops.len());
    for (i, &(act, stem, pad, value_bytes)) in ops.iter().enumerate() {
        let k = key(stem, pad);
        match act {
            Insert => {
                let v = vec![b'v'; value_bytes];
                assert_eq!(t.insert(&k, &v).unwrap(), !model.contains_key(&k), "op {i}");
                model.entry(k).or_insert(v);
            }
            Delete => assert_eq!(t.delete(&k).unwrap(), model.remove(&k).is_some(), "op {i}"),
        }
        let stats = t
            .check_invariants()
            .unwrap_or_else(|e| panic!("after op {i} ({act:?}): {e}"));
        assert_eq!(stats.entries, model.len() as u64, "after op {i}");
        shapes.push(stats);
    }
    check_space(&space, &[&t]).unwrap();
    let all = t.range(b"", None, usize::MAX).unwrap();
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.into_iter().collect();
    assert_eq!(all, want);
    pool.check_invariants().unwrap();
    shapes
}

#[test]
fn a_merge_the_separator_overflows_redistributes_and_no_leaf_is_left_empty() {
    let shapes = run(OPS);
    // The failure needs three levels: an internal node under the root lost its last
    // separator.
    assert!(shapes.iter().all(|s| s.height <= 3));
    assert_eq!(shapes.last().map(|s| s.height), Some(3));
}

#[test]
fn a_redistributed_separator_that_does_not_fit_splits_the_parent() {
    let pages: Vec<u64> = run(PARENT_SPLIT_OPS).iter().map(|s| s.pages()).collect();
    let n = pages.len();
    assert!(
        pages[n - 1] > pages[n - 2],
        "the last delete should have split the parent: {:?}",
        &pages[n - 2..]
    );
}
