//! The reuse rule of `super` on the simulated NIPU SSD, checked request by request: before
//! every caller operation the test notes which segments have unjoined background work
//! (written into by a pass, or freed by a pass's checkpoint) and the background clock;
//! a caller's write that lands in a freed segment, or a read of a page in a written one,
//! must not complete before that background work did (the main clock reaches the noted
//! background clock). Without the joins of rules 1 and 2 these assertions fail.

#![allow(clippy::unwrap_used)]

use super::super::{CleanerConfig, CleanerKind, LogStore, LogStoreConfig, TimeBase};
use crate::PageStore;
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::sim::StreamId;
use flashbuf_device::SimDevice;
use flashbuf_testkit::content::{filled_page, matches_fill};
use std::sync::Arc;

const PS: usize = 8192;
const SEED: u64 = 0x5eed;

/// Few segments beyond the thresholds: background passes must checkpoint for room, so
/// the foreground writes into segments they freed.
fn config() -> LogStoreConfig {
    LogStoreConfig {
        segment_bytes: 16 * PS as u64,
        capacity_bytes: Some(8 << 20),
        align_bytes: PS as u64,
        cleaner: CleanerConfig {
            kind: CleanerKind::Greedy,
            cleaning_interval_ticks: 20_000.0,
            protection_period_ticks: 5_000.0,
            segments_per_clean: 4,
            min_free_segments: Some(4),
            max_free_segments: Some(6),
            ..CleanerConfig::default()
        },
        time_base: TimeBase::Device,
        checkpoint_segments: Some(64),
        salt: Some(9),
        ..LogStoreConfig::with_page_size(PS)
    }
}

type Store = LogStore<Arc<SimDevice>>;

/// Segments with unjoined background work: (freed, written), and the background clock.
fn pending(store: &Store) -> (Vec<bool>, Vec<bool>, f64) {
    let st = store.state.read();
    let b = &st.bg;
    let freed = b.freed.iter().map(|&g| g > b.joined).collect();
    let written = b.written.iter().map(|&g| g > b.joined).collect();
    let dev = store.device();
    (freed, written, clock(dev, dev.background_stream()))
}

/// Whether segment `seg` was freed by a background pass after generation `joined`, and
/// whether that pass is still unjoined.
fn freed_since(store: &Store, seg: usize, joined: u64) -> (bool, bool) {
    let st = store.state.read();
    let g = st.bg.freed[seg];
    (g > joined, g > st.bg.joined)
}

fn clock(dev: &SimDevice, s: StreamId) -> f64 {
    dev.stream_clock_us(s).unwrap()
}

fn segment_of(store: &Store, pid: u64) -> usize {
    let a = store.location(PageId(pid)).unwrap();
    store.layout().split(a).0 .0 as usize
}

#[test]
fn foreground_writes_into_freed_segments_and_reads_of_copies_wait_for_the_background() {
    let dev = Arc::new(SimDevice::by_name("nipu-ssd", 8 << 20, 1).unwrap());
    let store = LogStore::create(Arc::clone(&dev), config()).unwrap();
    assert!(store.cleans_on_background_queue());
    let l = store.layout();
    let pages =
        u64::from(l.segments) * u64::from(store.config().data_blocks_per_segment()) * 8 / 10;
    let mut last = vec![0u64; pages as usize];
    let mut rng = SplitMix64::new(11);
    let (mut write_checks, mut read_checks) = (0, 0);
    let mut buf = vec![0u8; PS];
    for i in 0..12 * pages {
        let pid = if i < pages { i } else { rng.below(pages) };
        let (freed, _, bg_us) = pending(&store);
        let joined = store.state.read().bg.joined;
        let p = filled_page(PS, PageId(pid), i + 1, SEED);
        store
            .write_page(PageId(pid), &p, &DirtyRanges::full(PS))
            .unwrap();
        last[pid as usize] = i + 1;
        let seg = segment_of(&store, pid);
        if freed[seg] {
            let main_us = clock(&dev, StreamId::MAIN);
            assert!(main_us >= bg_us, "write {i}: {main_us} < {bg_us}");
        }
        // Freed by a pass of this call (or an earlier unjoined one): joined since.
        let (freed_by_pass, unjoined) = freed_since(&store, seg, joined);
        if freed_by_pass {
            write_checks += 1;
            assert!(
                !unjoined,
                "write {i} into segment {seg} did not wait for its pass"
            );
        }
        let q = rng.below(pages);
        if last[q as usize] > 0 {
            let (_, written, bg_us) = pending(&store);
            let waits = written[segment_of(&store, q)];
            store.read_page(PageId(q), &mut buf).unwrap();
            assert!(matches_fill(&buf[32..], PageId(q), last[q as usize], SEED));
            if waits {
                read_checks += 1;
                let main_us = clock(&dev, StreamId::MAIN);
                assert!(main_us >= bg_us, "read {i}: {main_us} < {bg_us}");
            }
        }
        if i % 4000 == 3999 {
            store.sync().unwrap();
        }
    }
    let s = store.log_stats();
    assert!(
        write_checks > 0 && read_checks > 0,
        "rules not exercised: {write_checks} writes, {read_checks} reads; {s:?}"
    );
    assert!(s.background_joins > 0, "{s:?}");
    store.check_invariants().unwrap();
}
