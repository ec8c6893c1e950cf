#![allow(clippy::unwrap_used)]
//! Dynamics as run options: the feed's workload transforms give exactly the trace of
//! `flashbuf_workload::dynamics::apply_workload_model` (same seed), `ratio=X` reaches its target
//! per epoch, the asymmetry models stretch the device's latencies per epoch (and FD-Buffer
//! with a fixed R is told R_i), and the same seed gives the same run.

use flashbuf_lab::feed::{Feed, FeedOptions};
use flashbuf_lab::{BufferSize, RunConfig, RunResult};
use flashbuf_workload::dynamics::{apply_workload_model, AsymmetryModel, WorkloadModel};
use flashbuf_workload::dynamics::{Dynamics, WorkloadTransform, W0};
use std::path::PathBuf;

fn sample() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces/tpcc-sample.pagetrace.csv.zst"
    ))
}

fn pairs(transform: Option<(WorkloadTransform, u64, u64)>, limit: u64) -> Vec<(bool, u64)> {
    let opts = FeedOptions {
        limit: Some(limit),
        transform,
    };
    let (refs, summary) = Feed::start_with(&sample(), None, 4096, &opts)
        .unwrap()
        .collect_all()
        .unwrap();
    assert_eq!(summary.references, refs.len() as u64);
    refs.iter().map(|r| (r.op.is_write(), r.page.0)).collect()
}

#[test]
fn feed_transform_equals_the_pool_model_function() {
    let limit = 120_000;
    let original = pairs(None, limit);
    for model in [WorkloadModel::Wm1, WorkloadModel::Wm2] {
        for (epoch, seed) in [(5_000u64, 42u64), (3_000, 7)] {
            let mut want = original.clone();
            apply_workload_model(&mut want, model, epoch as usize, seed);
            let got = pairs(Some((WorkloadTransform::model(model), epoch, seed)), limit);
            assert_eq!(got.len(), want.len());
            assert!(got == want, "{model:?} epoch {epoch} seed {seed}");
            // Another seed, another choice of references.
            let other = pairs(
                Some((WorkloadTransform::model(model), epoch, seed + 1)),
                limit,
            );
            assert!(other != got);
        }
    }
}

#[test]
fn ratio_and_w0_reach_their_targets_per_epoch() {
    let epoch = 4_000usize;
    for x in [0.0, 0.3, 1.0] {
        let t = pairs(Some((WorkloadTransform::Ratio(x), epoch as u64, 1)), 50_000);
        for chunk in t.chunks(epoch) {
            let w = chunk.iter().filter(|r| r.0).count();
            assert_eq!(w, (x * chunk.len() as f64).round() as usize, "ratio {x}");
        }
    }
    // w0 given: WM2 alternates exactly between w0 and 0.95 w0.
    let t = pairs(
        Some((
            WorkloadTransform::Model {
                model: WorkloadModel::Wm2,
                w0: W0::Fixed(0.2),
            },
            5_000,
            1,
        )),
        40_000,
    );
    for (i, chunk) in t.chunks(5_000).enumerate() {
        let w = chunk.iter().filter(|r| r.0).count();
        assert_eq!(w, if i % 2 == 0 { 1_000 } else { 950 }, "epoch {i}");
    }
}

fn run(policy: &str, device: &str, dynamics: Dynamics, seed: u64) -> RunResult {
    let cfg = RunConfig {
        trace: sample(),
        format: None,
        policy: flashbuf_lab::spec::parse(policy).unwrap(),
        store: flashbuf_lab::spec::parse("direct").unwrap(),
        device: flashbuf_lab::spec::parse(device).unwrap(),
        buffer: BufferSize::Pages(256),
        page_size: 4096,
        seed,
        paranoid: false,
        progress: false,
        limit_refs: Some(60_000),
        facts: None,
        ..RunConfig::default()
    };
    let r = flashbuf_lab::run(&RunConfig { dynamics, ..cfg }, None).unwrap();
    assert_eq!(r.verify_errors, 0);
    r
}

const COST: &str = "cost:read_us=100,write_us=1000";

#[test]
fn same_seed_same_run() {
    let dynamics = [
        Dynamics {
            workload: Some(WorkloadTransform::model(WorkloadModel::Wm1)),
            ..Dynamics::default()
        },
        Dynamics {
            workload: Some(WorkloadTransform::Model {
                model: WorkloadModel::Wm2,
                w0: W0::Trace,
            }),
            asymmetry: Some(AsymmetryModel::Rm1),
            epoch_refs: 2_500,
        },
        Dynamics {
            workload: Some(WorkloadTransform::Ratio(0.5)),
            asymmetry: Some(AsymmetryModel::Rm2),
            ..Dynamics::default()
        },
    ];
    for d in dynamics {
        for p in ["fd-buffer:r=online", "casa:learn=true", "lru"] {
            let key = |r: &RunResult| {
                (
                    r.hits,
                    r.misses,
                    r.page_writes,
                    r.device_time_us,
                    r.trace_writes,
                    r.asymmetry_added_us,
                )
            };
            let a = run(p, COST, d, 9);
            let b = run(p, COST, d, 9);
            assert_eq!(key(&a), key(&b), "{p} {d:?}");
            // Everything the policy reports but the advisor's wall-clock time.
            let untimed = |r: &RunResult| {
                let mut m = r.policy_report.clone();
                m.retain(|k, _| !k.starts_with("advisor_ns") && !k.contains("wall"));
                m
            };
            assert_eq!(untimed(&a), untimed(&b), "{p} {d:?}");
            if d.workload.is_some() {
                let c = run(p, COST, d, 10);
                assert_ne!(key(&a), key(&c), "{p} {d:?}: another seed, same run");
            }
        }
    }
}

#[test]
fn asymmetry_models_stretch_device_latencies_and_tell_fixed_r_fd_buffer() {
    let none = run("lru", COST, Dynamics::default(), 1);
    let rm1 = Dynamics {
        asymmetry: Some(AsymmetryModel::Rm1),
        ..Dynamics::default()
    };
    let r1 = run("lru", COST, rm1, 1);
    // LRU decides without costs: same counts, dearer writes.
    assert_eq!((r1.misses, r1.page_writes), (none.misses, none.page_writes));
    assert!(r1.device_write_time_us > none.device_write_time_us);
    assert_eq!(r1.device_read_time_us, none.device_read_time_us);
    // The added time is in device_time_us (the final flush's share comes after it).
    let added = r1.asymmetry_added_us.unwrap();
    let diff = r1.device_time_us - none.device_time_us;
    assert!(
        diff > 0.5 * added && diff <= added + 1e-6,
        "{diff} vs {added}"
    );
    assert_eq!(r1.asymmetry.as_deref(), Some("rm1"));
    // RM2: odd epochs make reads dearer (R x 0.95), never writes.
    let rm2 = Dynamics {
        asymmetry: Some(AsymmetryModel::Rm2),
        ..Dynamics::default()
    };
    let r2 = run("lru", COST, rm2, 1);
    assert_eq!(r2.device_write_time_us, none.device_write_time_us);
    assert!(r2.device_read_time_us > none.device_read_time_us);
    // FD-Buffer with a fixed R gets R_i = R_0 (1 + 0.1 i): the last epoch is 11.
    let fd = run("fd-buffer", COST, rm1, 1);
    assert!(
        (fd.policy_report["r"] - 10.0 * 2.1).abs() < 1e-9,
        "{}",
        fd.policy_report["r"]
    );
    // Online R measures the stretched latencies.
    let online = run("fd-buffer:r=online,m=2000", COST, rm1, 1);
    assert!(
        online.policy_report["r"] > 15.0,
        "{}",
        online.policy_report["r"]
    );
    // CASA with static costs follows the epoch's costs too: C_w = 2.1 R_0 / (1 + 2.1 R_0)
    // in the last epoch, against R_0 / (1 + R_0) without the model.
    let casa = run("casa", COST, rm1, 1);
    let r_last = 10.0 * 2.1;
    assert!(
        (casa.policy_report["cost_write"] - r_last / (1.0 + r_last)).abs() < 1e-9,
        "{}",
        casa.policy_report["cost_write"]
    );
    let still = run("casa", COST, Dynamics::default(), 1);
    assert!((still.policy_report["cost_write"] - 10.0 / 11.0).abs() < 1e-9);
}
