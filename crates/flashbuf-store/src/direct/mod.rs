//! The direct store: every page is written in place at
//! `data_offset + page_id × page_size`, behind a superblock.
//!
//! This is the baseline write path of every paper (the "direct" or in-place update method):
//! a write-back costs one random device write. The data area grows on demand in steps of
//! [`DirectStoreConfig::grow_bytes`]; bytes never written read as zero and are reported as
//! [`ReadOutcome::Unwritten`].
//!
//! Durability: `sync` syncs the device. Pages are written whole and never torn by the store
//! itself; a device that tears a write leaves a page that fails its checksum, which a read
//! reports as [`StoreError::Corrupt`]. A `sync` after the data area grew records its new
//! extent in the state record ([`crate::state`]); opening a device shorter than the
//! recorded extent (a truncated file: its lost pages would read as never written) is
//! refused.
//!
//! Which pages were ever written is recorded too (`crate::written_map`, in the state
//! record's payload, committed by the `sync` that follows a page's first write): a page
//! that was written and synced but reads as all zeros lost its contents at rest and is
//! reported corrupt ([`PageCheckError::Zeroed`]), never as unwritten (issue 11, regression
//! test `regression_direct_zeroed_page`). Syncs that write no new page cost nothing extra.
//!
//! On-device structures: the superblock, the two state record copies, the pages. Damage
//! to the superblock refuses the open; to one state copy, the other (an earlier, still
//! true generation) is used; to both, the open is refused; to a page, that page reads
//! corrupt. A device that silently returns an older *valid* image of a page (a lost write)
//! cannot be told from the page itself: this store keeps no per-page version map.
//!
//! Format: a direct store formatted before the written-page map (an empty state payload)
//! is refused with a message saying so.
//!
//! Metadata only ([`DataMode::Metadata`], `--data none`, issue 17): callers exchange
//! [`METADATA_PAGE_BYTES`]-byte pages (header and stamp, sealed and checked as usual); each
//! page keeps its logical place and length on the device and goes down as a metadata-only
//! request of the whole page ([`Device::write_head`]), so the device times and counts what
//! it would with bytes. The superblock records the mode (its configuration fingerprint):
//! a store formatted in one mode is refused in the other.

use crate::counters::StoreCounters;
use crate::growth::{check_fits, Growth};
use crate::page_requests;
use crate::state::StateArea;
use crate::written_map::WrittenMap;
use crate::{PageStore, PageWrite, Poison, ReadOutcome, StoreError, StoreStats, Superblock};
use flashbuf_core::page::{self, is_valid_page_size, PageCheckError, PageState};
#[cfg(doc)]
use flashbuf_core::METADATA_PAGE_BYTES;
use flashbuf_core::{DataMode, DeviceStats, DirtyRanges, PageId};
use flashbuf_device::Device;

/// Configuration of a [`DirectStore`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirectStoreConfig {
    /// Page size in bytes (a power of two, 512..=65536).
    pub page_size: usize,
    /// How much the data area grows at a time when a write lands beyond its end.
    pub grow_bytes: u64,
    /// Whole pages, or only their metadata (module docs).
    pub data: DataMode,
}

impl Default for DirectStoreConfig {
    fn default() -> Self {
        Self {
            page_size: 4096,
            grow_bytes: 64 << 20,
            data: DataMode::Bytes,
        }
    }
}

impl DirectStoreConfig {
    /// A configuration for `page_size`.
    pub fn with_page_size(page_size: usize) -> Self {
        Self {
            page_size,
            ..Self::default()
        }
    }
}

/// Kind name written in the superblock.
pub const KIND: &str = "direct";

/// Bytes of one copy of the direct store's state record (the extent and the written-page
/// map).
const STATE_COPY_BYTES: u64 = crate::state::SMALL_COPY_BYTES;

/// The in-place store.
///
/// ```
/// use flashbuf_core::{page, DirtyRanges, PageId};
/// use flashbuf_device::MemDevice;
/// use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore, ReadOutcome};
/// let store = DirectStore::create(MemDevice::new(0), DirectStoreConfig::with_page_size(4096)).unwrap();
/// let mut p = vec![0u8; 4096];
/// p[100] = 7;
/// page::seal(&mut p, PageId(3), 1);
/// store.write_page(PageId(3), &p, &DirtyRanges::full(4096)).unwrap();
/// store.sync().unwrap();
/// let mut q = vec![0u8; 4096];
/// assert_eq!(store.read_page(PageId(3), &mut q).unwrap(), ReadOutcome::Found);
/// assert_eq!(q[100], 7);
/// assert_eq!(store.read_page(PageId(4), &mut q).unwrap(), ReadOutcome::Unwritten);
/// ```
#[derive(Debug)]
pub struct DirectStore<D> {
    dev: D,
    cfg: DirectStoreConfig,
    data_offset: u64,
    poison: Poison,
    grow: Growth,
    state: StateArea,
    written: WrittenMap,
    counters: StoreCounters,
}

impl<D: Device> DirectStore<D> {
    fn new(
        dev: D,
        cfg: DirectStoreConfig,
        data_offset: u64,
        state: StateArea,
        written: WrittenMap,
    ) -> Self {
        Self {
            dev,
            cfg,
            data_offset,
            poison: Poison::default(),
            grow: Growth::new(cfg.page_size, cfg.grow_bytes),
            state,
            written,
            counters: StoreCounters::default(),
        }
    }

    fn check_config(cfg: &DirectStoreConfig) -> Result<(), StoreError> {
        if !is_valid_page_size(cfg.page_size) {
            return Err(StoreError::Invalid(format!(
                "page size {} is not a power of two between 512 and 65536",
                cfg.page_size
            )));
        }
        Ok(())
    }

    /// Formats `dev` as a new, empty direct store (whatever it held is lost) and syncs.
    pub fn create(dev: D, cfg: DirectStoreConfig) -> Result<Self, StoreError> {
        Self::check_config(&cfg)?;
        let data_offset = Superblock::reserved_bytes(cfg.page_size);
        dev.set_len(0)?;
        dev.set_len(data_offset)?;
        let sb = Superblock {
            kind: KIND.to_string(),
            page_size: cfg.page_size as u32,
            data_offset,
            config_fingerprint: page_requests::fingerprint_tag(cfg.data),
            salt: 0,
            state_copy_bytes: STATE_COPY_BYTES as u32,
            extra: Vec::new(),
        };
        sb.write(&dev)?;
        let state = StateArea::format(
            &dev,
            STATE_COPY_BYTES,
            sb.salt,
            data_offset,
            WrittenMap::empty_payload(),
        )?;
        dev.sync()?;
        Ok(Self::new(dev, cfg, data_offset, state, WrittenMap::new()))
    }

    /// Opens an existing direct store; refuses a device holding anything else, or a store
    /// formatted with another page size, with a message saying which.
    pub fn open(dev: D, cfg: DirectStoreConfig) -> Result<Self, StoreError> {
        Self::check_config(&cfg)?;
        let sb = Superblock::read(&dev)?;
        if sb.kind == KIND {
            page_requests::check_mode(sb.config_fingerprint, 0, cfg.data)?;
        }
        sb.expect(
            KIND,
            cfg.page_size,
            page_requests::fingerprint_tag(cfg.data),
        )?;
        StateArea::check_copy_size(&sb, STATE_COPY_BYTES, "direct")?;
        let reserved = Superblock::reserved_bytes(cfg.page_size);
        if sb.data_offset < reserved {
            return Err(StoreError::Format(format!(
                "superblock data offset {} overlaps the superblock",
                sb.data_offset
            )));
        }
        // A garbled offset must not send writes to exabyte offsets or break alignment
        // (regression test `regression_direct_data_offset`).
        if sb.data_offset != reserved {
            return Err(StoreError::Format(format!(
                "superblock data offset {} is not {reserved}: the store is corrupt",
                sb.data_offset
            )));
        }
        if sb.data_offset > dev.len() {
            return Err(StoreError::Format(format!(
                "{} holds {} bytes, less than its data offset {}: the store file is truncated",
                dev.describe(),
                dev.len(),
                sb.data_offset
            )));
        }
        // A file shorter than its durable extent lost pages that were synced (regression
        // test `regression_truncated_store`).
        let state = StateArea::load_checked(&dev, STATE_COPY_BYTES, sb.salt)?;
        let written = WrittenMap::decode(&state.record().payload, KIND)?;
        // The data area only ever grows by whole pages: anything else is a truncated or
        // damaged file (regression test `regression_direct_truncated_data_area`).
        let data_bytes = dev.len() - sb.data_offset;
        if !data_bytes.is_multiple_of(cfg.page_size as u64) {
            return Err(StoreError::Format(format!(
                "data area of {data_bytes} bytes is not whole pages of {} bytes: the store file is truncated or damaged",
                cfg.page_size
            )));
        }
        Ok(Self::new(dev, cfg, sb.data_offset, state, written))
    }

    /// Opens the store on `dev`, formatting it first if the device is empty (length 0).
    pub fn open_or_create(dev: D, cfg: DirectStoreConfig) -> Result<Self, StoreError> {
        if dev.is_empty() {
            Self::create(dev, cfg)
        } else {
            Self::open(dev, cfg)
        }
    }

    /// The device.
    pub fn device(&self) -> &D {
        &self.dev
    }

    /// Consumes the store, returning the device.
    pub fn into_device(self) -> D {
        self.dev
    }

    /// Byte offset of `pid`; the page's *end* is addressable too, so `offset + page_size`
    /// never overflows (regression test `regression_direct_huge_page_id`).
    fn offset_of(&self, pid: PageId) -> Result<u64, StoreError> {
        let ps = self.cfg.page_size as u64;
        pid.0
            .checked_mul(ps)
            .and_then(|o| o.checked_add(self.data_offset))
            .filter(|o| o.checked_add(ps).is_some())
            .ok_or_else(|| StoreError::Invalid(format!("{pid} is beyond the addressable range")))
    }

    /// [`Self::offset_of`] for a write: the page must also fit the device's capacity, if
    /// it has one. A page that never can is a bad request (`Full`), refused before any I/O,
    /// and does not poison the store.
    fn write_offset_of(&self, pid: PageId) -> Result<u64, StoreError> {
        let off = self.offset_of(pid)?;
        check_fits(&self.dev, pid, off, self.cfg.page_size)?;
        Ok(off)
    }

    /// Bytes of a page as callers exchange it.
    fn buf_bytes(&self) -> usize {
        self.cfg.data.buffer_bytes(self.cfg.page_size)
    }

    fn check_buf(&self, len: usize) -> Result<(), StoreError> {
        crate::checks::check_buf(len, self.buf_bytes())
    }

    fn check_sealed(&self, pid: PageId, page: &[u8]) -> Result<(), StoreError> {
        crate::checks::check_sealed(pid, page, self.buf_bytes())
    }

    /// Writes `page` (checked) at `off` as a request of one whole page.
    fn write_one(&self, off: u64, page: &[u8]) -> Result<(), StoreError> {
        let (data, ps) = (self.cfg.data, self.cfg.page_size);
        self.poison
            .guard(page_requests::write_page(&self.dev, data, ps, off, page))
    }

    /// Writes `(offset, page)` pairs (checked) as one device batch of whole pages.
    fn write_batch(&self, pages: &[(u64, &[u8])]) -> Result<(), StoreError> {
        let (data, ps) = (self.cfg.data, self.cfg.page_size);
        self.poison
            .guard(page_requests::write_pages(&self.dev, data, ps, pages))
    }
}

impl<D: Device> PageStore for DirectStore<D> {
    fn name(&self) -> &'static str {
        KIND
    }

    fn page_size(&self) -> usize {
        self.buf_bytes()
    }

    fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
        self.poison.check()?;
        self.check_buf(buf.len())?;
        let off = self.offset_of(pid)?;
        self.counters.read();
        let state = if off + self.cfg.page_size as u64 > self.dev.len() {
            buf.fill(0);
            Ok(PageState::Unwritten)
        } else {
            let (data, ps) = (self.cfg.data, self.cfg.page_size);
            self.poison
                .guard(page_requests::read_page(&self.dev, data, ps, off, buf))?;
            page::check(buf, pid)
        };
        match state {
            Ok(PageState::Sealed(_)) => Ok(ReadOutcome::Found),
            Ok(PageState::Unwritten) if self.written.contains(pid) => Err(StoreError::Corrupt {
                pid,
                reason: PageCheckError::Zeroed,
            }),
            Ok(PageState::Unwritten) => {
                self.counters.unwritten();
                Ok(ReadOutcome::Unwritten)
            }
            Err(reason) => {
                // Never hand out the bytes of a corrupt page.
                buf.fill(0);
                Err(StoreError::Corrupt { pid, reason })
            }
        }
    }

    /// Hints the device range the page lives at (nothing for a page beyond the range).
    fn prefetch_page(&self, pid: PageId) {
        if let Ok(off) = self.offset_of(pid) {
            self.dev.prefetch(off, self.cfg.page_size);
        }
    }

    fn write_page(&self, pid: PageId, page: &[u8], _dirty: &DirtyRanges) -> Result<(), StoreError> {
        self.poison.check()?;
        self.check_sealed(pid, page)?;
        let off = self.write_offset_of(pid)?;
        self.grow
            .ensure(&self.dev, &self.poison, off + self.cfg.page_size as u64)?;
        self.write_one(off, page)?;
        self.written.insert(pid);
        self.counters.wrote(1);
        Ok(())
    }

    fn write_pages(&self, batch: &[PageWrite<'_>]) -> Result<(), StoreError> {
        self.poison.check()?;
        let mut ops = Vec::with_capacity(batch.len());
        let mut end = 0;
        for w in batch {
            self.check_sealed(w.pid, w.page)?;
            let off = self.write_offset_of(w.pid)?;
            end = end.max(off + self.cfg.page_size as u64);
            ops.push((off, w.page));
        }
        self.grow.ensure(&self.dev, &self.poison, end)?;
        self.write_batch(&ops)?;
        for w in batch {
            self.written.insert(w.pid);
        }
        self.counters.wrote(batch.len() as u64);
        self.counters.batch();
        Ok(())
    }

    fn sync(&self) -> Result<(), StoreError> {
        self.poison.check()?;
        // Both taken before the device sync: everything they name is durable once it
        // returns (see `crate::written_map`, *Ordering*).
        let len_before = self.dev.len();
        let map = self.written.snapshot(crate::written_map::BUDGET_BYTES);
        self.poison.guard(self.dev.sync())?;
        self.written
            .commit_after_sync(&self.state, &self.dev, &self.poison, len_before, map)?;
        self.counters.synced();
        Ok(())
    }

    fn stats(&self) -> StoreStats {
        self.counters.stats()
    }

    fn device_stats(&self) -> DeviceStats {
        self.dev.stats()
    }

    /// `written_map_cut_page` when the written-page map outgrew its record: zeroed pages
    /// from there on read as unwritten (`crate::written_map`, *Budget*).
    fn report(&self) -> Vec<(String, f64)> {
        let (_, cut) = self.written.shape();
        cut.map(|c| ("written_map_cut_page".to_string(), c as f64))
            .into_iter()
            .collect()
    }

    fn check_invariants(&self) -> Result<(), String> {
        let len = self.dev.len();
        if len < self.data_offset {
            return Err(format!(
                "device length {len} is below the data offset {}",
                self.data_offset
            ));
        }
        if !(len - self.data_offset).is_multiple_of(self.cfg.page_size as u64) {
            return Err(format!("data area of {len} bytes is not whole pages"));
        }
        if len < self.state.data_end() {
            return Err(format!(
                "device length {len} is below the recorded data end {}",
                self.state.data_end()
            ));
        }
        Ok(())
    }
}

mod factory;
pub(crate) use factory::{parse_options, OPTIONS};

#[cfg(test)]
mod tests;
