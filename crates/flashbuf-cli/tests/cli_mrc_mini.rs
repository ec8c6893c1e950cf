#![allow(clippy::unwrap_used)]
//! `flashbuf mrc` by miniature simulation end to end: JSON rows of the LRU curve's shape
//! marked as estimates, full-run checks equal to `replay`, CSV and the plot; bad input is
//! refused with a message.

mod common;
use common::{flashbuf, json};

#[test]
fn cfdc_json_rows_are_marked_estimates_and_checks_equal_replay() {
    let c = json(&flashbuf(&[
        "mrc",
        "--policy",
        "cfdc",
        "--page-size",
        "4096",
        "--sample",
        "rate=0.1",
        "--sizes",
        "100,1000,10000",
        "--check-full",
        "2",
        "--jobs",
        "2",
        "--cost",
        "read=2,write=10",
        "--json",
    ]));
    assert_eq!(c["policy"], "cfdc");
    assert_eq!(c["method"], "miniature");
    assert!((c["sample_rate"].as_f64().unwrap() - 0.1).abs() < 1e-12);
    let (refs, sampled) = (
        c["references"].as_u64().unwrap(),
        c["sampled_references"].as_u64().unwrap(),
    );
    assert_eq!(refs, 200_000);
    assert!(sampled > 0 && sampled < refs);
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for (row, (size, mini)) in rows.iter().zip([(100, 10), (1000, 100), (10000, 1000)]) {
        assert_eq!(row["buffer_pages"].as_u64().unwrap(), size);
        assert_eq!(row["mini_pages"].as_u64().unwrap(), mini);
        let misses = row["misses"].as_f64().unwrap();
        assert!(misses > 0.0);
        assert!((row["miss_ratio"].as_f64().unwrap() - misses / refs as f64).abs() < 1e-12);
        let cost = 2.0 * misses
            + 10.0 * (row["page_writes"].as_f64().unwrap() + row["flush_writes"].as_f64().unwrap());
        assert!((row["io_cost_us"].as_f64().unwrap() - cost).abs() < 1e-6 * cost);
    }
    // Two checks: the first and the last size, each equal to a replay at that size.
    assert!(rows[1]["full"].is_null());
    for row in [&rows[0], &rows[2]] {
        let size = row["buffer_pages"].as_u64().unwrap().to_string();
        let r = json(&flashbuf(&[
            "replay",
            "--policy",
            "cfdc",
            "--page-size",
            "4096",
            "--buffer-pages",
            &size,
            "--json",
        ]));
        let run = &r["runs"][0];
        let full = &row["full"];
        assert_eq!(full["misses"], run["misses"], "at {size}");
        assert_eq!(full["page_writes"], run["page_writes"], "at {size}");
        let err =
            (row["miss_ratio"].as_f64().unwrap() - full["miss_ratio"].as_f64().unwrap()).abs();
        assert!((full["miss_ratio_abs_err"].as_f64().unwrap() - err).abs() < 1e-12);
    }
    let check = &c["check"];
    assert_eq!(check["sizes"], 2);
    let mean = (rows[0]["full"]["miss_ratio_abs_err"].as_f64().unwrap()
        + rows[2]["full"]["miss_ratio_abs_err"].as_f64().unwrap())
        / 2.0;
    assert!((check["mean_miss_ratio_abs_err"].as_f64().unwrap() - mean).abs() < 1e-12);
}

#[test]
fn csv_table_and_plot() {
    let o = flashbuf(&["mrc", "--policy", "cflru", "--points", "6", "--csv"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("buffer_pages,misses,miss_ratio,page_writes,flush_writes,"));
    assert!(header.contains("method,sample_rate,mini_pages"));
    let rows: Vec<&str> = lines.collect();
    assert!(rows.len() >= 5, "{text}");
    assert!(rows.iter().all(|r| r.contains(",miniature,0.1")), "{text}");

    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("m.svg");
    let o = flashbuf(&[
        "mrc",
        "--policy",
        "casa",
        "--points",
        "5",
        "--check-full",
        "1",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8(o.stdout).unwrap();
    assert!(
        table.starts_with("CASA curve (miniature, rate=0.1, miniatures run casa)"),
        "{table}"
    );
    assert!(table.contains("mean error over 1 full runs"), "{table}");
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.contains("<svg") && plot.contains("miss ratio"));
}

#[test]
fn lru_miniature_on_request_and_exact_by_default() {
    let exact = json(&flashbuf(&["mrc", "--sizes", "500", "--json"]));
    assert!(exact.get("method").is_none());
    let mini = json(&flashbuf(&[
        "mrc",
        "--method",
        "miniature",
        "--sample",
        "rate=1",
        "--sizes",
        "500",
        "--json",
    ]));
    assert_eq!(mini["method"], "miniature");
    // At rate 1 the miniature is the full run, which the exact curve equals.
    assert_eq!(mini["rows"][0]["misses"], exact["rows"][0]["misses"]);
    assert_eq!(
        mini["rows"][0]["page_writes"],
        exact["rows"][0]["page_writes"]
    );
}

#[test]
fn bad_input_is_refused_with_a_message() {
    for (args, msg) in [
        (
            vec!["mrc", "--policy", "cfdc", "--sample", "rate=0"],
            "rate=R",
        ),
        (
            vec!["mrc", "--policy", "cfdc", "--sample", "rate=1.5"],
            "rate=R",
        ),
        (
            vec!["mrc", "--policy", "cfdc", "--sample", "size=100"],
            "fixed rate",
        ),
        (
            vec!["mrc", "--policy", "cfdc", "--sizes", "0"],
            "at least 1 page",
        ),
        (vec!["mrc", "--policy", "nonesuch"], "nonesuch"),
        (vec!["mrc", "--policy", "none"], "no buffer"),
        (
            vec!["mrc", "--policy", "cfdc", "--method", "exact"],
            "LRU only",
        ),
        (vec!["mrc", "--method", "magic"], "auto, exact or miniature"),
        (vec!["mrc", "--check-full", "2"], "--method miniature"),
    ] {
        let o = flashbuf(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(msg), "{args:?}: {e}");
    }
}
