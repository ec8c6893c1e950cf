//! Regression: ICL allocated (and zeroed) a page for every read that found its page's
//! ICL log in a log page, and a buffer of all the log pages for every WOB flush; the log
//! store's cleaner allocated its read buffer anew for every segment it cleaned. ICL's now
//! come from `crate::scratch`, the cleaner keeps its buffer between segments. Measured
//! here (8 KiB pages, a seeded mix of one write and one read per step, 20,000 steps after
//! a warm-up of as many): ICL 10,319 bytes allocated per step before, 2,217 after, 2,137
//! with its span lists merged in one pass; then its span lists inline (`icl::log::Spans`,
//! a small vector) took it from 15.04 allocations per step to 6.16 (2,116 bytes), and a
//! read that decodes its record in place (`icl::record::RecordView`) to 5.19 (2,023 bytes);
//! then a flush that reads the WOB entries and the mapping in place instead of copying
//! them, lays a copy forward's content out directly (no scratch image of the page) and
//! merges the previous log as it lies in its log page (`RecordView::under`): 2.64 (1,771
//! bytes); and with a flush's log-page buffers kept between flushes (`LogCache::clear`),
//! 2.50 (669 bytes); and with the WOB handing the content buffers of the logs it lets go
//! of (replaced or flushed) to the next logs (`Wob::content_buffer`), 1.50 (573 bytes);
//! with a copy forward's merged log in such a buffer too, and the logs a flush wrote
//! giving theirs back, 0.86 (511 bytes); with a mapping entry's packed spans rewritten in
//! place when a page's new record has as many ranges (`Mapping::set_log`), 0.22 (498
//! bytes: the WOB's B-tree nodes, a flush's working vectors, the records whose range
//! count changed); the log store 943 before, 676 after (the segment
//! summaries it reads; 0.27 allocations per step). Each test prints its figures
//! (`--nocapture`).
//!
//! Its own test binary: the global allocator here counts every byte allocated, and the
//! tests take turns (one lock) so that each counts only its own.

mod counting_alloc;

use counting_alloc::{allocated, allocations};
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{page, DirtyRanges, PageId};
use flashbuf_device::MemDevice;
use flashbuf_store::icl::{IclConfig, IclStore};
use flashbuf_store::log_store::{LogStore, LogStoreConfig, TimeBase};
use flashbuf_store::{PageStore, ReadOutcome};
use std::sync::Mutex;

static TURN: Mutex<()> = Mutex::new(());

const PS: usize = 8192;
const STEPS: u64 = 20_000;

/// A seeded workload: each step writes a page (skewed: a quarter over 2,000 pages, the
/// rest over 300; after the first 2,000 writes only 64 bytes change when `small`) and
/// reads one of 2,000; a sync every 500 steps.
struct Workload {
    rng: SplitMix64,
    v: u64,
    small: bool,
    /// Per page: its last version's byte 99, if written.
    last: Vec<Option<u8>>,
    p: Vec<u8>,
    q: Vec<u8>,
}

impl Workload {
    fn new(small: bool) -> Self {
        Self {
            rng: SplitMix64::new(1),
            v: 0,
            small,
            last: vec![None; 2000],
            p: vec![0; PS],
            q: vec![0; PS],
        }
    }

    fn steps<S: PageStore>(&mut self, s: &S, n: u64) {
        for _ in 0..n {
            self.v += 1;
            let v = self.v;
            let pid = if self.rng.below(4) == 0 {
                self.rng.below(2000)
            } else {
                self.rng.below(300)
            };
            self.p[100 + (v % 50) as usize] = v as u8;
            self.p[99] = v as u8;
            self.last[pid as usize] = Some(v as u8);
            page::seal(&mut self.p, PageId(pid), v);
            let d = if self.small && v > 2000 {
                let mut d = DirtyRanges::new();
                d.add(99, 64);
                d
            } else {
                DirtyRanges::full(PS)
            };
            s.write_page(PageId(pid), &self.p, &d).expect("write");
            let r = self.rng.below(2000);
            s.read_page(PageId(r), &mut self.q).expect("read");
            if v.is_multiple_of(500) {
                s.sync().expect("sync");
            }
        }
    }

    /// Bytes allocated and allocations (in hundredths) per step over `STEPS` steps after as
    /// many of warm-up, printed under `name`.
    fn measure<S: PageStore>(&mut self, name: &str, s: &S) -> (u64, u64) {
        self.steps(s, STEPS);
        let (bytes, calls) = (allocated(), allocations());
        self.steps(s, STEPS);
        let (bytes, calls) = (
            (allocated() - bytes) / STEPS,
            (allocations() - calls) * 100 / STEPS,
        );
        eprintln!(
            "{name}: {bytes} bytes allocated per step, in {}.{:02} allocations",
            calls / 100,
            calls % 100
        );
        (bytes, calls)
    }

    /// Every page written reads back with its last byte.
    fn verify<S: PageStore>(&mut self, s: &S) {
        for pid in 0..2000u64 {
            let Some(b) = self.last[pid as usize] else {
                continue;
            };
            let found = s.read_page(PageId(pid), &mut self.q).expect("read back");
            assert_eq!(found, ReadOutcome::Found, "page {pid}");
            assert_eq!(self.q[99], b, "page {pid}");
        }
    }
}

#[test]
fn icl_reads_and_flushes_reuse_their_buffers() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let store = IclStore::create(MemDevice::new(0), IclConfig::with_page_size(PS)).expect("create");
    let mut w = Workload::new(true);
    let (per_step, calls) = w.measure("ICL", &store);
    let s = store.icl_stats();
    assert!(s.log_reads > STEPS / 4, "reads found logs in log pages");
    assert!(per_step < 1024, "{per_step} bytes allocated per step");
    assert!(calls < 50, "{calls} hundredths of an allocation per step");
    w.verify(&store);
    store.check_invariants().expect("invariants");
}

#[test]
fn log_store_cleaner_keeps_its_read_buffer() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let cfg = LogStoreConfig {
        segment_bytes: 64 * PS as u64,
        capacity_bytes: Some(64 << 20),
        align_bytes: PS as u64,
        time_base: TimeBase::Writes,
        ..LogStoreConfig::with_page_size(PS)
    };
    let store = LogStore::create(MemDevice::new(0), cfg).expect("create");
    let mut w = Workload::new(false);
    let cleaned = store.log_stats().segments_cleaned;
    let (per_step, _) = w.measure("log store", &store);
    assert!(
        store.log_stats().segments_cleaned > cleaned + 100,
        "the cleaner ran"
    );
    assert!(per_step < 800, "{per_step} bytes allocated per step");
    w.verify(&store);
    store
        .check_invariants()
        .map_err(flashbuf_store::StoreError::Invalid)
        .expect("invariants");
}
