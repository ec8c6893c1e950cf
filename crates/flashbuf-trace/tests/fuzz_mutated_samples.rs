#![allow(clippy::unwrap_used)]
//! Mutation fuzzing of the trace readers, extending `fuzz.rs` (arbitrary bytes) with
//! inputs close to real ones: slices of every bundled sample trace (every format; binary
//! ones cut at record boundaries, keeping their file header), mutated
//! by bit flips, byte overwrites, deleted and duplicated ranges, splices between formats
//! and truncation, read plain, zstd- or gzip-compressed (whole and cut), with the format
//! detected or forced to each format. No input may panic; every error must name the file;
//! and an unmutated slice must read without errors in its own format.
//!
//! `FLASHBUF_FUZZ_CASES=N` raises the number of inputs (soak).

use flashbuf_trace::{Format, TraceReader};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use std::io::{Cursor, Read, Write};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The first 64 KiB of each bundled sample, decompressed, and its format.
fn samples() -> &'static [(String, Vec<u8>, Format)] {
    static S: OnceLock<Vec<(String, Vec<u8>, Format)>> = OnceLock::new();
    S.get_or_init(|| {
        let dir = PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/traces"
        ));
        let mut out = Vec::new();
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".md") {
                continue;
            }
            let f = std::fs::File::open(&path).unwrap();
            let mut bytes = Vec::new();
            let mut r: Box<dyn Read> = if name.ends_with(".zst") {
                Box::new(zstd::Decoder::new(f).unwrap())
            } else if name.ends_with(".gz") {
                Box::new(flate2::read::MultiGzDecoder::new(f))
            } else {
                Box::new(f)
            };
            r.by_ref().take(64 << 10).read_to_end(&mut bytes).unwrap();
            let format = TraceReader::from_reader(Cursor::new(bytes.clone()), &name, None, 4096)
                .unwrap()
                .format();
            match layout(format) {
                // Cut at the last whole record.
                Some((header, record)) => {
                    bytes.truncate(header + (bytes.len() - header) / record * record)
                }
                // Cut at the last full line.
                None => {
                    if let Some(end) = bytes.iter().rposition(|&b| b == b'\n') {
                        bytes.truncate(end + 1);
                    }
                }
            }
            out.push((name, bytes, format));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        assert!(out.len() >= 9, "bundled samples: {}", out.len());
        for f in [
            Format::OracleGeneral,
            Format::PageBin,
            Format::Blkparse(flashbuf_trace::BlkAction::Queue),
        ] {
            assert!(out.iter().any(|s| s.2 == f), "no bundled {f} sample");
        }
        out
    })
}

/// Header and record bytes of a binary format (`None` for text).
fn layout(format: Format) -> Option<(usize, usize)> {
    match format {
        Format::OracleGeneral => Some((0, 24)),
        Format::PageBin => Some((16, 8)),
        _ => None,
    }
}

/// Up to `len` bytes of a sample from about `start`: from the start of a line (text), or
/// whole records after the file header (binary).
fn slice(format: Format, src: &[u8], start: usize, len: usize) -> Vec<u8> {
    match layout(format) {
        Some((header, record)) => {
            let records = (src.len() - header) / record;
            let first = start % records.max(1);
            let count = (len / record).max(1).min(records - first);
            let mut b = src[..header].to_vec();
            b.extend_from_slice(&src[header + first * record..][..count * record]);
            b
        }
        None => {
            let s = start % src.len();
            let s = src[..s]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            src[s..(s + len).min(src.len())].to_vec()
        }
    }
}

/// Reads everything (bounded); returns (references, errors), checking error messages.
fn drain(bytes: Vec<u8>, format: Option<Format>) -> (usize, usize) {
    let Ok(mut reader) = TraceReader::from_reader(Cursor::new(bytes), "mutant.trace", format, 4096)
    else {
        return (0, 1);
    };
    let (mut refs, mut errs) = (0, 0);
    let mut out = Vec::new();
    let mut ended = false;
    for _ in 0..20_000 {
        out.clear();
        match reader.next_batch(&mut out, 4096) {
            Ok(0) => {
                ended = true;
                break;
            }
            Ok(n) => refs += n,
            Err(e) => {
                errs += 1;
                let m = e.to_string();
                assert!(
                    m.contains("mutant.trace"),
                    "error without the file name: {m}"
                );
            }
        }
    }
    // A binary input of at most a few hundred KiB has at most ~10^5 records, each one a
    // reference or an error: its end comes well within the bound, or the reader hangs.
    if reader.format().is_binary() {
        assert!(ended, "binary input did not end after 20,000 batches");
    }
    (refs, errs)
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip { at: usize, bit: u8 },
    Overwrite { at: usize, bytes: Vec<u8> },
    Delete { at: usize, len: usize },
    Duplicate { at: usize, len: usize },
    Splice { other: usize, at: usize, len: usize },
    Truncate { at: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<usize>();
    prop_oneof![
        4 => (at, 0u8..8).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        3 => (at, prop::collection::vec(
            prop_oneof![any::<u8>(), prop::sample::select(b",\n\r RW-.0123456789e".to_vec())],
            1..12,
        ))
            .prop_map(|(at, bytes)| Mutation::Overwrite { at, bytes }),
        2 => (at, 1usize..200).prop_map(|(at, len)| Mutation::Delete { at, len }),
        1 => (at, 1usize..200).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        1 => (any::<usize>(), at, 1usize..400)
            .prop_map(|(other, at, len)| Mutation::Splice { other, at, len }),
        1 => at.prop_map(|at| Mutation::Truncate { at }),
    ]
}

fn apply(b: &mut Vec<u8>, m: &Mutation) {
    let n = b.len();
    if n == 0 {
        return;
    }
    match m {
        Mutation::Flip { at, bit } => b[at % n] ^= 1 << bit,
        Mutation::Overwrite { at, bytes } => {
            for (i, x) in bytes.iter().enumerate() {
                if let Some(y) = b.get_mut(at % n + i) {
                    *y = *x;
                }
            }
        }
        Mutation::Delete { at, len } => {
            let s = at % n;
            b.drain(s..(s + len).min(n));
        }
        Mutation::Duplicate { at, len } => {
            let s = at % n;
            let piece = b[s..(s + len).min(n)].to_vec();
            b.splice(s..s, piece);
        }
        Mutation::Splice { other, at, len } => {
            let all = samples();
            let src = &all[other % all.len()].1;
            if !src.is_empty() {
                let s = at % src.len();
                let piece = src[s..(s + len).min(src.len())].to_vec();
                let t = at % n;
                b.splice(t..t, piece);
            }
        }
        Mutation::Truncate { at } => b.truncate(at % n),
    }
}

fn compress(b: &[u8], how: u8) -> Vec<u8> {
    match how % 3 {
        0 => b.to_vec(),
        1 => zstd::encode_all(b, 1).unwrap(),
        _ => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(b).unwrap();
            e.finish().unwrap()
        }
    }
}

fn config() -> Config {
    Config {
        cases: std::env::var("FLASHBUF_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(384),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/fuzz_mutated_samples.proptest-regressions",
        ))),
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn mutated_samples_never_panic(
        which in any::<usize>(),
        start in any::<usize>(),
        len in 1usize..8192,
        mutations in prop::collection::vec(mutation(), 0..8),
        how in 0u8..3,
        cut in prop::option::of(any::<usize>()),
        forced in prop::option::of(prop::sample::select(Format::ALL.to_vec())),
    ) {
        let all = samples();
        let (_, src, format) = &all[which % all.len()];
        let mut bytes = slice(*format, src, start, len);
        for m in &mutations {
            apply(&mut bytes, m);
        }
        let mut data = compress(&bytes, how);
        if let Some(c) = cut {
            let n = data.len();
            data.truncate(c % (n + 1));
        }
        drain(data, forced);
    }
}

/// The unmutated samples read cleanly in their own format (so the fuzzing above starts
/// from inputs the readers accept), compressed or not.
#[test]
fn unmutated_samples_read_cleanly() {
    for (name, bytes, format) in samples() {
        for how in 0..3 {
            let (refs, errs) = drain(compress(bytes, how), Some(*format));
            assert!(refs > 100, "{name}: {refs} references");
            assert_eq!(errs, 0, "{name} ({format:?}, compression {how})");
        }
    }
}
