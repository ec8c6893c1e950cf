#![allow(clippy::unwrap_used)]
//! CFDC by hand-worked examples: the paper's Fig. 3 priorities, the dividends of §3.3,
//! draining, hits in the priority region, and a priority order that flips as globaltime
//! grows (which a heap keyed at insertion time gets wrong).

use flashbuf_core::{FrameId, PageId};
use flashbuf_pool::policy::clustering::{ClusterInfo, ClusterSet};
use flashbuf_pool::policy::reference::NaiveCfdc;
use flashbuf_pool::policy::{Access, Cfdc, CfdcConfig, Policy, Victim};

fn frac(c: &ClusterInfo) -> (u128, u128) {
    (u128::from(c.numerator), c.denominator)
}

fn same(a: (u128, u128), b: (u128, u128)) -> bool {
    a.0 * b.1 == b.0 * a.1
}

/// Pages in demotion order (window 1.0: every page enters the priority region at once).
/// globaltime ticks once per dirty page, so the i-th page is demoted at globaltime i.
/// e and f (pages 640, 704) are cleaned afterwards, leaving clusters stamped 1, 2, 3, 6.
const FIG3: [u64; 10] = [640, 0, 64, 130, 128, 8, 192, 193, 194, 704];

fn fig3<P: Policy>(p: &mut P) {
    for (i, &pg) in FIG3.iter().enumerate() {
        p.on_insert(FrameId(i as u32), PageId(pg), Access::Write);
        p.check_invariants().unwrap();
    }
    p.on_clean(FrameId(0));
    p.on_clean(FrameId(9));
    p.check_invariants().unwrap();
}

#[test]
fn figure_3_priorities() {
    let cfg = CfdcConfig {
        window: 1.0,
        cluster_size: 64,
    };
    let mut p = Cfdc::with_config(10, cfg).unwrap();
    fig3(&mut p);
    assert_eq!(p.globaltime(), 10);
    let c = p.dirty_clusters();
    // Lowest priority first: {192,193,194} 2/(9·4) = 1/18, {130,128} 2/(4·7) = 1/14,
    // {64} 1/(1·8) = 1/8, {0,8} 8/(4·9) = 2/9 — the four values of Fig. 3.
    let got: Vec<(u64, u32, u64, u64)> = c
        .iter()
        .map(|c| (c.cluster, c.pages, c.dividend, c.timestamp))
        .collect();
    assert_eq!(
        got,
        vec![(3, 3, 2, 6), (2, 2, 2, 3), (1, 1, 1, 2), (0, 2, 8, 1)]
    );
    for (info, want) in c.iter().zip([(1, 18), (1, 14), (1, 8), (2, 9)]) {
        assert!(same(frac(info), want), "{info:?} is not {want:?}");
    }
    // The naive version computes the same fractions from the formula.
    let mut n = NaiveCfdc::new(10, cfg).unwrap();
    fig3(&mut n);
    let naive: Vec<(u64, u128, u128)> = n.priorities();
    for (info, (cl, num, den)) in c.iter().zip(naive) {
        assert_eq!(info.cluster, cl);
        assert!(same(frac(info), (num, den)));
    }

    // The clean queue (e then f) goes first...
    assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
    // ...with it pinned, the first page of the lowest cluster, which then drains.
    let no_clean = |f: FrameId| f != FrameId(0) && f != FrameId(9);
    assert_eq!(p.choose_victim(&no_clean), Some(Victim::Evict(FrameId(6))));
    p.on_remove(FrameId(6));
    assert!(p.dirty_clusters()[0].draining);
    assert_eq!(p.choose_victim(&no_clean), Some(Victim::Evict(FrameId(7))));
    p.on_remove(FrameId(7));
    assert_eq!(p.choose_victim(&no_clean), Some(Victim::Evict(FrameId(8))));
    p.on_remove(FrameId(8));
    // Drained and gone; next is {130, 128}: its first page, 130 (frame 3).
    assert_eq!(p.dirty_clusters().len(), 3);
    assert_eq!(p.choose_victim(&no_clean), Some(Victim::Evict(FrameId(3))));
    p.check_invariants().unwrap();
}

#[test]
fn dividends_of_section_3_3() {
    // {0,1,2,3} entered in that order: 3; {7,5,4,6}: 2+1+2 = 5.
    let mut s = ClusterSet::new(8, 64).unwrap();
    for (i, pg) in [0u64, 1, 2, 3].into_iter().enumerate() {
        s.push(FrameId(i as u32), PageId(pg));
    }
    for (i, pg) in [7u64, 5, 4, 6].into_iter().enumerate() {
        s.push(FrameId(4 + i as u32), PageId(64 + pg));
    }
    s.check().unwrap();
    fn by(s: &ClusterSet, n: u64) -> ClusterInfo {
        s.clusters_by_priority()
            .into_iter()
            .find(|c| c.cluster == n)
            .unwrap()
    }
    assert_eq!(by(&s, 0).dividend, 3);
    assert_eq!(by(&s, 1).dividend, 5);
    // Removing 5 from the middle of {7,5,4,6} leaves {7,4,6}: 3+2 = 5; removing 7: {4,6}: 2.
    s.remove(FrameId(5));
    assert_eq!(by(&s, 1).dividend, 5);
    s.remove(FrameId(4));
    assert_eq!(by(&s, 1).dividend, 2);
    s.remove(FrameId(7));
    let one = by(&s, 1);
    assert_eq!((one.pages, one.dividend), (1, 1), "a single page counts 1");
    s.check().unwrap();
}

#[test]
fn order_flips_as_globaltime_grows() {
    // X = {0} stamped 0: P = 1/G. Y = {64, 66} stamped 5: P = 2/(4(G−5)) = 1/(2(G−5)).
    // X is lower while G < 10, they tie at G = 10 (older X first), Y is lower from G = 11.
    let mut s = ClusterSet::new(8, 64).unwrap();
    s.push(FrameId(0), PageId(0));
    let filler = |s: &mut ClusterSet| {
        s.push(FrameId(7), PageId(320));
        s.remove(FrameId(7));
    };
    for _ in 0..4 {
        filler(&mut s);
    }
    assert_eq!(s.globaltime(), 5);
    s.push(FrameId(1), PageId(64));
    s.push(FrameId(2), PageId(66));
    while s.globaltime() < 14 {
        let g = s.globaltime();
        let want = if g <= 10 { FrameId(0) } else { FrameId(1) };
        assert_eq!(
            s.first_in_order(&|_| true, false),
            Some(want),
            "globaltime {g}"
        );
        s.check().unwrap();
        filler(&mut s);
    }
    assert_eq!(
        s.scans(),
        7,
        "every choice (globaltime 7 to 13) scanned the priorities"
    );
}

#[test]
fn hits_in_the_priority_region_go_back_to_the_working_region() {
    // 4 frames: working region 2, priority region 2.
    let mut p = Cfdc::new(4);
    p.on_insert(FrameId(0), PageId(1), Access::Write);
    p.on_insert(FrameId(1), PageId(2), Access::Write);
    assert_eq!(p.globaltime(), 0);
    p.on_insert(FrameId(2), PageId(3), Access::Read); // 0 (dirty) demoted: tick
    p.on_insert(FrameId(3), PageId(4), Access::Read); // 1 (dirty) demoted: tick
    assert_eq!(p.globaltime(), 2);
    assert_eq!(p.dirty_clusters()[0].pages, 2);
    // A hit on frame 0 brings it back; the working region's LRU page (2, clean) is demoted
    // to the clean queue, without a tick.
    p.on_hit(FrameId(0), Access::Read);
    p.check_invariants().unwrap();
    assert_eq!(p.globaltime(), 2);
    assert_eq!(p.dirty_clusters()[0].pages, 1);
    assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(2))));
    // A write hit on the clean-queue page moves it to the working region too; the LRU page
    // of the working region (3, clean) takes its place.
    p.on_hit(FrameId(2), Access::Write);
    p.check_invariants().unwrap();
    assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(3))));
    // Cleaned by a flush, a clustered page joins the clean queue's head.
    p.on_clean(FrameId(1));
    p.check_invariants().unwrap();
    assert!(p.dirty_clusters().is_empty());
    assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(3))));
    assert_eq!(
        p.choose_victim(&|f| f != FrameId(3)),
        Some(Victim::Evict(FrameId(1)))
    );
}

#[test]
fn window_zero_is_lru() {
    let cfg = CfdcConfig {
        window: 0.0,
        cluster_size: 64,
    };
    let mut p = Cfdc::with_config(3, cfg).unwrap();
    for f in 0..3 {
        p.on_insert(FrameId(f), PageId(u64::from(f)), Access::Write);
    }
    p.on_hit(FrameId(0), Access::Read);
    assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
    assert!(Cfdc::with_config(
        3,
        CfdcConfig {
            window: -0.1,
            cluster_size: 64
        }
    )
    .is_err());
    assert!(Cfdc::with_config(
        3,
        CfdcConfig {
            window: 0.5,
            cluster_size: 0
        }
    )
    .is_err());
}
