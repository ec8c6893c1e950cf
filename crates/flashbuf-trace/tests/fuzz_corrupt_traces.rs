#![allow(clippy::unwrap_used)]
//! Checked-in damaged traces (`testdata/corrupt/traces/`, described in
//! `testdata/corrupt/README.md`), cut from the bundled samples: truncated zstd and gzip
//! streams, a line cut mid-field, a garbage line, binary noise, an empty compressed file,
//! binary traces cut inside a record, a pagebin file of an unknown version and a blkparse
//! file with a malformed event line.
//! Reading must never panic; each must give the references before the damage and an error
//! naming the file (and the line, for text damage), as listed below.
//!
//! `FLASHBUF_REGEN_CORRUPT=1` rewrites them from the generators below.

use flashbuf_trace::{PageRef, TraceReader};
use std::io::{Read, Write};
use std::path::PathBuf;

struct Case {
    name: &'static str,
    /// At least this many references are read before the damage.
    min_refs: usize,
    /// Some error contains this text (`None`: no error expected).
    error: Option<&'static str>,
}

const CASES: &[Case] = &[
    Case {
        name: "pagetrace-truncated.csv.zst",
        min_refs: 100,
        error: Some("pagetrace-truncated.csv.zst"),
    },
    Case {
        name: "msr-truncated.csv.gz",
        min_refs: 100,
        error: Some("msr-truncated.csv.gz"),
    },
    Case {
        name: "msr-cut-mid-line.csv",
        min_refs: 50,
        error: Some("msr-cut-mid-line.csv line 51"),
    },
    Case {
        name: "pagetrace-garbage-line.csv",
        min_refs: 19,
        error: Some("pagetrace-garbage-line.csv line 11"),
    },
    Case {
        name: "binary-noise.pagetrace.csv",
        min_refs: 0,
        error: Some("binary-noise.pagetrace.csv"),
    },
    Case {
        name: "empty.pagetrace.csv.zst",
        min_refs: 0,
        error: None,
    },
    Case {
        name: "cut-mid-record.oracleGeneral.bin",
        min_refs: 99,
        error: Some("cut-mid-record.oracleGeneral.bin record 100: incomplete record"),
    },
    Case {
        name: "pagebin-truncated.pagebin.zst",
        min_refs: 100,
        error: Some("zstd stream is truncated or corrupt (after record"),
    },
    Case {
        name: "pagebin-version-9.pagebin",
        min_refs: 0,
        error: Some("bad pagebin header: version 9 is not supported"),
    },
    Case {
        name: "pagebin-cut-mid-record.pagebin",
        min_refs: 20,
        error: Some("pagebin-cut-mid-record.pagebin record 21: incomplete record"),
    },
    Case {
        name: "blkparse-bad-event.blkparse.txt",
        min_refs: 18,
        error: Some("blkparse-bad-event.blkparse.txt line 31: expected a sector count"),
    },
];

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn dir() -> PathBuf {
    root().join("testdata/corrupt/traces")
}

/// The first `n` lines of a bundled sample, decompressed.
fn sample_lines(name: &str, n: usize) -> String {
    let f = std::fs::File::open(root().join("testdata/traces").join(name)).unwrap();
    let mut text = String::new();
    zstd::Decoder::new(f)
        .unwrap()
        .take(1 << 20)
        .read_to_string(&mut text)
        .unwrap();
    text.lines().take(n).map(|l| format!("{l}\n")).collect()
}

/// The first `n` bytes of a bundled binary sample, decompressed.
fn sample_bytes(name: &str, n: u64) -> Vec<u8> {
    let f = std::fs::File::open(root().join("testdata/traces").join(name)).unwrap();
    let mut b = Vec::new();
    zstd::Decoder::new(f)
        .unwrap()
        .take(n)
        .read_to_end(&mut b)
        .unwrap();
    b
}

/// A page-reference CSV text as a pagebin file.
fn pagebin(csv: &str) -> Vec<u8> {
    let refs: Vec<PageRef> = TraceReader::from_reader(
        std::io::Cursor::new(csv.as_bytes().to_vec()),
        "s.csv",
        None,
        1,
    )
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap();
    let mut w = flashbuf_trace::PageBinWriter::new(Vec::new()).unwrap();
    w.write_refs(&refs).unwrap();
    w.finish().unwrap()
}

fn build(name: &str) -> Vec<u8> {
    match name {
        "pagetrace-truncated.csv.zst" => {
            // Several zstd blocks (128 KiB each), so the first ones decode before the cut.
            let z = zstd::encode_all(
                sample_lines("tpcc-sample.pagetrace.csv.zst", 60_000).as_bytes(),
                3,
            )
            .unwrap();
            z[..z.len() * 2 / 3].to_vec()
        }
        "msr-truncated.csv.gz" => {
            let text = sample_lines("pgbench-sample.iotrace.msr.csv.zst", 2000);
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(text.as_bytes()).unwrap();
            let g = e.finish().unwrap();
            g[..g.len() * 2 / 3].to_vec()
        }
        "msr-cut-mid-line.csv" => {
            let mut t = sample_lines("pgbench-sample.iotrace.msr.csv.zst", 51);
            let keep = t.trim_end().rfind(',').unwrap() - 3;
            t.truncate(keep);
            t.into_bytes()
        }
        "pagetrace-garbage-line.csv" => {
            let mut lines: Vec<String> = sample_lines("tpcc-sample.pagetrace.csv.zst", 21)
                .lines()
                .map(str::to_string)
                .collect();
            lines[10] = "W,12x".to_string();
            let mut t = lines.join("\n");
            t.push('\n');
            t.into_bytes()
        }
        "binary-noise.pagetrace.csv" => {
            let mut rng = flashbuf_core::rng::SplitMix64::new(0xBAD);
            (0..4096).map(|_| rng.next_u64() as u8).collect()
        }
        "empty.pagetrace.csv.zst" => Vec::new(),
        "cut-mid-record.oracleGeneral.bin" => {
            let b = sample_bytes("cloudPhysicsIO-sample.oracleGeneral.bin.zst", 100 * 24);
            b[..99 * 24 + 10].to_vec()
        }
        "pagebin-truncated.pagebin.zst" => {
            let b = pagebin(&sample_lines("tpcc-sample.pagetrace.csv.zst", 60_000));
            let z = zstd::encode_all(&b[..], 3).unwrap();
            z[..z.len() * 2 / 3].to_vec()
        }
        "pagebin-version-9.pagebin" => {
            let mut b = pagebin(&sample_lines("pgbench-sample.pagetrace.csv.zst", 30));
            b[8] = 9;
            b
        }
        "pagebin-cut-mid-record.pagebin" => {
            let b = pagebin(&sample_lines("pgbench-sample.pagetrace.csv.zst", 30));
            b[..16 + 20 * 8 + 5].to_vec()
        }
        "blkparse-bad-event.blkparse.txt" => {
            let mut lines: Vec<String> = sample_lines("pgbench-sample.blkparse.txt.zst", 60)
                .lines()
                .map(str::to_string)
                .collect();
            lines[30] = "  8,16   1       99     0.001000000  3101  Q   R 64 + x [postgres]".into();
            let mut t = lines.join("\n");
            t.push('\n');
            t.into_bytes()
        }
        other => panic!("no generator for {other}"),
    }
}

#[test]
fn checked_in_damaged_traces_give_their_references_then_an_error() {
    let regen = std::env::var("FLASHBUF_REGEN_CORRUPT").is_ok_and(|v| v == "1");
    for c in CASES {
        let path = dir().join(c.name);
        if regen {
            std::fs::create_dir_all(dir()).unwrap();
            std::fs::write(&path, build(c.name)).unwrap();
        }
        assert!(
            path.exists(),
            "{}: missing (FLASHBUF_REGEN_CORRUPT=1)",
            path.display()
        );
        let mut refs: Vec<PageRef> = Vec::new();
        let mut errors: Vec<String> = Vec::new();
        match TraceReader::open(&path, None, 4096) {
            Err(e) => errors.push(e.to_string()),
            Ok(mut r) => {
                let mut out = Vec::new();
                for _ in 0..100_000 {
                    out.clear();
                    match r.next_batch(&mut out, 1024) {
                        Ok(0) => break,
                        Ok(_) => refs.extend_from_slice(&out),
                        Err(e) => {
                            errors.push(e.to_string());
                            if errors.len() > 1000 {
                                break;
                            }
                        }
                    }
                }
            }
        }
        assert!(
            refs.len() >= c.min_refs,
            "{}: {} references before the damage (errors {:?})",
            c.name,
            refs.len(),
            &errors[..errors.len().min(3)]
        );
        match c.error {
            Some(msg) => assert!(
                errors.iter().any(|e| e.contains(msg)),
                "{}: errors {:?} lack '{msg}'",
                c.name,
                &errors[..errors.len().min(5)]
            ),
            None => assert!(errors.is_empty(), "{}: {errors:?}", c.name),
        }
        for e in &errors {
            assert!(
                e.contains(c.name),
                "{}: error without the file name: {e}",
                c.name
            );
        }
    }
}
