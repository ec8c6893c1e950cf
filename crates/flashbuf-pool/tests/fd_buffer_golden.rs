#![allow(clippy::unwrap_used)]
//! Golden counts of FD-Buffer on the first 200,000 references of the shared TPC-C trace
//! (pages compacted per relation, see `fd_buffer_support::compact`) with 1,024 frames,
//! `R` = 136 (sd-card), through the real pool. Regenerate with
//! `FLASHBUF_REGEN_GOLDEN=1 cargo test -p flashbuf-pool --test fd_buffer_golden`.

mod fd_buffer_support;

use fd_buffer_support::{golden_configs as configs, small_store};
use flashbuf_core::PageId;
use flashbuf_device::{CostDevice, LatencyModel, MemDevice};
use flashbuf_pool::policy::fd_buffer::{mean_errors, FdBuffer, FdBufferOptions};
use flashbuf_pool::policy::Policy;
use flashbuf_pool::BufferPool;
use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore};

const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/golden/fd_buffer_tpcc.txt"
);
const FRAMES: usize = 1_024;
const REFS: usize = 200_000;

/// The sd-card profile's latencies (FD-Buffer Table 1: 680 reads/s, 5 writes/s).
fn sd_card_store() -> DirectStore<CostDevice<MemDevice>> {
    let model = LatencyModel {
        latency_read_us: 1e6 / 680.4,
        latency_write_us: 1e6 / 5.0,
        latency_sync_us: 0.0,
    };
    DirectStore::create(
        CostDevice::new(MemDevice::new(0), model),
        DirectStoreConfig {
            page_size: 512,
            grow_bytes: 64 << 10,
            ..Default::default()
        },
    )
    .unwrap()
}

fn row(name: &str, opts: FdBufferOptions, trace: &[(bool, u64)]) -> String {
    if name == "online-r" {
        row_on(sd_card_store(), name, opts, trace)
    } else {
        row_on(small_store(), name, opts, trace)
    }
}

fn row_on<S: PageStore>(
    store: S,
    name: &str,
    opts: FdBufferOptions,
    trace: &[(bool, u64)],
) -> String {
    let p = FdBuffer::from_options(FRAMES, opts).unwrap();
    let pool = BufferPool::new(store, FRAMES, Box::new(p) as Box<dyn Policy>).unwrap();
    for &(w, pg) in trace {
        if w {
            drop(pool.write(PageId(pg)).unwrap());
        } else {
            drop(pool.read(PageId(pg)).unwrap());
        }
    }
    pool.check_invariants().unwrap();
    let s = pool.stats();
    let report = pool.policy_report_full();
    let get = |k: &str| report.get(k).unwrap();
    let mut line = format!(
        "{name} hits={} misses={} page_writes={} write_batches={} final_m_c={} r={:.1}",
        s.hits,
        s.misses,
        s.page_writes,
        s.write_batches,
        get("m_c"),
        get("r")
    );
    let recs = &report.windows;
    if !recs.is_empty() {
        let (with, without) = mean_errors(recs);
        let without = without.unwrap();
        line += &format!(
            " err_pr={:.4}/{:.4}/{:.4} err_no_pr={:.4}/{:.4}/{:.4}",
            with[0], with[1], with[2], without[0], without[1], without[2]
        );
    }
    line
}

#[test]
fn fd_buffer_golden_counts_on_tpcc() {
    let Some(trace) = fd_buffer_support::tpcc_compact() else {
        return;
    };
    let trace = &trace[..REFS];
    let rows: Vec<String> = configs()
        .into_iter()
        .map(|(n, o)| row(n, o, trace))
        .collect();
    let text = rows.join("\n") + "\n";
    if std::env::var_os("FLASHBUF_REGEN_GOLDEN").is_some() {
        std::fs::write(GOLDEN, &text).unwrap();
        eprintln!("wrote {GOLDEN}");
        return;
    }
    let want = std::fs::read_to_string(GOLDEN).unwrap();
    for (got, want) in text.lines().zip(want.lines()) {
        assert_eq!(got, want);
    }
    assert_eq!(text.lines().count(), want.lines().count());
}

/// The pattern of the paper's Table 6 on the first 1 M references with 3 % of the
/// trace's distinct pages (1,242 frames), R = 136: FD-Buffer writes fewer pages than LRU,
/// reads more, and costs less (reads + R · writes).
#[test]
fn fd_buffer_trades_reads_for_writes_like_table_6() {
    let Some(trace) = fd_buffer_support::tpcc_compact() else {
        return;
    };
    let trace = &trace[..1_000_000];
    let frames = 1_242;
    let lru_pool = BufferPool::new(
        small_store(),
        frames,
        Box::new(flashbuf_pool::policy::Lru::new(frames)) as Box<dyn Policy>,
    )
    .unwrap();
    for &(w, pg) in trace {
        if w {
            drop(lru_pool.write(PageId(pg)).unwrap());
        } else {
            drop(lru_pool.read(PageId(pg)).unwrap());
        }
    }
    let p = FdBuffer::new(frames, FdBufferOptions::default().fixed_r(136.0)).unwrap();
    let fd_pool = BufferPool::new(small_store(), frames, Box::new(p) as Box<dyn Policy>).unwrap();
    for &(w, pg) in trace {
        if w {
            drop(fd_pool.write(PageId(pg)).unwrap());
        } else {
            drop(fd_pool.read(PageId(pg)).unwrap());
        }
    }
    let (l, f) = (lru_pool.stats(), fd_pool.stats());
    let cost = |s: flashbuf_pool::PoolStats| s.page_reads as f64 + 136.0 * s.page_writes as f64;
    eprintln!(
        "LRU reads {} writes {} cost {:.0}; FD-Buffer reads {} writes {} cost {:.0}",
        l.page_reads,
        l.page_writes,
        cost(l),
        f.page_reads,
        f.page_writes,
        cost(f)
    );
    assert!(f.page_writes < l.page_writes);
    assert!(f.page_reads > l.page_reads);
    assert!(cost(f) < 0.95 * cost(l));
}
