#![allow(clippy::unwrap_used)]
//! `flashbuf reproduce nipu` end to end on the bundled samples (a prefix, so that the test
//! takes seconds; they are what it uses when `--traces` holds no PostgreSQL trace, and the
//! report says so): the JSON report holds Fig. 5, Fig. 6, Table 3, Fig. 9, the
//! no-counterpart table and one verdict per figure with its direction, magnitude and
//! cause; the log-structured store beats the in-place one on flash.

mod common;
use common::flashbuf;

const MAGNITUDES: &[&str] = &["inside", "below", "above", "mixed", "no-figure"];

#[test]
fn reproduce_nipu_reports_every_figure_with_a_verdict() {
    // An empty --traces directory: the bundled samples are used, and the report says so.
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().display().to_string();
    let o = flashbuf(&[
        "reproduce",
        "nipu",
        "--traces",
        &traces,
        "--limit",
        "20000",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let report = &v["reports"][0];
    assert_eq!(report["paper"], "nipu");
    let sections = report["sections"].as_array().unwrap();
    let title = |prefix: &str| {
        sections
            .iter()
            .find(|s| s["title"].as_str().unwrap().starts_with(prefix))
            .unwrap_or_else(|| panic!("no section '{prefix}'"))
    };
    let rows = |prefix: &str| title(prefix)["rows"].as_array().unwrap().clone();
    let setup = title("Setup").to_string();
    assert!(
        setup.contains("traces from testdata/traces") && setup.contains("bundled samples"),
        "{setup}"
    );
    let names: Vec<String> = rows("Setup").iter().map(|r| r[0].to_string()).collect();
    for t in [
        "tpcc-sample.pagetrace.csv.zst",
        "pgbench-sample.pagetrace.csv.zst",
        "pgbench-sample.iotrace.msr.csv.zst",
    ] {
        assert!(
            names.iter().any(|n| n.contains(t)),
            "{t} not reported: {names:?}"
        );
    }
    // Two buffers of each page trace and the I/O trace in pass-through; four systems each.
    assert_eq!(rows("Fig. 5").len(), 5);
    assert_eq!(rows("Fig. 6").len(), 20);
    assert_eq!(rows("Fig. 9").len(), 12);
    assert_eq!(rows("Table 3").len(), 2 + 6);
    assert_eq!(rows("Figs. 7–8").len(), 2);
    let verdicts = report["verdicts"].as_array().unwrap();
    let figures: Vec<&str> = verdicts
        .iter()
        .map(|v| v["figure"].as_str().unwrap())
        .collect();
    for f in [
        "Fig. 5 (NILFS2",
        "Fig. 6",
        "Table 3",
        "Fig. 9",
        "Fig. 5 (flash vs disk",
        "Figs. 7–8",
    ] {
        assert!(
            figures.iter().any(|x| x.starts_with(f)),
            "no verdict for {f}: {figures:?}"
        );
    }
    for v in verdicts {
        assert!(v["direction_holds"].is_boolean(), "{v}");
        assert!(
            MAGNITUDES.contains(&v["magnitude"].as_str().unwrap()),
            "{v}"
        );
        assert!(v["cause"].as_str().unwrap().len() > 20, "no cause: {v}");
    }
    // The headline: out of place beats in place on flash wherever the trace writes (the
    // pgbench page sample's prefix has no write-backs: shown, not counted).
    let fig5 = verdicts
        .iter()
        .find(|v| v["figure"].as_str().unwrap().starts_with("Fig. 5 (NILFS2"))
        .unwrap();
    assert_eq!(fig5["direction_holds"], true, "{fig5}");
    assert!(fig5["cause"]
        .as_str()
        .unwrap()
        .contains("2 row(s) without writes"));
    for row in rows("Fig. 5") {
        let ratio = row[6].as_str().unwrap();
        if !ratio.contains("no writes") {
            assert!(ratio.parse::<f64>().unwrap() > 1.0, "{row:?}");
        }
    }
    let o = flashbuf(&["reproduce", "nipux"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("nipu"), "{e}");
}
