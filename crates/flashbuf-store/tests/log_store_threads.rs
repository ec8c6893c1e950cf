#![allow(clippy::unwrap_used)]
//! The log-structured store shared by threads: each writes, rereads and syncs its own
//! pages while the others do, with the cleaner busy (a small, nearly full store); every
//! read returns the thread's last write, invariants hold, and a reopen returns it all.

use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::MemDevice;
use flashbuf_store::log_store::{CleanerKind, LogStore, LogStoreConfig, TimeBase};
use flashbuf_store::{PageStore, ReadOutcome};
use flashbuf_testkit::content::{filled_page, matches_fill};
use std::sync::Arc;

const PS: usize = 512;
const THREADS: u64 = 4;
const PAGES_EACH: u64 = 40;

#[test]
fn threads_writing_their_own_pages_always_read_their_last_write() {
    for kind in [CleanerKind::Greedy, CleanerKind::SepBit] {
        let mut cfg = LogStoreConfig {
            segment_bytes: 16 * PS as u64,
            capacity_bytes: Some(16 * PS as u64 * 30),
            logical_pages: Some(THREADS * PAGES_EACH),
            align_bytes: PS as u64,
            time_base: TimeBase::Writes,
            checkpoint_segments: Some(4),
            salt: Some(1),
            ..LogStoreConfig::with_page_size(PS)
        };
        cfg.cleaner.kind = kind;
        cfg.cleaner.cleaning_interval_ticks = 16.0;
        cfg.cleaner.protection_period_ticks = 0.0;
        let store = Arc::new(LogStore::create(MemDevice::new(0), cfg.clone()).unwrap());
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let store = Arc::clone(&store);
                std::thread::spawn(move || {
                    let mut rng = SplitMix64::new(t);
                    let mut last = vec![0u64; PAGES_EACH as usize];
                    let mut buf = vec![0u8; PS];
                    for i in 1..=3_000u64 {
                        let k = rng.below(PAGES_EACH);
                        let pid = PageId(t * PAGES_EACH + k);
                        let tag = i * THREADS + t;
                        let p = filled_page(PS, pid, tag, 9);
                        store.write_page(pid, &p, &DirtyRanges::full(PS)).unwrap();
                        last[k as usize] = tag;
                        let j = rng.below(PAGES_EACH);
                        let q = PageId(t * PAGES_EACH + j);
                        let r = store.read_page(q, &mut buf).unwrap();
                        match last[j as usize] {
                            0 => assert_eq!(r, ReadOutcome::Unwritten),
                            want => assert!(
                                matches_fill(&buf[32..], q, want, 9),
                                "{q} is not write {want}"
                            ),
                        }
                        if i % 97 == 0 {
                            store.sync().unwrap();
                        }
                    }
                    last
                })
            })
            .collect();
        let lasts: Vec<Vec<u64>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        store.sync().unwrap();
        store.check_invariants().unwrap();
        assert!(
            store.log_stats().segments_cleaned > 0,
            "{:?}",
            store.log_stats()
        );
        let store = Arc::try_unwrap(store).unwrap();
        let store = LogStore::open(store.into_device(), cfg).unwrap();
        let mut buf = vec![0u8; PS];
        for (t, last) in lasts.iter().enumerate() {
            for (k, &want) in last.iter().enumerate() {
                let pid = PageId(t as u64 * PAGES_EACH + k as u64);
                if want > 0 {
                    store.read_page(pid, &mut buf).unwrap();
                    assert!(matches_fill(&buf[32..], pid, want, 9));
                }
            }
        }
    }
}
