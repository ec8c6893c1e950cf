#![allow(clippy::unwrap_used)]
//! Background cleaning on the device's background queue (`cleaner_queue=background`):
//! on the simulated Mtron SSD the same skewed workload (the daemon on the writes clock, so
//! both runs make the same decisions) takes strictly less device time than with the passes
//! on the main queue, every page reads back as its last write with the same bytes in both
//! runs, and the main queue waits for the background queue exactly where the
//! foreground depends on it (checked here for caller syncs; the unit tests of
//! `log_store::background` check writes into freed segments and reads of copies). A device
//! without a background queue runs the passes on its one queue and never joins.

use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::sim::StreamId;
use flashbuf_device::{MemDevice, SimDevice};
use flashbuf_store::log_store::{
    CleanerConfig, CleanerKind, CleanerQueue, LogStore, LogStoreConfig, LogStoreStats, TimeBase,
};
use flashbuf_store::{PageStore, ReadOutcome};
use flashbuf_testkit::content::{filled_page, matches_fill};
use std::collections::HashMap;
use std::sync::Arc;

const SEED: u64 = 0xb6c1;
const PS: usize = 8192;
const CAPACITY_BYTES: u64 = 32 << 20;

fn config(kind: CleanerKind, queue: CleanerQueue) -> LogStoreConfig {
    LogStoreConfig {
        segment_bytes: 32 * PS as u64,
        capacity_bytes: Some(CAPACITY_BYTES),
        align_bytes: PS as u64,
        cleaner: CleanerConfig {
            kind,
            // Interval and period in caller writes: both runs wake the daemon alike.
            cleaning_interval_ticks: 300.0,
            protection_period_ticks: 100.0,
            min_free_segments: Some(6),
            max_free_segments: Some(8),
            queue,
            ..CleanerConfig::default()
        },
        time_base: TimeBase::Writes,
        checkpoint_segments: Some(16),
        salt: Some(5),
        ..LogStoreConfig::with_page_size(PS)
    }
}

/// What a run leaves: the device's time, the store's counters, the last write of every
/// page and every page's bytes read back.
struct Run {
    device_time_us: f64,
    stats: LogStoreStats,
    model: HashMap<u64, u64>,
    images: HashMap<u64, Vec<u8>>,
}

/// Main and background clocks of `dev`, µs.
fn clocks(dev: &SimDevice) -> (f64, f64) {
    let main = dev.stream_clock_us(StreamId::MAIN).unwrap();
    let bg = dev.stream_clock_us(dev.background_stream()).unwrap();
    (main, bg)
}

/// Fills 80% of the data capacity, overwrites it three times over (80% of the writes on
/// 20% of the pages, a sync every 500 writes) on the simulated Mtron SSD, checking after every caller sync that the
/// main clock reached the background clock as it was before the sync (rule 3 of
/// `log_store::background`), then reads every page back.
fn run(kind: CleanerKind, queue: CleanerQueue) -> Run {
    let dev = Arc::new(SimDevice::by_name("mtron", CAPACITY_BYTES, 1).unwrap());
    dev.precondition();
    let store = LogStore::create(Arc::clone(&dev), config(kind, queue)).unwrap();
    assert_eq!(
        store.cleans_on_background_queue(),
        queue == CleanerQueue::Background
    );
    let l = store.layout();
    let capacity = u64::from(l.segments) * u64::from(store.config().data_blocks_per_segment());
    let pages = capacity * 8 / 10;
    let mut model = HashMap::new();
    let mut rng = SplitMix64::new(pages);
    let hot = pages / 5;
    for i in 0..4 * pages {
        let pid = if i < pages {
            i
        } else if rng.below(10) < 8 {
            rng.below(hot)
        } else {
            rng.below(pages)
        };
        let p = filled_page(PS, PageId(pid), i + 1, SEED);
        store
            .write_page(PageId(pid), &p, &DirtyRanges::full(PS))
            .unwrap();
        model.insert(pid, i + 1);
        if i % 500 == 499 {
            let (_, bg_before_us) = clocks(&dev);
            store.sync().unwrap();
            let (main_us, _) = clocks(&dev);
            assert!(
                main_us >= bg_before_us,
                "a caller's sync returned at {main_us} µs before the background work it \
                 depends on ended ({bg_before_us} µs)"
            );
        }
    }
    store.sync().unwrap();
    store.check_invariants().unwrap();
    let mut images = HashMap::new();
    for (&pid, &t) in &model {
        let mut buf = vec![0u8; PS];
        let found = store.read_page(PageId(pid), &mut buf).unwrap() == ReadOutcome::Found;
        let last = found && matches_fill(&buf[32..], PageId(pid), t, SEED);
        assert!(last, "page {pid} lost write {t} (found: {found})");
        images.insert(pid, buf);
    }
    dev.check_invariants().unwrap();
    Run {
        device_time_us: store.device_stats().device_time_us,
        stats: store.log_stats(),
        model,
        images,
    }
}

#[test]
fn the_background_queue_takes_less_device_time_with_the_same_bytes() {
    for kind in [
        CleanerKind::Greedy,
        CleanerKind::CostBenefit,
        CleanerKind::SepBit,
    ] {
        let bg = run(kind, CleanerQueue::Background);
        let main = run(kind, CleanerQueue::Main);
        let name = kind.name();
        assert!(bg.stats.background_segments > 0, "{name}: {:?}", bg.stats);
        assert!(
            main.stats.background_segments > 0,
            "{name}: {:?}",
            main.stats
        );
        assert!(bg.stats.background_queue_time_us > 0.0, "{name}");
        assert!(bg.stats.background_joins > 0, "{name}: {:?}", bg.stats);
        assert_eq!(main.stats.background_queue_time_us, 0.0, "{name}");
        assert_eq!(main.stats.background_joins, 0, "{name}");
        assert!(
            bg.device_time_us < main.device_time_us,
            "{name}: background queue {} µs, main queue {} µs",
            bg.device_time_us,
            main.device_time_us
        );
        // The same decisions (the daemon runs on the writes clock): only time differs.
        let same = |s: LogStoreStats| LogStoreStats {
            cleaning_time_us: 0.0,
            background_queue_time_us: 0.0,
            background_joins: 0,
            ..s
        };
        assert_eq!(same(bg.stats), same(main.stats), "{name}");
        assert_eq!(bg.model, main.model);
        assert!(
            bg.images == main.images,
            "{name}: the runs read back different bytes"
        );
    }
}

#[test]
fn the_report_carries_the_background_queue_counters() {
    let run = |queue| {
        let dev = SimDevice::by_name("mtron", CAPACITY_BYTES, 1).unwrap();
        let store = LogStore::create(dev, config(CleanerKind::Greedy, queue)).unwrap();
        let r: HashMap<String, f64> = store.report().into_iter().collect();
        (r["background_joins"], r["background_queue_time_us"])
    };
    assert_eq!(run(CleanerQueue::Main), (0.0, 0.0));
    assert_eq!(run(CleanerQueue::Background), (0.0, 0.0));
}

#[test]
fn without_a_background_queue_the_passes_run_on_the_device_and_never_join() {
    let mut cfg = config(CleanerKind::Greedy, CleanerQueue::Background);
    cfg.time_base = TimeBase::Writes;
    cfg.cleaner.cleaning_interval_ticks = 8.0;
    cfg.cleaner.protection_period_ticks = 4.0;
    cfg.capacity_bytes = Some(4 << 20);
    let store = LogStore::create(MemDevice::new(0), cfg).unwrap();
    assert!(!store.cleans_on_background_queue());
    let mut rng = SplitMix64::new(3);
    for i in 0..4000u64 {
        let pid = rng.below(300);
        let p = filled_page(PS, PageId(pid), i + 1, SEED);
        store
            .write_page(PageId(pid), &p, &DirtyRanges::full(PS))
            .unwrap();
    }
    store.sync().unwrap();
    let s = store.log_stats();
    assert!(s.background_segments > 0, "{s:?}");
    assert_eq!((s.background_joins, s.background_queue_time_us), (0, 0.0));
}
