//! The cleaner: when it runs (foreground, background) and what cleaning a segment does.
//!
//! - **Foreground** (Sprite LFS §3.4; F2FS §3.5): a caller's write that needs a segment
//!   when no more than the reserve is free cleans `NSPC` victims at a time until the
//!   cleaner's copies have used up the free segments, then checkpoints (which frees the
//!   segments it emptied), until a segment beyond the reserve is free. The protection
//!   period is honoured unless nothing else is reclaimable.
//! - **Background** (NILFS2 `nilfs_cleanerd`; NIPU paper §4.6): a daemon that wakes every
//!   cleaning interval `CI`; while idle it starts once fewer than `min_free` clean segments
//!   (free or pre-free) are left beyond the reserve, and while running it cleans `NSPC`
//!   segments per wake-up, skipping segments modified within the protection period `PP`,
//!   until more than `max_free` are clean. Reading of "daemon": there is no thread; the
//!   daemon's wake-ups are evaluated at the store's write-side calls (writes, syncs) on the
//!   configured clock, so runs on a virtual clock are deterministic. A daemon sharing the
//!   caller's queue would not overlap its I/O with the caller's: so it is with
//!   `cleaner_queue=main` or a device without a background queue, the pass's requests
//!   on the main handle; with `cleaner_queue=background` (the default) on a device that
//!   offers a background queue, the pass's requests go there and overlap the caller's
//!   (`super::background`: what the foreground then waits for).
//! - **Cleaning a segment** (Sprite LFS §3.3): read its summary, keep the blocks the map
//!   still points to, read them (adjacent blocks in one request), append them to the head
//!   the placement names, and let the segment become pre-free. If the summary does not
//!   account for every live block (a damaged summary), the live blocks are found by a scan
//!   of the map instead. A block that fails its checksum is copied as it is, marked as the
//!   copy of a damaged block (counted): reading it still reports corruption, so the damage
//!   stays reported and is never replaced by an older copy. With metadata-only pages the
//!   reads are the same byte requests, each block's image taken from its first bytes, and
//!   the copies go down as metadata-only requests of whole blocks (`super::data`).

use super::data::{block_image, block_image_mut};
use super::layout::{BlockAddr, SegmentId};
use super::scan::{read_blocks, read_summary};
use super::stamp;
use super::state::{Ctx, Lane, State, CLEAN_BUF_KEPT_BYTES};
use super::usage::{SegState, SegmentUsage};
use super::victim::{CleanClock, SegmentView};
use super::writer::Writer;
use crate::StoreError;
use flashbuf_core::AlignedBuf;
use flashbuf_device::Device;

/// A live block found in a victim: offset, page, version and checksum (when the summary
/// gave them).
type LiveBlock = (u32, u64, Option<u64>, Option<u32>);

impl State {
    /// Up to `n` victims chosen by the rule among sealed segments with reclaimable blocks
    /// (and, with `protect`, modified at least `PP` ticks ago).
    fn pick<D: Device + ?Sized>(&self, cx: &Ctx<'_, D>, n: usize, protect: bool) -> Vec<SegmentId> {
        let now = self.now(cx.dev);
        let d = cx.data_blocks();
        let pp = cx.cfg.cleaner.protection_period_ticks;
        let candidates: Vec<SegmentView> = self
            .usage
            .sealed()
            .filter(|(_, r)| r.live < d && (!protect || now - r.modified_ticks >= pp))
            .map(|(id, r)| SegmentView {
                id,
                live_blocks: r.live,
                capacity_blocks: cx.layout.segment_blocks,
                modified_ticks: r.modified_ticks,
                created_writes: r.created_writes,
                class: r.class,
            })
            .collect();
        let clock = CleanClock {
            now_ticks: now,
            user_writes: self.user_writes,
        };
        let mut chosen = self.rule.choose(&candidates, clock, n);
        chosen.dedup();
        debug_assert!(chosen.iter().all(|c| candidates.iter().any(|x| x.id == *c)));
        chosen
    }

    /// A background pass if the daemon is due and running (see the module docs).
    pub fn background_clean<D: Device + ?Sized>(
        &mut self,
        cx: &Ctx<'_, D>,
    ) -> Result<(), StoreError> {
        let c = &cx.cfg.cleaner;
        if !c.background {
            return Ok(());
        }
        let now = self.now(cx.dev);
        if now - self.background.last_pass_ticks < c.cleaning_interval_ticks {
            return Ok(());
        }
        self.background.last_pass_ticks = now;
        let segments = cx.layout.segments;
        let min = c.min_free_segments.unwrap_or(segments.div_ceil(10));
        let max = c.max_free_segments.unwrap_or(segments.div_ceil(5)).max(min);
        let reserve = cx.cfg.reserve_segments();
        let clean = self.usage.free_count() + self.usage.prefree_count();
        if self.background.running {
            if clean > max + reserve {
                self.background.running = false;
                return Ok(());
            }
        } else if clean < min + reserve {
            self.background.running = true;
        } else {
            return Ok(());
        }
        let victims = self.pick(cx, c.segments_per_clean as usize, true);
        if victims.is_empty() {
            return Ok(());
        }
        match cx.lane {
            Lane::Main(Some(queue)) => self.clean_on_queue(cx, queue, &victims),
            _ => self.clean_segments(cx, &victims, false),
        }
    }

    /// Foreground cleaning: until more segments than the reserve are free. Victims are
    /// cleaned `NSPC` at a time; the segments they empty become free at the next
    /// checkpoint, which is written once the cleaner's copies have used up the free
    /// segments (or nothing more can be cleaned): a checkpoint rewrites the whole map, so
    /// it frees as many segments at once as the reserve allows.
    pub fn make_room<D: Device + ?Sized>(&mut self, cx: &Ctx<'_, D>) -> Result<(), StoreError> {
        let reserve = cx.cfg.reserve_segments();
        let nspc = cx.cfg.cleaner.segments_per_clean.max(1) as usize;
        let limit = 2 * cx.layout.segments as usize + 8;
        let mut rounds = 0;
        while self.usage.free_count() <= reserve {
            let prefree = self.usage.prefree_count();
            let mut victims = Vec::new();
            if self.usage.free_count() > 0 || prefree == 0 {
                victims = self.pick(cx, nspc, true);
                if victims.is_empty() {
                    victims = self.pick(cx, nspc, false);
                }
            }
            if victims.is_empty() {
                if prefree > 0 {
                    self.checkpoint(cx)?;
                    continue;
                }
                return Err(StoreError::Full(format!(
                    "no segment can be reclaimed: {} pages live in {} segments of {} blocks",
                    self.map.mapped(),
                    cx.layout.segments,
                    cx.layout.segment_blocks
                )));
            }
            rounds += 1;
            if rounds > limit {
                return Err(StoreError::Full(format!(
                    "the cleaner made no progress in {limit} rounds ({} pages live)",
                    self.map.mapped()
                )));
            }
            self.clean_segments(cx, &victims, true)?;
        }
        Ok(())
    }

    /// Cleans `victims` and counts the pass.
    pub(super) fn clean_segments<D: Device + ?Sized>(
        &mut self,
        cx: &Ctx<'_, D>,
        victims: &[SegmentId],
        foreground: bool,
    ) -> Result<(), StoreError> {
        let t0 = cx.dev.stats().device_time_us;
        let mut cleaned = 0;
        for &v in victims {
            cleaned += u64::from(self.clean_one(cx, v)?);
        }
        let s = &mut self.stats;
        s.cleaning_time_us += cx.dev.stats().device_time_us - t0;
        if foreground {
            s.foreground_passes += 1;
            s.foreground_segments += cleaned;
        } else {
            s.background_passes += 1;
            s.background_segments += cleaned;
        }
        Ok(())
    }

    /// Moves every live block out of `v`; `false` if `v` was no longer a candidate.
    fn clean_one<D: Device + ?Sized>(
        &mut self,
        cx: &Ctx<'_, D>,
        v: SegmentId,
    ) -> Result<bool, StoreError> {
        let row = *self.usage.get(v);
        if row.state != SegState::Sealed {
            return Ok(false);
        }
        self.placement.collected(
            &SegmentView {
                id: v,
                live_blocks: row.live,
                capacity_blocks: cx.layout.segment_blocks,
                modified_ticks: row.modified_ticks,
                created_writes: row.created_writes,
                class: row.class,
            },
            self.user_writes,
        );
        self.join_for(cx, Some((v.0, false)))?;
        let live = self.live_blocks(cx, v, &row)?;
        let (ps, bb) = (cx.layout.page_size, cx.cfg.block_bytes());
        // Every read fills the bytes it covers, and only those are looked at: a reused
        // buffer's old contents never show.
        let mut buf = self
            .clean_buf
            .take()
            .unwrap_or_else(|| AlignedBuf::zeroed(ps, 4096));
        let mut i = 0;
        while i < live.len() {
            let mut j = i + 1;
            while j < live.len() && live[j].0 == live[j - 1].0 + 1 {
                j += 1;
            }
            let n = (j - i) as u32;
            cx.poison
                .guard(read_blocks(cx.dev, cx.layout, v, live[i].0, n, &mut buf))?;
            self.stats.cleaner_blocks_read += u64::from(n);
            for (k, &(off, pid, version, crc)) in live[i..j].iter().enumerate() {
                let addr = cx.layout.addr(v, off);
                if self.map.get(pid) != Some(addr) {
                    continue;
                }
                let block = block_image_mut(&mut buf, ps, bb, k);
                let checked = stamp::check(block, cx.salt, addr)
                    .filter(|s| s.pid == pid && !s.damaged() && crc.is_none_or(|c| c == s.crc));
                let (version, damaged) = match checked {
                    Some(s) => {
                        stamp::restore(block);
                        (s.version, false)
                    }
                    None => {
                        self.stats.damaged_blocks_copied += 1;
                        (version.unwrap_or(0), true)
                    }
                };
                let h = self.placement.place_gc(pid, row.class, self.user_writes);
                let block = block_image(&buf, ps, bb, k);
                self.append(
                    cx,
                    h,
                    pid,
                    version,
                    block,
                    Writer::Cleaner(row.modified_ticks),
                    damaged,
                )?;
            }
            i = j;
        }
        debug_assert_eq!(self.usage.get(v).live, 0, "{v} still has live blocks");
        if buf.len() <= CLEAN_BUF_KEPT_BYTES {
            self.clean_buf = Some(buf);
        }
        self.stats.segments_cleaned += 1;
        Ok(true)
    }

    /// The live blocks of `v` by its summary, or by a scan of the map if the summary is
    /// unreadable or does not account for all of them; sorted by offset.
    fn live_blocks<D: Device + ?Sized>(
        &mut self,
        cx: &Ctx<'_, D>,
        v: SegmentId,
        row: &SegmentUsage,
    ) -> Result<Vec<LiveBlock>, StoreError> {
        let summary = cx.poison.guard(read_summary(
            cx.dev,
            cx.layout,
            cx.salt,
            v,
            cx.data_blocks(),
        ))?;
        let k = cx.layout.segment_blocks - cx.data_blocks();
        self.stats.cleaner_blocks_read += u64::from(k);
        if let Some(s) = summary.ok().filter(|s| s.epoch == row.epoch) {
            let found: Vec<LiveBlock> = s
                .entries
                .iter()
                .enumerate()
                .filter(|(i, e)| self.map.get(e.pid) == Some(cx.layout.addr(v, *i as u32)))
                .map(|(i, e)| (i as u32, e.pid, Some(e.version), Some(e.crc)))
                .collect();
            if found.len() as u32 == row.live {
                return Ok(found);
            }
        }
        self.stats.map_scans += 1;
        let mut scanned: Vec<LiveBlock> = self
            .map
            .iter()
            .filter(|(_, a)| cx.layout.split(*a).0 == v)
            .map(|(pid, a): (u64, BlockAddr)| (cx.layout.split(a).1, pid, None, None))
            .collect();
        scanned.sort_unstable_by_key(|b| b.0);
        Ok(scanned)
    }
}
