#![allow(clippy::unwrap_used)]
//! The policy advisor's window rules (FD-Buffer §4.4), the injected clock, online `R`
//! (§4.2) and the cost updates the asymmetry models send (`Policy::update_costs`).

use flashbuf_core::{DeviceFacts, FrameId, PageId};
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
    for i in 0..n {
        let f = if i < u64::from(frames) {
            FrameId(i as u32)
        } else {
            p.prepare_miss(PageId(u64::MAX), Access::Read);
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
    let recs = p.report().windows;
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
    let refs: Vec<u64> = p.window_records().iter().map(|r| r.refs).collect();
    assert_eq!(refs, vec![10, 1_000, 1_000, 1_000]);
    let s = p.advisor_stats();
    assert_eq!((s.windows, s.advisor_ns), (4, 4_000_000));
    // The bound holds: advisor time <= q * I/O cost of the windows after the first.
    assert!(s.advisor_ns as f64 <= 0.01 * 3_000.0 * 100_000.0 + 1_000_000.0);
}

fn costs(read_us: f64, write_us: f64) -> DeviceFacts {
    DeviceFacts {
        erase_block_bytes: None,
        read_us,
        write_us,
        seq_write_us: None,
    }
}

#[test]
fn online_r_is_learned_from_observed_latencies_and_ignores_cost_updates() {
    let mut p = FdBuffer::new(4, FdBufferOptions::default().online_r(4, 3.0)).unwrap();
    assert!(p.wants_io_observations());
    assert_eq!(p.r(), 3.0);
    for _ in 0..4 {
        p.observe_io(IoKind::Read, 10.0);
        p.observe_io(IoKind::Write, 1_360.0);
    }
    assert_eq!(p.r(), 136.0);
    // Online R measures the device: a cost update says nothing it does not see.
    p.update_costs(&costs(10.0, 250.0));
    assert_eq!(p.r(), 136.0);
}

#[test]
fn a_fixed_r_follows_cost_updates() {
    let mut fixed = FdBuffer::new(4, FdBufferOptions::default().fixed_r(7.0)).unwrap();
    assert!(!fixed.wants_io_observations());
    let report = fixed.report();
    assert_eq!((report.get("r"), report.get("m_c")), (Some(7.0), Some(2.0)));
    fixed.update_costs(&costs(10.0, 250.0));
    assert_eq!(fixed.r(), 25.0);
    assert_eq!(fixed.report().get("r"), Some(25.0));
    // A meaningless update (reads cost nothing, R would be infinite) is ignored.
    fixed.update_costs(&costs(0.0, 250.0));
    assert_eq!(fixed.r(), 25.0);
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
