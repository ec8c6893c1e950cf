//! Formatting and opening a StableBuffer store: the superblock, the state record (data
//! extent and promise record, [`crate::state`]), the layout checks, then recovery.

use super::layout::Layout;
use super::{promise, StableBufferConfig, StableBufferStore, KIND};
use crate::page_requests::{check_mode, fingerprint_tag};
use crate::salt::fresh_salt;
use crate::state::StateArea;
use crate::written_map::WrittenMap;
use crate::{StoreError, Superblock};
use flashbuf_device::Device;

impl<D: Device + 'static> StableBufferStore<D> {
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
        let copy_bytes = Layout::state_copy_bytes(slots);
        let layout = Layout::for_format(cfg.page_size, slots, cfg.align_bytes);
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
            config_fingerprint: Layout::fingerprint(cfg.page_size, slots)
                ^ fingerprint_tag(cfg.data),
            salt,
            state_copy_bytes: copy_bytes as u32,
            extra: layout.encode_extra(),
        };
        sb.write(&dev)?;
        let state_area = StateArea::format(
            &dev,
            copy_bytes,
            salt,
            layout.data_offset,
            promise::payload(
                &promise::PromiseRecord::default(),
                &WrittenMap::empty_payload(),
            ),
        )?;
        dev.sync()?;
        let inner = Self::start(dev, cfg, layout, salt, (state_area, WrittenMap::new()))?;
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
        let fingerprint = Layout::fingerprint(cfg.page_size, layout.slots);
        check_mode(sb.config_fingerprint, fingerprint, cfg.data)?;
        sb.expect(KIND, cfg.page_size, fingerprint ^ fingerprint_tag(cfg.data))?;
        let copy_bytes = Layout::state_copy_bytes(layout.slots);
        if u64::from(sb.state_copy_bytes) == Layout::state_copy_bytes_before_map(layout.slots) {
            return Err(StoreError::Format(
                "this stable-buffer store was formatted by an earlier flashbuf (its state record has no written-page map, so pages lost at rest would read as never written); it is not opened: read it with that version or recreate it"
                    .to_string(),
            ));
        }
        if u64::from(sb.state_copy_bytes) != copy_bytes {
            return Err(StoreError::Format(format!(
                "stable-buffer store with a state record of {} bytes; {} slots need {copy_bytes}: the store is corrupt",
                sb.state_copy_bytes, layout.slots
            )));
        }
        if layout.staging_offset < Superblock::area_bytes(cfg.page_size, copy_bytes) {
            return Err(StoreError::Format(format!(
                "staging area at byte {} overlaps the superblock",
                layout.staging_offset
            )));
        }
        let (state_area, note) = StateArea::load(&dev, copy_bytes, sb.salt)?;
        // A file shorter than its durable extent lost data a sync promised, and so does
        // a data area cut inside a page (regression test `regression_truncated_store`).
        state_area.check_extent(&dev)?;
        let data_bytes = dev.len().saturating_sub(layout.data_offset);
        if !data_bytes.is_multiple_of(cfg.page_size as u64) {
            return Err(StoreError::Format(format!(
                "data area of {data_bytes} bytes is not whole pages of {} bytes: the store file is truncated or damaged",
                cfg.page_size
            )));
        }
        let record = state_area.record();
        let written = WrittenMap::decode(promise::split_payload(&record.payload).1, KIND)?;
        let inner = Self::start(dev, cfg, layout, sb.salt, (state_area, written))?;
        inner.state.lock().stats.state_copy_damaged = note.other_damaged;
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
}
