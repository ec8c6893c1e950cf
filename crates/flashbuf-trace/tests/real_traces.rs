//! Auto-detection and golden counts on the real traces: the full ones in the shared trace
//! directory (skipped with a note when absent) and the bundled samples in
//! `testdata/traces/`.

use flashbuf_trace::{Compression, Format, Op, PageRef, TraceReader};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/");
const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/traces/");

#[derive(Debug, PartialEq, Eq)]
struct Counts {
    format: Format,
    refs: u64,
    writes: u64,
    distinct: u64,
    skipped: u64,
    lines: u64,
}

fn shared(name: &str) -> Option<PathBuf> {
    let p = Path::new(SHARED).join(name);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipping: {} is absent", p.display());
        None
    }
}

fn sample(name: &str) -> PathBuf {
    Path::new(SAMPLES).join(name)
}

fn count(path: &Path, page_size: u32) -> Counts {
    let mut reader = TraceReader::open(path, None, page_size).expect("open");
    let mut batch = Vec::with_capacity(1 << 16);
    let (mut refs, mut writes) = (0, 0);
    let mut distinct = HashSet::new();
    loop {
        batch.clear();
        let n = reader.next_batch(&mut batch, 1 << 16).expect("read");
        if n == 0 {
            break;
        }
        refs += n as u64;
        for r in &batch {
            writes += u64::from(r.op == Op::Write);
            distinct.insert(r.page);
        }
    }
    Counts {
        format: reader.format(),
        refs,
        writes,
        distinct: distinct.len() as u64,
        skipped: reader.skipped(),
        lines: reader.line(),
    }
}

fn counts(format: Format, refs: u64, writes: u64, distinct: u64, lines: u64) -> Counts {
    Counts {
        format,
        refs,
        writes,
        distinct,
        skipped: 0,
        lines,
    }
}

#[test]
fn tpcc_page_trace() {
    let Some(p) = shared("tpcc-pg15-w4.pagetrace.csv.zst") else {
        return;
    };
    assert_eq!(
        count(&p, 8192),
        counts(Format::PageTrace, 5_123_689, 887_303, 41_399, 5_123_690)
    );
}

#[test]
fn pgbench_page_trace() {
    let Some(p) = shared("pgbench-pg15-s20.pagetrace.csv.zst") else {
        return;
    };
    assert_eq!(
        count(&p, 8192),
        counts(Format::PageTrace, 3_254_791, 771_964, 39_712, 3_254_792)
    );
}

#[test]
fn pgbench_msr_io_trace() {
    let Some(p) = shared("pgbench-pg15-s20.iotrace.msr.csv.zst") else {
        return;
    };
    // 1,588,636 requests of 8 KB (598,336 writes): one page each at 8 KiB, two at 4 KiB.
    assert_eq!(
        count(&p, 8192),
        counts(Format::Msr, 1_588_636, 598_336, 40_576, 1_588_636)
    );
    assert_eq!(
        count(&p, 4096),
        counts(Format::Msr, 3_177_272, 1_196_672, 81_152, 1_588_636)
    );
}

#[test]
fn cloudphysics_lcs_csv() {
    let Some(p) = shared("cloudPhysicsIO.csv.zst") else {
        return;
    };
    // 113,872 requests (46,974 reads 0x28, 66,898 writes 0x2a) after a header line.
    assert_eq!(
        count(&p, 4096),
        counts(Format::LcsCsv, 1_141_869, 656_169, 269_210, 113_873)
    );
    assert_eq!(
        count(&p, 8192),
        counts(Format::LcsCsv, 627_350, 361_462, 136_271, 113_873)
    );
    assert_eq!(
        count(&p, 512),
        counts(Format::LcsCsv, 8_214_801, 4_704_230, 2_125_107, 113_873)
    );
}

#[test]
fn mqsim_disksim_trace() {
    let Some(p) = shared("tpcc-small.disksim.trace") else {
        return;
    };
    // 6,999 requests, 2,618 writes, on several devices.
    assert_eq!(
        count(&p, 4096),
        counts(Format::DiskSim, 20_669, 7_995, 20_470, 6_999)
    );
    assert_eq!(
        count(&p, 8192),
        counts(Format::DiskSim, 13_393, 5_152, 13_216, 6_999)
    );
    assert_eq!(
        count(&p, 512),
        counts(Format::DiskSim, 116_638, 45_710, 116_038, 6_999)
    );
}

#[test]
fn arc_oltp_lis() {
    let Some(p) = shared("arc-oltp.lis.zst") else {
        return;
    };
    let c = count(&p, 4096);
    assert_eq!(c, counts(Format::ArcLis, 914_145, 0, 186_880, 914_145));
}

#[test]
fn bundled_samples() {
    let cases = [
        (
            "tpcc-sample.pagetrace.csv.zst",
            8192,
            counts(Format::PageTrace, 200_000, 34_534, 13_879, 200_001),
            Compression::Zstd,
        ),
        (
            "pgbench-sample.pagetrace.csv.zst",
            8192,
            counts(Format::PageTrace, 2_000, 3, 172, 2_001),
            Compression::Zstd,
        ),
        (
            "pgbench-sample.iotrace.msr.csv.zst",
            8192,
            counts(Format::Msr, 2_000, 773, 639, 2_000),
            Compression::Zstd,
        ),
        (
            "pgbench-sample.iotrace.msr.csv.zst",
            4096,
            counts(Format::Msr, 4_000, 1_546, 1_278, 2_000),
            Compression::Zstd,
        ),
        (
            "cloudPhysicsIO-sample.csv.gz",
            4096,
            counts(Format::LcsCsv, 69_277, 45_307, 53_530, 10_001),
            Compression::Gzip,
        ),
        (
            "tpcc-small-sample.disksim.trace",
            4096,
            counts(Format::DiskSim, 1_473, 734, 1_460, 500),
            Compression::None,
        ),
        (
            "arc-oltp-sample.lis.zst",
            4096,
            counts(Format::ArcLis, 2_000, 0, 1_414, 2_000),
            Compression::Zstd,
        ),
    ];
    for (name, ps, want, compression) in cases {
        let path = sample(name);
        assert_eq!(count(&path, ps), want, "{name} at {ps}");
        let reader = TraceReader::open(&path, None, ps).expect("open");
        assert_eq!(reader.compression(), compression, "{name}");
    }
}

/// The samples of the binary formats and of blkparse (counts checked independently: the
/// oracleGeneral records with a Python `struct` reader, the blkparse events with awk-like
/// field splitting).
#[test]
fn bundled_binary_and_blkparse_samples() {
    let q = Format::Blkparse(flashbuf_trace::BlkAction::Queue);
    let cases = [
        (
            "cloudPhysicsIO-sample.oracleGeneral.bin.zst",
            4096,
            counts(Format::OracleGeneral, 10_000, 0, 5_581, 10_000),
        ),
        (
            "pgbench-sample.pagebin.zst",
            4096,
            counts(Format::PageBin, 2_000, 3, 172, 2_000),
        ),
        (
            "pgbench-sample.blkparse.txt.zst",
            4096,
            Counts {
                skipped: 5,
                ..counts(q, 2_000, 626, 772, 6_395)
            },
        ),
        (
            "pgbench-sample.blkparse.txt.zst",
            512,
            Counts {
                skipped: 5,
                ..counts(q, 16_000, 5_008, 6_176, 6_395)
            },
        ),
    ];
    for (name, ps, want) in cases {
        assert_eq!(count(&sample(name), ps), want, "{name} at {ps}");
    }
    // Issued (D) events: the merged requests cover the same pages.
    let d = Format::Blkparse(flashbuf_trace::BlkAction::Issue);
    let mut r =
        TraceReader::open(&sample("pgbench-sample.blkparse.txt.zst"), Some(d), 4096).expect("open");
    let refs: Vec<PageRef> = r.by_ref().collect::<Result<_, _>>().expect("read");
    assert_eq!(refs.len(), 2_000);
    assert_eq!(refs.iter().filter(|x| x.op == Op::Write).count(), 626);
    assert_eq!(r.skipped(), 5);
    // The pagebin sample is the pgbench page-trace sample.
    let csv: Vec<PageRef> =
        TraceReader::open(&sample("pgbench-sample.pagetrace.csv.zst"), None, 4096)
            .expect("open")
            .collect::<Result<_, _>>()
            .expect("read");
    let bin: Vec<PageRef> = TraceReader::open(&sample("pgbench-sample.pagebin.zst"), None, 4096)
        .expect("open")
        .collect::<Result<_, _>>()
        .expect("read");
    assert_eq!(bin, csv);
}
#[test]
fn samples_are_excerpts_of_the_shared_traces() {
    let pairs = [
        (
            "tpcc-sample.pagetrace.csv.zst",
            "tpcc-pg15-w4.pagetrace.csv.zst",
        ),
        (
            "pgbench-sample.pagetrace.csv.zst",
            "pgbench-pg15-s20.pagetrace.csv.zst",
        ),
        (
            "pgbench-sample.iotrace.msr.csv.zst",
            "pgbench-pg15-s20.iotrace.msr.csv.zst",
        ),
        ("cloudPhysicsIO-sample.csv.gz", "cloudPhysicsIO.csv.zst"),
        (
            "tpcc-small-sample.disksim.trace",
            "tpcc-small.disksim.trace",
        ),
        ("arc-oltp-sample.lis.zst", "arc-oltp.lis.zst"),
    ];
    for (small, full) in pairs {
        let Some(full) = shared(full) else {
            continue;
        };
        let excerpt: Vec<PageRef> = TraceReader::open(&sample(small), None, 4096)
            .expect("open sample")
            .collect::<Result<_, _>>()
            .expect("read sample");
        let mut reader = TraceReader::open(&full, None, 4096).expect("open full");
        let mut prefix = Vec::new();
        while prefix.len() < excerpt.len() {
            let want = excerpt.len() - prefix.len();
            if reader.next_batch(&mut prefix, want).expect("read full") == 0 {
                break;
            }
        }
        assert!(
            prefix == excerpt,
            "{small} is not the start of {}",
            full.display()
        );
    }
}
