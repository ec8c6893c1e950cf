#![allow(clippy::unwrap_used)]
//! The policy advisor's window rules (FD-Buffer §4.4), the injected clock, online `R`
//! (§4.2) and the `R` override used by the asymmetry models.

use flashbuf_core::{FrameId, PageId};
use flashbuf_pool::policy::fd_buffer::{FdBuffer, FdBufferOptions};
use flashbuf_pool::policy::{Access, IoKind, Policy, Victim};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Replays `n` reads of distinct pages (every one a miss) directly on the policy.
fn all_misses<C, D>(p: &mut FdBuffer<C, D>, n: u64)
where
    C: flashbuf_pool::policy::fd_buffer::PoolOrder,
    D: flashbuf_pool::policy::fd_buffer::PoolOrder,
{
    let frames = p.frames_count() as u32;
    let h = p.handle();
    for i in 0..n {
        let f = if i < u64::from(frames) {
            FrameId(i as u32)
        } else {
            h.set_next_access(Access::Read);
            let Some(Victim::Evict(v)) = p.choose_victim(&|_| true) else {
                panic!("no victim")
            };
            p.on_remove(v);
            v
        };
        p.on_insert(f, PageId(1_000 + i), Access::Read);
    }
}

#[test]
fn fixed_windows_close_every_n_references() {
    let mut p = FdBuffer::new(
        8,
        FdBufferOptions::default()
            .fixed_r(5.0)
            .window_refs(7)
            .track_accuracy(true),
    )
    .unwrap();
    all_misses(&mut p, 50);
    assert_eq!(p.advisor_stats().windows, 7);
    let recs = p.handle().window_records();
    assert!(recs
        .iter()
        .all(|r| r.refs == 7 && r.measured.p_c == 1.0 && r.measured.p_d == 1.0));
    // All misses: every estimate is a miss rate of 1 too.
    assert!(recs
        .iter()
        .all(|r| r.estimated.p_c == 1.0 && r.estimated.p_d == 1.0));
}

#[test]
fn cost_bound_windows_keep_the_advisor_under_q_of_the_io_cost() {
    // A clock that advances 1 ms per reading: each advisor run measures Comp = 1 ms.
    let t = Arc::new(AtomicU64::new(0));
    let tc = t.clone();
    let clock = Arc::new(move || tc.fetch_add(1_000_000, Ordering::Relaxed));
    let opts = FdBufferOptions::default()
        .fixed_r(10.0)
        .read_cost_us(100.0)
        .overhead_bound(0.01, 10, 5_000)
        .clock(clock)
        .track_accuracy(true);
    let mut p = FdBuffer::new(8, opts).unwrap();
    // First window: no Comp yet, closes at min_refs. Then Comp/q = 100 ms of I/O =
    // 1,000 misses of 100 µs each.
    all_misses(&mut p, 10 + 3 * 1_000 + 5);
    let refs: Vec<u64> = p.handle().window_records().iter().map(|r| r.refs).collect();
    assert_eq!(refs, vec![10, 1_000, 1_000, 1_000]);
    let s = p.advisor_stats();
    assert_eq!((s.windows, s.advisor_ns), (4, 4_000_000));
    // The bound holds: advisor time <= q * I/O cost of the windows after the first.
    assert!(s.advisor_ns as f64 <= 0.01 * 3_000.0 * 100_000.0 + 1_000_000.0);
}

#[test]
fn online_r_is_learned_from_observed_latencies_and_can_be_overridden() {
    let mut p = FdBuffer::new(4, FdBufferOptions::default().online_r(4, 3.0)).unwrap();
    assert!(p.wants_io_observations());
    assert_eq!(p.r(), 3.0);
    for _ in 0..4 {
        p.observe_io(IoKind::Read, 10.0);
        p.observe_io(IoKind::Write, 1_360.0);
    }
    assert_eq!(p.r(), 136.0);
    let h = p.handle();
    h.set_r(Some(25.0));
    assert_eq!(p.r(), 25.0);
    h.set_r(None);
    assert_eq!(p.r(), 136.0);
    let fixed = FdBuffer::new(4, FdBufferOptions::default().fixed_r(7.0)).unwrap();
    assert!(!fixed.wants_io_observations());
    let report = fixed.report();
    assert!(report.contains(&("r", 7.0)) && report.contains(&("m_c", 2.0)));
}

#[test]
fn bad_options_are_refused() {
    for o in [
        FdBufferOptions::default().group_size(0),
        FdBufferOptions::default().window_refs(0),
        FdBufferOptions::default().fixed_r(f64::NAN),
        FdBufferOptions::default().online_r(0, 1.0),
        FdBufferOptions::default().overhead_bound(0.0, 1, 10),
        FdBufferOptions::default().initial_clean_ratio(1.5),
    ] {
        assert!(FdBuffer::new(8, o).is_err());
    }
    assert!(FdBuffer::new(0, FdBufferOptions::default()).is_err());
}
