//! ICL: the write-optimized layer with InCremental Logging.
//!
//! Paper: "A Write-Optimized Layer with InCremental Logging for flash-based solid state
//! storage" (text in `../shared/papers/icl-write-optimized-layer.txt`; the text has no
//! section numbers, so sections are cited by their topic: §1 introduction, §2 the
//! write-optimized layer — *write-optimized buffer*, *InCremental Logging*, *ICL merge* —
//! §3 experiments, Figures 1–6). A write-back stores only the bytes of the page that
//! changed, as a log in the write-optimized buffer (WOB, [`wob`]); a full WOB is flushed
//! into log pages ([`log_space`]), each page's previous log copied forward so that a read
//! needs the data page plus at most one log page (`read`); the mapping table
//! ([`mapping`]) links pages to their log; logs that grow to half a page, or a log space
//! that runs short, are merged into the data pages ([`write`], `merge`).
//!
//! The pool hands the store the merged [`DirtyRanges`] of each write-back: that is what
//! the logs hold (plus the page header), so only changed bytes reach the log space.
//!
//! # Readings (design.md §4, issue 15) — each file lists its own
//! - One log per page in the WOB and in the log space, the union of its logs with the
//!   newest bytes ([`log`]).
//! - A merge because a page's logs reached the threshold happens when the page is
//!   written, from the newest bytes the caller hands over ([`write`]); the log-space merge
//!   reads home and log pages as the paper's does (`merge`).
//! - The log space is filled in order within a generation; the log-space merge starts the
//!   next generation ([`log_space`], `merge`).
//!
//! # Durability (design.md §6; the paper is silent, its WOB is volatile)
//! - `sync()` flushes the WOB into log pages and syncs the device; if it wrote log pages,
//!   it then records in the generation record how many are durable, and syncs again.
//! - Log pages carry a checksum, the store's salt, the generation, their slot, a
//!   sequence number, and how many slots were durable when they were written; records
//!   carry page ids and the version they produce ([`log_space`], [`log`]).
//! - Recovery scans the log space, rebuilds the mapping table and keeps every page's
//!   records newest first; the first read picks the newest that applies to the home page
//!   (`recovery`, `read`). A damaged log page a sync promised is reported (the store
//!   refuses to open naming it; at run time [`StoreError::DamagedLog`]), never skipped.
//! - A log-space merge writes the home pages and syncs before it switches generation; home
//!   pages holding only synced data go through a double-write area first, so that a torn
//!   home write never loses synced data (`merge`).
//! - Every device error poisons the store (fail-stop).
//!
//! # Metadata only (`--data none`, issue 17)
//! Callers exchange [`METADATA_PAGE_BYTES`]-byte pages (the head of the logical page) and
//! hand over the dirty ranges of the *logical* page (the pool tracks them so). Every
//! decision is taken on logical lengths exactly as with bytes: a log keeps its ranges'
//! lengths and the bytes of them that lie in the head (the header, whose version and
//! checksum a read checks, so the target of a record stays checkable), its record counts
//! the logical bytes, log pages are packed by those counts, and the threshold compares
//! them ([`log`]). Home pages, double-write slots and log pages go down as metadata-only
//! requests of the whole page ([`Device::write_head`]): a log page keeps its header and
//! its records without the content beyond the head. The generation records and the
//! double-write directory stay byte pages (one request each, as with bytes). The
//! superblock records the mode (its configuration fingerprint): a store formatted in one
//! mode is refused in the other. Figures in memory (`wob_memory_bytes`) are the only ones
//! that differ.
//!
//! # Memory
//! The WOB holds at most its capacity in record bytes (plus its map's overhead); the
//! mapping table has one entry per page with records in the current generation (key,
//! record location, sync epoch, and the log's ranges at 4 bytes each). Both are reported
//! by [`IclStore::icl_stats`] (`wob_memory_bytes`, `mapping_memory_bytes`).
//!
//! # Concurrency
//! One mutex guards the WOB, the mapping table and the log space, and device I/O happens
//! under it (a read's home page, log page and WOB logs must come from one state). The
//! data area grows under the shared `Growth` lock.

mod check;
pub mod layout;
pub mod log;
pub mod log_page;
pub mod log_space;
pub mod mapping;
mod merge;
mod open;
pub mod options;
mod read;
pub mod record;
mod recovery;
pub mod stats;
pub mod wob;
mod write;

pub use options::{IclConfig, IclOptions};
pub use stats::IclStats;

use crate::checks;
use crate::growth::{check_fits, Growth};
use crate::scratch::Scratch;
use crate::state::StateArea;
use crate::written_map::WrittenMap;
use crate::{PageStore, PageWrite, Poison, ReadOutcome, StoreError, StoreStats};
#[cfg(doc)]
use flashbuf_core::METADATA_PAGE_BYTES;
use flashbuf_core::{AlignedBuf, DeviceStats, DirtyRanges, PageId};
use flashbuf_device::Device;
use layout::{GenRecord, Layout};
use mapping::Mapping;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use wob::Wob;

/// Kind name written in the superblock.
pub const KIND: &str = "icl";

/// Bytes of one copy of the shared state record (which holds the data area's durable
/// extent, as the direct store's does; ICL's own promises are its generation records).
const STATE_COPY_BYTES: u64 = crate::state::SMALL_COPY_BYTES;

/// What the mutex guards.
#[derive(Debug)]
struct State {
    wob: Wob,
    mapping: Mapping,
    /// Log-space generation.
    gen: u64,
    /// Next free log page.
    head: u32,
    /// Log pages below this were durable at the last sync.
    synced_head: u32,
    /// Sequence number of the next log page.
    next_seq: u64,
    /// Completed syncs since open (plus one after recovery).
    epoch: u64,
    /// Number of the last generation record written.
    rseq: u64,
    /// Log pages the last generation record says were durable.
    recorded: u32,
    stats: IclStats,
    /// A WOB flush's log pages, kept between flushes ([`log_space::LogCache::clear`]).
    log_cache: log_space::LogCache,
}

/// The ICL store (see the [module docs](self)).
///
/// ```
/// use flashbuf_core::{page, DirtyRanges, PageId};
/// use flashbuf_device::MemDevice;
/// use flashbuf_store::icl::{IclConfig, IclStore};
/// use flashbuf_store::{PageStore, ReadOutcome};
/// let store = IclStore::create(MemDevice::new(0), IclConfig::with_page_size(4096))?;
/// let mut p = vec![0u8; 4096];
/// page::seal(&mut p, PageId(3), 1);
/// store.write_page(PageId(3), &p, &DirtyRanges::full(4096))?; // first write: home, whole
/// p[100] = 7; // change one byte
/// page::seal(&mut p, PageId(3), 2);
/// let mut d = DirtyRanges::new();
/// d.add(100, 1);
/// store.write_page(PageId(3), &p, &d)?; // a log of 33 bytes in the WOB
/// store.sync()?; // the WOB goes to a log page
/// let mut q = vec![0u8; 4096];
/// assert_eq!(store.read_page(PageId(3), &mut q)?, ReadOutcome::Found);
/// assert_eq!(q, p);
/// let s = store.icl_stats();
/// assert_eq!((s.data_writes_whole, s.log_writes, s.log_reads), (1, 1, 1));
/// # Ok::<(), flashbuf_store::StoreError>(())
/// ```
#[derive(Debug)]
pub struct IclStore<D> {
    dev: D,
    cfg: IclConfig,
    layout: Layout,
    salt: u64,
    poison: Poison,
    grow: Growth,
    /// The shared A/B state record: the data area's durable extent.
    extent: StateArea,
    /// Pages ever written, durable in the state record's payload: a written page whose
    /// home and logs all read as zeros lost its contents (`crate::written_map`).
    written: WrittenMap,
    state: Mutex<State>,
    page_reads: AtomicU64,
    unwritten_reads: AtomicU64,
    page_writes: AtomicU64,
    batches: AtomicU64,
    syncs: AtomicU64,
    /// Reused I/O buffers: the log page a read finds its page's ICL log in, a flush's
    /// log pages ([`crate::scratch`]).
    scratch: Scratch,
}

impl<D: Device> IclStore<D> {
    /// The device.
    pub fn device(&self) -> &D {
        &self.dev
    }

    /// Consumes the store, returning the device (the WOB is lost unless synced).
    pub fn into_device(self) -> D {
        self.dev
    }

    /// The configuration.
    pub fn config(&self) -> &IclConfig {
        &self.cfg
    }

    /// The layout on the device.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Counters by kind, with the WOB's and the mapping table's current sizes.
    pub fn icl_stats(&self) -> IclStats {
        let st = self.state.lock();
        let mut s = st.stats;
        s.wob_bytes = st.wob.bytes() as u64;
        s.wob_peak_bytes = st.wob.peak_bytes() as u64;
        s.wob_capacity_bytes = st.wob.capacity() as u64;
        s.wob_memory_bytes = st.wob.memory_bytes() as u64;
        s.mapping_entries = st.mapping.len() as u64;
        s.mapping_memory_bytes = st.mapping.memory_bytes() as u64;
        s.io_buffer_memory_bytes = (self.scratch.held_bytes() + st.log_cache.held_bytes()) as u64;
        s.generation = st.gen;
        s.log_pages_used = u64::from(st.head);
        s
    }

    /// Byte offset of `pid`'s home page.
    fn home_offset(&self, pid: PageId) -> Result<u64, StoreError> {
        self.layout
            .home_offset(pid)
            .ok_or_else(|| StoreError::Invalid(format!("{pid} is beyond the addressable range")))
    }

    /// Writes the next generation record: generation `gen`, log pages `0..synced` durable.
    /// It goes to page `rseq % 2`, is synced, then goes to the other page too (the caller
    /// syncs that copy): a crash tears at most one copy while the other still holds the
    /// newest or the previous record, and once both are durable, damage at rest to either
    /// copy leaves the promise readable. (With one copy per record, losing the newest at
    /// rest fell back to the previous record, which knows nothing of the last sync's log
    /// pages: a damaged promised log page then read as an unsynced tail and older versions
    /// were served — `regression_icl_damaged_gen_record_and_log_page`.)
    fn write_gen_record(&self, st: &mut State, gen: u64, synced: u32) -> Result<(), StoreError> {
        let rseq = st.rseq + 1;
        let mut b = AlignedBuf::zeroed(self.cfg.page_size, 4096);
        GenRecord {
            rseq,
            gen,
            next_seq: st.next_seq,
            synced,
        }
        .encode(&mut b, self.salt);
        self.poison
            .guard(self.dev.write_at(self.layout.gen_record_offset(rseq), &b))?;
        self.sync_device(st)?;
        self.poison.guard(
            self.dev
                .write_at(self.layout.gen_record_offset(rseq + 1), &b),
        )?;
        st.rseq = rseq;
        st.recorded = synced;
        st.stats.gen_writes += 2;
        Ok(())
    }

    fn sync_device(&self, st: &mut State) -> Result<(), StoreError> {
        self.poison.guard(self.dev.sync())?;
        st.stats.device_syncs += 1;
        Ok(())
    }

    fn check_buf(&self, len: usize) -> Result<(), StoreError> {
        checks::check_buf(len, self.cfg.image_bytes())
    }

    /// Checks a write and returns the page's home offset; a page beyond the device's
    /// capacity is refused before any I/O, without poisoning.
    fn check_write(&self, w: &PageWrite<'_>) -> Result<u64, StoreError> {
        checks::check_sealed(w.pid, w.page, self.cfg.image_bytes())?;
        let off = self.home_offset(w.pid)?;
        check_fits(&self.dev, w.pid, off, self.cfg.page_size)?;
        Ok(off)
    }

    fn write_batch_checked(&self, batch: &[PageWrite<'_>]) -> Result<(), StoreError> {
        self.poison.check()?;
        // Inline for a pool's usual batch (one write-back, or a few clustered ones).
        let offsets = batch
            .iter()
            .map(|w| self.check_write(w))
            .collect::<Result<smallvec::SmallVec<[u64; 8]>, StoreError>>()?;
        let mut st = self.state.lock();
        self.poison.check()?;
        self.write_locked(&mut st, batch, &offsets)?;
        for w in batch {
            self.written.insert(w.pid);
        }
        self.page_writes.fetch_add(batch.len() as u64, Relaxed);
        Ok(())
    }
}

impl<D: Device> PageStore for IclStore<D> {
    fn name(&self) -> &'static str {
        KIND
    }

    fn page_size(&self) -> usize {
        self.cfg.image_bytes()
    }

    fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
        self.poison.check()?;
        self.check_buf(buf.len())?;
        let off = self.home_offset(pid)?;
        self.page_reads.fetch_add(1, Relaxed);
        let r = {
            let mut st = self.state.lock();
            self.poison.check()?;
            self.read_locked(&mut st, pid, off, buf)
        };
        match &r {
            Ok(ReadOutcome::Unwritten) => {
                self.unwritten_reads.fetch_add(1, Relaxed);
            }
            Ok(ReadOutcome::Found) => {}
            // Never leave part of a page (a home page without its logs) in the buffer.
            Err(_) => buf.fill(0),
        }
        r
    }

    fn write_page(&self, pid: PageId, page: &[u8], dirty: &DirtyRanges) -> Result<(), StoreError> {
        self.write_batch_checked(&[PageWrite {
            pid,
            page,
            dirty: *dirty,
        }])
    }

    fn write_pages(&self, batch: &[PageWrite<'_>]) -> Result<(), StoreError> {
        self.write_batch_checked(batch)?;
        self.batches.fetch_add(1, Relaxed);
        Ok(())
    }

    fn sync(&self) -> Result<(), StoreError> {
        self.poison.check()?;
        let mut st = self.state.lock();
        self.poison.check()?;
        self.flush_wob(&mut st)?;
        let len_before = self.dev.len();
        // Taken before the device sync: every page it names is durable once it returns.
        let map = self.written.snapshot(crate::written_map::BUDGET_BYTES);
        self.sync_device(&mut st)?;
        if st.head > st.recorded {
            // Record that the log pages are durable, so that damage to the last of them
            // is reported rather than taken for a torn unsynced write.
            let (gen, head) = (st.gen, st.head);
            self.write_gen_record(&mut st, gen, head)?;
            self.sync_device(&mut st)?;
        }
        // The data area's growth up to the sync is durable: record it (at most once per
        // growth step), so that a truncated file is refused rather than read as unwritten;
        // and the pages written for the first time, so that one lost at rest is reported.
        self.written
            .commit_after_sync(&self.extent, &self.dev, &self.poison, len_before, map)?;
        st.epoch += 1;
        st.synced_head = st.head;
        self.syncs.fetch_add(1, Relaxed);
        Ok(())
    }

    fn stats(&self) -> StoreStats {
        StoreStats {
            page_reads: self.page_reads.load(Relaxed),
            unwritten_reads: self.unwritten_reads.load(Relaxed),
            page_writes: self.page_writes.load(Relaxed),
            batches: self.batches.load(Relaxed),
            syncs: self.syncs.load(Relaxed),
        }
    }

    fn device_stats(&self) -> DeviceStats {
        self.dev.stats()
    }

    fn report(&self) -> Vec<(String, f64)> {
        let s = self.icl_stats();
        [
            ("page_reads_total", s.page_reads()),
            ("page_writes_total", s.page_writes()),
        ]
        .into_iter()
        .chain(s.counters())
        .map(|(name, value)| (name.to_string(), value as f64))
        .collect()
    }

    fn check_invariants(&self) -> Result<(), String> {
        if self.poison.is_poisoned() {
            return Ok(());
        }
        if self.dev.len() < self.extent.data_end() {
            return Err(format!(
                "device length {} is below the recorded data end {}",
                self.dev.len(),
                self.extent.data_end()
            ));
        }
        let mut st = self.state.lock();
        let before = st.stats;
        let r = self.check_state(&mut st);
        // The check's own reads are not the workload's.
        st.stats = before;
        r
    }
}
