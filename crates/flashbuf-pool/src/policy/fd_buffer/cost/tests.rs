//! Unit tests of the cost model and the advisor's minimisation.

use super::*;

#[test]
fn table3_costs_cross_at_r_equal_2() {
    // Table 3: Belady 6/9 misses with 2 of 6 dirty evictions; FD-Buffer 8/9 with 1/8.
    let belady = |r: f64| 6.0 / 9.0 * (1.0 + 2.0 / 6.0 * r);
    let fdb = |r: f64| 8.0 / 9.0 * (1.0 + 1.0 / 8.0 * r);
    assert!((belady(2.0) - fdb(2.0)).abs() < 1e-12);
    assert!(belady(1.0) < fdb(1.0) && belady(3.0) > fdb(3.0));
    let rates = MissRates {
        p_c: 0.5,
        p_d: 0.5,
        p_d_w: 0.25,
    };
    assert!((normalized_cost(rates, 4.0) - 0.5).abs() < 1e-12);
}

#[test]
fn advisor_gives_space_to_the_dirty_pool_when_writes_are_dear() {
    // M = 4. Reads hit the clean pool at distance 3; writes hit the dirty pool at 2.
    let mut c = HitCounters::new(4);
    for _ in 0..10 {
        c.c_read.add(3, 3, 0);
        c.d_read.add_miss();
        c.d_write.add(2, 2, 0);
        c.c_write.add_miss();
    }
    let curves = Curves::new(&c);
    assert_eq!(curves.accesses(), 20);
    // R = 1: M_c = 3 (M_d = 1): P_c = 0.5, P_d = 1, P_d^w = 1 -> cost 1.0;
    //        M_c = 2 (M_d = 2): P_c = 1, P_d = 0.5, P_d^w = 0 -> 0.5;
    //        M_c = 1 (M_d = 3): the same 0.5, and the first minimum wins.
    assert_eq!(curves.best_m_c(1.0), (1, 0.5));
    let r = curves.rates(3);
    assert_eq!((r.p_c, r.p_d, r.p_d_w), (0.5, 1.0, 1.0));
}

#[test]
fn eq3_charges_write_backs_the_window_does_not_have() {
    // M = 4, 20 accesses. 10 reads: 4 hit the clean pool at distance 3, 6 are new.
    // 10 writes: 1 hits the dirty pool at distance 3, 9 are new.
    let mut c = HitCounters::new(4);
    for i in 0..10 {
        if i < 4 {
            c.c_read.add(3, 3, 0);
        } else {
            c.c_read.add_miss();
        }
        c.d_read.add_miss();
        if i < 1 {
            c.d_write.add(3, 3, 0);
        } else {
            c.d_write.add_miss();
        }
        c.c_write.add_miss();
    }
    let curves = Curves::new(&c);
    let r = 4.0;
    // Eq. (3) at M_c = 3: P_c = 0.8, P_d = P_d^w = 1: 0.8 · (1 + 4) = 4.0, that is 16
    // write-backs for the window's 16 misses; at M_c = 1: 0.95 · (1 + 0.9 · 4) = 4.37.
    let (m_c, cost) = curves.best_m_c(r);
    assert_eq!(m_c, 3);
    assert!((cost - 4.0).abs() < 1e-12);
    // Counted: M_c = 3 misses 16 and writes back all 10 writes: (16 + 10 · 4) / 20 =
    // 2.8; M_c = 1 misses 19 and writes back 9: (19 + 9 · 4) / 20 = 2.75, cheaper.
    let (m_c, cost) = curves.best_m_c_io_by(|_| r);
    assert_eq!(m_c, 1);
    assert!((cost - 2.75).abs() < 1e-12);
    // Moves charged: from M_c = 3, going to 1 drops 2 clean pages, (55 + 2) / 20 = 2.85
    // > 2.8: the advisor stays; from 2 (cost (20 + 10 · 4) / 20 = 3), lowering to 1
    // costs one read, 2.8, and raising to 3 one forced write-back, (56 + 4) / 20 = 3.
    for (from, want, want_cost) in [(Some(3), 3, 2.8), (Some(2), 1, 2.8), (None, 1, 2.75)] {
        let (m_c, cost) = curves.best_m_c_io_from(|_| r, from);
        assert_eq!(m_c, want, "from {from:?}");
        assert!((cost - want_cost).abs() < 1e-12, "from {from:?}: {cost}");
    }
    // Misses are P_c + P_d − 1, never more than Eq. (3)'s product.
    let rates = curves.rates(2);
    assert!(rates.p_c + rates.p_d - 1.0 <= rates.p_c * rates.p_d);
}

#[test]
fn a_cheaper_clustered_write_back_moves_the_advisor_to_a_larger_dirty_pool() {
    // M = 4. Reads hit the clean pool at distance 3; half of the writes hit the dirty
    // pool at distance 3, the other half are new pages.
    let mut c = HitCounters::new(4);
    for i in 0..10 {
        c.c_read.add(3, 3, 0);
        c.d_read.add_miss();
        if i % 2 == 0 {
            c.d_write.add(3, 3, 0);
        } else {
            c.d_write.add_miss();
        }
        c.c_write.add_miss();
    }
    let curves = Curves::new(&c);
    // Eq. (3), R = 1.5: M_c = 3 costs 0.5 · (1 + 1.5) = 1.25; M_c = 1 (M_d = 3) costs
    // 0.75 · (1 + 0.5 · 1.5) = 1.3125: the clean pool wins.
    let (m_c, cost) = curves.best_m_c(1.5);
    assert_eq!(m_c, 3);
    assert!((cost - 1.25).abs() < 1e-12);
    // Clustered write-backs a tenth as dear with 3 dirty pages (a lone page: full
    // price): M_d = 3 costs 0.75 · (1 + 0.5 · 0.15) = 0.80625.
    let (m_c, cost) = curves.best_m_c_by(|m_d| if m_d >= 3 { 0.15 } else { 1.5 });
    assert_eq!(m_c, 1);
    assert!((cost - 0.80625).abs() < 1e-12);
    // A constant factor is Eq. (3) itself.
    assert_eq!(curves.best_m_c_by(|_| 1.5), curves.best_m_c(1.5));
}
