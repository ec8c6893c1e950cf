//! The write path: appending blocks to heads, sealing segments, syncing, checkpointing.
//!
//! A caller's page goes to the head its placement names, as the next data block of that
//! head's open segment, stamped with the next sequence number ([`super::stamp`]). Blocks
//! are queued and written in order: a caller's write or batch with one device request
//! (several if the batch is long or cleaning interleaves). When a segment's data blocks
//! are all written, its summary follows and the segment is sealed. Nothing is buffered
//! across calls: every write reaches the device before the call returns, so a `sync` is
//! one device sync (plus the promise record, see the module docs of `log_store`).

use super::checkpoint::{self, CheckpointHeader};
use super::data;
use super::stamp::{self, SEQ_MAX};
use super::state::{Ctx, State, WriteQueue};
use super::summary::{self, Entry, SegmentSummary};
use crate::StoreError;
use flashbuf_device::Device;

/// Who appends: a caller (may not take the cleaner's reserve; triggers foreground
/// cleaning) or the cleaner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Writer {
    /// A caller's write.
    User,
    /// The cleaner's copy of a block out of a segment last modified at this time (ticks).
    /// Under cost-benefit the copy keeps the data's age, so a segment of copies is as old
    /// as its youngest data (Sprite LFS §3.6); otherwise a segment's time is when it was
    /// written (NILFS2's `su_lastmod`).
    Cleaner(f64),
}

impl State {
    /// A caller's write of sealed page `pid` at `version` (queued; see
    /// [`State::flush_queue`]).
    pub fn write_user<D: Device + ?Sized>(
        &mut self,
        cx: &Ctx<'_, D>,
        pid: u64,
        version: u64,
        page: &[u8],
    ) -> Result<(), StoreError> {
        let h = self
            .placement
            .place_user(pid, self.user_writes, self.map.mapped());
        self.append(cx, h, pid, version, page, Writer::User, false)?;
        self.user_writes += 1;
        self.stats.caller_pages += 1;
        Ok(())
    }

    /// Appends `page` (page `pid` at `version`; a copy of a damaged block if `damaged`) to
    /// head `h`'s open segment.
    #[allow(clippy::too_many_arguments)]
    pub fn append<D: Device + ?Sized>(
        &mut self,
        cx: &Ctx<'_, D>,
        h: usize,
        pid: u64,
        version: u64,
        page: &[u8],
        who: Writer,
        damaged: bool,
    ) -> Result<(), StoreError> {
        if self.next_seq >= self.seq_limit {
            self.checkpoint(cx)?;
        }
        let h = self.ensure_segment(cx, h, who)?;
        if self.next_seq > SEQ_MAX {
            return Err(StoreError::Full(format!(
                "the store used up its {SEQ_MAX} block sequence numbers"
            )));
        }
        if self.queue.offsets.len() == WriteQueue::BLOCKS {
            self.flush_queue(cx)?;
        }
        let Some(seg) = self.heads[h].seg else {
            unreachable_no_segment()
        };
        self.writing_into(cx, seg.0)?;
        let off = self.heads[h].entries.len() as u32;
        let addr = cx.layout.addr(seg, off);
        let bb = cx.cfg.block_bytes();
        let slot = self.queue.offsets.len();
        let block = &mut self.queue.buf[slot * bb..(slot + 1) * bb];
        block.copy_from_slice(page);
        if damaged {
            stamp::mark_for_damaged_copy(block, pid, version);
        }
        let seq = self.next_seq;
        let crc = stamp::stamp(block, cx.salt, addr, seq, self.durable_seq, damaged);
        self.queue.offsets.push(cx.layout.addr_byte_offset(addr));
        self.next_seq += 1;
        self.heads[h].entries.push(Entry {
            pid,
            version,
            seq,
            crc,
        });
        let modified = match who {
            Writer::Cleaner(t) if cx.cfg.cleaner.kind.copies_keep_age() => {
                if off == 0 {
                    t
                } else {
                    t.max(self.usage.get(seg).modified_ticks)
                }
            }
            _ => self.now(cx.dev),
        };
        let row = self.usage.get_mut(seg);
        row.written = off + 1;
        row.last_seq = seq;
        row.modified_ticks = modified;
        self.usage.add_live(seg);
        if let Some(old) = self.map.set(pid, addr) {
            self.usage.remove_live(cx.layout.split(old).0);
        }
        match who {
            Writer::User => self.stats.data_blocks += 1,
            Writer::Cleaner(_) => self.stats.cleaner_blocks_written += 1,
        }
        if off + 1 == cx.data_blocks() {
            self.seal_head(cx, h)?;
        }
        Ok(())
    }

    /// Writes the queued blocks with one device request (metadata-only requests of whole
    /// blocks in [`flashbuf_core::DataMode::Metadata`], `super::data`).
    pub fn flush_queue<D: Device + ?Sized>(&mut self, cx: &Ctx<'_, D>) -> Result<(), StoreError> {
        if self.queue.offsets.is_empty() {
            return Ok(());
        }
        let q = &self.queue;
        cx.poison
            .guard(data::write_blocks(cx.dev, cx.cfg, &q.offsets, &q.buf))?;
        self.queue.offsets.clear();
        self.unsynced = true;
        Ok(())
    }

    /// The head to append to: `h`, with an open segment. A cleaner's copy whose head has
    /// none when no segment is free (and none can be freed) goes to another open head
    /// instead (counted), so the cleaner's reserve need not hold a segment per head.
    fn ensure_segment<D: Device + ?Sized>(
        &mut self,
        cx: &Ctx<'_, D>,
        h: usize,
        who: Writer,
    ) -> Result<usize, StoreError> {
        loop {
            if self.heads[h].seg.is_some() {
                return Ok(h);
            }
            if who == Writer::User && self.usage.free_count() <= cx.cfg.reserve_segments() {
                // Foreground cleaning; it may also open a segment for this head.
                self.make_room(cx)?;
                continue;
            }
            if self.usage.free_count() == 0 {
                if self.usage.prefree_count() == 0 {
                    if let Some(g) = self.heads.iter().position(|x| x.seg.is_some()) {
                        if who != Writer::User {
                            self.stats.redirected_copies += 1;
                            return Ok(g);
                        }
                    }
                    return Err(StoreError::Full(format!(
                        "the cleaner found no free segment for its copies ({} segments, {} pages live)",
                        cx.layout.segments,
                        self.map.mapped()
                    )));
                }
                self.checkpoint(cx)?;
                continue;
            }
            let now = self.now(cx.dev);
            let class = self.heads[h].class;
            let Some(seg) = self
                .usage
                .open(class, self.next_epoch, now, self.user_writes)
            else {
                return Err(StoreError::Full("no free segment to open".into()));
            };
            self.next_epoch += 1;
            self.heads[h].seg = Some(seg);
            debug_assert!(self.heads[h].entries.is_empty());
        }
    }

    /// Writes head `h`'s segment summary after its data blocks and seals the segment.
    pub fn seal_head<D: Device + ?Sized>(
        &mut self,
        cx: &Ctx<'_, D>,
        h: usize,
    ) -> Result<(), StoreError> {
        self.flush_queue(cx)?;
        let Some(seg) = self.heads[h].seg.take() else {
            return Ok(());
        };
        let entries = std::mem::take(&mut self.heads[h].entries);
        let row = *self.usage.get(seg);
        let s = SegmentSummary {
            segment: seg,
            epoch: row.epoch,
            time: self.now(cx.dev),
            created_writes: row.created_writes,
            class: row.class,
            entries,
        };
        self.write_summary(cx, &s)?;
        self.usage.seal(seg);
        self.sealed_since_checkpoint += 1;
        Ok(())
    }

    /// Writes `s` into its segment's summary blocks.
    pub fn write_summary<D: Device + ?Sized>(
        &mut self,
        cx: &Ctx<'_, D>,
        s: &SegmentSummary,
    ) -> Result<(), StoreError> {
        let k = cx.layout.segment_blocks - cx.data_blocks();
        self.writing_into(cx, s.segment.0)?;
        let buf = summary::encode(s, cx.salt, k, cx.layout.page_size);
        let at = cx.layout.block_byte_offset(s.segment, cx.data_blocks());
        cx.poison.guard(cx.dev.write_at(at, &buf))?;
        self.unsynced = true;
        self.stats.summary_blocks += u64::from(k);
        Ok(())
    }

    /// Syncs the device if it was written since its last sync (or if `force`); every block
    /// written so far is durable afterwards.
    pub fn sync_device<D: Device + ?Sized>(
        &mut self,
        cx: &Ctx<'_, D>,
        force: bool,
    ) -> Result<(), StoreError> {
        self.flush_queue(cx)?;
        self.join_for(cx, None)?;
        if !self.unsynced && !force {
            return Ok(());
        }
        let upto = self.next_seq;
        cx.poison.guard(cx.dev.sync())?;
        self.synced_upto(cx, upto);
        self.unsynced = false;
        self.stats.device_syncs += 1;
        Ok(())
    }

    /// A caller's sync: one device sync; then a checkpoint if enough segments were filled
    /// since the last one (its first sync is this one).
    pub fn sync<D: Device + ?Sized>(&mut self, cx: &Ctx<'_, D>) -> Result<(), StoreError> {
        self.background_clean(cx)?;
        self.sync_device(cx, false)?;
        self.checkpoint_if_due(cx)
    }

    /// A checkpoint if the checkpoint interval's segments were filled since the last one.
    pub fn checkpoint_if_due<D: Device + ?Sized>(
        &mut self,
        cx: &Ctx<'_, D>,
    ) -> Result<(), StoreError> {
        if self.sealed_since_checkpoint >= cx.cfg.checkpoint_interval(cx.layout) {
            self.checkpoint(cx)?;
        }
        Ok(())
    }

    /// Writes a checkpoint: a sync (every block below the checkpoint's sequence durable,
    /// and with them the newer copies of every pre-free segment's blocks), the older slot
    /// written, a sync; then pre-free segments are free.
    pub fn checkpoint<D: Device + ?Sized>(&mut self, cx: &Ctx<'_, D>) -> Result<(), StoreError> {
        self.sync_device(cx, false)?;
        let generation = self.generation + 1;
        let seq_limit = self.next_seq + seq_window(cx.layout);
        let header = CheckpointHeader {
            generation,
            next_seq: self.next_seq,
            seq_limit,
            next_epoch: self.next_epoch,
            time_ticks: self.now(cx.dev),
            user_writes: self.user_writes,
        };
        let buf = checkpoint::encode(cx.layout, cx.salt, &header, &self.map, self.usage.rows());
        let at = cx.layout.slot_byte_offset(checkpoint::slot_of(generation));
        cx.poison.guard(cx.dev.write_at(at, &buf))?;
        self.unsynced = true;
        self.sync_device(cx, true)?;
        self.generation = generation;
        self.covered_seq = header.next_seq;
        self.seq_limit = seq_limit;
        self.stamp_freed(cx);
        self.usage.release_prefree();
        self.sealed_since_checkpoint = 0;
        self.stats.checkpoints += 1;
        self.stats.checkpoint_blocks += u64::from(cx.layout.slot_blocks);
        Ok(())
    }
}

/// Sequences a checkpoint allows before the next one: twice the store's blocks (other
/// triggers checkpoint well before that; this one only bounds what recovery must skip).
pub(crate) fn seq_window(layout: &super::layout::Layout) -> u64 {
    2 * layout.total_blocks().max(1)
}

#[cold]
fn unreachable_no_segment() -> ! {
    panic!("log store: a head has no open segment right after ensure_segment (a bug)")
}
