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

use super::{check_location_map, merge_counters, Blocks, Ftl, FtlKind, FtlStats, Role};
use crate::sim::nand::{Nand, Stamp, NONE};
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy)]
struct SwLog {
    block: u32,
    lbn: u32,
    wp: u32,
}

/// The FAST hybrid FTL. See the module docs.
#[derive(Debug, Clone)]
pub struct FastFtl {
    nand: Nand,
    ppb: u32,
    logical_pages: u32,
    rw_max: u32,
    loc: Vec<u32>,
    data_blk: Vec<u32>,
    sw: Option<SwLog>,
    /// RW log blocks, oldest first; the newest one is being written at `rw_wp`.
    rw: VecDeque<u32>,
    rw_wp: u32,
    blocks: Blocks,
    scratch: Vec<u32>,
    stats: FtlStats,
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
            nand,
            ppb,
            logical_pages,
            rw_max: random_log_blocks,
            loc: vec![NONE; logical_pages as usize],
            data_blk: vec![NONE; lbns as usize],
            sw: None,
            rw: VecDeque::with_capacity(random_log_blocks as usize + 1),
            rw_wp: 0,
            blocks: Blocks::new(geo.blocks, seed),
            scratch: Vec::with_capacity(ppb as usize),
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

    #[inline]
    fn copy(&mut self, lpn: u32, to: u32) {
        let from = self.loc[lpn as usize];
        debug_assert_ne!(from, NONE);
        let s = self.nand.read(from);
        self.invalidate(lpn);
        self.place(lpn, to, s);
        self.stats.copied_pages += 1;
    }

    /// Full merge of `lbn`: newest copies into a fresh block; the old data block and the SW
    /// log block (if it is `lbn`'s) are erased.
    fn full_merge(&mut self, lbn: u32) {
        let fresh = self.blocks.alloc(Role::Data);
        let base = lbn * self.ppb;
        for off in 0..self.ppb {
            let lpn = base + off;
            if lpn < self.logical_pages && self.loc[lpn as usize] != NONE {
                self.copy(lpn, fresh * self.ppb + off);
            }
        }
        let old = self.data_blk[lbn as usize];
        self.data_blk[lbn as usize] = fresh;
        if old != NONE {
            self.blocks.release(&mut self.nand, old);
        }
        if let Some(sw) = self.sw {
            if sw.lbn == lbn {
                self.blocks.release(&mut self.nand, sw.block);
                self.sw = None;
            }
        }
        self.stats.full_merges += 1;
    }

    /// Merges the SW log block: switch, partial or full.
    fn merge_sw(&mut self) {
        let Some(SwLog { block, lbn, wp }) = self.sw else {
            return;
        };
        let base = lbn * self.ppb;
        let all_newest =
            (0..wp).all(|pos| self.loc[(base + pos) as usize] == block * self.ppb + pos);
        if !all_newest {
            self.full_merge(lbn);
            return;
        }
        let partial = wp < self.ppb;
        for off in wp..self.ppb {
            let lpn = base + off;
            if lpn < self.logical_pages && self.loc[lpn as usize] != NONE {
                self.copy(lpn, block * self.ppb + off);
            }
        }
        let old = self.data_blk[lbn as usize];
        self.blocks.role[block as usize] = Role::Data;
        self.data_blk[lbn as usize] = block;
        if old != NONE {
            self.blocks.release(&mut self.nand, old);
        }
        self.sw = None;
        if partial {
            self.stats.partial_merges += 1;
        } else {
            self.stats.switch_merges += 1;
        }
    }

    /// Reclaims the oldest RW log block: full merges of every data block it holds a valid
    /// page of, then its erase.
    fn reclaim_rw(&mut self) {
        let Some(victim) = self.rw.pop_front() else {
            return;
        };
        self.scratch.clear();
        let first = victim * self.ppb;
        for ppn in first..first + self.ppb {
            let s = self.nand.stamp(ppn);
            if !s.is_erased() && self.loc[s.lpn as usize] == ppn {
                self.scratch.push(s.lpn / self.ppb);
            }
        }
        self.scratch.sort_unstable();
        self.scratch.dedup();
        for i in 0..self.scratch.len() {
            let lbn = self.scratch[i];
            self.full_merge(lbn);
        }
        debug_assert_eq!(self.blocks.valid[victim as usize], 0);
        self.blocks.release(&mut self.nand, victim);
    }

    /// Appends an update to the RW log pool.
    fn write_rw(&mut self, lpn: u32, stamp: Stamp) {
        if self.rw.is_empty() || self.rw_wp == self.ppb {
            if self.rw.len() as u32 == self.rw_max {
                self.reclaim_rw();
            }
            let b = self.blocks.alloc(Role::Log);
            self.rw.push_back(b);
            self.rw_wp = 0;
        }
        let Some(&b) = self.rw.back() else {
            unreachable!("RW pool has a block")
        };
        self.invalidate(lpn);
        self.place(lpn, b * self.ppb + self.rw_wp, stamp);
        self.rw_wp += 1;
    }
}

impl Ftl for FastFtl {
    fn kind(&self) -> FtlKind {
        FtlKind::Fast {
            random_log_blocks: self.rw_max,
        }
    }

    fn logical_pages(&self) -> u32 {
        self.logical_pages
    }

    fn write(&mut self, lpn: u32, seq: u64) {
        debug_assert!(lpn < self.logical_pages);
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
            debug_assert_eq!(self.loc[lpn as usize], NONE);
            self.place(lpn, home, stamp);
            return;
        }
        if off == 0 {
            self.merge_sw();
            let block = self.blocks.alloc(Role::Log);
            self.invalidate(lpn);
            self.place(lpn, block * self.ppb, stamp);
            self.sw = Some(SwLog { block, lbn, wp: 1 });
            return;
        }
        match self.sw {
            Some(sw) if sw.lbn == lbn && sw.wp == off => {
                self.invalidate(lpn);
                self.place(lpn, sw.block * self.ppb + off, stamp);
                self.sw = Some(SwLog { wp: off + 1, ..sw });
                if off + 1 == self.ppb {
                    self.merge_sw();
                }
            }
            _ => self.write_rw(lpn, stamp),
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
                continue;
            }
            data_blocks += 1;
            if self.blocks.role[d as usize] != Role::Data {
                return Err(format!(
                    "data block {d} of lbn {lbn} has role {:?}",
                    self.blocks.role[d as usize]
                ));
            }
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
        if let Some(sw) = self.sw {
            logs += 1;
            if self.blocks.role[sw.block as usize] != Role::Log {
                return Err(format!(
                    "SW log block {} has role {:?}",
                    sw.block, self.blocks.role[sw.block as usize]
                ));
            }
            if sw.wp == 0 || sw.wp >= ppb {
                return Err(format!("SW log write pointer {} out of 1..{ppb}", sw.wp));
            }
            if self.data_blk[sw.lbn as usize] == NONE {
                return Err(format!("SW log of lbn {} without a data block", sw.lbn));
            }
            for pos in 0..ppb {
                let s = self.nand.stamp(sw.block * ppb + pos);
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
            if self.blocks.role[b as usize] != Role::Log {
                return Err(format!(
                    "RW log block {b} has role {:?}",
                    self.blocks.role[b as usize]
                ));
            }
            let filled = if i + 1 == self.rw.len() {
                self.rw_wp
            } else {
                ppb
            };
            for pos in 0..ppb {
                if self.nand.is_erased(b * ppb + pos) != (pos >= filled) {
                    return Err(format!(
                        "RW log block {b}: page {pos} disagrees with fill {filled}"
                    ));
                }
            }
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
