#![allow(clippy::unwrap_used)]
//! `flashbuf mrc` end to end: JSON rows equal `replay` at the same sizes; bad input is
//! refused with a message.

mod common;
use common::{flashbuf, json};

#[test]
fn curve_rows_equal_replays() {
    let c = json(&flashbuf(&[
        "mrc",
        "--page-size",
        "4096",
        "--sizes",
        "50,400",
        "--cost",
        "read=2,write=10",
        "--json",
    ]));
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        let size = row["buffer_pages"].as_u64().unwrap().to_string();
        let r = json(&flashbuf(&[
            "replay",
            "--page-size",
            "4096",
            "--buffer-pages",
            &size,
            "--json",
        ]));
        let run = &r["runs"][0];
        assert_eq!(
            row["misses"].as_f64().unwrap() as u64,
            run["misses"].as_u64().unwrap()
        );
        assert_eq!(
            row["page_writes"].as_f64().unwrap() as u64,
            run["page_writes"].as_u64().unwrap()
        );
        let cost = 2.0 * row["misses"].as_f64().unwrap()
            + 10.0 * (row["page_writes"].as_f64().unwrap() + row["flush_writes"].as_f64().unwrap());
        assert_eq!(row["io_cost_us"].as_f64().unwrap(), cost);
    }
}

#[test]
fn bad_input_is_refused_with_a_message() {
    for (args, msg) in [
        (vec!["mrc", "--sample", "rate=0"], "rate=R"),
        (vec!["mrc", "--sample", "bogus"], "rate=R"),
        (vec!["mrc", "--cost", "read=-1"], "read=X,write=Y"),
        (
            vec!["mrc", "--policy", "cfdc", "--method", "exact"],
            "LRU only",
        ),
        (vec!["mrc", "--sizes", "0"], "at least 1 page"),
    ] {
        let o = flashbuf(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(msg), "{args:?}: {e}");
    }
}

#[test]
fn sampled_curve_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("c.svg");
    let c = json(&flashbuf(&[
        "mrc",
        "--sample",
        "size=2000",
        "--points",
        "20",
        "--json",
        "--plot",
        svg.to_str().unwrap(),
    ]));
    assert_eq!(c["sampling"], "size=2000");
    assert!(c["rows"].as_array().unwrap().len() >= 10);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<svg") && text.contains("miss ratio"));
}
