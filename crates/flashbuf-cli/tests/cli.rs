#![allow(clippy::unwrap_used)]
//! The `flashbuf` binary end to end: output contracts and bad input.

mod common;
use common::flashbuf;
use std::io::Write;
use std::path::Path;
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn write_trace(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::File::create(&p)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    p.display().to_string()
}

#[test]
fn replay_json_has_every_contract_field() {
    let o = flashbuf(&[
        "replay",
        "--limit",
        "20000",
        "--buffer-pages",
        "100",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &v["runs"][0];
    for f in [
        "policy",
        "store",
        "device",
        "buffer_pages",
        "page_size",
        "trace",
        "references",
        "hits",
        "misses",
        "page_reads",
        "page_writes",
        "device_reads",
        "device_writes",
        "device_time_us",
        "io_cost",
        "cpu_time_s",
        "refs_per_s",
        "erases",
        "write_amplification",
        "verify_errors",
    ] {
        assert!(!r[f].is_null(), "field {f} missing in {r}");
    }
    assert_eq!(r["references"], 20000);
    assert_eq!(r["verify_errors"], 0);
    assert_eq!(
        r["hits"].as_u64().unwrap() + r["misses"].as_u64().unwrap(),
        20000
    );
}

#[test]
fn garbled_trace_line_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let t = write_trace(dir.path(), "bad.csv", "op,page\nR,1\nW,2\nX,3\nR,4\n");
    let o = flashbuf(&["replay", "--trace", &t, "--buffer-pages", "4"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("bad.csv line 4"), "{e}");
    assert!(e.contains("'X'"), "{e}");
}

#[test]
fn truncated_line_and_truncated_zstd_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let t = write_trace(dir.path(), "trunc.csv", "op,page\nR,1\nW,");
    let o = flashbuf(&["replay", "--trace", &t, "--buffer-pages", "4"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("trunc.csv line 3"), "{}", stderr(&o));

    let mut text = String::from("op,page\n");
    for i in 0..50_000 {
        text.push_str(&format!("R,{}\n", i % 977));
    }
    let z = zstd::encode_all(text.as_bytes(), 3).unwrap();
    let p = dir.path().join("cut.csv.zst");
    std::fs::write(&p, &z[..z.len() / 2]).unwrap();
    let o = flashbuf(&[
        "replay",
        "--trace",
        p.to_str().unwrap(),
        "--buffer-pages",
        "4",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cut.csv.zst"), "{}", stderr(&o));
}

#[test]
fn unknown_names_and_options_list_valid_ones() {
    let o = flashbuf(&["replay", "--policy", "lruu", "--limit", "10"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("unknown policy 'lruu'; valid names:"),
        "{}",
        stderr(&o)
    );
    let o = flashbuf(&["replay", "--device", "memory:fast=1", "--limit", "10"]);
    assert!(
        stderr(&o).contains("unknown option 'fast'"),
        "{}",
        stderr(&o)
    );
    let o = flashbuf(&["replay", "--trace", "/nonexistent/trace.csv"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("/nonexistent/trace.csv"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn compare_runs_the_matrix_and_prints_csv() {
    let o = flashbuf(&[
        "compare",
        "--limit",
        "5000",
        "--policies",
        "lru,none",
        "--buffer-pages",
        "16",
        "--buffer-pages",
        "64",
        "--csv",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    // `none` has no buffer: it runs once, not once per buffer size.
    assert_eq!(lines.len(), 1 + 3, "{out}");
    assert!(lines[0].starts_with("policy,store,device,buffer_pages"));
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("none,")).count(),
        1,
        "{out}"
    );
    // The CSV has every field the JSON has, the miss ratio among them.
    let j = flashbuf(&[
        "compare",
        "--limit",
        "5000",
        "--policies",
        "lru,none",
        "--buffer-pages",
        "16",
        "--buffer-pages",
        "64",
        "--json",
        "--quiet",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    for run in doc["runs"].as_array().unwrap() {
        for (k, v) in run.as_object().unwrap() {
            if let Some(inner) = v.as_object() {
                for ik in inner.keys() {
                    let key = format!("{k}.{ik}");
                    assert!(header.contains(&key.as_str()), "{key} not in {header:?}");
                }
            } else {
                assert!(header.contains(&k.as_str()), "{k} not in {header:?}");
            }
        }
    }
    assert!(header.contains(&"miss_ratio") && header.contains(&"write_back_ratio"));
}

#[test]
fn sweeps_lists_ranges_grids_and_clear_refusals() {
    let o = flashbuf(&[
        "compare",
        "--limit",
        "3000",
        "--device",
        "memory",
        "--policies",
        "cfdc:window=0.25..0.75/3",
        "--buffer-ratio",
        "0.01,0.1",
        "--csv",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.lines().count(), 1 + 6, "{out}");
    for w in ["0.25", "0.5", "0.75"] {
        assert!(out.contains(&format!("window={w}")), "{w}: {out}");
    }
    for (args, want) in [
        (
            &["replay", "--buffer-ratio", "-1"][..],
            "--buffer-ratio -1: -1 is not a fraction in (0, 1]",
        ),
        (
            &["compare", "--buffer-ratio", "0.01..0.1"][..],
            "needs its number of points",
        ),
        (
            &["replay", "--page-size", "1000"][..],
            "a page size is a power of two from 512 to 65536 bytes",
        ),
        (
            &["replay", "--page-size", "0"][..],
            "a page size is a power of two from 512 to 65536 bytes",
        ),
        (
            &["replay", "--device", "simm:mtron"][..],
            "--device simm:mtron: unknown device 'simm'",
        ),
        (
            &["mrc", "--page-size", "0"][..],
            "the page size is a whole number of bytes from 1",
        ),
    ] {
        let o = flashbuf(args);
        assert!(!o.status.success(), "{args:?}");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("header-only.csv");
    std::fs::write(&empty, "op,page\n").unwrap();
    let o = flashbuf(&["replay", "--trace", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("holds no page references"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn paranoid_replay_passes_and_passthrough_verifies() {
    let o = flashbuf(&[
        "replay",
        "--limit",
        "3000",
        "--buffer-pages",
        "32",
        "--paranoid",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = flashbuf(&[
        "replay",
        "--trace",
        "testdata/traces/pgbench-sample.iotrace.msr.csv.zst",
        "--policy",
        "none",
        "--page-size",
        "8192",
        "--paranoid",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"][0]["verify_errors"], 0);
    assert_eq!(v["runs"][0]["hits"], 0);
}

#[test]
fn compare_draws_an_svg_plot() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("cmp.svg");
    let o = flashbuf(&[
        "compare",
        "--limit",
        "5000",
        "--policies",
        "lru,cflru",
        "--device",
        "memory",
        "--buffer-pages",
        "16",
        "--buffer-pages",
        "64",
        "--quiet",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("<svg") && text.contains("cflru / direct") && text.contains("memory"),
        "{text}"
    );
    // PNG by extension, another metric; an unknown extension is refused before any run.
    let png = dir.path().join("cmp.png");
    let o = flashbuf(&[
        "compare",
        "--limit",
        "3000",
        "--policies",
        "lru",
        "--device",
        "memory",
        "--buffer-pages",
        "16,64",
        "--quiet",
        "--metric",
        "miss-ratio",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
    let o = flashbuf(&["compare", "--plot", "x.pdf"]);
    assert!(
        stderr(&o).contains("must end in .svg or .png"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn convert_to_page_trace_replays_identically_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("conv.csv.zst");
    let src = "testdata/traces/pgbench-sample.iotrace.msr.csv.zst";
    let o = flashbuf(&[
        "convert",
        "--trace",
        src,
        "--page-size",
        "8192",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let replay = |t: &str| {
        let o = flashbuf(&[
            "replay",
            "--trace",
            t,
            "--policy",
            "lru",
            "--buffer-pages",
            "64",
            "--page-size",
            "8192",
            "--json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let r = &v["runs"][0];
        (
            r["references"].clone(),
            r["hits"].clone(),
            r["misses"].clone(),
            r["page_writes"].clone(),
        )
    };
    assert_eq!(replay(src), replay(out.to_str().unwrap()));
    // A second conversion to the same file is refused.
    let o = flashbuf(&["convert", "--trace", src, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
}
