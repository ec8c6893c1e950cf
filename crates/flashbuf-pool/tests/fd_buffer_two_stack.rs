#![allow(clippy::unwrap_used)]
//! Two-Stack estimation (FD-Buffer §4.3): hand-built reference strings with known stack
//! distances and present conditions, the fast estimator against its naive reference, and
//! the group-based optimization against exact stacks.

use flashbuf_pool::policy::fd_buffer::cost::Curves;
use flashbuf_pool::policy::fd_buffer::naive::NaiveTwoStack;
use flashbuf_pool::policy::fd_buffer::two_stack::{Counter, HitCounters, TwoStack};
use proptest::prelude::*;

fn run(m: usize, z: usize, pr: bool, refs: &[(bool, u64)]) -> TwoStack {
    let mut s = TwoStack::new(m, z, pr);
    for &(w, p) in refs {
        s.access(p, w);
        s.check().unwrap();
    }
    s
}

fn nonzero(c: &Counter) -> Vec<(usize, u64)> {
    c.points().into_iter().map(|(i, v)| (i, v as u64)).collect()
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

fn cum(v: &[f64], s: usize) -> f64 {
    v[s]
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
    /// exact at multiples of z and, in between, within the exact counts at the
    /// surrounding multiples.
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
        let pick = |k: &HitCounters| {
            let mut out = Vec::new();
            if write { k.d_write.cumulative(&mut out) } else { k.c_read.cumulative(&mut out) }
            out
        };
        let (gv, ev) = (pick(g.counters()), pick(e.counters()));
        for s in 1..=m {
            // Spreading a group's hits uniformly over its positions keeps the curve
            // within the exact values at the group's ends.
            let below = (s / z) * z;
            let above = (below + z).min(m);
            let eps = 1e-9;
            prop_assert!(cum(&ev, below) <= cum(&gv, s) + eps, "s={s}");
            prop_assert!(cum(&gv, s) <= cum(&ev, above) + eps, "s={s}");
            if s % z == 0 {
                prop_assert!((cum(&gv, s) - cum(&ev, s)).abs() < eps);
            }
        }
    }
}

mod fd_buffer_support;

/// On the TPC-C trace (mixed reads and writes, present conditions on), the group-based
/// estimator (z = 64) against exact stacks (z = 1), window by window (5,000 references,
/// M = 1,024), at every M_c: the largest and the mean absolute difference of the
/// estimated P_c, P_d and P_d^w.
#[test]
fn group_based_estimates_stay_close_to_exact_on_tpcc() {
    let Some(trace) = fd_buffer_support::tpcc() else {
        return;
    };
    let (m, z) = (1_024, 64);
    let mut g = TwoStack::new(m, z, true);
    let mut e = TwoStack::new(m, 1, true);
    let (mut worst, mut worst_at_multiple, mut sum, mut n) =
        ([0.0f64; 3], [0.0f64; 3], [0.0f64; 3], 0u64);
    let (mut worst_big, mut sum_big, mut n_big) = ([0.0f64; 3], [0.0f64; 3], [0u64; 3]);
    for (i, &(w, p)) in trace[..200_000].iter().enumerate() {
        g.access(p, w);
        e.access(p, w);
        if i % 5_000 != 4_999 {
            continue;
        }
        let (cg, ce) = (Curves::new(g.counters()), Curves::new(e.counters()));
        for m_c in 1..m {
            let (a, b) = (cg.rates(m_c), ce.rates(m_c));
            let d = [
                (a.p_c - b.p_c).abs(),
                (a.p_d - b.p_d).abs(),
                (a.p_d_w - b.p_d_w).abs(),
            ];
            for k in 0..3 {
                worst[k] = worst[k].max(d[k]);
                sum[k] += d[k];
                let size = if k == 0 { m_c } else { m - m_c };
                if size % z == 0 {
                    worst_at_multiple[k] = worst_at_multiple[k].max(d[k]);
                }
                if size >= z {
                    worst_big[k] = worst_big[k].max(d[k]);
                    sum_big[k] += d[k];
                    n_big[k] += 1;
                }
            }
            n += 1;
        }
        g.clear_counters();
        e.clear_counters();
    }
    let mean = sum.map(|x| x / n as f64);
    let mean_big: Vec<f64> = (0..3).map(|k| sum_big[k] / n_big[k] as f64).collect();
    eprintln!(
        "group {z} vs exact, |ΔP| for P_c, P_d, P_d^w: max {worst:?}, mean {mean:?}; \
         at multiples of {z}: max {worst_at_multiple:?}; pool sizes >= {z}: max {worst_big:?}, \
         mean {mean_big:?}"
    );
    for k in 0..3 {
        assert!(
            worst_at_multiple[k] < 1e-9,
            "not exact at multiples of z ({k})"
        );
        assert!(mean[k] < 0.03, "mean error {k}: {}", mean[k]);
        assert!(
            mean_big[k] < 0.01,
            "mean error at sizes >= z ({k}): {}",
            mean_big[k]
        );
    }
}
