#![allow(clippy::unwrap_used)]
//! Miniature simulation (`flashbuf_lab::mrc::mini`): at rate 1 it is the full run, for
//! every policy that is not LRU; at rate 0.1 on a longer trace its miss-ratio error stays
//! within the measured bound; bad configurations are refused with a message.

use flashbuf_lab::mrc::{miniature, MiniConfig};
use flashbuf_lab::registry::policy_names;
use flashbuf_lab::{run, BufferSize, RunConfig};
use std::path::PathBuf;

fn repo(path: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(path)
}

fn config(trace: &str, policy: &str, rate: f64, sizes: &[usize]) -> MiniConfig {
    MiniConfig {
        trace: repo(trace),
        format: None,
        page_size: 4096,
        limit: None,
        policy: flashbuf_lab::spec::parse(policy).unwrap(),
        rate,
        seed: 42,
        sizes: sizes.to_vec(),
        points: 10,
        check_full: sizes.len(),
        jobs: 2,
        data: flashbuf_core::DataMode::Bytes,
    }
}

const SAMPLE: &str = "testdata/traces/tpcc-sample.pagetrace.csv.zst";

/// Every policy of the registry but the pass-through and LRU (whose curve is exact in one
/// pass) that builds without options.
fn non_stack_policies() -> Vec<&'static str> {
    policy_names()
        .into_iter()
        .filter(|n| !matches!(*n, "none" | "lru"))
        .filter(|n| {
            let spec = flashbuf_lab::spec::parse(n).unwrap();
            flashbuf_lab::registry::parse_policy(&spec).is_ok()
        })
        .collect()
}

#[test]
fn rate_one_equals_full_runs_for_every_policy() {
    let policies = non_stack_policies();
    for must in ["cflru", "cfdc", "casa", "fd-buffer", "arc", "2q", "s3-fifo"] {
        assert!(policies.contains(&must), "{must} missing from {policies:?}");
    }
    let sizes = [40, 300, 2_000];
    for p in policies {
        let r = miniature(&config(SAMPLE, p, 1.0, &sizes)).unwrap();
        assert_eq!(r.rate, 1.0);
        assert_eq!(r.sampled_references, r.references, "{p}");
        assert_eq!(r.sampled_pages, r.distinct_pages, "{p}");
        assert_eq!(r.points.len(), 3);
        for (pt, &size) in r.points.iter().zip(&sizes) {
            assert_eq!((pt.buffer_pages, pt.mini_pages), (size, size));
            // An independent replay, reading the file itself.
            let full = run(
                &RunConfig {
                    trace: repo(SAMPLE),
                    policy: flashbuf_lab::spec::parse(p).unwrap(),
                    buffer: BufferSize::Pages(size),
                    page_size: 4096,
                    seed: 42,
                    ..RunConfig::default()
                },
                None,
            )
            .unwrap();
            assert_eq!(pt.misses, full.misses as f64, "{p} at {size}");
            assert_eq!(pt.page_writes, full.page_writes as f64, "{p} at {size}");
            assert_eq!(pt.flush_writes, full.flush_writes as f64, "{p} at {size}");
            let check = pt.full.unwrap();
            assert_eq!(
                (check.misses, check.page_writes),
                (full.misses, full.page_writes)
            );
            assert_eq!(check.miss_ratio_abs_err, 0.0, "{p} at {size}");
            assert_eq!(
                check.page_writes_rel_err.unwrap_or(0.0),
                0.0,
                "{p} at {size}"
            );
        }
        let (mr, wb) = r.mean_errors().unwrap();
        assert_eq!((mr, wb.unwrap_or(0.0)), (0.0, 0.0), "{p}");
    }
}

#[test]
fn rate_tenth_error_is_within_the_measured_bound() {
    // tpcc-pg15-w8: 2,000,000 references, 46,645 distinct pages; sizes 1%, 10%, 100%.
    // Measured at these sizes (seed 42): mean miss-ratio error 0.0030 (cflru) and 0.0045
    // (cfdc), write-back relative error 0.010 and 0.033; the bounds leave 2-3x margin.
    let trace = "traces/tpcc-pg15-w8.pagetrace.csv.zst";
    for (policy, bound) in [("cflru", 0.01), ("cfdc", 0.01)] {
        let r = miniature(&config(trace, policy, 0.1, &[466, 4_664, 46_645])).unwrap();
        let sampled = r.sampled_references as f64 / r.references as f64;
        assert!(
            (0.03..0.3).contains(&sampled),
            "{policy}: sampled {sampled}"
        );
        assert_eq!(r.points[0].mini_pages, 47);
        let (mr, wb) = r.mean_errors().unwrap();
        assert!(
            mr < bound,
            "{policy}: mean miss-ratio error {mr} >= {bound}"
        );
        assert!(wb.unwrap() < 0.1, "{policy}: mean write-back error {wb:?}");
        // An estimate, not a copy of the full run: the miniature saw fewer references.
        assert!(r
            .points
            .iter()
            .all(|p| p.full.unwrap().misses as f64 != p.misses));
    }
}

#[test]
fn bad_configurations_are_refused_with_a_message() {
    let cases = [
        (config(SAMPLE, "cfdc", 0.0, &[10]), "rate"),
        (config(SAMPLE, "cfdc", 1.5, &[10]), "(0, 1]"),
        (config(SAMPLE, "cfdc", f64::NAN, &[10]), "rate"),
        (config(SAMPLE, "cfdc", 0.1, &[10, 0]), "at least 1 page"),
        (
            config(SAMPLE, "no-such-policy", 0.1, &[10]),
            "no-such-policy",
        ),
        (config(SAMPLE, "none", 0.1, &[10]), "no buffer"),
        (config(SAMPLE, "cfdc:bogus=1", 0.1, &[10]), "bogus"),
        (
            config("testdata/traces/missing.csv", "cfdc", 0.1, &[10]),
            "missing",
        ),
    ];
    for (c, msg) in cases {
        let e = miniature(&c).unwrap_err().to_string();
        assert!(e.contains(msg), "{:?} rate {}: {e}", c.policy.name, c.rate);
    }
}

#[test]
fn sizes_default_to_log_spaced_and_k_checks_spread_over_them() {
    let mut c = config(SAMPLE, "cflru", 0.1, &[]);
    c.points = 8;
    c.check_full = 3;
    let r = miniature(&c).unwrap();
    let sizes: Vec<usize> = r.points.iter().map(|p| p.buffer_pages).collect();
    assert_eq!(sizes.first(), Some(&1));
    assert_eq!(sizes.last().copied(), Some(r.distinct_pages as usize));
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
    let checked: Vec<usize> = r
        .points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.full.is_some())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(sizes.len(), 8);
    assert_eq!(checked, vec![0, 4, 7]); // round(7 / 2) = 4
    assert_eq!(
        flashbuf_lab::mrc::mini::checked_indices(5, 0),
        Vec::<usize>::new()
    );
    assert_eq!(flashbuf_lab::mrc::mini::checked_indices(5, 1), vec![2]);
    assert_eq!(
        flashbuf_lab::mrc::mini::checked_indices(3, 9),
        vec![0, 1, 2]
    );
}

#[test]
fn fd_buffer_windows_and_groups_scale_with_the_miniature() {
    use flashbuf_lab::mrc::mini::miniature_spec;
    let spec = |s: &str| flashbuf_lab::spec::parse(s).unwrap();
    let shown = |s: &str, r: f64| miniature_spec(&spec(s), r).to_string();
    assert_eq!(shown("fd-buffer", 0.1), "fd-buffer:group=6,window=500");
    assert_eq!(shown("fd-buffer", 0.001), "fd-buffer:group=1,window=5");
    assert_eq!(
        shown("fd-buffer:window=8000,group=16", 0.01),
        "fd-buffer:group=1,window=80"
    );
    assert_eq!(shown("fd-buffer:q=0.05", 0.1), "fd-buffer:group=6,q=0.05");
    assert_eq!(shown("fd-buffer", 1.0), "fd-buffer");
    // The clustered-cost variant's window is the paper's (5,000), scaled as the faithful
    // one's; its groups (a count: `groups=256`) scale with the frames by themselves.
    assert_eq!(
        shown("fd-buffer:cost=clustered", 0.1),
        "fd-buffer:cost=clustered,window=500"
    );
    assert_eq!(
        shown("fd-buffer:groups=32", 0.1),
        "fd-buffer:groups=32,window=500"
    );
    assert_eq!(
        shown("fd-buffer:cost=clustered,group=64", 0.1),
        "fd-buffer:cost=clustered,group=6,window=500"
    );
    // A miniature of the variant with a group count runs (no "give either" refusal).
    let r = miniature(&config(SAMPLE, "fd-buffer:groups=32", 0.1, &[1_000])).unwrap();
    assert_eq!(r.mini_policy, "fd-buffer:groups=32,window=500");
    assert_eq!(shown("cfdc:window=0.25", 0.1), "cfdc:window=0.25");
    // The miniature runs the scaled spec; the full runs the one given.
    let r = miniature(&config(SAMPLE, "fd-buffer", 0.1, &[1_000])).unwrap();
    assert_eq!(r.mini_policy, "fd-buffer:group=6,window=500");
    assert_eq!(r.policy, "fd-buffer");
}
