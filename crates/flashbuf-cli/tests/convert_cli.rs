#![allow(clippy::unwrap_used)]
//! `flashbuf convert` round trips: every bundled sample to the page-reference CSV and to
//! pagebin (plain and zstd), and that CSV on to pagebin, all read back (and replayed) as the
//! same references; a page pagebin cannot hold is refused with a message.

use flashbuf_trace::{Format, PageRef, TraceReader, PAGEBIN_MAGIC};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn flashbuf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

fn convert(trace: &Path, out: &Path, to: &str, page_size: u32) -> String {
    let ps = page_size.to_string();
    let o = flashbuf(&[
        "convert",
        "--trace",
        trace.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--to",
        to,
        "--page-size",
        &ps,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn refs(path: &Path, page_size: u32) -> (Format, Vec<PageRef>) {
    let r = TraceReader::open(path, None, page_size).unwrap();
    let format = r.format();
    (format, r.collect::<Result<_, _>>().unwrap())
}

fn samples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("testdata/traces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e != "md"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_bundled_sample_converts_to_csv_and_pagebin_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let all = samples();
    assert!(all.len() >= 9, "{all:?}");
    for (i, sample) in all.iter().enumerate() {
        let ps = 4096;
        let (format, want) = refs(sample, ps);
        let csv = dir.path().join(format!("{i}.csv"));
        let bin = dir.path().join(format!("{i}.pagebin"));
        let bin_zst = dir.path().join(format!("{i}.pagebin.zst"));
        let csv_bin = dir.path().join(format!("{i}.from-csv.pagebin"));
        let said = convert(sample, &csv, "csv", ps);
        assert!(
            said.contains(&format!("({format})")) && said.contains("(pagetrace)"),
            "{said}"
        );
        assert!(
            said.contains(&format!(": {} references", want.len())),
            "{said}"
        );
        convert(sample, &bin, "bin", ps);
        convert(sample, &bin_zst, "bin", ps);
        // The CSV on to pagebin (its page size no longer matters).
        convert(&csv, &csv_bin, "bin", 1);
        let name = sample.display();
        assert_eq!(refs(&csv, ps), (Format::PageTrace, want.clone()), "{name}");
        for out in [&bin, &bin_zst, &csv_bin] {
            assert_eq!(refs(out, ps), (Format::PageBin, want.clone()), "{name}");
        }
        let bytes = std::fs::read(&bin).unwrap();
        assert_eq!(bytes[..8], PAGEBIN_MAGIC);
        assert_eq!(bytes.len(), 16 + 8 * want.len(), "{name}");
        assert_eq!(std::fs::read(&csv_bin).unwrap(), bytes, "{name}");
        let zst = std::fs::read(&bin_zst).unwrap();
        assert_eq!(
            zst[..4],
            [0x28, 0xb5, 0x2f, 0xfd],
            "zstd by the .zst ending"
        );
    }
}

#[test]
fn a_pagebin_trace_replays_like_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let src = root().join("testdata/traces/tpcc-sample.pagetrace.csv.zst");
    let bin = dir.path().join("tpcc.pagebin.zst");
    convert(&src, &bin, "bin", 8192);
    let run = |trace: &Path| {
        let o = flashbuf(&[
            "replay",
            "--trace",
            trace.to_str().unwrap(),
            "--buffer-pages",
            "400",
            "--limit",
            "50000",
            "--json",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let fields = ["references", "misses", "page_writes", "hits"];
        let pick = |v: &serde_json::Value| -> Vec<serde_json::Value> {
            let run = v.get("runs").and_then(|r| r.get(0)).unwrap_or(v);
            fields.iter().map(|f| run[f].clone()).collect()
        };
        pick(&v)
    };
    let a = run(&src);
    assert!(a.iter().any(|x| x.as_u64().is_some_and(|n| n > 0)), "{a:?}");
    assert_eq!(a, run(&bin));
}

#[test]
fn pages_beyond_2_pow_63_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("big.csv");
    std::fs::write(
        &src,
        "op,page\nR,1\nW,9223372036854775807\nR,9223372036854775808\n",
    )
    .unwrap();
    let out = dir.path().join("big.pagebin");
    let o = flashbuf(&[
        "convert",
        "--trace",
        src.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--to",
        "bin",
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "big.pagebin: reference 3: page 9223372036854775808 is too large for the pagebin \
             format"
        ),
        "{err}"
    );
    // Unknown output formats are refused before anything is written.
    let o = flashbuf(&[
        "convert",
        "--trace",
        src.to_str().unwrap(),
        "--out",
        dir.path().join("x").to_str().unwrap(),
        "--to",
        "parquet",
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("parquet"));
    assert!(!dir.path().join("x").exists());
}
