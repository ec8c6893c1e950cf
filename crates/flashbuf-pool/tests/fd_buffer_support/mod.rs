//! Test-local reader of the shared page-reference traces (`op,page` CSV, zstd).
#![allow(dead_code)]

use flashbuf_pool::policy::fd_buffer::{ClusterVictim, Clustering, FdBufferOptions, OrderKind};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::sync::OnceLock;

/// Path of a shared trace (outside the repository).
pub fn shared_trace(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces"
    ))
    .join(name)
}

/// Reads at most `limit` references of a page-reference CSV (`op,page` header, then
/// `R,123` / `W,123`). `None` (with a message) if the file is absent.
pub fn read_pagetrace(name: &str, limit: usize) -> Option<Vec<(bool, u64)>> {
    let path = shared_trace(name);
    let Ok(file) = std::fs::File::open(&path) else {
        eprintln!("skipping: trace {} not found", path.display());
        return None;
    };
    let dec = zstd::stream::read::Decoder::new(file).expect("zstd stream");
    let mut out = Vec::new();
    for (i, line) in BufReader::with_capacity(1 << 20, dec).lines().enumerate() {
        let line = line.expect("read trace line");
        if i == 0 {
            assert_eq!(line.trim(), "op,page", "unexpected header");
            continue;
        }
        if out.len() >= limit {
            break;
        }
        let (op, page) = line
            .split_once(',')
            .unwrap_or_else(|| panic!("line {}: {line}", i + 1));
        let w = match op {
            "R" => false,
            "W" => true,
            _ => panic!("line {}: bad op {op}", i + 1),
        };
        let p: u64 = page
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("line {}: bad page", i + 1));
        out.push((w, p));
    }
    Some(out)
}

/// The whole TPC-C trace, read once per test binary.
pub fn tpcc() -> Option<&'static [(bool, u64)]> {
    static T: OnceLock<Option<Vec<(bool, u64)>>> = OnceLock::new();
    T.get_or_init(|| read_pagetrace("tpcc-pg15-w4.pagetrace.csv.zst", usize::MAX))
        .as_deref()
}

/// The trace with page numbers packed for a direct store: each relation (`page >> 24`)
/// keeps its blocks contiguous and starts right after the previous relation's highest
/// block, so neighbouring pages stay neighbours (clusters are unchanged in shape) while
/// the device stays small. References and identities are preserved.
pub fn compact(trace: &[(bool, u64)]) -> Vec<(bool, u64)> {
    use std::collections::BTreeMap;
    let mut size: BTreeMap<u64, u64> = BTreeMap::new();
    for &(_, p) in trace {
        let e = size.entry(p >> 24).or_insert(0);
        *e = (*e).max((p & 0xFF_FFFF) + 1);
    }
    let mut base: BTreeMap<u64, u64> = BTreeMap::new();
    let mut next = 0;
    for (&rel, &n) in &size {
        base.insert(rel, next);
        next += n;
    }
    trace
        .iter()
        .map(|&(w, p)| (w, base[&(p >> 24)] + (p & 0xFF_FFFF)))
        .collect()
}

/// The whole TPC-C trace, compacted ([`compact`]), read once per test binary.
pub fn tpcc_compact() -> Option<&'static [(bool, u64)]> {
    static T: OnceLock<Option<Vec<(bool, u64)>>> = OnceLock::new();
    T.get_or_init(|| tpcc().map(compact)).as_deref()
}

/// An in-memory direct store of 512-byte pages that grows 64 KiB at a time (the common
/// helper grows by 64 MiB, which costs tens of milliseconds per pool in page zeroing).
pub fn small_store() -> flashbuf_store::DirectStore<flashbuf_device::MemDevice> {
    flashbuf_store::DirectStore::create(
        flashbuf_device::MemDevice::new(0),
        flashbuf_store::DirectStoreConfig {
            page_size: 512,
            grow_bytes: 64 << 10,
            ..Default::default()
        },
    )
    .expect("create store")
}

/// The configurations of the golden file (`fd_buffer_golden.rs`), by row name.
pub fn golden_configs() -> Vec<(&'static str, FdBufferOptions)> {
    let base = || FdBufferOptions::default().fixed_r(136.0);
    vec![
        ("default", base()),
        ("no-present-conditions", base().present_conditions(false)),
        ("exact-stacks", base().group_size(1)),
        (
            "drain-64",
            base().clustering(Clustering::Drain { cluster_pages: 64 }),
        ),
        (
            "batch-64",
            base().clustering(Clustering::Batch { cluster_pages: 64 }),
        ),
        (
            "drain-64-order-victim",
            base()
                .clustering(Clustering::Drain { cluster_pages: 64 })
                .cluster_victim(ClusterVictim::OrderVictim),
        ),
        ("fifo-pools", base().inner(OrderKind::Fifo)),
        ("online-r", FdBufferOptions::default()),
        ("table5", base().track_accuracy(true)),
    ]
}
