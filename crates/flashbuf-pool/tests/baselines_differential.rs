#![allow(clippy::unwrap_used)]
//! The classic baselines (CLOCK, PostgreSQL's clock sweep, ARC, 2Q, S3-FIFO) against their
//! naive versions (`reference::NaiveClock`, `reference::NaiveClockSweep`,
//! `reference::NaiveArc`, ...) through the real pool: same counters and the same store
//! calls in the same order, over random read/write mixes, buffer sizes, options, pins (the
//! victim search must pass pinned frames) and flushes. Both are
//! built from the spec through the policy table. The random cases come from a fixed seed
//! (proptest's deterministic RNG), so every run checks the same cases.

mod common;
mod policy_harness;

use flashbuf_core::DeviceFacts;
use policy_harness::{context, pair, replay, trace, Op};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Runs `cases` cases of (spec, frames, trace) with a fixed seed.
fn check(specs: impl Strategy<Value = String>, cases: u32) {
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let strategy = (specs, 1usize..40, trace(800));
    runner
        .run(
            &strategy,
            |(spec, frames, ops): (String, usize, Vec<Op>)| {
                let (fast, naive) = pair(&spec, &context(frames, DeviceFacts::default()));
                let a = replay(fast, frames, &ops);
                let b = replay(naive, frames, &ops);
                prop_assert!(a == b, "{spec} at {frames} frames: {:?} vs {:?}", a.0, b.0);
                Ok(())
            },
        )
        .unwrap();
}

#[test]
fn clock_matches_naive() {
    let specs = prop_oneof![
        Just("clock".to_string()),
        Just("clock:init_ref=true".to_string()),
        Just("clock:clustering=batch".to_string()),
    ];
    check(specs, 512);
}

#[test]
fn clock_sweep_matches_naive() {
    let specs = prop_oneof![
        3 => Just("clock-sweep".to_string()),
        1 => (1u32..=7).prop_map(|m| format!("clock-sweep:max_usage={m}")),
        1 => Just("clock-sweep:clustering=drain".to_string()),
    ];
    check(specs, 512);
}

#[test]
fn arc_matches_naive() {
    let specs = prop_oneof![
        3 => Just("arc".to_string()),
        1 => Just("arc:clustering=batch".to_string()),
    ];
    check(specs, 512);
}

#[test]
fn two_q_matches_naive() {
    let specs = prop_oneof![
        3 => Just("2q".to_string()),
        1 => (0.0f64..=1.0, 0.0f64..=1.0).prop_map(|(i, o)| format!("2q:kin={i},kout={o}")),
        1 => Just("2q:clustering=drain".to_string()),
    ];
    check(specs, 512);
}

#[test]
fn s3_fifo_matches_naive() {
    let specs = prop_oneof![
        3 => Just("s3-fifo".to_string()),
        2 => (0.0f64..=1.0, 0.0f64..=2.0, 1u32..=3, any::<bool>()).prop_map(|(s, g, t, m)| {
            format!("s3-fifo:small={s},ghost={g},threshold={t},fill_main={m}")
        }),
        1 => Just("s3-fifo:clustering=batch".to_string()),
    ];
    check(specs, 512);
}
