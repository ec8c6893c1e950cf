//! BAST: block-associative sector translation, the log-block FTL of Kim, Kim, Noh, Min and
//! Cho, "A space-efficient flash translation layer for CompactFlash systems", IEEE Trans.
//! Consumer Electronics 48(2), 2002.
//!
//! Logical blocks map to data blocks (block-level map); the first write of a page goes to
//! its place in the data block while that page is still erased. An update goes to the log
//! block owned by its logical block (one log block per data block, page-mapped inside);
//! at most `log_blocks` log blocks exist. A log block is merged with its data block when it
//! fills up, or when another logical block needs a log block and none is free (the least
//! recently written log block is the victim):
//! - **switch merge**: the log block holds pages 0..n-1 in order: it becomes the data
//!   block, the old data block is erased (1 erase);
//! - **partial merge**: the log block holds pages 0..k-1 in order: the valid pages k..n-1
//!   are copied into it from the data block, which is erased;
//! - **full merge**: otherwise the newest copy of every page is copied into a free block,
//!   and both the data block and the log block are erased.
//!
//! Timings: the NIPU paper's reference chip unless a profile says otherwise. The FTL keeps
//! a page-level location index of the newest copies: an implementation aid for reads and
//! merges that does not change which flash operations happen.

use super::{check_location_map, merge_counters, Blocks, Ftl, FtlKind, FtlStats, Role};
use crate::sim::nand::{Nand, Stamp, NONE};

#[derive(Debug, Clone, Copy)]
struct LogSlot {
    block: u32,
    lbn: u32,
    wp: u32,
    last_use: u64,
}

/// The BAST log-block FTL. See the module docs.
#[derive(Debug, Clone)]
pub struct BastFtl {
    nand: Nand,
    ppb: u32,
    logical_pages: u32,
    log_blocks: u32,
    loc: Vec<u32>,
    data_blk: Vec<u32>,
    log_of: Vec<u32>,
    slots: Vec<LogSlot>,
    /// Logical offset written at each position of each log slot.
    slot_offsets: Vec<u16>,
    blocks: Blocks,
    clock: u64,
    stats: FtlStats,
}

impl BastFtl {
    /// An empty FTL over `nand` exporting `logical_pages` pages with `log_blocks` log
    /// blocks. Needs one block per logical block, the log blocks and one spare.
    pub fn new(nand: Nand, logical_pages: u32, log_blocks: u32, seed: u64) -> Result<Self, String> {
        let geo = nand.geometry();
        let ppb = geo.pages_per_block;
        let lbns = logical_pages.div_ceil(ppb);
        if log_blocks == 0 {
            return Err("BAST needs at least one log block".to_string());
        }
        if geo.blocks < lbns + log_blocks + 1 {
            return Err(format!(
                "BAST needs {} blocks ({lbns} data + {log_blocks} log + 1 spare), has {}",
                lbns + log_blocks + 1,
                geo.blocks
            ));
        }
        Ok(Self {
            nand,
            ppb,
            logical_pages,
            log_blocks,
            loc: vec![NONE; logical_pages as usize],
            data_blk: vec![NONE; lbns as usize],
            log_of: vec![NONE; lbns as usize],
            slots: vec![
                LogSlot {
                    block: NONE,
                    lbn: NONE,
                    wp: 0,
                    last_use: 0
                };
                log_blocks as usize
            ],
            slot_offsets: vec![0; (log_blocks * ppb) as usize],
            blocks: Blocks::new(geo.blocks, seed),
            clock: 0,
            stats: FtlStats::default(),
        })
    }

    #[inline]
    fn invalidate(&mut self, lpn: u32) {
        let old = self.loc[lpn as usize];
        if old != NONE {
            let b = (old / self.ppb) as usize;
            debug_assert!(self.blocks.valid[b] > 0);
            self.blocks.valid[b] -= 1;
        }
    }

    #[inline]
    fn place(&mut self, lpn: u32, ppn: u32, stamp: Stamp) {
        self.nand.program(ppn, stamp);
        self.loc[lpn as usize] = ppn;
        self.blocks.valid[(ppn / self.ppb) as usize] += 1;
    }

    /// Copies `lpn`'s newest copy to `to`.
    #[inline]
    fn copy(&mut self, lpn: u32, to: u32) {
        let from = self.loc[lpn as usize];
        debug_assert_ne!(from, NONE);
        let s = self.nand.read(from);
        self.invalidate(lpn);
        self.place(lpn, to, s);
        self.stats.copied_pages += 1;
    }

    /// A log slot for `lbn` (which has none), merging the least recently used one if all
    /// are taken.
    fn take_slot(&mut self, lbn: u32) -> usize {
        let slot = match self.slots.iter().position(|s| s.block == NONE) {
            Some(i) => i,
            None => {
                let mut victim = 0;
                for (i, s) in self.slots.iter().enumerate() {
                    if s.last_use < self.slots[victim].last_use {
                        victim = i;
                    }
                }
                self.merge(victim);
                victim
            }
        };
        let block = self.blocks.alloc(Role::Log);
        self.slots[slot] = LogSlot {
            block,
            lbn,
            wp: 0,
            last_use: self.clock,
        };
        self.log_of[lbn as usize] = slot as u32;
        slot
    }

    /// Merges log slot `slot` with its data block (switch, partial or full) and frees it.
    fn merge(&mut self, slot: usize) {
        let LogSlot {
            block: log,
            lbn,
            wp,
            ..
        } = self.slots[slot];
        debug_assert_ne!(log, NONE);
        let data = self.data_blk[lbn as usize];
        debug_assert_ne!(data, NONE);
        let base_lpn = lbn * self.ppb;
        let offsets = &self.slot_offsets[slot * self.ppb as usize..][..wp as usize];
        let in_order = offsets.iter().enumerate().all(|(i, &o)| o as usize == i);
        if in_order {
            // Positions 0..wp hold offsets 0..wp: each is that offset's only log copy and
            // hence its newest. Fill the rest from the data block, then swap roles.
            let partial = wp < self.ppb;
            for off in wp..self.ppb {
                let lpn = base_lpn + off;
                if lpn < self.logical_pages && self.loc[lpn as usize] != NONE {
                    self.copy(lpn, log * self.ppb + off);
                }
            }
            self.blocks.role[log as usize] = Role::Data;
            self.data_blk[lbn as usize] = log;
            self.blocks.release(&mut self.nand, data);
            if partial {
                self.stats.partial_merges += 1;
            } else {
                self.stats.switch_merges += 1;
            }
        } else {
            let fresh = self.blocks.alloc(Role::Data);
            for off in 0..self.ppb {
                let lpn = base_lpn + off;
                if lpn < self.logical_pages && self.loc[lpn as usize] != NONE {
                    self.copy(lpn, fresh * self.ppb + off);
                }
            }
            self.data_blk[lbn as usize] = fresh;
            self.blocks.release(&mut self.nand, data);
            self.blocks.release(&mut self.nand, log);
            self.stats.full_merges += 1;
        }
        self.log_of[lbn as usize] = NONE;
        self.slots[slot].block = NONE;
        self.slots[slot].lbn = NONE;
        self.slots[slot].wp = 0;
    }

    /// Log blocks in use.
    pub fn log_blocks_in_use(&self) -> usize {
        self.slots.iter().filter(|s| s.block != NONE).count()
    }
}

impl Ftl for BastFtl {
    fn kind(&self) -> FtlKind {
        FtlKind::Bast {
            log_blocks: self.log_blocks,
        }
    }

    fn logical_pages(&self) -> u32 {
        self.logical_pages
    }

    fn write(&mut self, lpn: u32, seq: u64) {
        debug_assert!(lpn < self.logical_pages);
        self.clock += 1;
        self.stats.host_programs += 1;
        let (lbn, off) = (lpn / self.ppb, lpn % self.ppb);
        let stamp = Stamp { lpn, seq };
        let mut data = self.data_blk[lbn as usize];
        if data == NONE {
            data = self.blocks.alloc(Role::Data);
            self.data_blk[lbn as usize] = data;
        }
        let home = data * self.ppb + off;
        if self.nand.is_erased(home) {
            // Never written since the data block was formed: no other copy exists.
            debug_assert_eq!(self.loc[lpn as usize], NONE);
            self.place(lpn, home, stamp);
            return;
        }
        let mut slot = self.log_of[lbn as usize];
        if slot == NONE {
            slot = self.take_slot(lbn) as u32;
        }
        let s = slot as usize;
        let LogSlot { block, wp, .. } = self.slots[s];
        debug_assert!(wp < self.ppb);
        self.invalidate(lpn);
        self.place(lpn, block * self.ppb + wp, stamp);
        self.slot_offsets[s * self.ppb as usize + wp as usize] = off as u16;
        self.slots[s].wp = wp + 1;
        self.slots[s].last_use = self.clock;
        if wp + 1 == self.ppb {
            self.merge(s);
        }
    }

    fn read(&mut self, lpn: u32) -> Option<Stamp> {
        let ppn = self.loc[lpn as usize];
        if ppn == NONE {
            return None;
        }
        self.stats.host_reads += 1;
        Some(self.nand.read(ppn))
    }

    fn lookup(&self, lpn: u32) -> Option<u32> {
        let p = *self.loc.get(lpn as usize)?;
        (p != NONE).then_some(p)
    }

    fn nand(&self) -> &Nand {
        &self.nand
    }

    fn nand_mut(&mut self) -> &mut Nand {
        &mut self.nand
    }

    fn stats(&self) -> FtlStats {
        merge_counters(self.stats, &self.nand)
    }

    fn reset_stats(&mut self) {
        self.stats = FtlStats::default();
        self.nand.reset_counters();
    }

    fn check_invariants(&self) -> Result<(), String> {
        check_location_map(&self.loc, &self.blocks, &self.nand)?;
        let ppb = self.ppb;
        let mut data_blocks = 0usize;
        for (lbn, &d) in self.data_blk.iter().enumerate() {
            if d == NONE {
                if self.log_of[lbn] != NONE {
                    return Err(format!("lbn {lbn} has a log block but no data block"));
                }
                continue;
            }
            data_blocks += 1;
            if self.blocks.role[d as usize] != Role::Data {
                return Err(format!(
                    "data block {d} of lbn {lbn} has role {:?}",
                    self.blocks.role[d as usize]
                ));
            }
            // A data block's programmed pages hold their own offset of their own lbn.
            for off in 0..ppb {
                let s = self.nand.stamp(d * ppb + off);
                if !s.is_erased() && s.lpn != lbn as u32 * ppb + off {
                    return Err(format!(
                        "data block {d} of lbn {lbn}: page {off} holds lpn {}",
                        s.lpn
                    ));
                }
            }
        }
        let mut logs = 0usize;
        for (i, s) in self.slots.iter().enumerate() {
            if s.block == NONE {
                continue;
            }
            logs += 1;
            if self.log_of[s.lbn as usize] != i as u32 {
                return Err(format!(
                    "log slot {i} claims lbn {} which points elsewhere",
                    s.lbn
                ));
            }
            if self.blocks.role[s.block as usize] != Role::Log {
                return Err(format!(
                    "log block {} has role {:?}",
                    s.block, self.blocks.role[s.block as usize]
                ));
            }
            if s.wp >= ppb {
                return Err(format!("log slot {i} is full but not merged"));
            }
            for pos in 0..ppb {
                let st = self.nand.stamp(s.block * ppb + pos);
                if st.is_erased() != (pos >= s.wp) {
                    return Err(format!(
                        "log block {}: page {pos} disagrees with write pointer {}",
                        s.block, s.wp
                    ));
                }
                if pos < s.wp {
                    let off = self.slot_offsets[i * ppb as usize + pos as usize] as u32;
                    if st.lpn != s.lbn * ppb + off {
                        return Err(format!("log block {} position {pos}: offset table says {off}, page holds lpn {}", s.block, st.lpn));
                    }
                }
            }
        }
        if self.log_of.iter().filter(|&&l| l != NONE).count() != logs {
            return Err("log_of and log slots disagree".to_string());
        }
        let logs_by_role = self.blocks.role.iter().filter(|&&r| r == Role::Log).count();
        let data_by_role = self
            .blocks
            .role
            .iter()
            .filter(|&&r| r == Role::Data)
            .count();
        if logs_by_role != logs || data_by_role != data_blocks {
            return Err(format!(
                "roles: {logs_by_role} log / {data_by_role} data blocks, maps: {logs} / {data_blocks}"
            ));
        }
        if logs + data_blocks + self.blocks.free_count() != self.blocks.role.len() {
            return Err("data + log + free != blocks".to_string());
        }
        Ok(())
    }
}
