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
//! threshold's formula; see [`patterns`] for the definitions. In short: sequential =
//! consecutive destinations; partitioned = up to `P` sequential runs (each of at least
//! `⌈θ_seq⌉` pages) in distinct areas; focused = any order within an area no larger than
//! the device's focused-area size (on-demand: the fullest sliding window; incremental: the
//! fullest aligned area). Passive flushing takes the instance with the highest `m / T_x`
//! (`m` pages, `T_x` the pattern's time per page: most slots reclaimed per unit of
//! flushing time); proactive flushing takes, among the instances with `m ≥ θ_x`, the
//! highest score, where `θ_seq = θ_min / page size`, `θ_par = θ_seq · T_par / T_seq`,
//! `θ_focus = θ_seq · T_focus / T_seq`. The times, θ_min, the focused-area size and `P`
//! come from a uFLIP-style [`DeviceProfile`](flashbuf_device::DeviceProfile)
//! ([`PatternCosts`]); without one, the paper's Mtron figures. Other readings:
//! - The staging size defaults to the profile's focused-area size (§2.1 and §4: "the
//!   setting of StableBuffer size to that of the focused area").
//! - Flushed instances are written sorted by destination in one device batch (partitioned
//!   runs one after the other rather than round-robin: cheaper, and the same pages).
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
//! 3. Recovery scans every slot, keeps the newest valid copy per destination (highest
//!    sequence; slots of another format fail the salted checksum), compares its version
//!    with the home page's (a home page failing its check counts as older) and stages it
//!    again only if it is newer; everything else is free. It ends with a promise sync so
//!    that nothing it relied on can vanish before slots are reused.
//! 4. Any device error poisons the store (fail-stop); the background flusher's too.
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
//! SBTT + bitmaps: 14.75 bytes per slot (8-byte destination per slot, 4-byte buckets at
//! load ≤ 2/3, six 1-bit maps); see [`StableBufferStore::memory`]. The bitmaps are whole
//! 64-bit words, so below 64 slots the rounding adds a few bytes per slot. The incremental
//! recognizer's ordered sets come on top (up to about 60 bytes per staged page, reported
//! separately); on-demand recognition allocates its sorted array only during a flush.

pub mod config;
mod flush;
pub mod layout;
pub mod patterns;
mod reader;
mod recovery;
pub mod sbtt;
mod writer;

pub use config::{FlushMode, PatternCosts, Recognition, StableBufferConfig};
pub use patterns::{
    on_demand, Candidates, IncrementalRecognizer, Instance, Pattern, PatternParams,
};

use crate::counters::StoreCounters;
use crate::growth::Growth;
use crate::salt::fresh_salt;
use crate::{PageStore, Poison, ReadOutcome, StoreError, StoreStats, Superblock};
use flashbuf_core::{DeviceStats, DirtyRanges, PageId};
use flashbuf_device::Device;
use layout::Layout;
use parking_lot::{Condvar, Mutex};
use sbtt::{Sbtt, SlotBits};
use serde::Serialize;
use std::sync::Arc;
use std::thread::JoinHandle;

/// Kind name written in the superblock.
pub const KIND: &str = "stable-buffer";

/// Counters of the staging area (besides the [`StoreStats`] every store keeps).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct StableBufferStats {
    /// Slots of the staging area.
    pub slots: u32,
    /// Pages staged now.
    pub staged: u64,
    /// Most pages staged at once.
    pub max_staged: u64,
    /// Writes of a page not staged before (took a free slot).
    pub new_stagings: u64,
    /// Updates of a staged page in its slot.
    pub in_place_updates: u64,
    /// Updates of a staged page into a new slot (its copy was promised by a sync, or being
    /// flushed).
    pub out_of_place_updates: u64,
    /// Reads served from a slot.
    pub slot_reads: u64,
    /// Reads served from the home location.
    pub home_reads: u64,
    /// Reads retried after racing with a concurrent write.
    pub read_retries: u64,
    /// Flushed instances per pattern (sequential, partitioned, focused).
    pub flushes: [u64; 3],
    /// Pages flushed per pattern.
    pub flushed_pages: [u64; 3],
    /// Flushes started by a writer that found no free slot.
    pub passive_flushes: u64,
    /// Flushes started by the background flusher.
    pub proactive_flushes: u64,
    /// Device syncs (flushes' and callers').
    pub device_syncs: u64,
    /// Pages found staged by the last recovery.
    pub recovered_staged: u64,
    /// Valid slots recovery freed (already home, or superseded).
    pub recovered_freed: u64,
}

/// Memory of the in-memory structures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MemoryReport {
    /// Slots.
    pub slots: u32,
    /// Bytes of the SBTT (destination array and buckets).
    pub sbtt_bytes: usize,
    /// Bytes of the six slot bitmaps.
    pub bitmap_bytes: usize,
    /// `(sbtt_bytes + bitmap_bytes) / slots`.
    pub per_slot_bytes: f64,
    /// Approximate bytes of the incremental recognizer (0 for on-demand).
    pub recognizer_bytes: usize,
}

/// What the mutex guards.
#[derive(Debug)]
struct State {
    sbtt: Sbtt,
    bits: SlotBits,
    recognizer: Option<IncrementalRecognizer>,
    next_seq: u64,
    /// Bumped whenever a slot write starts (readers detect slot reuse).
    slot_write_gen: u64,
    /// Bumped whenever a flush is about to write home pages.
    home_write_gen: u64,
    flushes_in_flight: u32,
    syncs_in_flight: u32,
    shutdown: bool,
    stats: StableBufferStats,
}

#[derive(Debug)]
struct Inner<D> {
    dev: D,
    cfg: StableBufferConfig,
    layout: Layout,
    salt: u64,
    params: PatternParams,
    state: Mutex<State>,
    /// Signalled on every state change writers or readers may wait for.
    changed: Condvar,
    /// Wakes the background flusher.
    flusher_wake: Condvar,
    sync_lock: Mutex<()>,
    grow: Growth,
    poison: Poison,
    counters: StoreCounters,
}

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
    ) -> Result<Arc<Inner<D>>, StoreError> {
        let params = PatternParams::new(&cfg.costs, cfg.page_size);
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
            shutdown: false,
            stats: StableBufferStats {
                slots: layout.slots,
                ..StableBufferStats::default()
            },
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
            poison: Poison::default(),
            counters: StoreCounters::default(),
        }))
    }

    fn launch(inner: Arc<Inner<D>>) -> Result<Self, StoreError> {
        let flusher = if inner.cfg.flush == FlushMode::Proactive {
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

    fn check_alignment(dev: &D, cfg: &StableBufferConfig) -> Result<(), StoreError> {
        crate::checks::check_alignment(dev, cfg.page_size)
    }

    /// Formats `dev` as a new, empty store (whatever it held is lost) and syncs. The
    /// generation salt differs from the previous format's if the device held one.
    pub fn create(dev: D, cfg: StableBufferConfig) -> Result<Self, StoreError> {
        cfg.validate()?;
        Self::check_alignment(&dev, &cfg)?;
        let prev = Superblock::read(&dev).ok().map(|s| s.salt);
        let salt = cfg.salt.unwrap_or_else(|| fresh_salt(prev));
        let slots = cfg.slots() as u32;
        let layout = Layout::new(
            cfg.page_size,
            slots,
            Superblock::reserved_bytes(cfg.page_size),
            cfg.align_bytes,
        );
        if let Some(max) = dev.max_len() {
            if layout.data_offset > max {
                return Err(StoreError::Full(format!(
                    "{} holds {max} bytes; the superblock and a staging area of {} bytes need {}",
                    dev.describe(),
                    layout.staging_bytes(),
                    layout.data_offset
                )));
            }
        }
        dev.set_len(0)?;
        dev.set_len(layout.data_offset)?;
        let sb = Superblock {
            kind: KIND.to_string(),
            page_size: cfg.page_size as u32,
            data_offset: layout.data_offset,
            config_fingerprint: Layout::fingerprint(cfg.page_size, slots),
            salt,
            extra: layout.encode_extra(),
        };
        sb.write(&dev)?;
        dev.sync()?;
        let inner = Self::start(dev, cfg, layout, salt)?;
        Self::launch(inner)
    }

    /// Opens an existing store and recovers it (rebuilds the SBTT from the slots).
    /// Refuses a device holding another kind of store, another page size or another
    /// staging size, with a message saying which.
    pub fn open(dev: D, cfg: StableBufferConfig) -> Result<Self, StoreError> {
        cfg.validate()?;
        Self::check_alignment(&dev, &cfg)?;
        let sb = Superblock::read(&dev)?;
        // Kind and page size first (their messages are the clearest).
        sb.expect(KIND, cfg.page_size, sb.config_fingerprint)?;
        let layout = Layout::decode_extra(&sb.extra, cfg.page_size, sb.data_offset)?;
        let want = cfg.slots();
        if u64::from(layout.slots) != want {
            return Err(StoreError::Format(format!(
                "store was formatted with a staging area of {} slots ({} bytes), but {want} slots ({} bytes) were requested",
                layout.slots,
                layout.staging_bytes(),
                want * cfg.page_size as u64
            )));
        }
        sb.expect(
            KIND,
            cfg.page_size,
            Layout::fingerprint(cfg.page_size, layout.slots),
        )?;
        if layout.staging_offset < Superblock::reserved_bytes(cfg.page_size) {
            return Err(StoreError::Format(format!(
                "staging area at byte {} overlaps the superblock",
                layout.staging_offset
            )));
        }
        let inner = Self::start(dev, cfg, layout, sb.salt)?;
        inner.recover()?;
        Self::launch(inner)
    }

    /// Opens the store on `dev`, formatting it first if the device is empty (length 0).
    pub fn open_or_create(dev: D, cfg: StableBufferConfig) -> Result<Self, StoreError> {
        if dev.is_empty() {
            Self::create(dev, cfg)
        } else {
            Self::open(dev, cfg)
        }
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
            ..st.stats
        }
    }

    /// Pages staged now.
    pub fn staged(&self) -> usize {
        self.inner.state.lock().sbtt.len()
    }

    /// Memory of the SBTT, the bitmaps and the recognizer.
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

    /// Syncs the device. A *promise* sync (callers' `sync`, recovery, releasing held
    /// slots) is the point from which staged copies are promised durable: when it starts,
    /// nothing written so far is fresh any more (no more in-place updates of those copies)
    /// and the held slots are set to be released; when it completes they are free. A
    /// flush's own syncs only make its pages durable and promise nothing, so staged pages
    /// keep being updated in place between callers' syncs.
    fn sync_device(&self, promise: bool) -> Result<(), StoreError> {
        let _serial = self.sync_lock.lock();
        self.poison.check()?;
        {
            let mut st = self.state.lock();
            if promise {
                st.bits.start_sync();
            }
            st.syncs_in_flight += 1;
        }
        let r = self.poison.guard(self.dev.sync());
        let mut st = self.state.lock();
        st.syncs_in_flight -= 1;
        if r.is_ok() {
            if promise {
                st.bits.finish_sync();
            }
            st.stats.device_syncs += 1;
        }
        self.changed.notify_all();
        if r.is_err() {
            self.flusher_wake.notify_all();
        }
        r
    }

    fn check_buf(&self, len: usize) -> Result<(), StoreError> {
        crate::checks::check_buf(len, self.cfg.page_size)
    }

    fn check_invariants(&self) -> Result<(), String> {
        let st = self.state.lock();
        st.sbtt.check()?;
        st.bits.check()?;
        let n = self.layout.slots;
        if st.sbtt.len() > n as usize {
            return Err(format!("{} pages staged in {n} slots", st.sbtt.len()));
        }
        let mut eligible = Vec::new();
        for (d, s) in st.sbtt.iter() {
            if !st.bits.used(s) {
                return Err(format!("page {d} mapped to slot {s}, which is not used"));
            }
            if !st.bits.flushing(s) {
                eligible.push(d);
            }
        }
        if st.flushes_in_flight == 0 && st.bits.used_count() < st.sbtt.len() {
            return Err("fewer used slots than staged pages".to_string());
        }
        if let Some(r) = &st.recognizer {
            r.check()?;
            if r.len() != eligible.len() || eligible.iter().any(|&d| !r.contains(d)) {
                return Err(format!(
                    "recognizer holds {} pages, {} staged pages are not being flushed",
                    r.len(),
                    eligible.len()
                ));
            }
        }
        if self.dev.len() < self.layout.data_offset {
            return Err(format!(
                "device length {} is below the data offset {}",
                self.dev.len(),
                self.layout.data_offset
            ));
        }
        Ok(())
    }
}

impl<D: Device + 'static> PageStore for StableBufferStore<D> {
    fn name(&self) -> &'static str {
        KIND
    }

    fn page_size(&self) -> usize {
        self.inner.cfg.page_size
    }

    fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
        self.inner.read(pid, buf)
    }

    fn write_page(&self, pid: PageId, page: &[u8], _dirty: &DirtyRanges) -> Result<(), StoreError> {
        self.inner.write(pid, page)?;
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

    fn check_invariants(&self) -> Result<(), String> {
        self.inner.check_invariants()
    }
}
