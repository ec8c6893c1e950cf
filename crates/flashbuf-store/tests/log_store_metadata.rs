//! The log-structured store with metadata-only pages (`--data none`, `DataMode::Metadata`):
//! a `HashMap` model agrees with it over a seeded mix of single writes, batches, reads and
//! syncs with cleaning and checkpoints running (small segments, a small space); the same
//! sequence with whole pages costs a preconditioned simulated device exactly the same and
//! gives the same counters; reopening (checkpoint and roll-forward) returns every synced
//! page and costs what it costs with bytes; a store formatted in one mode is refused in
//! the other; a damaged head reads corrupt — never an older copy — before and after the
//! cleaner moved it and after a reopen; a torn, never synced block cuts the log's tail
//! there, as with bytes.

use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{page, DataMode, DeviceStats, DirtyRanges, PageId, METADATA_PAGE_BYTES};
use flashbuf_device::sim::{Precondition, SimDevice};
use flashbuf_device::{Device, MemDevice};
use flashbuf_store::log_store::{CleanerConfig, CleanerKind, LogStore, LogStoreConfig, TimeBase};
use flashbuf_store::registry::{self, StoreContext};
use flashbuf_store::{PageStore, ReadOutcome, StoreError, Superblock};
use std::collections::HashMap;
use std::sync::Arc;

mod metadata_support;
use metadata_support::{sealed, write_batch, write_one};

const PS: usize = 4096;
const PAGES: u64 = 256;

/// Segments of 8 blocks (7 data blocks and the summary) in a space of about 40, eager
/// background cleaning and a checkpoint every two segments (as the store table's crash
/// variant), so that cleaning and checkpoints run every few dozen writes.
fn cfg(data: DataMode, kind: CleanerKind, time_base: TimeBase) -> LogStoreConfig {
    let (ci, pp) = match time_base {
        TimeBase::Writes => (4.0, 2.0),
        _ => (2e4, 1e4),
    };
    LogStoreConfig {
        segment_bytes: 8 * PS as u64,
        capacity_bytes: Some(Superblock::reserved_bytes(PS) + 8 * PS as u64 + 40 * 8 * PS as u64),
        logical_pages: Some(PAGES),
        align_bytes: PS as u64,
        cleaner: CleanerConfig {
            kind,
            cleaning_interval_ticks: ci,
            segments_per_clean: 2,
            protection_period_ticks: pp,
            min_free_segments: Some(28),
            max_free_segments: Some(32),
            background: true,
            queue: Default::default(),
        },
        time_base,
        checkpoint_segments: Some(2),
        salt: Some(0x5eed),
        data,
        ..LogStoreConfig::with_page_size(PS)
    }
}

/// Asserts that `pid` reads as the model says (version and stamp, or unwritten).
fn expect_page(store: &dyn PageStore, model: &HashMap<u64, u64>, pid: u64) {
    let mut buf = vec![0u8; store.page_size()];
    let got = store.read_page(PageId(pid), &mut buf).expect("read");
    match model.get(&pid) {
        Some(&v) => {
            assert_eq!(got, ReadOutcome::Found, "{pid}");
            assert_eq!(page::version_of(&buf), v, "{pid}");
            assert_eq!(
                buf[page::HEADER_BYTES..page::HEADER_BYTES + 8],
                v.to_le_bytes(),
                "{pid}"
            );
            assert!(page::check(&buf, PageId(pid)).is_ok(), "{pid}: not sealed");
        }
        None => assert_eq!(got, ReadOutcome::Unwritten, "{pid}"),
    }
}

/// Runs a seeded mix on `store` against `model` (skewed: a hot fifth of the pages takes
/// three quarters of the writes, so segments are left partly live and the cleaner copies);
/// ends with a sync.
fn model_run(store: &dyn PageStore, model: &mut HashMap<u64, u64>, seed: u64, steps: u64) {
    let mut rng = SplitMix64::new(seed);
    let pick = |rng: &mut SplitMix64| {
        if rng.below(4) == 0 {
            rng.below(PAGES)
        } else {
            rng.below(PAGES / 5)
        }
    };
    for step in 1..=steps {
        let pid = pick(&mut rng);
        match rng.below(12) {
            0..=4 => {
                write_one(store, pid, step);
                model.insert(pid, step);
            }
            5..=6 => {
                let mut pids: Vec<u64> = (0..1 + rng.below(9)).map(|_| pick(&mut rng)).collect();
                pids.sort_unstable();
                pids.dedup();
                write_batch(store, &pids, step);
                for q in pids {
                    model.insert(q, step);
                }
            }
            7..=10 => expect_page(store, model, pid),
            _ => store.sync().expect("sync"),
        }
    }
    store.sync().expect("sync");
    store.check_invariants().expect("invariants");
}

/// A preconditioned SD card serving `qd` requests at a time (a batch's writes overlap
/// at `qd > 1`, so a batch costs less than its writes one by one).
fn sim_qd(qd: u32) -> SimDevice {
    let d = SimDevice::by_name("sd-card", 8 << 20, 1)
        .expect("sim")
        .with_queue_depth(qd)
        .expect("qd");
    d.precondition_as(Precondition::Sequential);
    d
}

fn sim() -> SimDevice {
    sim_qd(1)
}

/// Everything a run leaves to compare between the modes.
type Outcome = (
    DeviceStats,
    flashbuf_store::StoreStats,
    flashbuf_store::log_store::LogStoreStats,
    Vec<(String, f64)>,
);

fn outcome(s: &LogStore<SimDevice>) -> Outcome {
    (s.device_stats(), s.stats(), s.log_stats(), s.report())
}

#[test]
fn metadata_pages_match_a_model_and_cost_what_whole_pages_cost() {
    let cases = [
        (CleanerKind::Greedy, TimeBase::Writes, 1, 1),
        (CleanerKind::SepBit, TimeBase::Writes, 2, 4),
        (CleanerKind::CostBenefit, TimeBase::Device, 3, 4),
        (CleanerKind::Oldest, TimeBase::Device, 4, 1),
    ];
    for (kind, time_base, seed, qd) in cases {
        let mut runs = Vec::new();
        for data in [DataMode::Metadata, DataMode::Bytes] {
            let s = LogStore::create(sim_qd(qd), cfg(data, kind, time_base)).expect("create");
            let expected = match data {
                DataMode::Metadata => METADATA_PAGE_BYTES,
                DataMode::Bytes => PS,
            };
            assert_eq!(s.page_size(), expected);
            let mut model = HashMap::new();
            model_run(&s, &mut model, seed, 1500);
            runs.push((outcome(&s), s, model));
        }
        let ((m, meta, model), (b, _, _)) = (&runs[0], &runs[1]);
        let what = format!("{kind:?} on the {time_base:?} clock, qd {qd}");
        assert_eq!(m.0, b.0, "{what}: the device saw different requests");
        assert_eq!(m.1, b.1, "{what}: store counters");
        assert_eq!(m.2, b.2, "{what}: log store counters");
        assert_eq!(m.3, b.3, "{what}: report");
        assert!(m.0.device_time_us > 0.0 && m.0.erases > 0, "{what}: flash");
        let st = m.2;
        assert!(
            st.segments_cleaned > 0 && st.cleaner_blocks_written > 0 && st.checkpoints > 0,
            "{what}: the cleaner copied and checkpoints ran: {st:?}"
        );
        for pid in 0..PAGES {
            expect_page(meta, model, pid);
        }
    }
}

#[test]
fn a_reopened_metadata_store_returns_every_synced_page_at_the_cost_of_bytes() {
    let mut opened = Vec::new();
    for data in [DataMode::Metadata, DataMode::Bytes] {
        let c = cfg(data, CleanerKind::Greedy, TimeBase::Writes);
        let s = LogStore::create(sim(), c.clone()).expect("create");
        let mut model = HashMap::new();
        model_run(&s, &mut model, 9, 1200);
        // Blocks after the last checkpoint: recovery rolls them forward.
        for pid in 0..5 {
            write_one(&s, pid, 5000 + pid);
            model.insert(pid, 5000 + pid);
        }
        s.sync().expect("sync");
        let dev = s.into_device();
        let before = dev.stats();
        let s = LogStore::open(dev, c).expect("reopen");
        let report = s.recovery_report().expect("recovered");
        assert!(report.blocks_rolled_forward > 0, "{report:?}");
        for pid in 0..PAGES {
            expect_page(&s, &model, pid);
        }
        s.check_invariants().expect("invariants");
        // Recovery's reads and writes, by the device's counters.
        let (after, log) = (s.device_stats(), s.log_stats());
        opened.push((after - before, report, log));
    }
    let ((m, mr, _), (b, br, _)) = (&opened[0], &opened[1]);
    assert_eq!(m, b, "recovery's device requests differ between the modes");
    assert_eq!(
        RecoveryCmp::from(mr),
        RecoveryCmp::from(br),
        "recovery found different things"
    );
}

/// A recovery report without its wall time.
#[derive(Debug, PartialEq)]
struct RecoveryCmp(u64, bool, u64, u64, u64, u64, u64, u64, bool, f64);

impl From<&flashbuf_store::log_store::RecoveryReport> for RecoveryCmp {
    fn from(r: &flashbuf_store::log_store::RecoveryReport) -> Self {
        RecoveryCmp(
            r.checkpoint_generation,
            r.other_slot_damaged,
            r.segments_walked,
            r.blocks_rolled_forward,
            r.blocks_cut,
            r.damaged_blocks,
            r.skipped_blocks,
            r.summaries_written,
            r.wrote_checkpoint,
            r.device_time_us,
        )
    }
}

#[test]
fn a_store_is_refused_in_the_other_mode() {
    for (made, asked) in [
        (DataMode::Metadata, DataMode::Bytes),
        (DataMode::Bytes, DataMode::Metadata),
    ] {
        let dev = Arc::new(MemDevice::new(0));
        let c = |data| cfg(data, CleanerKind::Greedy, TimeBase::Writes);
        let s = LogStore::create(dev.clone(), c(made)).expect("create");
        let p = sealed(made.buffer_bytes(PS), PageId(1), 1);
        s.write_page(PageId(1), &p, &DirtyRanges::full(p.len()))
            .expect("write");
        s.sync().expect("sync");
        drop(s);
        let e = LogStore::open(dev.clone(), c(asked)).expect_err("other mode");
        assert!(
            matches!(&e, StoreError::Format(m) if m.contains(&format!("--data {asked}"))
                && m.contains(&format!("--data {made}"))),
            "{e}"
        );
        // Through the store table too, as the lab opens it.
        let parsed = registry::parse_text(
            "log-structured:segment_pages=8,pages=256,align_pages=1,clock=writes",
        )
        .expect("parse");
        let ctx = StoreContext {
            data: asked,
            ..StoreContext::new(PS)
        };
        let e = parsed
            .open(Box::new(dev.clone()), &ctx)
            .err()
            .expect("refused");
        assert!(e.to_string().contains("--data"), "{e}");
        let s = LogStore::open(dev, c(made)).expect("same mode opens");
        let mut buf = vec![0u8; made.buffer_bytes(PS)];
        assert_eq!(
            s.read_page(PageId(1), &mut buf).expect("read"),
            ReadOutcome::Found
        );
    }
}

/// Flips a byte of the payload stamp in `pid`'s current block's head, at rest.
fn damage_head(s: &LogStore<Arc<MemDevice>>, pid: PageId) {
    let addr = s.location(pid).expect("mapped");
    let at = s.layout().addr_byte_offset(addr) + page::HEADER_BYTES as u64 + 3;
    let mut b = [0u8; 1];
    s.device().read_at(at, &mut b).expect("read");
    s.device().write_at(at, &[b[0] ^ 0x5a]).expect("damage");
}

fn expect_corrupt(s: &dyn PageStore, pid: PageId) {
    let mut buf = vec![0u8; s.page_size()];
    let e = s.read_page(pid, &mut buf).expect_err("corrupt");
    assert!(
        matches!(e, StoreError::Corrupt { pid: p, .. } if p == pid),
        "{e}"
    );
    assert!(buf.iter().all(|&x| x == 0), "corrupt bytes handed out");
}

/// Damages page 5 (older copies on the device), lets the cleaner move it, damages page 7
/// after the last checkpoint, reopens; returns the damaged copies the cleaner made, the
/// recovery report and the device's counters.
fn damaged_run(data: DataMode) -> (u64, RecoveryCmp, DeviceStats) {
    let c = cfg(data, CleanerKind::Greedy, TimeBase::Writes);
    let dev = Arc::new(MemDevice::new(0));
    let s = LogStore::create(dev.clone(), c.clone()).expect("create");
    let len = s.page_size();
    // Older copies of page 5 stay on the device.
    for v in 1..=3 {
        write_one(&s, 5, v);
        write_one(&s, 6, v);
    }
    s.sync().expect("sync");
    damage_head(&s, PageId(5));
    expect_corrupt(&s, PageId(5));
    // The cleaner moves the damaged block as a damaged copy: still corrupt.
    let seg =
        |s: &LogStore<Arc<MemDevice>>| s.layout().split(s.location(PageId(5)).expect("mapped")).0;
    let first = seg(&s);
    let mut v = 10;
    while seg(&s) == first && v < 20_000 {
        write_one(&s, 10 + v % 60, v);
        v += 1;
    }
    assert_ne!(seg(&s), first, "the cleaner never moved page 5");
    let copied = s.log_stats().damaged_blocks_copied;
    assert!(copied >= 1);
    expect_corrupt(&s, PageId(5));
    // Damage to a block recovery rolls forward (page 8 after it, so that its segment is
    // walked even if page 7 opened it): the promised block stays mapped.
    s.checkpoint().expect("checkpoint");
    write_one(&s, 7, 1);
    write_one(&s, 8, 1);
    s.sync().expect("sync");
    damage_head(&s, PageId(7));
    drop(s);
    let s = LogStore::open(dev.clone(), c).expect("reopen");
    let report = s.recovery_report().expect("recovered");
    assert_eq!(report.damaged_blocks, 1, "{report:?}");
    expect_corrupt(&s, PageId(5));
    expect_corrupt(&s, PageId(7));
    let mut buf = vec![0u8; len];
    for (pid, v) in [(6, 3), (8, 1)] {
        assert_eq!(
            s.read_page(PageId(pid), &mut buf).expect("read"),
            ReadOutcome::Found
        );
        assert_eq!(page::version_of(&buf), v);
    }
    (copied, RecoveryCmp::from(&report), dev.stats())
}

#[test]
fn a_damaged_head_reads_corrupt_never_an_older_copy() {
    let meta = damaged_run(DataMode::Metadata);
    assert_eq!(meta, damaged_run(DataMode::Bytes), "as with whole pages");
}

/// Versions pages `0..20` read after a torn, never synced block in the log's tail.
fn torn_tail_run(data: DataMode) -> Vec<u64> {
    let c = cfg(data, CleanerKind::Greedy, TimeBase::Writes);
    let dev = Arc::new(MemDevice::new(0));
    let s = LogStore::create(dev.clone(), c.clone()).expect("create");
    let len = s.page_size();
    for pid in 0..20 {
        write_one(&s, pid, 1);
    }
    s.sync().expect("sync");
    for pid in 0..6 {
        write_one(&s, pid, 2);
    }
    // Page 3's new block tore (it was never synced): the tail is cut there.
    damage_head(&s, PageId(3));
    drop(s);
    let s = LogStore::open(dev, c).expect("reopen");
    assert!(s.recovery_report().expect("recovered").blocks_cut > 0);
    let mut buf = vec![0u8; len];
    (0..20)
        .map(|pid| {
            let got = s.read_page(PageId(pid), &mut buf).expect("never corrupt");
            assert_eq!(got, ReadOutcome::Found, "{pid}");
            page::version_of(&buf)
        })
        .collect()
}

#[test]
fn a_torn_unsynced_tail_is_cut_as_with_bytes() {
    let meta = torn_tail_run(DataMode::Metadata);
    let mut expected = vec![1; 20];
    expected[..3].fill(2);
    assert_eq!(meta, expected, "the writes before the torn block survive");
    assert_eq!(meta, torn_tail_run(DataMode::Bytes));
}
