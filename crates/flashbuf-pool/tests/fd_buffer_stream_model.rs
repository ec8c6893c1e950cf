#![allow(clippy::unwrap_used)]
//! FD-Buffer's Two-Stack estimators detached as a stream model
//! (`Policy::detach_stream_model`, `fd_buffer/stream_model.rs`) give the same decisions,
//! figures and window records as the estimators fed inline, in every configuration of the
//! golden file; windows that depend on the pool's I/O keep the estimator inline; a broken
//! contract (a window closing before its counters arrived) is reported, never hidden.

mod fd_buffer_support;

use fd_buffer_support::{golden_configs, small_store};
use flashbuf_core::PageId;
use flashbuf_pool::policy::fd_buffer::{FdBuffer, FdBufferOptions};
use flashbuf_pool::policy::{Policy, StreamOutput, StreamRef};
use flashbuf_pool::BufferPool;

const FRAMES: usize = 1_024;
const REFS: usize = 120_000;
/// References per delivery: not a multiple of the window, so windows end inside chunks.
const CHUNK: usize = 7_919;
/// How far ahead the tests run the model (the lab's run-ahead).
const AHEAD: u64 = 327_680;

/// The golden file's configurations, and two more (other groups, windows).
fn configs() -> Vec<(&'static str, FdBufferOptions)> {
    let base = || FdBufferOptions::default().fixed_r(136.0);
    let mut v = golden_configs();
    v.push(("groups-of-4", base().group_size(4)));
    v.push(("window-777", base().window_refs(777)));
    v
}

fn access(pool: &BufferPool<impl flashbuf_store::PageStore>, write: bool, page: u64) {
    if write {
        drop(pool.write(PageId(page)).unwrap());
    } else {
        drop(pool.read(PageId(page)).unwrap());
    }
}

/// Everything a run shows: pool counters, every report figure, every window record.
fn run(opts: FdBufferOptions, trace: &[(bool, u64)], detach: bool) -> String {
    let mut p: Box<dyn Policy> = Box::new(FdBuffer::from_options(FRAMES, opts).unwrap());
    let mut model = if detach {
        Some(
            p.detach_stream_model(AHEAD)
                .expect("a window of fixed references detaches"),
        )
    } else {
        None
    };
    let pool = BufferPool::new(small_store(), FRAMES, p).unwrap();
    let mut outs: Vec<StreamOutput> = Vec::new();
    for chunk in trace.chunks(CHUNK) {
        // As the replay does: the model runs ahead over the chunk, its outputs are
        // delivered, then the pool sees the chunk.
        if let Some(m) = model.as_mut() {
            let refs: Vec<StreamRef> = chunk
                .iter()
                .map(|&(write, pg)| StreamRef {
                    page: PageId(pg),
                    write,
                })
                .collect();
            m.observe(&refs, &mut outs);
            pool.stream_outputs(&mut outs);
            assert!(outs.is_empty());
        }
        for &(w, pg) in chunk {
            access(&pool, w, pg);
        }
        pool.check_invariants().unwrap();
    }
    if let Some(m) = model.as_mut() {
        m.finish(&mut outs);
        pool.stream_outputs(&mut outs);
    }
    pool.check_invariants().unwrap();
    let report = pool.policy_report_full();
    format!(
        "{:?}\n{:?}\n{:?}\nbytes_per_frame={}",
        pool.stats(),
        report.figures,
        report.windows,
        pool.metadata_bytes_per_frame()
    )
}

#[test]
fn detached_estimator_gives_the_same_run_in_every_configuration() {
    let Some(trace) = fd_buffer_support::tpcc_compact() else {
        return;
    };
    let trace = &trace[..REFS];
    for (name, opts) in configs() {
        let inline = run(opts.clone(), trace, false);
        let detached = run(opts, trace, true);
        assert_eq!(inline, detached, "{name}: inline vs detached");
        assert!(inline.contains("stack_work"), "{name}: {inline}");
    }
}

#[test]
fn windows_of_the_pools_own_io_keep_the_estimator() {
    let opts = FdBufferOptions::default()
        .fixed_r(10.0)
        .overhead_bound(0.01, 100, 10_000);
    let mut p = FdBuffer::from_options(64, opts).unwrap();
    assert!(p.detach_stream_model(AHEAD).is_none());
}

#[test]
fn detaching_is_refused_after_the_first_reference_or_twice() {
    let opts = FdBufferOptions::default().fixed_r(10.0).window_refs(100);
    let mut p = FdBuffer::from_options(8, opts.clone()).unwrap();
    p.on_insert(
        flashbuf_core::FrameId(0),
        PageId(3),
        flashbuf_pool::policy::Access::Read,
    );
    assert!(p.detach_stream_model(AHEAD).is_none());
    let mut q = FdBuffer::from_options(8, opts).unwrap();
    assert!(q.detach_stream_model(AHEAD).is_some());
    assert!(q.detach_stream_model(AHEAD).is_none());
}

/// Regression guard for the contract: the pool's references arrive before the model's
/// outputs (a caller that forgot to deliver them). The windows keep `M_c`, the report
/// says how many, and the invariant check fails.
#[test]
fn windows_without_their_counters_are_reported_and_fail_the_check() {
    let opts = FdBufferOptions::default().fixed_r(10.0).window_refs(50);
    let mut p: Box<dyn Policy> = Box::new(FdBuffer::from_options(16, opts).unwrap());
    let _model = p.detach_stream_model(AHEAD).unwrap();
    let pool = BufferPool::new(small_store(), 16, p).unwrap();
    for i in 0..120u64 {
        access(&pool, i % 3 == 0, i % 40);
    }
    let report = pool.policy_report_full();
    assert_eq!(report.get("stream_underruns"), Some(2.0));
    assert_eq!(report.get("m_c"), Some(8.0), "M_c kept at its start");
    let err = pool.check_invariants().unwrap_err();
    assert!(err.contains("2 windows closed before"), "{err}");
}

/// The counters of the windows in flight are bounded: a buffer whose counters would
/// take more than the budget keeps its estimator inline (fewer windows ahead detach).
#[test]
fn large_buffers_keep_the_estimator_when_counters_in_flight_would_not_fit() {
    let opts = FdBufferOptions::default().fixed_r(10.0);
    let mut big = FdBuffer::from_options(100_000, opts.clone()).unwrap();
    assert!(big.detach_stream_model(AHEAD).is_none());
    assert!(big.detach_stream_model(10_000).is_some());
    let mut small = FdBuffer::from_options(1_241, opts).unwrap();
    assert!(small.detach_stream_model(AHEAD).is_some());
}
