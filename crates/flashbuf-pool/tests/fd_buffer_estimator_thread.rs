#![allow(clippy::unwrap_used)]
//! FD-Buffer's estimators on their own thread (`estimator=thread`, the default where
//! runs do not share the cores) against the same estimators applied on the caller's
//! thread (`estimator=inline`): every count, figure and window record equal, through
//! the real pool, with the invariants (which read the estimators with events still
//! pending) checked in the middle of windows. The inline estimator of earlier versions
//! is pinned by `fd_buffer_golden.rs` and the policies' golden rows, unchanged.

mod fd_buffer_support;

use fd_buffer_support::small_store;
use flashbuf_core::PageId;
use flashbuf_pool::policy::fd_buffer::{Clustering, FdBuffer, FdBufferOptions};
use flashbuf_pool::policy::{Policy, PolicyReport};
use flashbuf_pool::{BufferPool, PoolStats};

/// The run's counts and report (memory figures set aside: the thread keeps more event
/// buffers), checking the invariants every `check_every` references.
fn run(
    opts: FdBufferOptions,
    frames: usize,
    trace: &[(bool, u64)],
    check_every: usize,
) -> (PoolStats, PolicyReport) {
    let p = FdBuffer::from_options(frames, opts).unwrap();
    let pool = BufferPool::new(small_store(), frames, Box::new(p) as Box<dyn Policy>).unwrap();
    for (i, &(w, pg)) in trace.iter().enumerate() {
        if w {
            drop(pool.write(PageId(pg)).unwrap());
        } else {
            drop(pool.read(PageId(pg)).unwrap());
        }
        if i % check_every == check_every - 1 {
            pool.check_invariants().unwrap();
        }
    }
    pool.check_invariants().unwrap();
    let mut report = pool.policy_report_full();
    report.figures.retain(|(k, _)| !k.contains("bytes"));
    (pool.stats(), report)
}

fn configs() -> Vec<(&'static str, FdBufferOptions)> {
    let base = || FdBufferOptions::default().fixed_r(136.0);
    vec![
        ("default", base()),
        ("table5", base().track_accuracy(true)),
        (
            "drain-64",
            base().clustering(Clustering::Drain { cluster_pages: 64 }),
        ),
        ("exact-stacks", base().group_size(1)),
        // Windows shorter than a batch: every close hands over a partial one.
        ("window-37", base().window_refs(37)),
        ("online-r", FdBufferOptions::default()),
    ]
}

#[test]
fn estimator_thread_counts_equal_inline() {
    let Some(trace) = fd_buffer_support::tpcc_compact() else {
        return;
    };
    let trace = &trace[..60_000];
    for (name, opts) in configs() {
        for frames in [64, 700] {
            let threaded = run(opts.clone().estimator_thread(true), frames, trace, 7_919);
            let inline = run(opts.clone().estimator_thread(false), frames, trace, 7_919);
            assert_eq!(
                threaded.0, inline.0,
                "{name} at {frames} frames: pool counts"
            );
            assert_eq!(threaded.1, inline.1, "{name} at {frames} frames: report");
            assert!(
                threaded.1.get("windows").unwrap() > 0.0,
                "{name}: no window closed"
            );
        }
    }
}

/// Dropping a policy whose thread still holds unapplied batches joins the thread (no
/// thread left behind, no hang), and a fresh policy after it starts from zero.
#[test]
fn dropping_mid_window_stops_the_thread() {
    for _ in 0..50 {
        let mut p = FdBuffer::new(16, FdBufferOptions::default().fixed_r(10.0)).unwrap();
        for f in 0..16u32 {
            p.on_insert(
                flashbuf_core::FrameId(f),
                PageId(u64::from(f)),
                flashbuf_pool::policy::Access::Read,
            );
        }
        for i in 0..1_000u32 {
            p.on_hit(
                flashbuf_core::FrameId(i % 16),
                flashbuf_pool::policy::Access::Write,
            );
        }
        p.check_invariants().unwrap();
        drop(p);
    }
}
