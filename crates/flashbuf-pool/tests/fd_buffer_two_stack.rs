#![allow(clippy::unwrap_used)]
//! Two-Stack estimation (FD-Buffer §4.3): hand-built reference strings with known stack
//! distances and present conditions, the fast estimator against its naive reference, and
//! the group-based optimization against exact stacks.

use flashbuf_pool::policy::fd_buffer::cost::Curves;
use flashbuf_pool::policy::fd_buffer::naive::NaiveTwoStack;
use flashbuf_pool::policy::fd_buffer::two_stack::{HitCounters, TwoStack};
use proptest::prelude::*;

fn run(m: usize, z: usize, pr: bool, refs: &[(bool, u64)]) -> TwoStack {
    let mut s = TwoStack::new(m, z, pr);
    for &(w, p) in refs {
        s.access(p, w);
        s.check().unwrap();
    }
    s
}

fn nonzero(v: &[u64]) -> Vec<(usize, u64)> {
    v.iter()
        .enumerate()
        .filter(|e| *e.1 > 0)
        .map(|(i, &n)| (i, n))
        .collect()
}

#[test]
fn reads_give_mattson_distances() {
    // a b c a b d a: distances ∞ ∞ ∞ 3 3 ∞ 3 (a: after b c; b: after c a; a: after b d).
    let (a, b, c, d) = (1, 2, 3, 4);
    let s = run(
        8,
        1,
        true,
        &[
            (false, a),
            (false, b),
            (false, c),
            (false, a),
            (false, b),
            (false, d),
            (false, a),
        ],
    );
    let k = s.counters();
    assert_eq!(nonzero(&k.c_read), vec![(3, 3), (9, 4)]);
    assert_eq!(nonzero(&k.d_read), vec![(9, 7)]);
    // Eq. (5) at M_c = 3: 3 hits of 7 accesses.
    let curves = Curves::new(k);
    assert!((curves.rates(3).p_c - 4.0 / 7.0).abs() < 1e-12);
    assert!((curves.rates(2).p_c - 1.0).abs() < 1e-12);
}

#[test]
fn writes_move_pages_from_clru_to_dlru() {
    // r a, r b, w a (CLRU hit at 2, DLRU miss), w a (DLRU hit at 1), r b (CLRU hit at 1:
    // a left CLRU).
    let s = run(
        8,
        1,
        true,
        &[(false, 1), (false, 2), (true, 1), (true, 1), (false, 2)],
    );
    let k = s.counters();
    assert_eq!(nonzero(&k.c_write), vec![(2, 1), (9, 1)]);
    assert_eq!(nonzero(&k.d_write), vec![(1, 1), (9, 1)]);
    assert_eq!(nonzero(&k.c_read), vec![(1, 1), (9, 2)]);
    assert_eq!(s.clru().entries(), vec![(2, 0)]);
    assert_eq!(s.dlru().entries(), vec![(1, 0)]);
}

#[test]
fn present_conditions_as_in_algorithm_3() {
    let m = 8u32;
    // w a: DLRU [a]. r b: CLRU [b]. r a: only in DLRU, d_d = 1 -> Hit_d^r[1], CLRU gets a
    // with PCond_c = (M_c > M - 1), θ = M; DLRU keeps a with PCond_d = (M_d >= 1).
    let refs = [(true, 1u64), (false, 2), (false, 1)];
    let s = run(m as usize, 1, true, &refs);
    assert_eq!(s.clru().entries(), vec![(1, m), (2, 0)]);
    assert_eq!(s.dlru().entries(), vec![(1, 1)]);
    assert_eq!(nonzero(&s.counters().d_read), vec![(1, 1), (9, 1)]);
    // r c, r a: a in both; CLRU distance 2 but θ = M -> i = M; DLRU distance 1, θ 1 -> 1.
    let mut refs2 = refs.to_vec();
    refs2.extend([(false, 3), (false, 1)]);
    let s = run(m as usize, 1, true, &refs2);
    let k = s.counters();
    assert_eq!(nonzero(&k.c_read), vec![(8, 1), (9, 3)]);
    assert_eq!(nonzero(&k.d_read), vec![(1, 2), (9, 2)]);
    // Without present conditions the CLRU hit counts at its plain distance 2.
    let s = run(m as usize, 1, false, &refs2);
    assert_eq!(nonzero(&s.counters().c_read), vec![(2, 1), (9, 3)]);
    // The page is in exactly one pool for every M_c: C iff M_c >= 8, i.e. M_d = 0 <  1.
}

#[test]
fn truncation_at_m_keeps_estimates() {
    // Distances beyond M count as misses either way.
    let refs: Vec<(bool, u64)> = (0..50).map(|i| (i % 3 == 0, i % 7)).collect();
    let small = run(4, 1, true, &refs);
    let mut naive = NaiveTwoStack::new(4, 1, true);
    for &(w, p) in &refs {
        naive.access(p, w);
    }
    assert_eq!(small.counters(), naive.counters());
    assert!(small.clru().len() <= 4 && small.dlru().len() <= 4);
}

fn cum(v: &[u64], s: usize) -> u64 {
    v[1..=s].iter().sum()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The fast estimator (group lists) equals the naive one (linear search + quantized
    /// distances) counter for counter, with and without present conditions.
    #[test]
    fn two_stack_matches_naive(
        m in 1usize..20,
        z in prop_oneof![Just(1usize), Just(2), Just(3), Just(4), Just(64)],
        pr in any::<bool>(),
        refs in proptest::collection::vec((any::<bool>(), 0u64..30), 0..400)
    ) {
        let mut fast = TwoStack::new(m, z, pr);
        let mut naive = NaiveTwoStack::new(m, z, pr);
        for &(w, p) in &refs {
            fast.access(p, w);
            naive.access(p, w);
        }
        fast.check().unwrap();
        prop_assert_eq!(fast.counters(), naive.counters());
        let (c, d) = naive.stacks();
        prop_assert_eq!(fast.clru().entries(), c.to_vec());
        prop_assert_eq!(fast.dlru().entries(), d.to_vec());
    }

    /// On single-stack strings (reads only, or writes only) the group-based counts are
    /// exact at multiples of z and bracketed in between:
    /// exact(s − z + 1) ≤ grouped(s) ≤ exact(s).
    #[test]
    fn grouped_hits_are_bracketed_by_exact_hits(
        m in 1usize..40,
        z in 2usize..9,
        write in any::<bool>(),
        pages in proptest::collection::vec(0u64..60, 0..500)
    ) {
        let refs: Vec<(bool, u64)> = pages.iter().map(|&p| (write, p)).collect();
        let g = run(m, z, true, &refs);
        let e = run(m, 1, true, &refs);
        let pick = |k: &HitCounters| if write { k.d_write.clone() } else { k.c_read.clone() };
        let (gv, ev) = (pick(g.counters()), pick(e.counters()));
        for s in 1..=m {
            let lo = if s >= z { cum(&ev, s + 1 - z) } else { 0 };
            prop_assert!(lo <= cum(&gv, s) && cum(&gv, s) <= cum(&ev, s), "s={s}");
            if s % z == 0 {
                prop_assert_eq!(cum(&gv, s), cum(&ev, s));
            }
        }
    }
}
