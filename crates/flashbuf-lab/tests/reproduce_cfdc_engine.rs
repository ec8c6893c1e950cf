#![allow(clippy::unwrap_used)]
//! `reproduce cfdc-engine` as a test, at its quick scale (`--limit`: 100,000 records, 2,000
//! point transactions per run): the three figures' tables and their five verdicts; on the
//! engine, with every transaction checked for consistency, CFDC flushes no more pages at a
//! higher cost than CFLRU: its throughput on the device's clock is at least CFLRU's at
//! 100% updates (the paper's Fig. 7: 1.73×), and all three are equal without updates.
//!
//! The paper-scale run: `flashbuf reproduce cfdc-engine` (one million records, about 3
//! minutes).

use flashbuf_lab::reproduce::{run as reproduce, ReproduceOptions};

#[test]
fn the_engine_reproduction_gives_every_figure_a_verdict() {
    let opts = ReproduceOptions {
        traces_dir: ".".into(),
        seed: 7,
        limit_refs: Some(2_000),
        progress: false,
        ..ReproduceOptions::default()
    };
    let reports = reproduce("cfdc-engine", &opts).unwrap();
    // The planning pass behind the progress's total counts exactly the runs made.
    assert_eq!(
        flashbuf_lab::reproduce::plan("cfdc-engine", &opts).unwrap(),
        reports[0].runs
    );
    assert!(reports[0].runs > 0);
    let r = &reports[0];
    assert_eq!(r.paper, "cfdc-engine");
    let rows: Vec<usize> = r.sections.iter().map(|s| s.rows.len()).collect();
    assert_eq!(rows, vec![4, 6, 4]);
    assert_eq!(r.verdicts.len(), 5, "{:?}", r.verdicts);
    let v = |name: &str| r.verdicts.iter().find(|v| v.figure.contains(name)).unwrap();
    assert!(v("0% updates").direction_holds, "{:?}", v("0% updates"));
    assert!(v("100% updates").direction_holds, "{:?}", v("100% updates"));
    let text = r.render();
    assert!(text.contains("Verdicts (cfdc-engine)"), "{text}");
}
