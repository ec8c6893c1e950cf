#![allow(clippy::unwrap_used)]
//! Offline cost bounds in the run results (`--bounds`): on the bundled sample, the lower
//! bound is below every policy's cost (online, offline, clustered), the upper bound is the
//! cost of a real policy (replaying `offline:rule=best` through the pool gives it exactly),
//! Belady through the pool has exactly the bound's minimum misses, and the JSON carries the
//! fields.

use flashbuf_lab::bounds::BoundsCost;
use flashbuf_lab::{run, BufferSize, RunConfig, RunResult};
use std::path::PathBuf;

fn cfg(policy: &str, device: &str, frames: usize) -> RunConfig {
    RunConfig {
        trace: PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/traces/tpcc-sample.pagetrace.csv.zst"
        )),
        format: None,
        policy: flashbuf_lab::spec::parse(policy).unwrap(),
        store: flashbuf_lab::spec::parse("direct").unwrap(),
        device: flashbuf_lab::spec::parse(device).unwrap(),
        buffer: BufferSize::Pages(frames),
        page_size: 4096,
        seed: 5,
        paranoid: false,
        progress: false,
        limit_refs: Some(100_000),
        facts: None,
        ..RunConfig::default()
    }
}

fn with_bounds(policy: &str, device: &str, frames: usize, cost: BoundsCost) -> RunResult {
    let c = RunConfig {
        bounds: Some(cost),
        ..cfg(policy, device, frames)
    };
    let r = run(&c, None).unwrap();
    assert_eq!(r.verify_errors, 0, "{policy}");
    r
}

#[test]
fn bounds_bracket_every_policy_and_the_upper_bound_is_reached() {
    let frames = 200;
    let cost = BoundsCost::R(10.0);
    let policies = [
        "lru",
        "cflru",
        "cfdc",
        "casa:read_cost=1,write_cost=10",
        "fd-buffer:r=10",
        "fd-buffer:r=10,clustering=drain",
        "lru:clustering=batch",
        "belady",
        "offline:rule=clean-beyond",
    ];
    let mut bounds = None;
    for p in policies {
        let r = with_bounds(p, "memory", frames, cost);
        let (lo, hi) = (r.cost_lower_bound.unwrap(), r.cost_upper_bound.unwrap());
        let c = r.cost.unwrap();
        assert_eq!(c, r.page_reads as f64 + 10.0 * r.page_writes as f64, "{p}");
        assert!(lo > 0.0 && lo <= hi, "{p}: {lo} > {hi}");
        assert!(c >= lo, "{p}: cost {c} below the lower bound {lo}");
        assert!(r.ratio_to_lower.unwrap() >= 1.0);
        assert_eq!(r.ratio_to_upper.unwrap(), c / hi);
        // Same trace, buffer and model: the same bounds for every policy.
        let b = (lo, hi, r.bound_rule.clone().unwrap());
        match &bounds {
            None => bounds = Some(b),
            Some(first) => assert_eq!(first, &b, "{p}"),
        }
        if p == "belady" {
            assert_eq!(Some(r.misses), r.bound_min_misses);
        }
    }
    // The upper bound is the cost of the best offline heuristic, replayed in the pool.
    let (_, hi, _) = bounds.unwrap();
    let best = with_bounds("offline:rule=best,read=1,write=10", "memory", frames, cost);
    assert_eq!(best.cost.unwrap(), hi);
    assert!((best.ratio_to_upper.unwrap() - 1.0).abs() < 1e-12);
}

#[test]
fn device_costs_come_from_the_device_facts_and_land_in_the_json() {
    let r = with_bounds(
        "lru",
        "cost:read_us=100,write_us=900",
        128,
        BoundsCost::Device,
    );
    assert_eq!(r.bound_read_cost, Some(100.0));
    assert_eq!(r.bound_write_cost, Some(900.0));
    assert_eq!(
        r.cost,
        Some(100.0 * r.page_reads as f64 + 900.0 * r.page_writes as f64)
    );
    let json = flashbuf_lab::result::json(std::slice::from_ref(&r));
    for k in [
        "cost",
        "cost_lower_bound",
        "cost_upper_bound",
        "bound_rule",
        "ratio_to_lower",
        "ratio_to_upper",
    ] {
        assert!(json.contains(&format!("\"{k}\"")), "{k} missing in {json}");
    }
    // Without --bounds the fields stay out of the JSON.
    let plain = flashbuf_lab::run(&cfg("lru", "memory", 128), None).unwrap();
    let json = flashbuf_lab::result::json(std::slice::from_ref(&plain));
    assert!(!json.contains("cost_lower_bound"));
}
