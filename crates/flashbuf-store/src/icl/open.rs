//! Making an [`IclStore`]: formatting a device (`create`), opening and recovering one
//! (`open`, `open_or_create`), and the checks and layout both share.

use super::layout::{GenRecord, Layout};
use super::mapping::Mapping;
use super::wob::Wob;
use super::{IclConfig, IclStats, IclStore, State, KIND, STATE_COPY_BYTES};
use crate::growth::Growth;
use crate::page_requests;
use crate::scratch::Scratch;
use crate::state::StateArea;
use crate::superblock::fresh_salt;
use crate::written_map::WrittenMap;
use crate::{Poison, StoreError, Superblock};
use flashbuf_core::AlignedBuf;
use flashbuf_device::Device;
use parking_lot::Mutex;
use std::sync::atomic::AtomicU64;

impl<D: Device> IclStore<D> {
    fn new(
        dev: D,
        cfg: IclConfig,
        layout: Layout,
        salt: u64,
        (extent, written): (StateArea, WrittenMap),
    ) -> Self {
        let state = State {
            wob: Wob::new(cfg.wob_bytes.min(usize::MAX as u64) as usize),
            mapping: Mapping::new(),
            gen: 1,
            head: 0,
            synced_head: 0,
            next_seq: 1,
            epoch: 0,
            rseq: 1,
            recorded: 0,
            stats: IclStats::default(),
            log_cache: Default::default(),
        };
        Self {
            grow: Growth::new(cfg.page_size, cfg.grow_bytes),
            dev,
            cfg,
            layout,
            salt,
            poison: Poison::default(),
            extent,
            written,
            state: Mutex::new(state),
            page_reads: AtomicU64::new(0),
            unwritten_reads: AtomicU64::new(0),
            page_writes: AtomicU64::new(0),
            batches: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
            // Reads and flushes run under the state lock, one at a time: a log page's
            // buffer and a flush's.
            scratch: Scratch::new(2),
        }
    }

    fn check_config(dev: &D, cfg: &IclConfig) -> Result<(), StoreError> {
        cfg.validate()?;
        let a = dev.alignment().max(1);
        if !cfg.page_size.is_multiple_of(a) {
            return Err(StoreError::Invalid(format!(
                "page size {} is not a multiple of {}'s alignment ({a} bytes)",
                cfg.page_size,
                dev.describe()
            )));
        }
        Ok(())
    }

    fn layout_for(cfg: &IclConfig) -> Layout {
        Layout::new(
            cfg.page_size,
            cfg.log_pages,
            cfg.dw_pages,
            Superblock::reserved_bytes(cfg.page_size),
        )
    }

    /// Formats `dev` as a new, empty store (whatever it held is lost) and syncs. The salt
    /// differs from the previous format's, so its log pages are never mistaken for ours.
    pub fn create(dev: D, cfg: IclConfig) -> Result<Self, StoreError> {
        Self::check_config(&dev, &cfg)?;
        let prev = Superblock::read(&dev).ok().map(|s| s.salt);
        let salt = cfg.salt.unwrap_or_else(|| fresh_salt(prev));
        let layout = Self::layout_for(&cfg);
        if let Some(max) = dev.max_len() {
            if layout.data_offset > max {
                return Err(StoreError::Full(format!(
                    "{} holds {max} bytes; the superblock, the log space and the double-write area need {}",
                    dev.describe(),
                    layout.data_offset
                )));
            }
        }
        dev.set_len(0)?;
        dev.set_len(layout.data_offset)?;
        let mut b = AlignedBuf::zeroed(cfg.page_size, 4096);
        GenRecord {
            rseq: 1,
            gen: 1,
            next_seq: 1,
            synced: 0,
        }
        .encode(&mut b, salt);
        dev.write_at(layout.gen_record_offset(1), &b)?;
        Superblock {
            kind: KIND.to_string(),
            page_size: cfg.page_size as u32,
            data_offset: layout.data_offset,
            config_fingerprint: layout.fingerprint() ^ page_requests::fingerprint_tag(cfg.data),
            salt,
            state_copy_bytes: STATE_COPY_BYTES as u32,
            extra: layout.encode_extra(),
        }
        .write(&dev)?;
        let extent = StateArea::format(
            &dev,
            STATE_COPY_BYTES,
            salt,
            layout.data_offset,
            WrittenMap::empty_payload(),
        )?;
        dev.sync()?;
        Ok(Self::new(
            dev,
            cfg,
            layout,
            salt,
            (extent, WrittenMap::new()),
        ))
    }

    /// Opens an existing store and recovers it (see `recovery`). Refuses a device holding
    /// another kind of store, another page size or other area sizes, saying which.
    pub fn open(dev: D, cfg: IclConfig) -> Result<Self, StoreError> {
        Self::check_config(&dev, &cfg)?;
        let sb = Superblock::read(&dev)?;
        sb.expect(KIND, cfg.page_size, sb.config_fingerprint)?;
        let reserved = Superblock::reserved_bytes(cfg.page_size);
        let layout = Layout::decode_extra(&sb.extra, cfg.page_size, sb.data_offset, reserved)?;
        if (layout.log_pages, layout.dw_pages) != (cfg.log_pages, cfg.dw_pages) {
            return Err(StoreError::Format(format!(
                "store was formatted with {} log pages and {} double-write slots, but {} and {} were requested",
                layout.log_pages, layout.dw_pages, cfg.log_pages, cfg.dw_pages
            )));
        }
        if sb.kind == KIND {
            page_requests::check_mode(sb.config_fingerprint, layout.fingerprint(), cfg.data)?;
        }
        sb.expect(
            KIND,
            cfg.page_size,
            layout.fingerprint() ^ page_requests::fingerprint_tag(cfg.data),
        )?;
        let len = dev.len();
        if len < layout.data_offset
            || !(len - layout.data_offset).is_multiple_of(cfg.page_size as u64)
        {
            return Err(StoreError::Format(format!(
                "device of {len} bytes does not hold the log space and whole data pages after it (data area at byte {}): the store file is truncated or damaged",
                layout.data_offset
            )));
        }
        StateArea::check_copy_size(&sb, STATE_COPY_BYTES, "ICL")?;
        let extent = StateArea::load_checked(&dev, STATE_COPY_BYTES, sb.salt)?;
        let written = WrittenMap::decode(&extent.record().payload, "ICL")?;
        let salt = sb.salt;
        let store = Self::new(dev, cfg, layout, salt, (extent, written));
        {
            let mut st = store.state.lock();
            store.recover(&mut st)?;
        }
        Ok(store)
    }

    /// Opens the store on `dev`, formatting it first if the device is empty (length 0).
    pub fn open_or_create(dev: D, cfg: IclConfig) -> Result<Self, StoreError> {
        if dev.is_empty() {
            Self::create(dev, cfg)
        } else {
            Self::open(dev, cfg)
        }
    }
}
