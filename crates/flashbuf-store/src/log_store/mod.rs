//! The log-structured store: pages written out of place, sequentially, into segments, with
//! a cleaner reclaiming the space of overwritten copies — the non-in-place-update (NIPU)
//! write path.
//!
//! Paper: Yongkun Wang, Kazuo Goda and Masaru Kitsuregawa, "Evaluating Non-In-Place Update
//! Techniques for Flash-Based Transaction Processing Systems", DEXA 2009 (text in
//! `../shared/papers/nipu-evaluation.txt`): §3 the technique (logical in-place updates
//! turned into sequential out-of-place writes through an address table, garbage
//! collection reclaiming obsolete blocks), §4.1 the setting (NILFS2, 8 MB segments of 4 KB
//! blocks), §4.6 the cleaner's knobs (cleaning interval CI, segments per clean NSPC,
//! protection period PP). The mechanisms follow the papers it builds on: Sprite LFS
//! (Rosenblum & Ousterhout, TOCS 1992: segments, summary blocks, greedy and cost-benefit
//! cleaning, checkpoints and roll-forward, §3–§4) and NILFS2 (Konishi et al., OSR 2006;
//! `nilfs_cleanerd`: oldest-first selection, protection period, min/max clean segments).
//! The modern scheme is SepBIT (Wang et al., FAST 2022). See `design.md` §4.
//!
//! # Layout
//! Superblock, two checkpoint slots, then segments ([`layout`]). A segment's blocks are
//! data blocks, each the caller's page with a stamp in its header ([`stamp`]: a sequence
//! number, the durable horizon when it was written, and a checksum bound to the store's
//! salt and the block's address), followed by the segment's summary ([`summary`]: page id,
//! version, sequence and checksum per block), written when the segment is full. The map
//! ([`map`]) is 4 bytes per page; the usage table ([`usage`]) keeps live counts,
//! last-modified times and the free-segment pool.
//!
//! # Writes
//! Caller pages are appended to the head the placement names ([`placement`]), each as the
//! next block of its head's open segment; a call's blocks go out in order with one device
//! request (`writer`). Overwrites invalidate the old copy (its segment's live count
//! drops). Nothing is held back in memory: a write has reached the device when the call
//! returns.
//!
//! # Durability (design.md §6)
//! `sync()` is one device sync (the blocks are the segment tails; their stamps carry the
//! durable horizon recovery reads), then, if it promised blocks no checkpoint covers, a
//! commit of that promise to the A/B state record behind the superblock ([`crate::state`]:
//! two copies, two syncs) — so that a synced block of the tail damaged at rest is reported
//! rather than cut as torn (regression test `regression_log_store_damaged_synced_tail`).
//! A checkpoint ([`checkpoint`]) adds two syncs: one before (every block it covers is
//! durable) and one after writing the slot. Rules the crash suite holds the store to:
//! 1. Live blocks are never overwritten: a segment is written again only after it has no
//!    live block left and a checkpoint newer than all its blocks is durable (pre-free
//!    segments, [`usage`]); the checkpoint's first sync makes the newer copies durable.
//! 2. Recovery (`recovery`) starts from the newest valid checkpoint and applies the
//!    valid blocks written after it in sequence order. A torn tail (never promised by a
//!    sync) is cut; a promised block that fails its checksum stays mapped, so reading it
//!    reports corruption instead of returning an older copy; a promised block that cannot
//!    be attributed to a page makes the open fail.
//! 3. A damaged checkpoint slot makes recovery use the other one.
//! 4. Any device error poisons the store (fail-stop).
//! 5. Background passes on the device's background queue (`background`) are never
//!    overtaken by a foreground request that depends on them: the main queue joins the
//!    background queue before writing into a segment such a pass freed, reading a block
//!    in a segment it wrote, or syncing. Devices that inject faults or crashes have no
//!    background queue.
//!
//! Torn writes are masked: an unsynced block that tore fails its checksum and is cut
//! with the rest of the tail, so after a crash every page is its old or a new version,
//! never reported corrupt.
//!
//! # Cleaning
//! Foreground when a caller's write finds no segment beyond the cleaner's reserve;
//! background on the configured clock with the paper's knobs (`cleaner`), its requests on
//! the device's background queue when it has one (`cleaner_queue`, `background`): their
//! time then overlaps the caller's. Victim rules
//! ([`victim`]): greedy, cost-benefit, oldest-first, SepBIT's selection.
//!
//! # Metadata only
//! With [`DataMode::Metadata`](flashbuf_core::DataMode) (`--data none`, issue 17) callers
//! exchange 64-byte pages (header and stamp, sealed and checked as usual) and a data block
//! is that image, stamped as above (the checksum covers its 64 bytes). The layout stays in
//! logical pages and every data block goes down as a metadata-only request of the whole
//! block (`data`): the queue is flushed with one `write_heads` where bytes take one
//! `write_batch`, a lone block with `write_head`, the cleaner's copies likewise, a
//! caller's read with `read_head`. Runs of blocks the cleaner and recovery read with one
//! byte request stay one request; each block is decoded from its first 64 bytes (the
//! device overlays heads there). Summaries, checkpoints, the state record and the
//! superblock stay bytes. So the placement, the cleaner and the device's costs are those
//! of bytes, request for request. The superblock records the mode: a store is refused in
//! the other one.
//!
//! # Concurrency
//! One read-write lock: reads share it (and read the device under it); writes, syncs and
//! the cleaner take it exclusively.
//!
//! # Memory
//! The map is 4 bytes per page id; SepBIT adds 4 bytes per page id of last-write times
//! (8 in all); the usage table is a few dozen bytes per segment; each open segment keeps
//! its summary entries (28 bytes per block written) until it is sealed
//! ([`LogStore::memory`]).

mod admission;
mod background;
mod bytes;
pub mod checkpoint;
mod cleaner;
mod clock;
pub mod config;
mod data;
mod invariants;
pub mod layout;
mod lifecycle;
pub mod map;
pub mod options;
pub mod placement;
mod recovery;
mod reporting;
mod scan;
pub mod stamp;
mod state;
pub mod stats;
pub mod summary;
pub mod usage;
pub mod victim;
mod writer;

pub use background::CleanerQueue;
pub use config::{CleanerConfig, CleanerKind, LogStoreConfig, TimeBase};
pub use layout::{BlockAddr, Layout, SegmentId};
pub use stats::{LogStoreStats, MemoryReport, RecoveryReport};

use crate::counters::StoreCounters;
use crate::state::StateArea;
use crate::{PageStore, PageWrite, Poison, ReadOutcome, StoreError, StoreStats};
use clock::Clock;
use flashbuf_core::page;
use flashbuf_core::{DeviceStats, DirtyRanges, PageId};
use flashbuf_device::Device;
use parking_lot::RwLock;
use state::{Background, Ctx, Head, Lane, State, WriteQueue};
use usage::UsageTable;

/// Kind name written in the superblock.
pub const KIND: &str = "log-structured";

/// The log-structured store (see the [module docs](self)).
///
/// ```
/// use flashbuf_core::{page, DirtyRanges, PageId};
/// use flashbuf_device::MemDevice;
/// use flashbuf_store::log_store::{LogStore, LogStoreConfig, TimeBase};
/// use flashbuf_store::{PageStore, ReadOutcome};
/// let cfg = LogStoreConfig {
///     segment_bytes: 16 * 4096,
///     capacity_bytes: Some(4 << 20),
///     align_bytes: 4096,
///     time_base: TimeBase::Writes,
///     ..LogStoreConfig::with_page_size(4096)
/// };
/// let store = LogStore::create(MemDevice::new(0), cfg.clone())?;
/// let mut p = vec![0u8; 4096];
/// let mut last = vec![0u8; 300];
/// let mut rng = flashbuf_core::rng::SplitMix64::new(1);
/// for i in 0..6000u64 {
///     // Skewed random overwrites leave segments partly live: the cleaner must copy.
///     let pid = if rng.below(4) == 0 { rng.below(300) } else { rng.below(60) };
///     p[100] = i as u8;
///     last[pid as usize] = i as u8;
///     page::seal(&mut p, PageId(pid), i + 1);
///     store.write_page(PageId(pid), &p, &DirtyRanges::full(4096))?;
/// }
/// store.sync()?;
/// assert!(store.log_stats().segments_cleaned > 0);
/// store.check_invariants().map_err(flashbuf_store::StoreError::Invalid)?;
/// let store = LogStore::open(store.into_device(), cfg)?;
/// let mut q = vec![0u8; 4096];
/// assert_eq!(store.read_page(PageId(7), &mut q)?, ReadOutcome::Found);
/// assert_eq!(q[100], last[7]);
/// # Ok::<(), flashbuf_store::StoreError>(())
/// ```
#[derive(Debug)]
pub struct LogStore<D: Device> {
    dev: D,
    cfg: LogStoreConfig,
    layout: Layout,
    salt: u64,
    poison: Poison,
    state: RwLock<State>,
    /// The A/B state record: the extent, and the promise of the last caller's sync.
    state_area: StateArea,
    counters: StoreCounters,
    /// The device's background handle, when background passes run on it (`background`).
    background: Option<background::Queue>,
}

impl<D: Device> LogStore<D> {
    fn check_device(dev: &D, cfg: &LogStoreConfig) -> Result<(), StoreError> {
        cfg.validate()?;
        crate::checks::check_alignment(dev, cfg.page_size)
    }

    fn new_state(dev: &D, cfg: &LogStoreConfig, layout: &Layout) -> State {
        let (rule, placement) = cfg.cleaner.kind.build(layout.logical_pages);
        let heads = (0..placement.heads()).map(|c| Head::new(c as u8)).collect();
        State {
            map: map::L2pMap::new(layout.logical_pages),
            usage: UsageTable::new(layout.segments),
            heads,
            queue: WriteQueue::new(cfg.block_bytes()),
            placement,
            clean_buf: None,
            rule,
            next_seq: 1,
            seq_limit: 1,
            next_epoch: 1,
            durable_seq: 1,
            unsynced: false,
            generation: 0,
            sealed_since_checkpoint: 0,
            user_writes: 0,
            covered_seq: 0,
            clock: Clock::new(cfg.time_base, 0.0, dev),
            background: Background::default(),
            bg: background::Stamps::new(layout.segments),
            stats: LogStoreStats::default(),
            device_base: dev.stats(),
            recovery: None,
        }
    }

    fn assemble(
        dev: D,
        cfg: LogStoreConfig,
        (layout, salt): (Layout, u64),
        state: State,
        state_area: StateArea,
    ) -> Self {
        let background = Self::background_queue(&dev, &cfg);
        Self {
            background,
            dev,
            cfg,
            layout,
            salt,
            poison: Poison::default(),
            state: RwLock::new(state),
            state_area,
            counters: StoreCounters::default(),
        }
    }

    fn ctx(&self) -> Ctx<'_, D> {
        Ctx {
            dev: &self.dev,
            layout: &self.layout,
            cfg: &self.cfg,
            salt: self.salt,
            poison: &self.poison,
            lane: Lane::Main(self.background.as_ref().map(|q| q.0.as_ref())),
        }
    }

    /// The device.
    pub fn device(&self) -> &D {
        &self.dev
    }

    /// Consumes the store, returning the device (buffered logs not synced are lost).
    pub fn into_device(self) -> D {
        self.dev
    }

    /// The configuration.
    pub fn config(&self) -> &LogStoreConfig {
        &self.cfg
    }

    /// The layout on the device.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The store's counters.
    pub fn log_stats(&self) -> LogStoreStats {
        self.state.read().stats
    }

    /// What the last recovery found (`None` for a store created by this process).
    pub fn recovery_report(&self) -> Option<RecoveryReport> {
        self.state.read().recovery
    }

    /// Free, pre-free and used segments now.
    pub fn segment_counts(&self) -> (u32, u32, u32) {
        let st = self.state.read();
        let (f, p) = (st.usage.free_count(), st.usage.prefree_count());
        (f, p, self.layout.segments - f - p)
    }

    /// The block `pid` lives in, if it was ever written (tests damage blocks through it).
    pub fn location(&self, pid: PageId) -> Option<BlockAddr> {
        self.state.read().map.get(pid.0)
    }

    /// Pages mapped now.
    pub fn live_pages(&self) -> u64 {
        self.state.read().map.mapped()
    }

    /// Memory of the per-page and per-segment structures.
    pub fn memory(&self) -> MemoryReport {
        self.memory_of(&self.state.read())
    }

    /// Checkpoints now (flushing every head).
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        self.poison.check()?;
        self.state.write().checkpoint(&self.ctx())
    }
}

impl<D: Device> PageStore for LogStore<D> {
    fn name(&self) -> &'static str {
        KIND
    }

    fn page_size(&self) -> usize {
        self.cfg.block_bytes()
    }

    fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
        self.poison.check()?;
        crate::checks::check_buf(buf.len(), self.cfg.block_bytes())?;
        self.counters.read();
        let st = self.state_for_read(pid.0)?;
        let Some(addr) = st.map.get(pid.0) else {
            buf.fill(0);
            self.counters.unwritten();
            return Ok(ReadOutcome::Unwritten);
        };
        let off = self.layout.addr_byte_offset(addr);
        self.poison
            .guard(data::read_block(&self.dev, &self.cfg, off, buf))?;
        drop(st);
        match data::check_read(buf, self.salt, addr, pid) {
            Ok(()) => Ok(ReadOutcome::Found),
            Err(reason) => {
                buf.fill(0);
                Err(StoreError::Corrupt { pid, reason })
            }
        }
    }

    fn write_page(&self, pid: PageId, page: &[u8], _dirty: &DirtyRanges) -> Result<(), StoreError> {
        self.poison.check()?;
        self.check_write(pid, page)?;
        let cx = self.ctx();
        let mut st = self.state.write();
        self.check_room(&st, u64::from(st.map.get(pid.0).is_none()))?;
        st.background_clean(&cx)?;
        st.write_user(&cx, pid.0, page::version_of(page), page)?;
        st.flush_queue(&cx)?;
        st.checkpoint_if_due(&cx)?;
        self.counters.wrote(1);
        Ok(())
    }

    fn write_pages(&self, batch: &[PageWrite<'_>]) -> Result<(), StoreError> {
        self.poison.check()?;
        for w in batch {
            self.check_write(w.pid, w.page)?;
        }
        let cx = self.ctx();
        let mut st = self.state.write();
        let mut new: Vec<u64> = batch
            .iter()
            .map(|w| w.pid.0)
            .filter(|&p| st.map.get(p).is_none())
            .collect();
        new.sort_unstable();
        new.dedup();
        self.check_room(&st, new.len() as u64)?;
        st.background_clean(&cx)?;
        for w in batch {
            st.write_user(&cx, w.pid.0, page::version_of(w.page), w.page)?;
        }
        st.flush_queue(&cx)?;
        st.checkpoint_if_due(&cx)?;
        self.counters.wrote(batch.len() as u64);
        self.counters.batch();
        Ok(())
    }

    fn sync(&self) -> Result<(), StoreError> {
        self.poison.check()?;
        let mut st = self.state.write();
        st.sync(&self.ctx())?;
        self.promise(&mut st)?;
        self.counters.synced();
        Ok(())
    }

    fn stats(&self) -> StoreStats {
        self.counters.stats()
    }

    fn device_stats(&self) -> DeviceStats {
        self.dev.stats()
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.state.read().check_invariants(&self.ctx())
    }

    fn report(&self) -> Vec<(String, f64)> {
        self.report_now()
    }
}
