#![allow(clippy::unwrap_used)]
//! `flashbuf reproduce icl` at a quick-look scale: every range I/O CSV of the project's
//! `traces/` through ORIG, A&P and ICL at three WOB sizes on both devices (the runner
//! refuses any run with a verify error), the five verdicts, and the claim the range traces
//! must show (issue 15): ICL's page writes below ORIG's on every trace.

use flashbuf_lab::reproduce::{icl, run, ReproduceOptions};
use std::path::PathBuf;

#[test]
fn icl_reproduction_gives_its_verdicts() {
    let opts = ReproduceOptions {
        traces_dir: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces")),
        seed: 42,
        limit_refs: Some(20_000),
        progress: false,
        ..ReproduceOptions::default()
    };
    let traces = icl::find_traces(&opts);
    assert!(traces.len() >= 3, "{traces:?}");
    let reports = run("icl", &opts).unwrap();
    // The planning pass behind the progress's total counts exactly the runs made.
    assert_eq!(
        flashbuf_lab::reproduce::plan("icl", &opts).unwrap(),
        reports[0].runs
    );
    assert!(reports[0].runs > 0);
    let r = &reports[0];
    let figures: Vec<&str> = r.verdicts.iter().map(|v| v.figure.as_str()).collect();
    for f in [
        "Fig. 5 (writes)",
        "Fig. 5 (reads)",
        "Fig. 6 (ICL)",
        "Fig. 6 (A&P)",
    ] {
        assert!(figures.contains(&f), "{figures:?}");
    }
    let writes = &r.verdicts[0];
    assert!(writes.direction_holds, "{}", writes.measured);
    assert!(!writes.cause.is_empty());
    // One Fig. 5 row per trace and WOB size; one Fig. 6 row per device too.
    let n = traces.len() * icl::WOB_KIB.len();
    assert_eq!(r.sections[0].rows.len(), n);
    assert_eq!(r.sections[1].rows.len(), n * icl::DEVICES.len());
    assert!(r.render().contains("Verdicts (icl)"));
}
