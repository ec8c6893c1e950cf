#![allow(clippy::unwrap_used)]
//! CASA by hand-worked examples: τ moves on read hits in C and write hits in D by the
//! normalized costs times the list ratio, stays within 0..=B, and picks the list the
//! victim comes from; online costs from measured latencies; static costs follow the
//! device's cost updates (`Policy::update_costs`), learned ones do not.

use flashbuf_core::{DeviceFacts, FrameId, PageId};
use flashbuf_pool::policy::{Access, Casa, CasaConfig, IoKind, Policy, Victim};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

fn setup(read_cost: f64, write_cost: f64) -> Casa {
    // 6 frames: C = {0, 1} (0 older), D = {2, 3, 4, 5} (2 older). τ = 3.
    let mut p = Casa::new(6, read_cost, write_cost).unwrap();
    for f in 0..6u32 {
        let a = if f < 2 { Access::Read } else { Access::Write };
        p.on_insert(FrameId(f), PageId(u64::from(f)), a);
    }
    p.check_invariants().unwrap();
    p
}

#[test]
fn tau_moves_by_costs_and_list_ratio() {
    let mut p = setup(1.0, 3.0); // C_r = 1/4, C_w = 3/4
    assert!(close(p.target_clean(), 3.0));
    // |C| = 2 < τ = 3: the victim comes from D.
    assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(2))));
    // Read hit in C: τ += 1/4 · 4/2 = 0.5 → 3.5.
    p.on_hit(FrameId(0), Access::Read);
    assert!(close(p.target_clean(), 3.5));
    // Write hit in D: τ -= 3/4 · 2/4 = 0.375 → 3.125.
    p.on_hit(FrameId(3), Access::Write);
    assert!(close(p.target_clean(), 3.125));
    // Other hits leave τ alone; a write hit in C moves the page to D.
    p.on_hit(FrameId(4), Access::Read);
    p.on_hit(FrameId(1), Access::Write);
    assert!(close(p.target_clean(), 3.125));
    p.check_invariants().unwrap();
    // C = {0}, D = {2, 5, 3, 4, 1} (LRU first). Write hits in D push τ down:
    // 3.125 − 3/4·1/5 = 2.975, …, until |C| = 1 ≥ τ.
    let mut hits = 0;
    while p.target_clean() > 1.0 {
        p.on_hit(FrameId(5), Access::Write);
        hits += 1;
    }
    assert_eq!(hits, 15, "ceil((3.125 − 1) / 0.15)");
    assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
    // ...and never below 0.
    for _ in 0..20 {
        p.on_hit(FrameId(5), Access::Write);
    }
    assert_eq!(p.target_clean(), 0.0);
    p.check_invariants().unwrap();
}

#[test]
fn tau_is_capped_at_the_buffer_size() {
    let mut p = setup(100.0, 1.0); // C_r ≈ 0.99
    for _ in 0..10 {
        p.on_hit(FrameId(0), Access::Read); // += 0.99 · 4/2 each
    }
    assert_eq!(p.target_clean(), 6.0);
    // |C| = 2 < 6: victims from D even though C is not empty; D pinned: from C.
    assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(2))));
    let only_c = |f: FrameId| f.0 < 2;
    assert_eq!(p.choose_victim(&only_c), Some(Victim::Evict(FrameId(1))));
}

#[test]
fn cleaned_pages_join_c_in_recency_order() {
    let mut p = setup(1.0, 1.0);
    // A flush cleans 2 and 3 (older than 0 and 1? no: inserted after them).
    p.on_clean(FrameId(3));
    p.on_clean(FrameId(2));
    p.check_invariants().unwrap();
    // C = {0, 1, 2, 3} in recency order; |C| = 4 ≥ τ = 3: LRU of C is 0.
    assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(0))));
    p.on_remove(FrameId(0));
    p.on_remove(FrameId(1));
    // C = {2, 3}: 2 is older, although it was cleaned after 3.
    assert_eq!(
        p.choose_victim(&|f| f.0 != 4 && f.0 != 5),
        Some(Victim::Evict(FrameId(2)))
    );
    p.check_invariants().unwrap();
}

#[test]
fn costs_are_learned_from_measured_latencies() {
    let cfg = CasaConfig {
        read_cost: 1.0,
        write_cost: 1.0,
        learn_costs: true,
        learn_window: 4,
    };
    let mut p = Casa::with_config(4, cfg).unwrap();
    assert!(p.wants_io_observations());
    assert_eq!(p.costs(), (0.5, 0.5));
    p.observe_io(IoKind::Read, 100.0);
    assert_eq!(p.costs(), (0.5, 0.5), "no write measured yet");
    p.observe_io(IoKind::Write, 900.0);
    assert!(close(p.costs().0, 0.1) && close(p.costs().1, 0.9));
    // Moving averages: after the window fills, each sample weighs 1/4.
    for _ in 0..3 {
        p.observe_io(IoKind::Write, 900.0);
    }
    p.observe_io(IoKind::Write, 100.0); // 900 + (100 − 900)/4 = 700
    assert!(close(p.costs().1, 700.0 / 800.0));
    // Devices without a clock (latency 0) never zero a cost.
    let mut q = Casa::with_config(4, cfg).unwrap();
    q.observe_io(IoKind::Read, 0.0);
    q.observe_io(IoKind::Write, 0.0);
    assert_eq!(q.costs(), (0.5, 0.5));
    assert!(Casa::new(4, 0.0, 1.0).is_err());
    assert!(!Casa::new(4, 1.0, 2.0).unwrap().wants_io_observations());
}

#[test]
fn static_costs_follow_cost_updates_and_learned_ones_ignore_them() {
    let costs = |read_us: f64, write_us: f64| DeviceFacts {
        erase_block_bytes: None,
        read_us,
        write_us,
        seq_write_us: None,
    };
    let mut p = setup(1.0, 3.0);
    p.update_costs(&costs(100.0, 900.0));
    assert!(close(p.costs().0, 0.1) && close(p.costs().1, 0.9));
    assert!(close(p.target_clean(), 3.0), "τ stays where it is");
    // Non-positive costs are no costs: ignored.
    p.update_costs(&costs(0.0, 900.0));
    assert!(close(p.costs().0, 0.1));
    // The update now drives τ: a write hit in D moves it by C_w · |C|/|D| = 0.9 · 2/4.
    p.on_hit(FrameId(3), Access::Write);
    assert!(close(p.target_clean(), 3.0 - 0.45));
    let mut learned = Casa::with_config(
        4,
        CasaConfig {
            learn_costs: true,
            ..CasaConfig::default()
        },
    )
    .unwrap();
    learned.update_costs(&costs(100.0, 900.0));
    assert_eq!(learned.costs(), (0.5, 0.5));
}
