#![allow(clippy::unwrap_used)]
//! The background flusher (and writers' passive flushes) running concurrently with writer
//! and reader threads: every read returns exactly the bytes of a version at least as new
//! as the last one whose write completed before the read began, and never newer than one
//! whose write had begun by the time it ended; invariants hold throughout and at the end.

use flashbuf_core::page;
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{DeviceStats, DirtyRanges, PageId};
use flashbuf_device::{Device, DeviceError, MemDevice};
use flashbuf_store::stable_buffer::{
    FlushMode, PatternCosts, Recognition, StableBufferConfig, StableBufferStore,
};
use flashbuf_store::{PageStore, ReadOutcome};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

const PS: usize = 1024;
const PAGES: u64 = 256;
/// Reads that must overlap the writers.
const MIN_READS: u64 = 1000;
/// Writers stop after at most this many times their share of writes.
const WRITE_CAP_FACTOR: u64 = 50;

fn content(pid: u64, v: u64) -> Vec<u8> {
    let mut p = vec![0u8; PS];
    let mut r = SplitMix64::new(pid << 40 ^ v);
    for b in p[page::HEADER_BYTES..].iter_mut() {
        *b = r.next_u64() as u8;
    }
    page::seal(&mut p, PageId(pid), v);
    p
}

/// A memory device whose reads and writes go in 128-byte pieces with yields between them,
/// so that concurrent requests interleave (and a read racing a write of the same bytes can
/// see some of each, as on a real device).
struct Interleaving(MemDevice);

const PIECE: usize = 128;

impl Device for Interleaving {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        for (k, c) in buf.chunks_mut(PIECE).enumerate() {
            self.0.read_at(offset + (k * PIECE) as u64, c)?;
            std::thread::yield_now();
        }
        Ok(())
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        for (k, c) in buf.chunks(PIECE).enumerate() {
            self.0.write_at(offset + (k * PIECE) as u64, c)?;
            std::thread::yield_now();
        }
        Ok(())
    }
    fn sync(&self) -> Result<(), DeviceError> {
        std::thread::yield_now();
        self.0.sync()
    }
    fn len(&self) -> u64 {
        self.0.len()
    }
    fn set_len(&self, len: u64) -> Result<(), DeviceError> {
        self.0.set_len(len)
    }
    fn stats(&self) -> DeviceStats {
        self.0.stats()
    }
    fn describe(&self) -> String {
        "interleaving(memory)".into()
    }
}

fn run(recognition: Recognition, flush: FlushMode, writes_per_thread: u64) {
    let cfg = StableBufferConfig {
        page_size: PS,
        staging_bytes: 48 * PS as u64,
        recognition,
        flush,
        costs: PatternCosts {
            theta_min_bytes: 2 * PS as u64,
            focused_area_bytes: 16 * PS as u64,
            ..PatternCosts::default()
        },
        align_bytes: PS as u64,
        grow_bytes: 64 * PS as u64,
        salt: None,
        ..StableBufferConfig::with_page_size(PS)
    };
    let store = Arc::new(StableBufferStore::create(Interleaving(MemDevice::new(0)), cfg).unwrap());
    // Per page: the version whose write completed last, and the last one begun.
    let done: Arc<Vec<AtomicU64>> = Arc::new((0..PAGES).map(|_| AtomicU64::new(0)).collect());
    let begun: Arc<Vec<AtomicU64>> = Arc::new((0..PAGES).map(|_| AtomicU64::new(0)).collect());
    let stop = Arc::new(AtomicBool::new(false));
    // Reads done so far: writers go on past `writes_per_thread` until the readers have
    // overlapped them for `MIN_READS` reads (a loaded machine may not schedule the readers
    // early), up to `WRITE_CAP_FACTOR` times as many writes.
    let reads_total = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..2u64)
        .map(|w| {
            let (store, done, begun, reads_total) = (
                Arc::clone(&store),
                Arc::clone(&done),
                Arc::clone(&begun),
                Arc::clone(&reads_total),
            );
            std::thread::spawn(move || {
                let mut rng = SplitMix64::new(w + 1);
                let full = DirtyRanges::full(PS);
                for k in 0..writes_per_thread * WRITE_CAP_FACTOR {
                    if k >= writes_per_thread && reads_total.load(SeqCst) >= MIN_READS {
                        break;
                    }
                    // Writer w owns the pages with pid % 2 == w; a hot set and the rest.
                    let base = if rng.below(2) == 0 {
                        rng.below(16)
                    } else {
                        rng.below(PAGES / 2)
                    };
                    let pid = (base * 2 + w) % PAGES;
                    let v = begun[pid as usize].load(SeqCst) + 1;
                    begun[pid as usize].store(v, SeqCst);
                    store
                        .write_page(PageId(pid), &content(pid, v), &full)
                        .unwrap();
                    done[pid as usize].store(v, SeqCst);
                    if k % 500 == 499 {
                        store.sync().unwrap();
                    }
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..2u64)
        .map(|r| {
            let (store, done, begun, stop, reads_total) = (
                Arc::clone(&store),
                Arc::clone(&done),
                Arc::clone(&begun),
                Arc::clone(&stop),
                Arc::clone(&reads_total),
            );
            std::thread::spawn(move || {
                let mut rng = SplitMix64::new(100 + r);
                let mut buf = vec![0u8; PS];
                let mut reads = 0u64;
                while !stop.load(SeqCst) {
                    let pid = if rng.below(2) == 0 {
                        rng.below(32)
                    } else {
                        rng.below(PAGES)
                    };
                    let lo = done[pid as usize].load(SeqCst);
                    let out = store.read_page(PageId(pid), &mut buf).unwrap();
                    let hi = begun[pid as usize].load(SeqCst);
                    let v = match out {
                        ReadOutcome::Unwritten => 0,
                        ReadOutcome::Found => page::version_of(&buf),
                    };
                    assert!(
                        lo <= v && v <= hi,
                        "page {pid}: read v{v}, expected {lo}..={hi}"
                    );
                    if v > 0 {
                        assert!(buf == content(pid, v), "page {pid} v{v}: wrong bytes");
                    }
                    reads += 1;
                    reads_total.fetch_add(1, SeqCst);
                    if reads.is_multiple_of(2000) {
                        store.check_invariants().unwrap();
                    }
                }
                reads
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, SeqCst);
    let reads: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(reads >= MIN_READS, "readers barely ran ({reads})");
    eprintln!(
        "{recognition:?}/{flush:?}: {reads} reads, {:?}",
        store.sb_stats()
    );
    store.sync().unwrap();
    store.check_invariants().unwrap();
    let st = store.sb_stats();
    assert!(st.flushes.iter().sum::<u64>() > 0);
    if flush == FlushMode::Proactive {
        assert!(st.proactive_flushes > 0, "{st:?}");
    }
    let mut buf = vec![0u8; PS];
    for pid in 0..PAGES {
        let v = done[pid as usize].load(SeqCst);
        let out = store.read_page(PageId(pid), &mut buf).unwrap();
        if v == 0 {
            assert_eq!(out, ReadOutcome::Unwritten);
        } else {
            assert_eq!(buf, content(pid, v), "page {pid} at the end");
        }
    }
    store.stop_flusher();
}

#[test]
fn proactive_flusher_with_writers_and_readers() {
    run(Recognition::Incremental, FlushMode::Proactive, 6000);
}

#[test]
fn passive_flushes_with_writers_and_readers() {
    run(Recognition::OnDemand, FlushMode::Passive, 6000);
    run(Recognition::Incremental, FlushMode::Passive, 6000);
}
