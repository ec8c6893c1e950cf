//! The clusters' tests: a worked example, and the float scan's choice against an exact
//! one-pass scan on random sequences of pages entering and leaving, victims and drains.

use super::priority::lower_priority;
use super::*;
use proptest::prelude::*;

#[test]
fn cfdc_figure_priorities_order_clusters() {
    // Two clusters of size 64: {0,1,2,3} (sequential, dividend 3) and {70, 90}
    // (dividend 20); the sequential, larger cluster has the lower priority.
    let mut c = Clusters::new(8, 64);
    for (f, p) in [(0u32, 0u64), (1, 1), (2, 70), (3, 2), (4, 90), (5, 3)] {
        c.enter(FrameId(f), p);
    }
    c.check(&|_| true).unwrap();
    assert_eq!(c.drained(), (0, 0));
    assert_eq!(c.victim(&|_| true), Some(FrameId(0)));
    assert_eq!(c.drained(), (1, 4), "one victim cluster of four pages");
    c.leave(FrameId(0));
    // Draining: the same cluster goes on.
    assert_eq!(c.victim(&|_| true), Some(FrameId(1)));
    let mut out = Vec::new();
    c.cluster_members_sorted(FrameId(5), &|_| true, &mut out);
    assert_eq!(out, vec![FrameId(1), FrameId(3), FrameId(5)]);
    for f in [1, 3, 5] {
        c.leave(FrameId(f));
    }
    assert_eq!(c.victim(&|f| f != FrameId(2)), Some(FrameId(4)));
    assert_eq!(c.drained(), (2, 6), "then {{70, 90}}");
    // `victim=order` names the cluster itself.
    c.start_draining(FrameId(2));
    assert_eq!(c.drained(), (3, 8));
    c.check(&|_| true).unwrap();
}

/// The lowest-priority live cluster but the draining one and those in `skip`, by one
/// exact pass (integer comparisons only).
fn exact_scan(c: &Clusters, skip: &[u32]) -> Option<u32> {
    let g = c.globaltime;
    let mut best: Option<&Live> = None;
    for l in &c.active {
        if l.slot == c.draining || skip.contains(&l.slot) {
            continue;
        }
        if best.is_none_or(|b| lower_priority(l, b, g)) {
            best = Some(l);
        }
    }
    best.map(|b| b.slot)
}

/// The victim by exact scans: the draining cluster's first evictable page, else the
/// lowest-priority cluster with an evictable page. Returns the victim, the draining slot
/// after and the clusters scanned.
fn reference_victim(
    c: &Clusters,
    evictable: &dyn Fn(FrameId) -> bool,
) -> (Option<FrameId>, u32, u64) {
    if c.draining != NIL {
        if let Some(f) = c.first_evictable(c.draining, evictable) {
            return (Some(f), c.draining, 0);
        }
    }
    let (mut skip, mut scanned) = (Vec::new(), 0u64);
    loop {
        scanned += c.active.len() as u64;
        let Some(b) = exact_scan(c, &skip) else {
            return (None, c.draining, scanned);
        };
        if let Some(f) = c.first_evictable(b, evictable) {
            return (Some(f), b, scanned);
        }
        skip.push(b);
    }
}

#[derive(Debug, Clone)]
enum Op {
    /// A free frame (the `n`-th, cyclically) takes page `p` (if no frame holds it).
    Enter(usize, u64),
    /// The `n`-th clustered frame (cyclically) leaves.
    Leave(usize),
    /// A victim, the frames whose number is divisible by `k` pinned (`k = 0`: none).
    Victim(u32),
    /// The `n`-th clustered frame's cluster starts draining.
    Drain(usize),
}

fn op(pages: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (any::<usize>(), 0..pages).prop_map(|(n, p)| Op::Enter(n, p)),
        2 => any::<usize>().prop_map(Op::Leave),
        2 => prop_oneof![4 => Just(0u32), 1 => 1u32..6].prop_map(Op::Victim),
        1 => any::<usize>().prop_map(Op::Drain),
    ]
}

fn nth(frames: &[Option<u64>], n: usize, held: bool) -> Option<usize> {
    let which: Vec<usize> = (0..frames.len())
        .filter(|&i| frames[i].is_some() == held)
        .collect();
    (!which.is_empty()).then(|| which[n % which.len()])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_float_scan_chooses_as_the_exact_one(
        frames_count in 1usize..48,
        cluster_pages in 1u64..12,
        spread in 1u64..6,
        ops in proptest::collection::vec(op(1 << 10), 1..400),
    ) {
        let mut c = Clusters::new(frames_count, cluster_pages);
        let mut frames: Vec<Option<u64>> = vec![None; frames_count];
        let range = cluster_pages * spread * 4;
        for o in ops {
            match o {
                Op::Enter(n, p) => {
                    let p = p % range;
                    if let Some(i) = nth(&frames, n, false) {
                        if !frames.contains(&Some(p)) {
                            frames[i] = Some(p);
                            c.enter(FrameId(i as u32), p);
                        }
                    }
                }
                Op::Leave(n) => {
                    if let Some(i) = nth(&frames, n, true) {
                        frames[i] = None;
                        c.leave(FrameId(i as u32));
                    }
                }
                Op::Victim(k) => {
                    let ev = move |f: FrameId| k == 0 || !f.0.is_multiple_of(k);
                    let (want, draining, scanned) = reference_victim(&c, &ev);
                    let before = c.scanned();
                    let got = c.victim(&ev);
                    prop_assert_eq!(got, want);
                    prop_assert_eq!(c.draining, draining);
                    prop_assert_eq!(c.scanned() - before, scanned);
                }
                Op::Drain(n) => {
                    if let Some(i) = nth(&frames, n, true) {
                        c.start_draining(FrameId(i as u32));
                    }
                }
            }
            prop_assert_eq!(c.check(&|f| frames[f.index()].is_some()), Ok(()));
            // The float scan now (on a copy: the original keeps its float inputs only
            // from its first choice on, as in a run) against the exact one.
            prop_assert_eq!(c.clone().lowest_priority(&[]), exact_scan(&c, &[]));
        }
    }
}
