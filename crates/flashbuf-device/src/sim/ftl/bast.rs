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

use super::table::{log_blocks, LOG_BLOCKS};
use super::{Ftl, FtlCore, FtlEntry, Role};
use crate::sim::nand::{Nand, Stamp, NONE};

/// The table entry (`bast:log-blocks=N`: N log blocks plus one spare block).
pub(super) const ENTRY: FtlEntry = FtlEntry {
    name: "bast",
    help: "BAST log-block FTL, one log block per updated data block (Kim et al. 2002)",
    options: &[LOG_BLOCKS],
    extra_blocks: |o, op_blocks| log_blocks(o) + 1 + op_blocks,
    build: |o, nand, logical_pages, seed| {
        Ok(Box::new(BastFtl::new(
            nand,
            logical_pages,
            log_blocks(o),
            seed,
        )?))
    },
};

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
    /// Array, location map, blocks, counters.
    core: FtlCore,
    /// Data block of each logical block ([`NONE`]: not yet written).
    data_blk: Vec<u32>,
    log_of: Vec<u32>,
    slots: Vec<LogSlot>,
    /// Logical offset written at each position of each log slot.
    slot_offsets: Vec<u16>,
    clock: u64,
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
            core: FtlCore::new(ENTRY.name, nand, logical_pages, seed),
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
            clock: 0,
        })
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
        let block = self.core.blocks.alloc(Role::Log);
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
        let ppb = self.core.ppb;
        let offsets = &self.slot_offsets[slot * ppb as usize..][..wp as usize];
        let in_order = offsets.iter().enumerate().all(|(i, &o)| o as usize == i);
        let c = &mut self.core;
        if in_order {
            // Positions 0..wp hold offsets 0..wp: each is that offset's only log copy and
            // hence its newest. Fill the rest from the data block, then swap roles.
            c.fill_block(lbn, log, wp..ppb);
            c.blocks.role[log as usize] = Role::Data;
            self.data_blk[lbn as usize] = log;
            c.blocks.release(&mut c.nand, data);
            if wp < ppb {
                c.stats.partial_merges += 1;
            } else {
                c.stats.switch_merges += 1;
            }
        } else {
            let fresh = c.blocks.alloc(Role::Data);
            c.fill_block(lbn, fresh, 0..ppb);
            self.data_blk[lbn as usize] = fresh;
            c.blocks.release(&mut c.nand, data);
            c.blocks.release(&mut c.nand, log);
            c.stats.full_merges += 1;
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
    fn core(&self) -> &FtlCore {
        &self.core
    }

    fn core_mut(&mut self) -> &mut FtlCore {
        &mut self.core
    }

    fn clone_box(&self) -> Box<dyn Ftl> {
        Box::new(self.clone())
    }

    fn write(&mut self, lpn: u32, seq: u64) {
        debug_assert!(lpn < self.core.logical_pages);
        self.clock += 1;
        self.core.stats.host_programs += 1;
        let ppb = self.core.ppb;
        let (lbn, off) = (lpn / ppb, lpn % ppb);
        let stamp = Stamp { lpn, seq };
        if self.core.write_in_place(&mut self.data_blk, lpn, stamp) {
            return;
        }
        let mut slot = self.log_of[lbn as usize];
        if slot == NONE {
            slot = self.take_slot(lbn) as u32;
        }
        let s = slot as usize;
        let LogSlot { block, wp, .. } = self.slots[s];
        debug_assert!(wp < ppb);
        self.core.invalidate(lpn);
        self.core.place(lpn, block * ppb + wp, stamp);
        self.slot_offsets[s * ppb as usize + wp as usize] = off as u16;
        self.slots[s].wp = wp + 1;
        self.slots[s].last_use = self.clock;
        if wp + 1 == ppb {
            self.merge(s);
        }
    }

    fn check_invariants(&self) -> Result<(), String> {
        let c = &self.core;
        c.check_map()?;
        let ppb = c.ppb;
        let data_blocks = c.check_data_blocks(&self.data_blk)?;
        for (lbn, (&d, &l)) in self.data_blk.iter().zip(&self.log_of).enumerate() {
            if d == NONE && l != NONE {
                return Err(format!("lbn {lbn} has a log block but no data block"));
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
            if c.blocks.role[s.block as usize] != Role::Log {
                return Err(format!(
                    "log block {} has role {:?}",
                    s.block, c.blocks.role[s.block as usize]
                ));
            }
            if s.wp >= ppb {
                return Err(format!("log slot {i} is full but not merged"));
            }
            for pos in 0..ppb {
                let st = c.nand.stamp(s.block * ppb + pos);
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
        c.check_role_totals(logs, data_blocks)
    }
}
