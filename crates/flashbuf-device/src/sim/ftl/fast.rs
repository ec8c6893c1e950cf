//! FAST: fully-associative sector translation, the hybrid log-block FTL of Lee, Park, Chung,
//! Lee, Park and Song, "A log buffer-based flash translation layer using fully-associative
//! sector translation", ACM Trans. Embedded Computing Systems 6(3), 2007.
//!
//! Logical blocks map to data blocks; the first write of a page goes to its place in the
//! data block while that page is still erased. Updates go to log blocks of two kinds:
//! - one **sequential (SW) log block**: a write of offset 0 starts it (merging the previous
//!   one); writes continuing its run in order append to it. A full, in-order SW log block
//!   whose pages are all still the newest copies replaces its data block (**switch merge**);
//!   one evicted before it fills is completed from the data block (**partial merge**); one
//!   whose run was overtaken by newer copies gets a **full merge**.
//! - a pool of `random_log_blocks` **random (RW) log blocks** shared by all logical blocks:
//!   every other update appends to the newest one. When the pool is full, the oldest RW log
//!   block is the victim: every data block it holds a valid page of gets a full merge (the
//!   newest copy of each of its pages is copied to a free block, the old data block is
//!   erased, along with the SW log block if it belongs to it), then the victim, which holds
//!   no valid page any more, is erased.
//!
//! Timings: the NIPU paper's reference chip unless a profile says otherwise. The FTL keeps
//! a page-level location index of the newest copies: an implementation aid for reads and
//! merges that does not change which flash operations happen.

use super::table::{log_blocks, LOG_BLOCKS};
use super::{Ftl, FtlCore, FtlEntry, Role};
use crate::sim::nand::{Nand, Stamp, NONE};
use std::collections::VecDeque;

/// The table entry (`fast:log-blocks=N`: a random log pool of N blocks, the sequential
/// log block and one spare).
pub(super) const ENTRY: FtlEntry = FtlEntry {
    name: "fast",
    help:
        "FAST hybrid FTL, one sequential log block and a shared random log pool (Lee et al. 2007)",
    options: &[LOG_BLOCKS],
    extra_blocks: |o, op_blocks| log_blocks(o) + 2 + op_blocks,
    build: |o, nand, logical_pages, seed| {
        Ok(Box::new(FastFtl::new(
            nand,
            logical_pages,
            log_blocks(o),
            seed,
        )?))
    },
};

#[derive(Debug, Clone, Copy)]
struct SwLog {
    block: u32,
    lbn: u32,
    wp: u32,
}

/// The FAST hybrid FTL. See the module docs.
#[derive(Debug, Clone)]
pub struct FastFtl {
    /// Array, location map, blocks, counters.
    core: FtlCore,
    rw_max: u32,
    /// Data block of each logical block ([`NONE`]: not yet written).
    data_blk: Vec<u32>,
    sw: Option<SwLog>,
    /// RW log blocks, oldest first; the newest one is being written at `rw_wp`.
    rw: VecDeque<u32>,
    rw_wp: u32,
    scratch: Vec<u32>,
}

impl FastFtl {
    /// An empty FTL over `nand` exporting `logical_pages` pages with a pool of
    /// `random_log_blocks` RW log blocks. Needs one block per logical block, the RW pool,
    /// the SW log block and one spare.
    pub fn new(
        nand: Nand,
        logical_pages: u32,
        random_log_blocks: u32,
        seed: u64,
    ) -> Result<Self, String> {
        let geo = nand.geometry();
        let ppb = geo.pages_per_block;
        let lbns = logical_pages.div_ceil(ppb);
        if random_log_blocks == 0 {
            return Err("FAST needs at least one random log block".to_string());
        }
        let need = lbns + random_log_blocks + 2;
        if geo.blocks < need {
            return Err(format!(
                "FAST needs {need} blocks ({lbns} data + {random_log_blocks} RW log + SW log + spare), has {}",
                geo.blocks
            ));
        }
        Ok(Self {
            core: FtlCore::new(ENTRY.name, nand, logical_pages, seed),
            rw_max: random_log_blocks,
            data_blk: vec![NONE; lbns as usize],
            sw: None,
            rw: VecDeque::with_capacity(random_log_blocks as usize + 1),
            rw_wp: 0,
            scratch: Vec::with_capacity(ppb as usize),
        })
    }

    /// Full merge of `lbn`: newest copies into a fresh block; the old data block and the SW
    /// log block (if it is `lbn`'s) are erased.
    fn full_merge(&mut self, lbn: u32) {
        let c = &mut self.core;
        let fresh = c.blocks.alloc(Role::Data);
        c.fill_block(lbn, fresh, 0..c.ppb);
        let old = self.data_blk[lbn as usize];
        self.data_blk[lbn as usize] = fresh;
        if old != NONE {
            c.blocks.release(&mut c.nand, old);
        }
        if let Some(sw) = self.sw {
            if sw.lbn == lbn {
                c.blocks.release(&mut c.nand, sw.block);
                self.sw = None;
            }
        }
        c.stats.full_merges += 1;
    }

    /// Merges the SW log block: switch, partial or full.
    fn merge_sw(&mut self) {
        let Some(SwLog { block, lbn, wp }) = self.sw else {
            return;
        };
        let c = &mut self.core;
        let base = lbn * c.ppb;
        let all_newest = (0..wp).all(|pos| c.loc[(base + pos) as usize] == block * c.ppb + pos);
        if !all_newest {
            self.full_merge(lbn);
            return;
        }
        c.fill_block(lbn, block, wp..c.ppb);
        let old = self.data_blk[lbn as usize];
        c.blocks.role[block as usize] = Role::Data;
        self.data_blk[lbn as usize] = block;
        if old != NONE {
            c.blocks.release(&mut c.nand, old);
        }
        self.sw = None;
        if wp < c.ppb {
            c.stats.partial_merges += 1;
        } else {
            c.stats.switch_merges += 1;
        }
    }

    /// Reclaims the oldest RW log block: full merges of every data block it holds a valid
    /// page of, then its erase.
    fn reclaim_rw(&mut self) {
        let Some(victim) = self.rw.pop_front() else {
            return;
        };
        self.scratch.clear();
        let ppb = self.core.ppb;
        let first = victim * ppb;
        for ppn in first..first + ppb {
            let s = self.core.nand.stamp(ppn);
            if !s.is_erased() && self.core.loc[s.lpn as usize] == ppn {
                self.scratch.push(s.lpn / ppb);
            }
        }
        self.scratch.sort_unstable();
        self.scratch.dedup();
        for i in 0..self.scratch.len() {
            let lbn = self.scratch[i];
            self.full_merge(lbn);
        }
        let c = &mut self.core;
        debug_assert_eq!(c.blocks.valid[victim as usize], 0);
        c.blocks.release(&mut c.nand, victim);
    }

    /// Appends an update to the RW log pool.
    fn write_rw(&mut self, lpn: u32, stamp: Stamp) {
        if self.rw.is_empty() || self.rw_wp == self.core.ppb {
            if self.rw.len() as u32 == self.rw_max {
                self.reclaim_rw();
            }
            let b = self.core.blocks.alloc(Role::Log);
            self.rw.push_back(b);
            self.rw_wp = 0;
        }
        let Some(&b) = self.rw.back() else {
            unreachable!("RW pool has a block")
        };
        self.core.invalidate(lpn);
        self.core.place(lpn, b * self.core.ppb + self.rw_wp, stamp);
        self.rw_wp += 1;
    }
}

impl Ftl for FastFtl {
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
        self.core.stats.host_programs += 1;
        let ppb = self.core.ppb;
        let (lbn, off) = (lpn / ppb, lpn % ppb);
        let stamp = Stamp { lpn, seq };
        if self.core.write_in_place(&mut self.data_blk, lpn, stamp) {
            return;
        }
        if off == 0 {
            self.merge_sw();
            let block = self.core.blocks.alloc(Role::Log);
            self.core.invalidate(lpn);
            self.core.place(lpn, block * ppb, stamp);
            self.sw = Some(SwLog { block, lbn, wp: 1 });
            return;
        }
        match self.sw {
            Some(sw) if sw.lbn == lbn && sw.wp == off => {
                self.core.invalidate(lpn);
                self.core.place(lpn, sw.block * ppb + off, stamp);
                self.sw = Some(SwLog { wp: off + 1, ..sw });
                if off + 1 == ppb {
                    self.merge_sw();
                }
            }
            _ => self.write_rw(lpn, stamp),
        }
    }

    fn check_invariants(&self) -> Result<(), String> {
        let c = &self.core;
        c.check_map()?;
        let ppb = c.ppb;
        let data_blocks = c.check_data_blocks(&self.data_blk)?;
        let mut logs = 0usize;
        if let Some(sw) = self.sw {
            logs += 1;
            if c.blocks.role[sw.block as usize] != Role::Log {
                return Err(format!(
                    "SW log block {} has role {:?}",
                    sw.block, c.blocks.role[sw.block as usize]
                ));
            }
            if sw.wp == 0 || sw.wp >= ppb {
                return Err(format!("SW log write pointer {} out of 1..{ppb}", sw.wp));
            }
            if self.data_blk[sw.lbn as usize] == NONE {
                return Err(format!("SW log of lbn {} without a data block", sw.lbn));
            }
            for pos in 0..ppb {
                let s = c.nand.stamp(sw.block * ppb + pos);
                if s.is_erased() != (pos >= sw.wp) {
                    return Err(format!(
                        "SW log page {pos} disagrees with write pointer {}",
                        sw.wp
                    ));
                }
                if pos < sw.wp && s.lpn != sw.lbn * ppb + pos {
                    return Err(format!("SW log position {pos} holds lpn {}", s.lpn));
                }
            }
        }
        if self.rw.len() > self.rw_max as usize {
            return Err(format!(
                "{} RW log blocks, pool of {}",
                self.rw.len(),
                self.rw_max
            ));
        }
        for (i, &b) in self.rw.iter().enumerate() {
            logs += 1;
            if c.blocks.role[b as usize] != Role::Log {
                return Err(format!(
                    "RW log block {b} has role {:?}",
                    c.blocks.role[b as usize]
                ));
            }
            let filled = if i + 1 == self.rw.len() {
                self.rw_wp
            } else {
                ppb
            };
            for pos in 0..ppb {
                if c.nand.is_erased(b * ppb + pos) != (pos >= filled) {
                    return Err(format!(
                        "RW log block {b}: page {pos} disagrees with fill {filled}"
                    ));
                }
            }
        }
        c.check_role_totals(logs, data_blocks)
    }
}
