#![allow(clippy::unwrap_used)]
//! The planning pass behind `reproduce`'s progress total and ETA counts exactly the runs a
//! reproduction makes, for the two reproductions not covered by their own quick tests
//! (`reproduce_cfdc`, `reproduce_cfdc_engine`, `reproduce_fd_buffer` and `reproduce_icl`
//! check theirs): `nipu` on the bundled samples and `stablebuffer` (its own loops, counted
//! by a formula) on a short prefix of the shared TPC-C I/O trace. A planning pass makes no
//! run and reads no trace.

use flashbuf_lab::reproduce::{plan, run, ReproduceOptions};
use std::path::PathBuf;
use std::time::Instant;

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn check(paper: &str, opts: &ReproduceOptions) {
    let t = Instant::now();
    let planned = plan(paper, opts).unwrap();
    let plan_s = t.elapsed().as_secs_f64();
    let reports = run(paper, opts).unwrap();
    assert_eq!(planned, reports[0].runs, "{paper}");
    assert!(planned > 0);
    // Nothing ran: far quicker than the runs (generous bound for a loaded machine).
    assert!(plan_s < 10.0, "{paper}: planning took {plan_s:.1} s");
}

#[test]
fn nipu_plan_counts_its_runs() {
    let opts = ReproduceOptions {
        traces_dir: root().join("testdata/traces"),
        limit_refs: Some(5_000),
        ..ReproduceOptions::default()
    };
    check("nipu", &opts);
}

#[test]
fn stablebuffer_plan_counts_its_runs() {
    let dir = root().join("../shared/traces");
    let opts = ReproduceOptions {
        traces_dir: dir,
        limit_refs: Some(3_000),
        ..ReproduceOptions::default()
    };
    check("stablebuffer", &opts);
}
