//! StableBuffer: stage evicted pages in a small area of the flash device, then flush them
//! home in efficient write patterns.
//!
//! Paper: Yu Li, Jianliang Xu, Byron Choi and Haibo Hu, "StableBuffer: Optimizing Write
//! Performance for DBMS Applications on Flash Devices", CIKM 2010 (text in
//! `../shared/papers/stablebuffer.txt`). §2.1 the idea (random writes within a focused
//! area of 4–16 MB are almost as fast as sequential ones), §2.2 the data structures (slots,
//! StableBuffer Translation Table, bitmap, free-slot pointer) and recovery, §2.3 Reader,
//! Writer and Flush Manager (Algorithms 1–2), §3.1 on-demand and incremental pattern
//! recognition, §3.2 passive and proactive flushing and the thresholds θ_x, §4 the
//! evaluation that `flashbuf reproduce stablebuffer` repeats.
//!
//! # Readings taken (design.md §4)
//! The text lost the pattern definitions, the selection formula and the focused
//! threshold's formula; see [`patterns`] for the definitions, read from uFLIP. In short:
//! sequential = consecutive destinations, written ascending; partitioned = up to `P`
//! sequential runs (each of at least 2 pages) in distinct areas, written round-robin
//! across them; focused = pages within an area no larger than the device's focused-area
//! size (on-demand: the fullest sliding window; incremental: the fullest aligned area),
//! written in the order they were staged ([`order`]). Passive flushing takes the instance
//! with the highest `m / T_x` (`m` pages, `T_x` the pattern's time per page: more slots
//! freed and a cheaper pattern both raise it; see [`patterns`] for why it is not slots
//! per unit of time); proactive flushing takes, among the instances *larger than* their
//! thresholds (`m > θ_x`, as printed), the highest score, where
//! `θ_seq = θ_min / page size`, `θ_par = θ_seq · T_par / T_seq`,
//! `θ_focus = θ_seq · T_focus / T_seq`. The times, θ_min, the focused-area size and `P`
//! come from a uFLIP-style [`DeviceProfile`](flashbuf_device::DeviceProfile)
//! ([`PatternCosts`]); without one, the paper's Mtron figures. Other readings:
//! - The staging size defaults to the profile's focused-area size (§2.1 and §4: "the
//!   setting of StableBuffer size to that of the focused area"), shrunk to what a
//!   fixed-capacity device leaves beside the run's data ([`options`]).
//! - Two extra rules of ours are named options, off by default ([`order`]):
//!   `order=sorted` writes every instance sorted by destination, `min-run=theta` asks
//!   `⌈θ_seq⌉` pages of a partition. Their measured effect: [`order`]'s docs.
//! - Proactive flushing requires incremental recognition (§3.2: "it naturally requires the
//!   pattern recognizer working in an incremental fashion"); writers that find the area
//!   full anyway flush passively.
//! - Updating a staged page in place (Algorithm 2) is done only while no caller's `sync`
//!   has promised the staged copy (see *Durability*); otherwise the update takes a new
//!   slot.
//! - The page's version stamp is the paper's "timestamp" compared with the home page at
//!   recovery: callers must stamp successive writes of a page with increasing versions,
//!   as the buffer pool and the lab do.
//!
//! # Metadata-only pages (`--data none`)
//! With [`flashbuf_core::DataMode::Metadata`] callers exchange 64-byte pages; slots and
//! homes keep their places and page lengths on the device and go down as metadata-only
//! requests of whole pages (`Device::write_head`), a slot's image being the same header
//! rewrite over those bytes, and slot scans decode each slot from its head: every decision
//! and every device request is the one whole pages give. The mode is part of the format.
//!
//! # Layout
//! Superblock, then the staging area of `n` page-sized slots, then the data area (page
//! `p`'s home at `data_offset + p × page_size`); see [`layout`] for the byte-exact slot
//! format (destination, version, 48-bit staging sequence, salted checksum in the page's
//! own header bytes, so staging costs exactly one page write).
//!
//! # Durability
//! The promise of design.md §6: after `sync()` returns, every page written before it
//! survives a crash with exactly its bytes; later writes come back old or new, never torn.
//! Two kinds of device sync serve it: a *promise* sync (a caller's `sync`, the end of
//! recovery, a writer releasing held slots) and a flush's own syncs, which make its pages
//! durable but promise nothing. The protocol:
//! 1. A staged copy written before a promise sync started is never overwritten in place:
//!    the update goes to a new slot, and the old slot is *held* until a promise sync that
//!    starts after the new copy completed has completed. Copies written since the last
//!    promise sync are updated in place (Algorithm 2): if such a write tears, the slot
//!    fails its checksum and recovery falls back to the held or home copy, which is at
//!    least as new as the last promised version.
//! 2. A flush first syncs if any page of the instance may not be durable yet (staged since
//!    the last promise sync began, or a sync is in flight), so that a torn home write
//!    always leaves a valid staged copy; then it writes the pages home, syncs, and only
//!    then frees their slots: a slot is never reused before its page's home copy is
//!    durable, so no older staged copy can win at recovery.
//! 3. Recovery scans every slot and keeps, per destination, the newest *candidate* copy
//!    (highest sequence; slots of another format fail the salted checksum): a copy the
//!    durable promise record lists, or one written after that promise. It compares the
//!    copy's version with the home page's (a home page failing its check counts as older)
//!    and stages it again only if it is newer; everything else is free. A page whose
//!    promised copy is gone while its home copy is older is *lost*: reported corrupt,
//!    never served old, until rewritten. It ends with a promise sync so that nothing it
//!    relied on can vanish before slots are reused.
//! 4. A promise sync fences in-place writers and waits for those in flight, then promises,
//!    syncs, and commits the promise record (issue 11, bugs B and C): see [`promise`] for
//!    the record, the protocol and the reasoning.
//! 5. Any device error poisons the store (fail-stop); the background flusher's too.
//! 6. Proactive flushes on the device's background queue ([`Flusher::Queue`], the
//!    default when the device has one; `background.rs`) free their slots when their
//!    requests are submitted; the main queue joins the background queue before it reuses
//!    such a slot or reads such a home copy, so no foreground request overtakes the flush
//!    it depends on in virtual time. The bytes and their order are those of an inline
//!    flush; devices that inject faults or crashes have no background queue.
//!
//! The data area's extent is recorded too ([`crate::state`]): a truncated store is refused.
//!
//! `tests/stable_buffer_crash.rs` checks this at thousands of crash points (every device
//! write and sync, with lost, kept, reordered and torn writes), and each rule above is
//! needed: breaking any one of them makes that suite fail.
//!
//! # Concurrency
//! One mutex guards the SBTT, the bitmaps, the recognizer and the counters; device I/O
//! happens outside it. Slots being written are `busy` (readers wait, flushes skip them),
//! slots being flushed are `flushing` (updates of their pages go to new slots). A reader
//! that raced with slot reuse or a home write sees a failed check together with a changed
//! write generation and retries; a failed check without a concurrent write is corruption.
//! Syncs are serialized.
//!
//! # Memory
//! SBTT + bitmaps: 14.75 bytes per slot (plus 16 bytes per slot of sequence numbers and
//! versions for the promise record, reported apart as `promise_bytes`) (8-byte destination per slot, 4-byte buckets at
//! load ≤ 2/3, six 1-bit maps); see [`StableBufferStore::memory`]. The bitmaps are whole
//! 64-bit words, so below 64 slots the rounding adds a few bytes per slot. The incremental
//! recognizer's ordered sets come on top (up to about 60 bytes per staged page, reported
//! separately); on-demand recognition allocates its sorted array only during a flush.

mod background;
pub mod config;
mod flush;
mod format;
mod incremental;
mod inner;
mod invariants;
pub mod layout;
pub mod options;
pub mod order;
mod page_io;
pub mod patterns;
pub mod promise;
mod reader;
mod recovery;
pub mod report;
pub mod sbtt;
mod stats;
mod writer;

pub use config::{FlushMode, Flusher, PatternCosts, Recognition, StableBufferConfig};
use inner::{Inner, Lost, SlotMeta, State};
pub use order::{arrange, MinRun, WriteOrder};
pub use patterns::{
    on_demand, Candidates, IncrementalRecognizer, Instance, Pattern, PatternParams,
};
pub use stats::{MemoryReport, StableBufferStats};

use crate::counters::StoreCounters;
use crate::growth::Growth;
use crate::scratch::Scratch;
use crate::state::StateArea;
use crate::written_map::WrittenMap;
use crate::{PageStore, Poison, ReadOutcome, StoreError, StoreStats};
use flashbuf_core::{DeviceStats, DirtyRanges, PageId};
use flashbuf_device::Device;
use layout::Layout;
use parking_lot::{Condvar, Mutex};
use sbtt::{Sbtt, SlotBits};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Free I/O buffers a store keeps ([`crate::scratch`]).
const SCRATCH_BUFS_KEPT: usize = 4;

/// Kind name written in the superblock.
pub const KIND: &str = "stable-buffer";

/// The StableBuffer write path: pages are staged in a small on-device area and flushed
/// home in efficient write patterns (see the [module docs](self)).
///
/// ```
/// use flashbuf_core::{page, DirtyRanges, PageId};
/// use flashbuf_device::MemDevice;
/// use flashbuf_store::stable_buffer::{Recognition, StableBufferConfig, StableBufferStore};
/// use flashbuf_store::{PageStore, ReadOutcome};
/// let cfg = StableBufferConfig {
///     staging_bytes: 64 * 4096, // 64 slots
///     recognition: Recognition::OnDemand,
///     ..StableBufferConfig::with_page_size(4096)
/// };
/// let store = StableBufferStore::create(MemDevice::new(0), cfg.clone())?;
/// let mut p = vec![0u8; 4096];
/// for pid in 0..100u64 {
///     p[100] = pid as u8;
///     page::seal(&mut p, PageId(pid), 1);
///     store.write_page(PageId(pid), &p, &DirtyRanges::full(4096))?; // flushes when full
/// }
/// store.sync()?;
/// let mut q = vec![0u8; 4096];
/// assert_eq!(store.read_page(PageId(99), &mut q)?, ReadOutcome::Found);
/// assert_eq!(q[100], 99);
/// assert!(store.sb_stats().flushes.iter().sum::<u64>() > 0);
/// store.check_invariants().map_err(flashbuf_store::StoreError::Invalid)?;
/// assert!(store.memory().per_slot_bytes <= 16.0);
/// // Reopening recovers the staged pages.
/// let store = StableBufferStore::open(store.into_device(), cfg)?;
/// store.read_page(PageId(99), &mut q)?;
/// assert_eq!(q[100], 99);
/// # Ok::<(), flashbuf_store::StoreError>(())
/// ```
#[derive(Debug)]
pub struct StableBufferStore<D: Device + 'static> {
    inner: Arc<Inner<D>>,
    flusher: Mutex<Option<JoinHandle<()>>>,
}

impl<D: Device + 'static> StableBufferStore<D> {
    fn start(
        dev: D,
        cfg: StableBufferConfig,
        layout: Layout,
        salt: u64,
        (state_area, written): (StateArea, WrittenMap),
    ) -> Result<Arc<Inner<D>>, StoreError> {
        let params = PatternParams::new(&cfg.costs, cfg.page_size).with_min_run(cfg.min_run);
        let background = (cfg.flush == FlushMode::Proactive && cfg.flusher == Flusher::Queue)
            .then(|| dev.background())
            .flatten()
            .map(background::BackgroundQueue);
        let recognizer = (cfg.recognition == Recognition::Incremental)
            .then(|| IncrementalRecognizer::new(&params));
        let state = State {
            sbtt: Sbtt::new(layout.slots),
            bits: SlotBits::new(layout.slots),
            recognizer,
            next_seq: 1,
            slot_write_gen: 0,
            home_write_gen: 0,
            flushes_in_flight: 0,
            syncs_in_flight: 0,
            in_place_in_flight: 0,
            seqs_in_flight: std::collections::BTreeSet::new(),
            promise_fence: false,
            meta: vec![SlotMeta::default(); layout.slots as usize],
            lost: HashMap::new(),
            shutdown: false,
            stats: StableBufferStats {
                slots: layout.slots,
                ..StableBufferStats::default()
            },
            joins: background::Joins::new(layout.slots, background.is_some()),
        };
        let grow = Growth::new(cfg.page_size, cfg.grow_bytes);
        Ok(Arc::new(Inner {
            dev,
            cfg,
            layout,
            salt,
            params,
            state: Mutex::new(state),
            changed: Condvar::new(),
            flusher_wake: Condvar::new(),
            sync_lock: Mutex::new(()),
            grow,
            state_area,
            written,
            unfenced_sync: AtomicBool::new(false),
            poison: Poison::default(),
            counters: StoreCounters::default(),
            background,
            // A foreground write, a flush and a background flush at once, and a few
            // more for threads writing together.
            scratch: Scratch::new(SCRATCH_BUFS_KEPT),
        }))
    }

    fn launch(inner: Arc<Inner<D>>) -> Result<Self, StoreError> {
        let flusher = if inner.cfg.flush == FlushMode::Proactive && inner.background.is_none() {
            let i = Arc::clone(&inner);
            let h = std::thread::Builder::new()
                .name("stable-buffer-flusher".to_string())
                .spawn(move || i.flusher_loop())
                .map_err(|e| {
                    StoreError::Invalid(format!("cannot start the background flusher: {e}"))
                })?;
            Some(h)
        } else {
            None
        };
        Ok(Self {
            inner,
            flusher: Mutex::new(flusher),
        })
    }

    /// The device.
    pub fn device(&self) -> &D {
        &self.inner.dev
    }

    /// Stops the background flusher and returns the device. Staged pages stay staged
    /// (durable after the last `sync`); reopening recovers them.
    pub fn into_device(self) -> D {
        let inner = Arc::clone(&self.inner);
        // Dropping the store joins the flusher, which held the only other reference.
        drop(self);
        match Arc::try_unwrap(inner) {
            Ok(i) => i.dev,
            Err(_) => unreachable_other_refs(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &StableBufferConfig {
        &self.inner.cfg
    }

    /// The layout on the device.
    pub fn layout(&self) -> Layout {
        self.inner.layout
    }

    /// The generation salt of this format.
    pub fn salt(&self) -> u64 {
        self.inner.salt
    }

    /// Recognition parameters and thresholds in use.
    pub fn params(&self) -> &PatternParams {
        &self.inner.params
    }

    /// Staging counters.
    pub fn sb_stats(&self) -> StableBufferStats {
        let st = self.inner.state.lock();
        StableBufferStats {
            staged: st.sbtt.len() as u64,
            lost: st.lost.len() as u64,
            ..st.stats
        }
    }

    /// Pages known lost (a completed sync promised a version whose copy recovery found
    /// damaged or gone), ascending; reads of them report corruption until rewritten.
    pub fn lost_pages(&self) -> Vec<PageId> {
        let mut v: Vec<PageId> = self
            .inner
            .state
            .lock()
            .lost
            .keys()
            .map(|&d| PageId(d))
            .collect();
        v.sort_unstable();
        v
    }

    /// Test hook for the schedule explorer's meta-test: with `on`, promise syncs skip the
    /// in-place fence, as before the fix of issue 11's bug C (a sync could promise a copy
    /// an in-place write was overwriting). Never used by the engine.
    #[doc(hidden)]
    pub fn simulate_bug_unfenced_sync(&self, on: bool) {
        self.inner.unfenced_sync.store(on, Relaxed);
    }

    /// Whether proactive flushes run inline on the device's background queue (see
    /// [`Flusher::Queue`]) rather than on a thread.
    pub fn flushes_on_background_queue(&self) -> bool {
        self.inner.background.is_some()
    }

    /// Times the main queue joined the background queue before reusing what a
    /// background flush freed (see [`Flusher::Queue`]).
    pub fn background_joins(&self) -> u64 {
        self.inner.state.lock().joins.count
    }

    /// Pages staged now.
    pub fn staged(&self) -> usize {
        self.inner.state.lock().sbtt.len()
    }

    /// Memory of the SBTT, the bitmaps, the recognizer and the kept I/O buffers.
    pub fn memory(&self) -> MemoryReport {
        let st = self.inner.state.lock();
        let sbtt_bytes = st.sbtt.memory_bytes();
        let bitmap_bytes = st.bits.memory_bytes();
        MemoryReport {
            slots: self.inner.layout.slots,
            sbtt_bytes,
            bitmap_bytes,
            per_slot_bytes: (sbtt_bytes + bitmap_bytes) as f64 / f64::from(self.inner.layout.slots),
            recognizer_bytes: st.recognizer.as_ref().map_or(0, |r| r.memory_bytes()),
            promise_bytes: st.meta.len() * std::mem::size_of::<SlotMeta>(),
            io_buffer_memory_bytes: self.inner.scratch.held_bytes(),
        }
    }

    /// Flushes every staged page home (passively, best instance first) and syncs.
    pub fn flush_all(&self) -> Result<(), StoreError> {
        self.inner.flush_all()
    }

    /// Stops the background flusher (if any) and waits for it. Idempotent; also done on
    /// drop. Writers keep working (they flush passively).
    pub fn stop_flusher(&self) {
        {
            let mut st = self.inner.state.lock();
            st.shutdown = true;
            self.inner.flusher_wake.notify_all();
        }
        if let Some(h) = self.flusher.lock().take() {
            // A panicking flusher already poisoned nothing we can repair; surface it.
            if h.join().is_err() {
                self.inner.poison.poison("the background flusher panicked");
            }
        }
    }
}

#[cold]
fn unreachable_other_refs() -> ! {
    panic!("stable-buffer store still shared after its flusher stopped (a bug)")
}

impl<D: Device + 'static> Drop for StableBufferStore<D> {
    fn drop(&mut self) {
        self.stop_flusher();
    }
}

impl<D: Device> Inner<D> {
    /// Wakes every waiter (after a failure, so that they see the poison).
    fn wake_all(&self) {
        let _st = self.state.lock();
        self.changed.notify_all();
        self.flusher_wake.notify_all();
    }

    fn check_buf(&self, len: usize) -> Result<(), StoreError> {
        crate::checks::check_buf(len, self.buf_bytes())
    }
}

impl<D: Device + 'static> PageStore for StableBufferStore<D> {
    fn name(&self) -> &'static str {
        KIND
    }

    fn page_size(&self) -> usize {
        self.inner.buf_bytes()
    }

    fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
        self.inner.read(pid, buf)
    }

    fn write_page(&self, pid: PageId, page: &[u8], _dirty: &DirtyRanges) -> Result<(), StoreError> {
        self.inner.write(pid, page)?;
        self.inner.written.insert(pid);
        self.inner.counters.wrote(1);
        Ok(())
    }

    fn sync(&self) -> Result<(), StoreError> {
        self.inner.poison.check()?;
        self.inner.sync_device(true)?;
        self.inner.counters.synced();
        Ok(())
    }

    fn stats(&self) -> StoreStats {
        let i = &self.inner;
        i.counters.stats()
    }

    fn device_stats(&self) -> DeviceStats {
        self.inner.dev.stats()
    }

    fn report(&self) -> Vec<(String, f64)> {
        report::figures(
            &self.sb_stats(),
            &self.memory(),
            self.layout().staging_bytes(),
        )
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.inner.check_invariants()
    }
}
