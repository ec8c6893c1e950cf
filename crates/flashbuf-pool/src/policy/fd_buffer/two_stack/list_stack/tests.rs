//! The hole of [`super::ListStack`] (removals and pushes against a plain model are in
//! `group_stack`'s tests).

use super::*;

/// Entries `(page, lo, hi)` from the top, by `found`.
fn groups(s: &ListStack) -> Vec<(u64, u32, u32)> {
    s.walk()
        .into_iter()
        .map(|(p, slot, _)| {
            let f = s.found(slot);
            (p, f.lo, f.hi)
        })
        .collect()
}

/// A removal leaves a hole (no tail moves) that the next push fills from its place;
/// meanwhile the entries below it count one position higher, across group
/// boundaries too; a second removal unlinks the deeper of the two.
#[test]
fn a_removal_leaves_a_hole_the_next_push_fills() {
    let mut s = ListStack::new(9, 3);
    let slots: Vec<u32> = (0..9u64).map(|p| s.push_top(p, 0).0).collect();
    // Top first: 8 7 6 | 5 4 3 | 2 1 0.
    let work = s.work();
    s.remove(slots[7]);
    assert_eq!(s.work(), work, "a hole moves no tail");
    assert_eq!(s.len(), 8);
    let want = [
        (8, 1, 3),
        (6, 1, 3),
        (5, 1, 3),
        (4, 4, 6),
        (3, 4, 6),
        (2, 4, 6),
    ];
    assert_eq!(groups(&s)[..6], want, "5 and 2 moved up a group");
    assert_eq!(groups(&s)[6..], [(1, 7, 8), (0, 7, 8)]);
    s.check().unwrap();
    // A second removal, deeper: unlinked at once, the hole stays.
    s.remove(slots[1]);
    assert_eq!(s.len(), 7);
    assert_eq!(
        s.walk().iter().map(|e| e.0).collect::<Vec<_>>(),
        [8, 6, 5, 4, 3, 2, 0]
    );
    assert_eq!(groups(&s)[6], (0, 7, 7));
    s.check().unwrap();
    // The push takes the hole's slot to the top.
    let (x, dropped) = s.push_top(42, 0);
    assert_eq!((x, dropped), (slots[7], None));
    assert_eq!(
        groups(&s)[..4],
        [(42, 1, 3), (8, 1, 3), (6, 1, 3), (5, 4, 6)]
    );
    s.check().unwrap();
    // A shallower second removal becomes the hole; the deeper one is unlinked.
    s.remove(slots[3]);
    s.remove(slots[8]);
    assert_eq!(
        s.walk().iter().map(|e| e.0).collect::<Vec<_>>(),
        [42, 6, 5, 4, 2, 0]
    );
    assert_eq!(s.hole, slots[8]);
    s.check().unwrap();
}
