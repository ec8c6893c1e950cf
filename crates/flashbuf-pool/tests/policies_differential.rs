#![allow(clippy::unwrap_used)]
//! Every entry of the policy table that has a naive reference (`PolicyEntry::reference`)
//! against it, through the real pool: same counters and the same store calls in the same
//! order, over random traces with pins and flushes.
//!
//! The specs are drawn from each entry's option schema (every option absent or set to a
//! value of its kind and range, small values favoured), so a new entry with a reference is
//! covered without touching this file. Specs that do not parse (contradicting options)
//! or that the reference does not model are filtered out. The per-policy files
//! (`casa_differential.rs`, ...) keep their own strategies and proptest regressions.

mod common;
mod policy_harness;

use flashbuf_core::config::{OptKind, OptionSpec, Spec};
use flashbuf_core::DeviceFacts;
use flashbuf_pool::policy::registry::{self, PolicyContext, PolicyEntry, POLICIES};
use policy_harness::{context, pair, replay, trace, Op};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};

/// Devices the specs are built for: unknown (costs 1/1, clusters of 64), flash-25-like,
/// and a device with an 8-page erase block and a write/read ratio of 136.
fn facts() -> impl Strategy<Value = DeviceFacts> {
    select(vec![
        DeviceFacts::default(),
        DeviceFacts {
            erase_block_bytes: None,
            read_us: 1.0,
            write_us: 25.0,
            seq_write_us: None,
        },
        DeviceFacts {
            erase_block_bytes: Some(8 * policy_harness::PAGE_SIZE as u64),
            read_us: 100.0,
            write_us: 13_600.0,
            seq_write_us: None,
        },
    ])
}

/// A value of `kind` as text: the bounds and small values are favoured.
fn value(kind: OptKind) -> BoxedStrategy<String> {
    match kind {
        OptKind::Bool => any::<bool>().prop_map(|b| b.to_string()).boxed(),
        OptKind::UInt { min, max } | OptKind::Bytes { min, max } => {
            let hi = max.min(min.saturating_add(99));
            prop_oneof![Just(min), min..=hi]
                .prop_map(|v| v.to_string())
                .boxed()
        }
        OptKind::Float { min, max } => float(min, max),
        OptKind::Choice(words) => select(words).prop_map(str::to_string).boxed(),
        OptKind::FloatOr { min, max, words } => {
            prop_oneof![select(words).prop_map(str::to_string), float(min, max)].boxed()
        }
        OptKind::Text => Just("x".to_string()).boxed(),
    }
}

fn float(min: f64, max: f64) -> BoxedStrategy<String> {
    let hi = max.min(min + 1_000.0);
    prop_oneof![Just(min), Just(hi), min..=hi]
        .prop_map(|v| v.to_string())
        .boxed()
}

/// A spec of `entry`: each option absent (two in three) or given.
fn spec_of(entry: &'static PolicyEntry) -> BoxedStrategy<String> {
    let opts: Vec<BoxedStrategy<Option<String>>> = entry
        .options
        .iter()
        .map(|o: &OptionSpec| {
            let key = o.key;
            prop_oneof![
                2 => Just(None),
                1 => value(o.kind).prop_map(move |v| Some(format!("{key}={v}"))),
            ]
            .boxed()
        })
        .collect();
    opts.prop_map(move |kv| {
        let kv: Vec<String> = kv.into_iter().flatten().collect();
        if kv.is_empty() {
            entry.name.to_string()
        } else {
            format!("{}:{}", entry.name, kv.join(","))
        }
    })
    .boxed()
}

/// Whether `spec` parses, builds, and has a reference that models it.
fn comparable(spec: &str, ctx: &PolicyContext<'_>) -> bool {
    let Ok(parsed) = Spec::parse(spec, |_| false) else {
        return false;
    };
    let Ok((_, factory)) = registry::parse(&parsed) else {
        return false;
    };
    factory.build(ctx).is_ok() && matches!(factory.build_reference(ctx), Some(Ok(_)))
}

/// Cases per entry.
const CASES: u32 = 160;

/// Each entry with a reference gets its own run of [`CASES`] cases (so entries whose
/// random specs are often filtered out are not starved); failures are persisted in
/// `proptest-regressions/` like those of the `proptest!` macro.
#[test]
fn every_entry_with_a_reference_matches_it() {
    let mut compared = 0;
    for entry in POLICIES.iter().filter(|e| e.reference.is_some()) {
        let mut runner = TestRunner::new(Config {
            cases: CASES,
            failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
                "proptest-regressions",
            ))),
            source_file: Some(file!()),
            ..Config::default()
        });
        let case = (spec_of(entry), 1usize..40, facts()).prop_filter(
            "spec without a modelled reference",
            |(spec, frames, facts)| comparable(spec, &context(*frames, *facts)),
        );
        let result = runner.run(&(case, trace(600)), |((spec, frames, facts), ops)| {
            let (fast, naive) = pair(&spec, &context(frames, facts));
            let a = replay(fast, frames, &ops);
            let b = replay(naive, frames, &ops);
            if a != b {
                return Err(TestCaseError::fail(format!(
                    "{spec} at {frames} frames on {facts:?}: {:?} vs {:?}",
                    a.0, b.0
                )));
            }
            Ok(())
        });
        if let Err(e) = result {
            panic!("{}: {e}", entry.name);
        }
        compared += 1;
    }
    assert!(
        compared >= 5,
        "only {compared} entries have a naive reference"
    );
}

/// Every entry that names a reference builds one for its defaults and for each golden spec
/// (and entries without one build none), and on a fixed trace both decide alike.
#[test]
fn references_exist_where_the_table_says_and_agree_on_the_golden_specs() {
    let ops: Vec<Op> = (0..3_000u64)
        .map(|i| {
            let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
            let p = policy_harness::BASES[(x % 4) as usize] + (x >> 2) % 20;
            match x % 50 {
                0 => Op::Flush,
                1..=4 => Op::Hold(p),
                5..=19 => Op::Write(p),
                _ => Op::Read(p),
            }
        })
        .collect();
    let frames = 24;
    let ctx = context(frames, DeviceFacts::default());
    for e in POLICIES {
        let parsed = Spec::parse(e.name, |_| false).unwrap();
        let has = e
            .parse_spec(&parsed)
            .unwrap()
            .build_reference(&ctx)
            .is_some();
        assert_eq!(
            has,
            e.reference.is_some(),
            "{}: reference {:?}",
            e.name,
            e.reference
        );
        if e.reference.is_none() {
            continue;
        }
        for spec in e.golden {
            if !comparable(spec, &ctx) {
                continue;
            }
            let (fast, naive) = pair(spec, &ctx);
            assert!(
                replay(fast, frames, &ops) == replay(naive, frames, &ops),
                "{spec} differs from its reference"
            );
        }
    }
}
