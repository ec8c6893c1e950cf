//! What every FTL shares: the NAND array, the location map of the newest copies, the pool
//! of free blocks with each block's role and valid-page count, and the counters
//! ([`FtlCore`]); plus the helpers of the two hybrid (log-block) FTLs — programming a page
//! into its data block, copying a logical block's newest copies into another block, and
//! checking data blocks — and the invariant checks all of them run.
//!
//! Every helper performs exactly the flash operations its callers performed before it was
//! factored out (same order), so the FTLs' counts and timings are unchanged (golden test
//! `tests/golden_ftls.rs`).

use super::FtlStats;
use crate::sim::nand::{Nand, Stamp, NONE};
use std::collections::VecDeque;
use std::ops::Range;

/// Role of a physical block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Erased, in the free queue.
    Free,
    /// Holds data (page-mapped: sealed full block; hybrid: a logical block's data block).
    Data,
    /// The page-mapped FTL's open block.
    Active,
    /// A hybrid FTL's log block.
    Log,
}

/// Free blocks (FIFO, which spreads wear) plus the role of every block, with the
/// valid-page count per block. Allocation-free after construction.
#[derive(Debug, Clone)]
pub(crate) struct Blocks {
    pub(crate) role: Vec<Role>,
    pub(crate) valid: Vec<u32>,
    free: VecDeque<u32>,
}

impl Blocks {
    /// Every block free, queued in an order shuffled by `seed`.
    pub(crate) fn new(blocks: u32, seed: u64) -> Self {
        let mut order: Vec<u32> = (0..blocks).collect();
        let mut rng = crate::sim::SplitMix64::new(seed);
        for i in (1..order.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        let mut free = VecDeque::with_capacity(blocks as usize);
        free.extend(order);
        Self {
            role: vec![Role::Free; blocks as usize],
            valid: vec![0; blocks as usize],
            free,
        }
    }

    /// Free blocks.
    #[inline]
    pub(crate) fn free_count(&self) -> usize {
        self.free.len()
    }

    /// Blocks with role `role`.
    pub(crate) fn count(&self, role: Role) -> usize {
        self.role.iter().filter(|&&r| r == role).count()
    }

    /// Takes a free block for `role`. Running out is a bug (geometry checks prevent it).
    #[inline]
    pub(crate) fn alloc(&mut self, role: Role) -> u32 {
        let Some(b) = self.free.pop_front() else {
            panic!("FTL bug: no free block left");
        };
        debug_assert_eq!(self.role[b as usize], Role::Free);
        debug_assert_eq!(self.valid[b as usize], 0);
        self.role[b as usize] = role;
        b
    }

    /// Erases `block` (which must hold no valid page) and returns it to the free queue.
    #[inline]
    pub(crate) fn release(&mut self, nand: &mut Nand, block: u32) {
        debug_assert_eq!(
            self.valid[block as usize], 0,
            "erasing block {block} with valid pages"
        );
        debug_assert_ne!(self.role[block as usize], Role::Free);
        nand.erase(block);
        self.role[block as usize] = Role::Free;
        self.free.push_back(block);
    }

    /// Checks the free queue against the roles: exact accounting.
    pub(crate) fn check(&self, nand: &Nand) -> Result<(), String> {
        let n = self.role.len();
        let mut seen = vec![false; n];
        for &b in &self.free {
            let i = b as usize;
            if i >= n {
                return Err(format!("free queue holds block {b} beyond {n}"));
            }
            if seen[i] {
                return Err(format!("block {b} is twice in the free queue"));
            }
            seen[i] = true;
            if self.role[i] != Role::Free {
                return Err(format!(
                    "block {b} is queued free but has role {:?}",
                    self.role[i]
                ));
            }
            if !nand.block_is_erased(b) {
                return Err(format!("free block {b} is not erased"));
            }
        }
        let free_roles = self.count(Role::Free);
        if free_roles != self.free.len() {
            return Err(format!(
                "{free_roles} blocks have the free role but {} are queued",
                self.free.len()
            ));
        }
        Ok(())
    }
}

/// The state every FTL keeps: its NAND array, the page-level location map of the newest
/// copies, the block pool and the FTL's own counters. The [`Ftl`](super::Ftl) trait's
/// common methods (reads, lookups, counters) are written once, on this type.
#[derive(Debug, Clone)]
pub struct FtlCore {
    /// Which FTL (its table name).
    pub(crate) name: &'static str,
    pub(crate) nand: Nand,
    /// Pages per block.
    pub(crate) ppb: u32,
    pub(crate) logical_pages: u32,
    /// Newest physical copy of each logical page ([`NONE`]: never written).
    pub(crate) loc: Vec<u32>,
    pub(crate) blocks: Blocks,
    /// The FTL's own counters (the flash counters are the array's).
    pub(crate) stats: FtlStats,
}

impl FtlCore {
    /// An empty FTL state over `nand` exporting `logical_pages` pages, every block free in
    /// an order shuffled by `seed`.
    pub(crate) fn new(name: &'static str, nand: Nand, logical_pages: u32, seed: u64) -> Self {
        let geo = nand.geometry();
        Self {
            name,
            ppb: geo.pages_per_block,
            logical_pages,
            loc: vec![NONE; logical_pages as usize],
            blocks: Blocks::new(geo.blocks, seed),
            stats: FtlStats::default(),
            nand,
        }
    }

    /// The FTL's name (`page-mapped`, `bast`, `fast`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Logical pages exported.
    pub fn logical_pages(&self) -> u32 {
        self.logical_pages
    }

    /// The NAND array.
    pub fn nand(&self) -> &Nand {
        &self.nand
    }

    /// The NAND array, mutably (to take recorded costs and reset counters).
    pub fn nand_mut(&mut self) -> &mut Nand {
        &mut self.nand
    }

    /// Reads `lpn`'s newest copy (a host read): its stamp, or `None` if never written.
    #[inline]
    pub fn read(&mut self, lpn: u32) -> Option<Stamp> {
        let ppn = self.loc[lpn as usize];
        if ppn == NONE {
            return None;
        }
        self.stats.host_reads += 1;
        Some(self.nand.read(ppn))
    }

    /// The physical page of `lpn`'s newest copy, recording nothing.
    pub fn lookup(&self, lpn: u32) -> Option<u32> {
        let p = *self.loc.get(lpn as usize)?;
        (p != NONE).then_some(p)
    }

    /// The FTL's counters with the array's flash counters.
    pub fn stats(&self) -> FtlStats {
        let c = self.nand.counters();
        FtlStats {
            flash_reads: c.reads,
            flash_programs: c.programs,
            erases: c.erases,
            ..self.stats
        }
    }

    /// Resets the counters (not the wear).
    pub fn reset_stats(&mut self) {
        self.stats = FtlStats::default();
        self.nand.reset_counters();
    }

    /// Drops one valid page from the block holding `lpn`'s newest copy (if any); the map
    /// entry is left for the caller to overwrite.
    #[inline]
    pub(crate) fn invalidate(&mut self, lpn: u32) {
        let old = self.loc[lpn as usize];
        if old != NONE {
            let b = (old / self.ppb) as usize;
            debug_assert!(self.blocks.valid[b] > 0);
            self.blocks.valid[b] -= 1;
        }
    }

    /// Programs `stamp` (a copy of `lpn`) at `ppn` and maps `lpn` there.
    #[inline]
    pub(crate) fn place(&mut self, lpn: u32, ppn: u32, stamp: Stamp) {
        self.nand.program(ppn, stamp);
        self.loc[lpn as usize] = ppn;
        self.blocks.valid[(ppn / self.ppb) as usize] += 1;
    }

    /// Copies `lpn`'s newest copy to `to` (a merge's page copy: one read, one program).
    #[inline]
    pub(crate) fn copy(&mut self, lpn: u32, to: u32) {
        let from = self.loc[lpn as usize];
        debug_assert_ne!(from, NONE);
        let s = self.nand.read(from);
        self.invalidate(lpn);
        self.place(lpn, to, s);
        self.stats.copied_pages += 1;
    }

    /// Hybrid FTLs: copies the newest copy of every written page of logical block `lbn`
    /// at the offsets `offs` into `block`, each at its own offset.
    pub(crate) fn fill_block(&mut self, lbn: u32, block: u32, offs: Range<u32>) {
        let base = lbn * self.ppb;
        for off in offs {
            let lpn = base + off;
            if lpn < self.logical_pages && self.loc[lpn as usize] != NONE {
                self.copy(lpn, block * self.ppb + off);
            }
        }
    }

    /// Hybrid FTLs: writes `lpn` in place if its page of the data block of its logical
    /// block (allocated on first use) is still erased; `false` if the write must go to a
    /// log block.
    #[inline]
    pub(crate) fn write_in_place(&mut self, data_blk: &mut [u32], lpn: u32, stamp: Stamp) -> bool {
        let (lbn, off) = (lpn / self.ppb, lpn % self.ppb);
        let mut data = data_blk[lbn as usize];
        if data == NONE {
            data = self.blocks.alloc(Role::Data);
            data_blk[lbn as usize] = data;
        }
        let home = data * self.ppb + off;
        if !self.nand.is_erased(home) {
            return false;
        }
        // Never written since the data block was formed: no other copy exists.
        debug_assert_eq!(self.loc[lpn as usize], NONE);
        self.place(lpn, home, stamp);
        true
    }

    /// Checks the location map (see [`check_location_map`]) and the free-block accounting.
    pub(crate) fn check_map(&self) -> Result<(), String> {
        check_location_map(&self.loc, &self.blocks, &self.nand)
    }

    /// Hybrid FTLs: every data block has the data role and its programmed pages hold their
    /// own offset of their own logical block. Returns the number of data blocks.
    pub(crate) fn check_data_blocks(&self, data_blk: &[u32]) -> Result<usize, String> {
        let ppb = self.ppb;
        let mut count = 0;
        for (lbn, &d) in data_blk.iter().enumerate() {
            if d == NONE {
                continue;
            }
            count += 1;
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
        Ok(count)
    }

    /// Hybrid FTLs: the roles agree with the maps' `logs` log and `data` data blocks, and
    /// every block is a data, log or free block.
    pub(crate) fn check_role_totals(&self, logs: usize, data: usize) -> Result<(), String> {
        let (logs_by_role, data_by_role) =
            (self.blocks.count(Role::Log), self.blocks.count(Role::Data));
        if logs_by_role != logs || data_by_role != data {
            return Err(format!(
                "roles: {logs_by_role} log / {data_by_role} data blocks, maps: {logs} / {data}"
            ));
        }
        if logs + data + self.blocks.free_count() != self.blocks.role.len() {
            return Err("data + log + free != blocks".to_string());
        }
        Ok(())
    }
}

/// Invariants shared by every FTL that keeps a page-level location map `loc` (logical page
/// to newest physical copy): every mapped page carries its logical page's stamp, no copy is
/// newer than the mapped one, unmapped pages have no copy, and each block's valid count is
/// the number of its pages that are some logical page's newest copy.
pub(crate) fn check_location_map(loc: &[u32], blocks: &Blocks, nand: &Nand) -> Result<(), String> {
    let ppb = nand.pages_per_block();
    let pages = nand.geometry().pages() as u32;
    for (lpn, &ppn) in loc.iter().enumerate() {
        if ppn == NONE {
            continue;
        }
        if ppn >= pages {
            return Err(format!("lpn {lpn} maps to ppn {ppn} beyond the array"));
        }
        let s = nand.stamp(ppn);
        if s.lpn != lpn as u32 {
            return Err(format!(
                "lpn {lpn} maps to ppn {ppn} which holds lpn {} (seq {})",
                s.lpn, s.seq
            ));
        }
        if blocks.role[(ppn / ppb) as usize] == Role::Free {
            return Err(format!("lpn {lpn} maps into free block {}", ppn / ppb));
        }
    }
    let mut valid = vec![0u32; blocks.role.len()];
    for ppn in 0..pages {
        let s = nand.stamp(ppn);
        if s.is_erased() {
            continue;
        }
        let Some(&m) = loc.get(s.lpn as usize) else {
            return Err(format!("ppn {ppn} holds lpn {} beyond the map", s.lpn));
        };
        if m == NONE {
            return Err(format!("ppn {ppn} holds a copy of unmapped lpn {}", s.lpn));
        }
        if m == ppn {
            valid[(ppn / ppb) as usize] += 1;
        } else if nand.stamp(m).seq < s.seq {
            return Err(format!(
                "lpn {} maps to ppn {m} (seq {}) but ppn {ppn} holds newer seq {}",
                s.lpn,
                nand.stamp(m).seq,
                s.seq
            ));
        }
    }
    for (b, (&counted, &kept)) in valid.iter().zip(&blocks.valid).enumerate() {
        if counted != kept {
            return Err(format!(
                "block {b}: {kept} valid pages recorded, {counted} counted"
            ));
        }
    }
    blocks.check(nand)
}
