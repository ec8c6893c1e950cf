//! Golden counts on every trace committed under `traces/` (see `traces/README.md`): each is
//! read with the project's [`TraceReader`] and must give exactly the references, writes,
//! distinct pages and lines the README records (counted independently with awk when the
//! traces were made). The range I/O traces are also checked field by field: their new-block
//! flags and the total of changed bytes over overwrites. A trace file in `traces/` without
//! an entry here fails the test, so a new trace cannot be committed untested.

use flashbuf_trace::{parse_ranges, Format, Op, TraceReader};
use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

const TRACES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/");
const PAGE_BYTES: u32 = 8192;

/// What one trace must read as.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct Golden {
    format: Format,
    refs: u64,
    writes: u64,
    distinct_pages: u64,
    lines: u64,
}

/// Every committed trace and its golden counts (at 8 KB pages).
fn goldens() -> Vec<(&'static str, Golden)> {
    let g = |format, refs, writes, distinct_pages, lines| Golden {
        format,
        refs,
        writes,
        distinct_pages,
        lines,
    };
    use Format::{Msr, PageTrace, RangeCsv};
    vec![
        // Page-reference CSV: every buffer access of a run (bpftrace), first 2,000,000.
        (
            "pgbench-pg15-s50.pagetrace.csv.zst",
            g(PageTrace, 2_000_000, 492_322, 58_743, 2_000_001),
        ),
        (
            "oltp-pg15-t8.pagetrace.csv.zst",
            g(PageTrace, 2_000_000, 101_039, 20_708, 2_000_001),
        ),
        (
            "tpcc-pg15-w8.pagetrace.csv.zst",
            g(PageTrace, 2_000_000, 341_668, 46_645, 2_000_001),
        ),
        // MSR Cambridge CSV below the buffer: 8 KB requests, one page each, no header.
        (
            "pgbench-pg15-s50-sb256k.iotrace.msr.csv.zst",
            g(Msr, 500_000, 212_478, 47_860, 500_000),
        ),
        (
            "pgbench-pg15-s50-sb16m.iotrace.msr.csv.zst",
            g(Msr, 207_110, 97_168, 56_012, 207_110),
        ),
        (
            "oltp-pg15-t8-sb256k.iotrace.msr.csv.zst",
            g(Msr, 500_000, 64_834, 17_275, 500_000),
        ),
        (
            "oltp-pg15-t8-sb16m.iotrace.msr.csv.zst",
            g(Msr, 380_607, 100_854, 24_680, 380_607),
        ),
        // Range I/O CSV: the same requests as the MSR trace of the same run, same pages.
        (
            "pgbench-pg15-s50-sb256k.iotrace-ranges.csv.zst",
            g(RangeCsv, 500_000, 212_478, 47_860, 500_001),
        ),
        (
            "pgbench-pg15-s50-sb16m.iotrace-ranges.csv.zst",
            g(RangeCsv, 207_110, 97_168, 56_012, 207_111),
        ),
        (
            "oltp-pg15-t8-sb256k.iotrace-ranges.csv.zst",
            g(RangeCsv, 500_000, 64_834, 17_275, 500_001),
        ),
    ]
}

fn path(name: &str) -> PathBuf {
    Path::new(TRACES).join(name)
}

fn read(path: &Path) -> Golden {
    let mut reader = TraceReader::open(path, None, PAGE_BYTES).expect("open");
    let mut batch = Vec::with_capacity(1 << 16);
    let mut pages = HashSet::new();
    let mut got = Golden {
        format: reader.format(),
        refs: 0,
        writes: 0,
        distinct_pages: 0,
        lines: 0,
    };
    while reader.next_batch(&mut batch, 1 << 16).expect("read") > 0 {
        for r in batch.drain(..) {
            got.refs += 1;
            got.writes += u64::from(r.op == Op::Write);
            pages.insert(r.page);
        }
    }
    assert_eq!(reader.skipped(), 0, "{}: skipped lines", path.display());
    got.distinct_pages = pages.len() as u64;
    got.lines = reader.line();
    got
}

#[test]
fn every_committed_trace_has_golden_counts() {
    let known: HashSet<&str> = goldens().iter().map(|(n, _)| *n).collect();
    let mut found = 0;
    for entry in std::fs::read_dir(TRACES).expect("traces/ exists") {
        let name = entry.expect("entry").file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".zst") {
            assert!(known.contains(name.as_ref()), "{name} has no golden counts");
            found += 1;
        }
    }
    assert_eq!(found, known.len(), "a golden entry names a missing trace");
}

fn check(names: &[&str]) {
    let all = goldens();
    for name in names {
        let (_, want) = all
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name}: no golden entry"));
        assert_eq!(read(&path(name)), *want, "{name}");
    }
}

/// The range I/O traces: how many writes carry each `new` flag, and the changed bytes
/// summed over the overwrites (`new` = 0), from the `ranges` field parsed with
/// [`parse_ranges`]; every range lies inside the 8 KB block and runs are disjoint, ascending.
fn range_stats(path: &Path) -> ([u64; 3], u64) {
    let file = std::fs::File::open(path).expect("open");
    let mut lines = BufReader::new(zstd::Decoder::new(file).expect("zstd")).lines();
    assert_eq!(
        lines.next().expect("header").expect("text"),
        "op,page,ranges,new"
    );
    let (mut flags, mut overwrite_bytes) = ([0u64; 3], 0u64);
    for line in lines {
        let line = line.expect("text");
        let fields: Vec<&str> = line.split(',').collect();
        if fields[0] != "W" {
            continue;
        }
        let flag: usize = fields[3].parse().expect("new flag");
        flags[flag] += 1;
        let runs = parse_ranges(fields[2]).expect("ranges");
        let mut end = 0;
        for &(offset, len) in &runs {
            assert!(
                offset >= end && offset + len <= u64::from(PAGE_BYTES),
                "{line}"
            );
            end = offset + len + 1;
        }
        if flag == 0 {
            overwrite_bytes += runs.iter().map(|&(_, len)| len).sum::<u64>();
        }
    }
    (flags, overwrite_bytes)
}

#[test]
fn page_traces() {
    check(&[
        "pgbench-pg15-s50.pagetrace.csv.zst",
        "oltp-pg15-t8.pagetrace.csv.zst",
        "tpcc-pg15-w8.pagetrace.csv.zst",
    ]);
}

#[test]
fn msr_io_traces() {
    check(&[
        "pgbench-pg15-s50-sb256k.iotrace.msr.csv.zst",
        "pgbench-pg15-s50-sb16m.iotrace.msr.csv.zst",
        "oltp-pg15-t8-sb256k.iotrace.msr.csv.zst",
        "oltp-pg15-t8-sb16m.iotrace.msr.csv.zst",
    ]);
}

#[test]
fn range_io_traces() {
    let cases = [
        (
            "pgbench-pg15-s50-sb256k.iotrace-ranges.csv.zst",
            [210_696, 931, 851],
            16_890_973,
        ),
        (
            "pgbench-pg15-s50-sb16m.iotrace-ranges.csv.zst",
            [95_048, 1_062, 1_058],
            11_542_837,
        ),
        (
            "oltp-pg15-t8-sb256k.iotrace-ranges.csv.zst",
            [64_424, 205, 205],
            28_861_097,
        ),
    ];
    let names: Vec<&str> = cases.iter().map(|(n, _, _)| *n).collect();
    check(&names);
    for (name, flags, overwrite_bytes) in cases {
        assert_eq!(range_stats(&path(name)), (flags, overwrite_bytes), "{name}");
    }
}
