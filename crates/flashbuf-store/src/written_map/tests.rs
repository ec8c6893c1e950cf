//! The written-page set against models: membership, encoding, budget and cut, refusal
//! of malformed payloads.
#![allow(clippy::unwrap_used)]

use super::*;
use proptest::prelude::*;
use std::collections::BTreeSet;

fn roundtrip(m: &WrittenMap, budget: usize) -> WrittenMap {
    m.mark_changed();
    let s = m.snapshot(budget).unwrap();
    assert!(
        s.payload.len() <= budget.max(21),
        "{} > {budget}",
        s.payload.len()
    );
    m.committed(s.cut);
    WrittenMap::decode(&s.payload, "direct").unwrap()
}

#[test]
fn merges_neighbours_and_round_trips() {
    let m = WrittenMap::new();
    for p in [5u64, 7, 6, 0, 1, 100, u64::MAX - 1] {
        m.insert(PageId(p));
    }
    assert_eq!(m.shape(), (4, None));
    let d = roundtrip(&m, 4032);
    for p in [0u64, 1, 5, 6, 7, 100, u64::MAX - 1] {
        assert!(d.contains(PageId(p)), "{p}");
    }
    for p in [2u64, 4, 8, 99, 101, u64::MAX] {
        assert!(!d.contains(PageId(p)), "{p}");
    }
    assert_eq!(m.snapshot(4032).map(|s| s.cut), None, "unchanged");
}

/// The bitmap covers pages below `BITS_MAX_PAGES` and the ranges the rest: membership
/// is exact on both sides of the limit, before and after a round trip (which fills
/// the bitmap from the decoded ranges).
#[test]
fn membership_is_exact_across_the_bitmap_limit() {
    let m = WrittenMap::new();
    let l = BITS_MAX_PAGES;
    for p in [l - 2, l - 1, l, l + 1, 3] {
        m.insert(PageId(p));
    }
    // Written twice: no change to record the second time.
    let _ = m.snapshot(4032);
    m.insert(PageId(l - 1));
    m.insert(PageId(l + 1));
    assert_eq!(m.snapshot(4032).map(|s| s.cut), None, "nothing new");
    let d = roundtrip(&m, 4032);
    for w in [&m, &d] {
        for p in [3, l - 2, l - 1, l, l + 1] {
            assert!(w.contains(PageId(p)), "{p}");
        }
        for p in [2, 4, l - 3, l + 2] {
            assert!(!w.contains(PageId(p)), "{p}");
        }
    }
    assert_eq!(d.shape(), (2, None));
}

#[test]
fn a_set_beyond_the_budget_keeps_its_low_ranges_and_records_the_cut() {
    let m = WrittenMap::new();
    for p in (0..10_000u64).step_by(2) {
        m.insert(PageId(p));
    }
    let d = roundtrip(&m, 4032);
    let (_, cut) = d.shape();
    let cut = cut.unwrap();
    assert!(cut > 1000 && cut < 10_000, "cut {cut}");
    assert!(d.contains(PageId(cut - 2)) || d.contains(PageId(cut - 1)));
    assert!(!d.contains(PageId(cut)) && !d.contains(PageId(cut + 2)));
    // The cut never moves up again, even when the set would fit once more.
    let again = roundtrip(&d, usize::MAX);
    assert_eq!(again.shape().1, Some(cut));
}

#[test]
fn a_missing_or_malformed_payload_is_refused() {
    let e = WrittenMap::decode(&[], "direct").unwrap_err().to_string();
    assert!(e.contains("earlier flashbuf"), "{e}");
    let good = {
        let m = WrittenMap::new();
        m.insert(PageId(3));
        m.insert(PageId(9));
        m.snapshot(4032).unwrap().payload
    };
    assert!(WrittenMap::decode(&good, "direct").is_ok());
    let mut cases = vec![vec![0x58u8], good[..good.len() - 1].to_vec()];
    let mut extra = good.clone();
    extra.push(0);
    cases.push(extra);
    // An adjacent second range (gap 0) and an empty range.
    cases.push(vec![TAG, 0, 2, 3, 1, 0, 1]);
    cases.push(vec![TAG, 0, 1, 3, 0]);
    // A range beyond the cut (cut = 4).
    cases.push(vec![TAG, 5, 1, 3, 2]);
    // An overflowing varint.
    cases.push(vec![
        TAG, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1,
    ]);
    for c in cases {
        let e = WrittenMap::decode(&c, "direct").unwrap_err().to_string();
        assert!(e.contains("malformed"), "{c:?}: {e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x57_11),
        ..ProptestConfig::default()
    })]
    /// Against a `BTreeSet` model: membership below the cut is exact after a round
    /// trip, whatever the order of inserts and the budget.
    #[test]
    fn matches_a_set_model(pages in prop::collection::vec(0u64..400, 0..300), budget in 24usize..200) {
        let m = WrittenMap::new();
        let mut model = BTreeSet::new();
        for &p in &pages {
            m.insert(PageId(p));
            model.insert(p);
        }
        for p in 0..402u64 {
            prop_assert_eq!(m.contains(PageId(p)), model.contains(&p));
        }
        let d = roundtrip(&m, budget);
        let cut = d.shape().1.unwrap_or(u64::MAX);
        for p in 0..402u64 {
            let want = p < cut && model.contains(&p);
            prop_assert_eq!(d.contains(PageId(p)), want, "page {} cut {}", p, cut);
        }
    }
}

/// The maximal ranges of a model set, ascending.
fn model_ranges(model: &BTreeSet<u64>) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &p in model {
        match out.last_mut() {
            Some((_, e)) if *e == p => *e += 1,
            _ => out.push((p, p + 1)),
        }
    }
    out
}

/// Runs across word and summary-word boundaries, whole words, single pages, and a stop
/// requested by the visitor.
#[test]
fn bitmap_runs_are_maximal_and_stop_when_asked() {
    let b = bits::Bits::default();
    let mut model = BTreeSet::new();
    for (s, e) in [
        (0, 1),
        (60, 70),
        (127, 129),
        (192, 256),
        (256, 300),
        (4095, 4097),
    ] {
        b.insert_range(s, e);
        model.extend(s..e);
    }
    for p in [130u64, 131, 5000, 64 * 64 * 3 + 5] {
        assert!(b.insert(p));
        assert!(!b.insert(p), "{p} twice");
        model.insert(p);
    }
    let mut runs = Vec::new();
    b.runs(|s, e| {
        runs.push((s, e));
        true
    });
    assert_eq!(runs, model_ranges(&model));
    for p in 0..13_000u64 {
        assert_eq!(b.contains(p), model.contains(&p), "{p}");
    }
    let mut first_two = Vec::new();
    b.runs(|s, e| {
        first_two.push((s, e));
        first_two.len() < 2
    });
    assert_eq!(first_two, runs[..2]);
}

/// Pages on either side of the bitmap's limit, low pages and far pages.
fn any_page() -> impl Strategy<Value = u64> {
    let l = BITS_MAX_PAGES;
    prop_oneof![
        0u64..300,
        (l - 150)..(l + 150),
        (u64::MAX - 40)..u64::MAX,
        0u64..BITS_MAX_PAGES,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x57_12),
        ..ProptestConfig::default()
    })]
    /// Against a `BTreeSet` model, on both sides of the bitmap's limit: membership after
    /// every insert, the payload byte for byte (the model's maximal ranges through the
    /// same encoder), the change flag, and membership below the cut after a round trip.
    #[test]
    fn payload_equals_the_models_across_the_limit(
        pages in prop::collection::vec(any_page(), 0..200),
        budget in 24usize..400,
    ) {
        let m = WrittenMap::new();
        let mut model = BTreeSet::new();
        for &p in &pages {
            m.insert(PageId(p));
            if p != u64::MAX {
                model.insert(p);
            }
            prop_assert!(m.contains(PageId(p)) || p == u64::MAX);
        }
        let want = model_ranges(&model);
        let expected = codec::encode(
            |v| {
                for &(s, e) in &want {
                    if !v(s, e) {
                        break;
                    }
                }
            },
            u64::MAX,
            budget,
        );
        let got = m.snapshot(budget);
        prop_assert_eq!(got.is_some(), !model.is_empty(), "changed iff anything was written");
        let got = got.unwrap_or_else(|| m.snapshot_always(budget));
        prop_assert_eq!(&got.payload, &expected.payload);
        prop_assert_eq!(got.cut, expected.cut);
        prop_assert_eq!(m.shape().0, want.len());
        m.committed(got.cut);
        let d = WrittenMap::decode(&got.payload, "direct").unwrap();
        let probes = pages.iter().flat_map(|&p| [p.saturating_sub(1), p, p.saturating_add(1)]);
        for p in probes.chain([0, BITS_MAX_PAGES - 1, BITS_MAX_PAGES]) {
            let want = p < got.cut && model.contains(&p);
            prop_assert_eq!(d.contains(PageId(p)), want, "page {} cut {}", p, got.cut);
            prop_assert_eq!(m.contains(PageId(p)), want, "page {} cut {}", p, got.cut);
        }
    }
}

/// Writers on four threads insert pages that share words and summary words while a fifth
/// takes snapshots: the last snapshot taken (by it, or after the writers, if anything
/// changed since) names every page — no insert is lost between a bit and the change flag.
#[test]
fn concurrent_inserts_are_never_lost_between_snapshots() {
    for round in 0..20u64 {
        let m = WrittenMap::new();
        let done = std::sync::atomic::AtomicBool::new(false);
        let pages = |t: u64| (0..3_000u64).map(move |i| (i * 4 + t) * 7 + round);
        let mut last = None;
        std::thread::scope(|s| {
            let writers: Vec<_> = (0..4u64)
                .map(|t| {
                    let m = &m;
                    s.spawn(move || pages(t).for_each(|p| m.insert(PageId(p))))
                })
                .collect();
            let snapper = s.spawn(|| {
                let mut last = None;
                while !done.load(std::sync::atomic::Ordering::Acquire) {
                    if let Some(snap) = m.snapshot(usize::MAX) {
                        last = Some(snap);
                    }
                }
                last
            });
            writers.into_iter().for_each(|w| w.join().unwrap());
            done.store(true, std::sync::atomic::Ordering::Release);
            last = snapper.join().unwrap();
        });
        let last = m.snapshot(usize::MAX).or(last).unwrap();
        let d = WrittenMap::decode(&last.payload, "direct").unwrap();
        for p in (0..4).flat_map(pages) {
            assert!(d.contains(PageId(p)), "round {round}: page {p} lost");
        }
        assert!(!d.contains(PageId(round + 1)), "round {round}");
    }
}
