#![allow(clippy::unwrap_used)]
//! The order a flush writes home, as the device sees it (issue 16 item 3; paper §3.1–§3.2
//! with uFLIP's patterns): a partitioned instance round-robin across its partitions, a
//! focused one in the order its pages were staged, and the named options `order=sorted`
//! and `min-run=theta` (see `stable_buffer::order`).

use flashbuf_core::config::{Options, Spec};
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::{forward_device, Device, DeviceError, MemDevice, WriteOp};
use flashbuf_store::registry::{parse_text, StoreContext};
use flashbuf_store::stable_buffer::options::{StableBufferOptions, OPTIONS};
use flashbuf_store::stable_buffer::{
    FlushMode, MinRun, PatternCosts, Recognition, StableBufferConfig, StableBufferStore, WriteOrder,
};
use flashbuf_store::PageStore;
use flashbuf_testkit::content::filled_page;
use std::sync::{Arc, Mutex};

const PS: usize = 512;

/// Records the offsets of every batched write (a flush writes home in one batch).
struct Batches {
    inner: MemDevice,
    log: Arc<Mutex<Vec<Vec<u64>>>>,
}

impl Device for Batches {
    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        self.log
            .lock()
            .unwrap()
            .push(ops.iter().map(|o| o.offset).collect());
        self.inner.write_batch(ops)
    }
    forward_device!(inner => read_at, write_at, sync, len, set_len, max_len, stats,
                    alignment, describe);
}

/// 12 slots; T_seq 1, T_par 1.5, T_focus 2 µs; θ_seq = 3 pages; 4 partitions; a focused
/// area of 64 pages.
fn cfg(recognition: Recognition, order: WriteOrder, min_run: MinRun) -> StableBufferConfig {
    StableBufferConfig {
        staging_bytes: 12 * PS as u64,
        recognition,
        flush: FlushMode::Passive,
        costs: PatternCosts {
            source: "test".into(),
            t_seq_us: 1.0,
            t_par_us: 1.5,
            t_focus_us: 2.0,
            theta_min_bytes: 3 * PS as u64,
            focused_area_bytes: 64 * PS as u64,
            partitions: 4,
        },
        align_bytes: PS as u64,
        grow_bytes: 64 * PS as u64,
        salt: Some(5),
        order,
        min_run,
        ..StableBufferConfig::with_page_size(PS)
    }
}

/// Writes `pids` in order (the last one finds the area full and flushes) and returns the
/// page ids of the first flush's home writes, in the order the device received them.
fn first_flush(c: StableBufferConfig, pids: &[u64]) -> Vec<u64> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let dev = Batches {
        inner: MemDevice::new(0),
        log: Arc::clone(&log),
    };
    let store = StableBufferStore::create(dev, c).unwrap();
    let data = store.layout().data_offset;
    for (v, &pid) in (1u64..).zip(pids) {
        let page = filled_page(PS, PageId(pid), v, 1);
        store
            .write_page(PageId(pid), &page, &DirtyRanges::full(PS))
            .unwrap();
    }
    store.check_invariants().unwrap();
    let batches = log.lock().unwrap();
    let home: Vec<u64> = batches
        .iter()
        .find(|b| b.iter().any(|&o| o >= data))
        .expect("a flush wrote home")
        .iter()
        .map(|&o| (o - data) / PS as u64)
        .collect();
    home
}

/// Partitions 1000..1004, 2000..2002 and 3000..3003, three scattered pages, then one more
/// write that needs a slot.
fn partitioned_workload() -> Vec<u64> {
    let mut w: Vec<u64> = Vec::new();
    w.extend([3000, 1000, 2000, 1001, 3001, 2001, 1002, 3002, 1003]);
    w.extend([50_000, 90_000, 130_000, 170_000]);
    w
}

#[test]
fn partitioned_flushes_round_robin_by_default_and_sorted_on_request() {
    for r in [Recognition::OnDemand, Recognition::Incremental] {
        let got = first_flush(
            cfg(r, WriteOrder::Pattern, MinRun::Pair),
            &partitioned_workload(),
        );
        // Three partitions (9 pages, score 6) beat the longest run (4) and any focused area.
        assert_eq!(
            got,
            [1000, 2000, 3000, 1001, 2001, 3001, 1002, 3002, 1003],
            "{r:?}"
        );
        let got = first_flush(
            cfg(r, WriteOrder::Sorted, MinRun::Pair),
            &partitioned_workload(),
        );
        assert_eq!(
            got,
            [1000, 1001, 1002, 1003, 2000, 2001, 3000, 3001, 3002],
            "{r:?}"
        );
    }
}

#[test]
fn min_run_theta_drops_partitions_shorter_than_theta_seq() {
    // θ_seq = 3 pages: 2000..2002 is no partition any more.
    let got = first_flush(
        cfg(Recognition::OnDemand, WriteOrder::Pattern, MinRun::Theta),
        &partitioned_workload(),
    );
    assert_eq!(got, [1000, 3000, 1001, 3001, 1002, 3002, 1003]);
    let got = first_flush(
        cfg(Recognition::OnDemand, WriteOrder::Sorted, MinRun::Theta),
        &partitioned_workload(),
    );
    assert_eq!(got, [1000, 1001, 1002, 1003, 3000, 3001, 3002]);
}

#[test]
fn focused_flushes_in_staging_order_by_default_and_sorted_on_request() {
    // Twelve scattered pages of one 64-page area, page 40 rewritten (in place) after
    // eleven others, then a page elsewhere that needs a slot.
    let w = [40, 7, 33, 12, 58, 3, 21, 50, 27, 61, 40, 16, 45, 5000];
    for r in [Recognition::OnDemand, Recognition::Incremental] {
        let got = first_flush(cfg(r, WriteOrder::Pattern, MinRun::Pair), &w);
        // The order the versions being flushed were written: 40's copy is its rewrite.
        assert_eq!(got, [7, 33, 12, 58, 3, 21, 50, 27, 61, 40, 16, 45], "{r:?}");
        let got = first_flush(cfg(r, WriteOrder::Sorted, MinRun::Pair), &w);
        assert_eq!(got, [3, 7, 12, 16, 21, 27, 33, 40, 45, 50, 58, 61], "{r:?}");
    }
}

#[test]
fn the_extra_rules_are_named_options_off_by_default() {
    let config = |text: &str| {
        let spec = Spec::parse(text, |_| false).unwrap();
        StableBufferOptions::from_options(&Options::validate(&spec, OPTIONS).unwrap())
            .unwrap()
            .config(&MemDevice::new(0), &StoreContext::new(4096))
            .unwrap()
    };
    let c = config("stable-buffer");
    assert_eq!((c.order, c.min_run), (WriteOrder::Pattern, MinRun::Pair));
    let c = config("stable-buffer:order=sorted");
    assert_eq!((c.order, c.min_run), (WriteOrder::Sorted, MinRun::Pair));
    let c = config("stable-buffer:min-run=theta,order=pattern");
    assert_eq!((c.order, c.min_run), (WriteOrder::Pattern, MinRun::Theta));
    // A bad value is refused naming the valid ones.
    for (text, valid) in [
        ("stable-buffer:order=random", "pattern, sorted"),
        ("stable-buffer:min-run=3", "2, theta"),
    ] {
        let e = parse_text(text).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains(valid), "{text}: {e}");
    }
    for key in ["order", "min-run"] {
        let spec = OPTIONS.iter().find(|o| o.key == key).unwrap();
        assert!(spec.help.contains("extra rule"), "{key}");
    }
}
