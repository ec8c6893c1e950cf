#![allow(clippy::unwrap_used)]
//! Pattern recognition (known sets give the expected instances; incremental and on-demand
//! agree; both agree with brute force), and the SBTT and bitmap invariants under random
//! operations.

use flashbuf_store::stable_buffer::sbtt::{Sbtt, SlotBits};
use flashbuf_store::stable_buffer::{
    on_demand, IncrementalRecognizer, Instance, MinRun, Pattern, PatternCosts, PatternParams,
};
use proptest::prelude::*;
use std::collections::{BTreeSet, HashMap};

fn params(focus_pages: u64, partitions: usize, min_run: u64) -> PatternParams {
    PatternParams {
        t_us: [1.0, 1.5, 2.0],
        theta: [4.0, 6.0, 8.0],
        partitions,
        focus_pages,
        min_run,
    }
}

fn pages(i: &Option<Instance>) -> Vec<u64> {
    i.as_ref().map(|i| i.pages.clone()).unwrap_or_default()
}

#[test]
fn known_set_yields_expected_instances() {
    let p = params(64, 2, 3);
    // Runs: 0..5 (5), 10..13 (3), 20..22 (2), 30..36 (6); singles 40, 200, 201+? no.
    let set: Vec<u64> = (0..5)
        .chain(10..13)
        .chain(20..22)
        .chain(30..36)
        .chain([40, 200, 300])
        .collect();
    let mut d = set.clone();
    let od = on_demand(&mut d, &p);
    assert_eq!(pages(&od.sequential), (30..36).collect::<Vec<_>>());
    // The two longest runs of at least 3 pages: 30..36 and 0..5.
    assert_eq!(
        pages(&od.partitioned),
        (0..5).chain(30..36).collect::<Vec<_>>()
    );
    // The fullest 64-page window starts at 0: everything below 64.
    assert_eq!(pages(&od.focused).len(), 17);
    let mut inc = IncrementalRecognizer::new(&p);
    for &x in set.iter().rev() {
        inc.insert(x);
    }
    inc.check().unwrap();
    let ic = inc.candidates();
    assert_eq!(ic.sequential, od.sequential);
    assert_eq!(ic.partitioned, od.partitioned);
    // Aligned area [0, 64) is the fullest.
    assert_eq!(ic.focused, od.focused);
    // Scores: sequential 6/1 = 6, partitioned 11/1.5 = 7.3, focused 17/2 = 8.5.
    assert_eq!(od.clone().best(&p).unwrap().pattern, Pattern::Focused);
    // Thresholds: all three qualify (6 > 4, 11 > 6, 17 > 8).
    assert_eq!(od.best_qualified(&p).unwrap().pattern, Pattern::Focused);

    // A window straddling two aligned areas: on-demand sees all 6, incremental 3.
    let p = params(8, 2, 2);
    let set = [5u64, 6, 7, 8, 9, 10];
    let mut d = set.to_vec();
    let od = on_demand(&mut d, &p);
    assert_eq!(pages(&od.focused), set.to_vec());
    let mut inc = IncrementalRecognizer::new(&p);
    set.iter().for_each(|&x| inc.insert(x));
    assert_eq!(pages(&inc.candidates().focused), vec![5, 6, 7]);
    // The run 5..11 is sequential either way, and wins (6/1 > 6/2).
    assert_eq!(
        inc.candidates().best(&p).unwrap(),
        Instance {
            pattern: Pattern::Sequential,
            pages: set.to_vec()
        }
    );
}

#[test]
fn thresholds_follow_the_readings() {
    // Mtron as measured by the profiler, 8 KiB pages: θ_min 32 KiB → θ_seq 4.
    let c = PatternCosts {
        t_seq_us: 302.0,
        t_par_us: 490.0,
        t_focus_us: 607.0,
        theta_min_bytes: 32 << 10,
        focused_area_bytes: 16 << 20,
        ..PatternCosts::default()
    };
    let p = PatternParams::new(&c, 8192);
    assert_eq!(p.theta[0], 4.0);
    assert!((p.theta[1] - 4.0 * 490.0 / 302.0).abs() < 1e-9);
    assert!((p.theta[2] - 4.0 * 607.0 / 302.0).abs() < 1e-9);
    assert_eq!(p.focus_pages, 2048);
    // As printed, any sequential run of two pages is a partition; `min-run=theta` asks
    // ⌈θ_seq⌉ = 4.
    assert_eq!(p.min_run, 2);
    assert_eq!(p.clone().with_min_run(MinRun::Theta).min_run, 4);
    assert_eq!(p.clone().with_min_run(MinRun::Pair), p);
    // "Larger than θ_x" (§3.2 as printed): m == θ_seq = 4 does not qualify, 5 does.
    let seq = |n: u64| Instance {
        pattern: Pattern::Sequential,
        pages: (1..=n).collect(),
    };
    assert!(!p.qualifies(&seq(4)), "m == θ_seq");
    assert!(p.qualifies(&seq(5)));
    let foc = Instance {
        pattern: Pattern::Focused,
        pages: (0..8).map(|x| x * 10).collect(),
    };
    assert!(!p.qualifies(&foc), "8 < θ_focus ≈ 8.04");
}

/// Naive references.
fn naive_runs(set: &BTreeSet<u64>) -> Vec<(u64, u64)> {
    let mut runs = Vec::new();
    let v: Vec<u64> = set.iter().copied().collect();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        runs.push((v[i], (j - i + 1) as u64));
        i = j + 1;
    }
    runs
}

fn naive_window(set: &BTreeSet<u64>, f: u64) -> usize {
    set.iter()
        .map(|&x| set.range(x..x.saturating_add(f)).count())
        .max()
        .unwrap_or(0)
}

fn naive_aligned(set: &BTreeSet<u64>, f: u64) -> usize {
    let mut c: HashMap<u64, usize> = HashMap::new();
    for &x in set {
        *c.entry(x / f).or_default() += 1;
    }
    c.values().copied().max().unwrap_or(0)
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u64),
    Remove(u64),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            3 => (0u64..300).prop_map(Op::Insert),
            1 => (0u64..300).prop_map(Op::Remove),
        ],
        0..300,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn incremental_agrees_with_on_demand_and_brute_force(
        ops in ops(), focus in 1u64..40, partitions in 1usize..5, min_run in 2u64..5
    ) {
        let p = params(focus, partitions, min_run);
        let mut inc = IncrementalRecognizer::new(&p);
        let mut set = BTreeSet::new();
        for (k, op) in ops.iter().enumerate() {
            match *op {
                Op::Insert(x) => { inc.insert(x); set.insert(x); }
                Op::Remove(x) => { inc.remove(x); set.remove(&x); }
            }
            if k % 16 == 0 {
                prop_assert!(inc.check().is_ok(), "{:?}", inc.check());
            }
        }
        prop_assert!(inc.check().is_ok(), "{:?}", inc.check());
        prop_assert_eq!(inc.len(), set.len());
        let mut d: Vec<u64> = set.iter().copied().collect();
        let od = on_demand(&mut d, &p);
        let ic = inc.candidates();
        // Sequential and partitioned: the same instances.
        prop_assert_eq!(&ic.sequential, &od.sequential);
        prop_assert_eq!(&ic.partitioned, &od.partitioned);
        // Brute force: the longest run, and the runs of the partitioned instance.
        let runs = naive_runs(&set);
        let longest = runs.iter().map(|r| r.1).max().unwrap_or(0);
        prop_assert_eq!(pages(&od.sequential).len() as u64, longest);
        let mut lens: Vec<u64> = runs.iter().map(|r| r.1).filter(|&l| l >= min_run).collect();
        lens.sort_unstable_by(|a, b| b.cmp(a));
        lens.truncate(partitions);
        // One run is a sequential instance, not a partitioned one.
        let want: u64 = if lens.len() >= 2 { lens.iter().sum() } else { 0 };
        prop_assert_eq!(pages(&od.partitioned).len() as u64, want);
        // Focused: on-demand is the fullest window, incremental the fullest aligned area,
        // never larger and at least half as large.
        let w = pages(&od.focused).len();
        let a = pages(&ic.focused).len();
        prop_assert_eq!(w, naive_window(&set, focus));
        prop_assert_eq!(a, naive_aligned(&set, focus));
        prop_assert!(a <= w && 2 * a >= w, "aligned {} window {}", a, w);
        // Instances are sorted staged pages within the pattern's bounds.
        for i in [&od.sequential, &od.partitioned, &od.focused, &ic.focused].into_iter().flatten() {
            prop_assert!(i.pages.windows(2).all(|x| x[0] < x[1]));
            prop_assert!(i.pages.iter().all(|x| set.contains(x)));
        }
        if let Some(f) = &od.focused {
            prop_assert!(f.pages.last().unwrap() - f.pages[0] < focus);
        }
        if let Some(s) = &od.sequential {
            prop_assert!(s.pages.windows(2).all(|x| x[1] == x[0] + 1));
        }
        // The best instance has the top score of the candidates.
        if let Some(b) = od.clone().best(&p) {
            for c in [&od.sequential, &od.partitioned, &od.focused].into_iter().flatten() {
                prop_assert!(p.score(&b) >= p.score(c));
            }
        }
    }

    #[test]
    #[allow(clippy::map_entry)] // the model mirrors the table's calls one by one
    fn sbtt_matches_a_hash_map(ops in prop::collection::vec((0u8..4, 0u64..64, 0u32..40), 0..400)) {
        let n = 40u32;
        let mut t = Sbtt::new(n);
        let mut model: HashMap<u64, u32> = HashMap::new();
        let mut free: BTreeSet<u32> = (0..n).collect();
        for (kind, d, _) in ops {
            match kind {
                0 | 1 => {
                    if !model.contains_key(&d) {
                        if let Some(&s) = free.iter().next() {
                            free.remove(&s);
                            t.insert(d, s);
                            model.insert(d, s);
                        }
                    }
                }
                2 => {
                    let got = t.remove(d);
                    let want = model.remove(&d);
                    prop_assert_eq!(got, want);
                    if let Some(s) = want { free.insert(s); }
                }
                _ => {
                    if model.contains_key(&d) {
                        if let Some(&s) = free.iter().next() {
                            free.remove(&s);
                            let old = t.replace(d, s).unwrap();
                            prop_assert_eq!(Some(old), model.insert(d, s));
                            free.insert(old);
                        }
                    }
                }
            }
            prop_assert!(t.check().is_ok(), "{:?}", t.check());
        }
        prop_assert_eq!(t.len(), model.len());
        for d in 0..64u64 {
            prop_assert_eq!(t.get(d), model.get(&d).copied());
        }
        let mut pairs: Vec<(u64, u32)> = t.iter().collect();
        pairs.sort_unstable();
        let mut want: Vec<(u64, u32)> = model.into_iter().collect();
        want.sort_unstable();
        prop_assert_eq!(pairs, want);
    }

    #[test]
    fn slot_bits_keep_their_invariants(ops in prop::collection::vec(0u8..6, 0..400), n in 1u32..130) {
        let mut b = SlotBits::new(n);
        let mut used: BTreeSet<u32> = BTreeSet::new();
        let mut held: BTreeSet<u32> = BTreeSet::new();
        let mut releasing: BTreeSet<u32> = BTreeSet::new();
        for (k, op) in ops.into_iter().enumerate() {
            match op {
                0 | 1 => match b.alloc() {
                    Some(s) => {
                        prop_assert!(s < n && !used.contains(&s) && !held.contains(&s) && !releasing.contains(&s));
                        used.insert(s);
                    }
                    None => prop_assert_eq!(used.len() + held.len() + releasing.len(), n as usize),
                },
                2 => if let Some(&s) = used.iter().nth(k % used.len().max(1)) {
                    b.free(s);
                    used.remove(&s);
                },
                3 => if let Some(&s) = used.iter().next() {
                    b.hold(s);
                    used.remove(&s);
                    held.insert(s);
                },
                4 => {
                    b.start_sync();
                    releasing.append(&mut held);
                }
                _ => {
                    let r = b.finish_sync();
                    prop_assert_eq!(r as usize, releasing.len());
                    releasing.clear();
                }
            }
            prop_assert!(b.check().is_ok(), "{:?}", b.check());
            prop_assert_eq!(b.free_count() as usize, n as usize - used.len() - held.len() - releasing.len());
        }
    }
}
