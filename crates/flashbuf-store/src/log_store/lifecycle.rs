//! Formatting, opening (with recovery) and populating a [`LogStore`].

use super::config::{self, LogStoreConfig};
use super::layout::Layout;
use super::state::Ctx;
use super::stats::LogStoreStats;
use super::usage::UsageTable;
use super::{data, recovery, LogStore, KIND};
use crate::salt::fresh_salt;
use crate::state::StateArea;
use crate::{Poison, StoreError, Superblock};
use flashbuf_core::page;
use flashbuf_core::{AlignedBuf, PageId};
use flashbuf_device::Device;
use std::time::Instant;

/// Bytes of one copy of the state record: the store keeps only the extent in it (its
/// space is fixed at format time; the checkpoints live in slots of their own).
pub(crate) const STATE_COPY_BYTES: u64 = crate::state::SMALL_COPY_BYTES;

impl<D: Device> LogStore<D> {
    /// Formats `dev` as a new, empty store of `cfg.capacity_bytes` (or the device's
    /// current length) and syncs; whatever the device held is lost.
    pub fn create(dev: D, cfg: LogStoreConfig) -> Result<Self, StoreError> {
        Self::check_device(&dev, &cfg)?;
        let capacity = cfg.capacity_bytes.unwrap_or_else(|| dev.len());
        if capacity == 0 {
            return Err(StoreError::Invalid(format!(
                "{} is empty: give the log-structured store's size (capacity)",
                dev.describe()
            )));
        }
        if let Some(max) = dev.max_len() {
            if capacity > max {
                return Err(StoreError::Full(format!(
                    "{} holds {max} bytes, the store was asked for {capacity}",
                    dev.describe()
                )));
            }
        }
        let layout = cfg.layout_for(capacity)?;
        let prev = Superblock::read(&dev).ok().map(|s| s.salt);
        let salt = cfg.salt.unwrap_or_else(|| fresh_salt(prev));
        dev.set_len(0)?;
        dev.set_len(layout.total_bytes())?;
        let mut extra = layout.encode_extra();
        data::mark_extra(&mut extra, cfg.data);
        Superblock {
            kind: KIND.to_string(),
            page_size: cfg.page_size as u32,
            data_offset: layout.segment_offset,
            config_fingerprint: data::fingerprint(&layout, cfg.data),
            salt,
            state_copy_bytes: STATE_COPY_BYTES as u32,
            extra,
        }
        .write(&dev)?;
        // The extent is the whole layout from the start: a shorter device is refused at
        // open whatever the superblock says.
        let state_area = StateArea::format(
            &dev,
            STATE_COPY_BYTES,
            salt,
            layout.total_bytes(),
            Vec::new(),
        )?;
        let mut state = Self::new_state(&dev, &cfg, &layout);
        let store = {
            let poison = Poison::default();
            let cx = Ctx {
                dev: &dev,
                layout: &layout,
                cfg: &cfg,
                salt,
                poison: &poison,
                lane: super::state::Lane::Main(None),
            };
            // Both slots valid from the start (generations 1 and 2).
            state.checkpoint(&cx)?;
            state.checkpoint(&cx)?;
            state.stats = LogStoreStats::default();
            state.device_base = dev.stats();
            Self::assemble(dev, cfg, (layout, salt), state, state_area)
        };
        Ok(store)
    }

    /// Opens an existing store and recovers it (newest valid checkpoint, roll-forward).
    /// Refuses a device holding another kind of store, another page size, segment size,
    /// space, page count or data mode, with a message saying which.
    pub fn open(dev: D, cfg: LogStoreConfig) -> Result<Self, StoreError> {
        Self::check_device(&dev, &cfg)?;
        let sb = Superblock::read(&dev)?;
        sb.expect(KIND, cfg.page_size, sb.config_fingerprint)?;
        StateArea::check_copy_size(&sb, STATE_COPY_BYTES, "log-structured")?;
        let reserved = Superblock::reserved_bytes(cfg.page_size);
        let layout = Layout::decode_extra(&sb.extra, cfg.page_size, sb.data_offset, reserved)?;
        Self::check_format(&cfg, &layout)?;
        data::check_extra(&sb.extra, cfg.data)?;
        sb.expect(KIND, cfg.page_size, data::fingerprint(&layout, cfg.data))?;
        let state_area = StateArea::load_checked(&dev, STATE_COPY_BYTES, sb.salt)?;
        if state_area.data_end() != layout.total_bytes() {
            return Err(StoreError::Format(format!(
                "state record says the store ends at byte {}, its layout at byte {}: the store is corrupt",
                state_area.data_end(),
                layout.total_bytes()
            )));
        }
        if dev.len() < layout.total_bytes() {
            return Err(StoreError::Format(format!(
                "{} holds {} bytes, the store's segments end at byte {}: it is truncated",
                dev.describe(),
                dev.len(),
                layout.total_bytes()
            )));
        }
        let wall = Instant::now();
        let t0 = dev.stats().device_time_us;
        let data_blocks = config::data_blocks_per_segment(layout.segment_blocks, cfg.page_size);
        let promised = super::reporting::promise_of(&state_area);
        let bb = cfg.block_bytes();
        let r = recovery::recover(&dev, &layout, sb.salt, data_blocks, bb, promised)?;
        let mut state = Self::new_state(&dev, &cfg, &layout);
        state.map = r.map;
        state.usage = UsageTable::from_rows(r.usage);
        state.generation = r.generation;
        state.next_seq = r.next_seq;
        state.seq_limit = r.next_seq;
        state.next_epoch = r.next_epoch;
        state.durable_seq = r.next_seq;
        state.user_writes = r.user_writes;
        // Everything below the next sequence is in the checkpoint recovery started from
        // or wrote, or was never written (the sequences up to the checkpoint's limit).
        state.covered_seq = r.next_seq;
        state.clock.restart_at(r.time_ticks, &dev);
        state.background.last_pass_ticks = r.time_ticks;
        let mut report = r.report;
        let store = Self::assemble(dev, cfg, (layout, sb.salt), state, state_area);
        {
            let mut st = store.state.write();
            let cx = store.ctx();
            for summary in &r.to_seal {
                st.write_summary(&cx, summary)?;
                report.summaries_written += 1;
            }
            if r.needs_checkpoint {
                // Whatever recovery relied on is made durable before a checkpoint
                // records it; logs it dropped are then below every later sequence.
                st.sync_device(&cx, true)?;
                st.checkpoint(&cx)?;
                report.wrote_checkpoint = true;
            }
            report.device_time_us = store.dev.stats().device_time_us - t0;
            report.wall_time_us = wall.elapsed().as_secs_f64() * 1e6;
            st.recovery = Some(report);
            st.stats = LogStoreStats::default();
            st.device_base = store.dev.stats();
        }
        Ok(store)
    }

    /// The format fields of `cfg` that are given must match the device's layout.
    fn check_format(cfg: &LogStoreConfig, layout: &Layout) -> Result<(), StoreError> {
        if cfg.segment_blocks() != layout.segment_blocks {
            return Err(StoreError::Format(format!(
                "store was formatted with segments of {} blocks, but {} were requested",
                layout.segment_blocks,
                cfg.segment_blocks()
            )));
        }
        if let Some(lp) = cfg.logical_pages {
            if lp != layout.logical_pages {
                return Err(StoreError::Format(format!(
                    "store was formatted for {} page ids, but {lp} were requested",
                    layout.logical_pages
                )));
            }
        }
        if let Some(c) = cfg.capacity_bytes {
            let want = cfg.layout_for(c)?;
            if want.segments != layout.segments {
                return Err(StoreError::Format(format!(
                    "store was formatted with {} segments, but {c} bytes give {}",
                    layout.segments, want.segments
                )));
            }
        }
        Ok(())
    }

    /// Opens the store on `dev`, formatting it first if the device is empty (length 0).
    pub fn open_or_create(dev: D, cfg: LogStoreConfig) -> Result<Self, StoreError> {
        if dev.is_empty() {
            Self::create(dev, cfg)
        } else {
            Self::open(dev, cfg)
        }
    }

    /// Writes every page id in `0..pages` never written as an empty sealed page (version
    /// 0), then syncs and checkpoints, and restarts the counters: the data set exists on
    /// the device before a run, as the papers' databases did.
    pub fn populate(&self, pages: u64) -> Result<(), StoreError> {
        self.poison.check()?;
        let pages = pages.min(self.layout.logical_pages);
        let cx = self.ctx();
        let mut st = self.state.write();
        if pages > cx.max_live_pages() {
            return Err(StoreError::Full(format!(
                "{pages} pages do not fit: the store holds at most {}",
                cx.max_live_pages()
            )));
        }
        let mut p = AlignedBuf::zeroed(self.cfg.block_bytes(), 4096);
        for pid in 0..pages {
            if st.map.get(pid).is_none() {
                p.fill(0);
                page::seal(&mut p, PageId(pid), 0);
                st.write_user(&cx, pid, 0, &p)?;
            }
        }
        st.sync(&cx)?;
        st.checkpoint(&cx)?;
        st.stats = LogStoreStats::default();
        st.device_base = self.dev.stats();
        Ok(())
    }
}
