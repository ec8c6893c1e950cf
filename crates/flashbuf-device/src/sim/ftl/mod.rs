//! Flash translation layers behind one small trait.
//!
//! An [`Ftl`] owns its [`Nand`] array and maps logical pages (the host's address divided by
//! the flash page size) to physical pages. Each host page read or write goes through
//! [`Ftl::read`] / [`Ftl::write`]; the flash operations it causes (including garbage
//! collection and merges) are recorded in the array, from which the device takes them
//! ([`Nand::take_cost`]) to time the request. The FTLs model mapping and timing only; the
//! simulated device keeps the bytes in a flat logical image.
//!
//! Implementations, one file each:
//! - [`PageMapFtl`] (`page_map.rs`): page-level mapping with greedy garbage collection.
//! - [`BastFtl`] (`bast.rs`): block-associative sector translation, Kim et al. 2002.
//! - [`FastFtl`] (`fast.rs`): fully-associative sector translation, Lee et al. 2007.
//!
//! # Contract
//! - `write(lpn, seq)` makes `lpn`'s newest copy a page stamped `(lpn, seq)`; `seq` grows
//!   with every host write. `read(lpn)` returns the stamp of the newest copy, or `None` if
//!   the page was never written (no flash operation is recorded then).
//! - The FTL never runs out of space: construction refuses a geometry without enough spare
//!   blocks, and bugs panic.
//! - [`Ftl::check_invariants`] verifies the whole state: map consistency, newest copies,
//!   valid-page counts, exact free-block accounting. It is O(physical pages): for tests and
//!   the lab's `--paranoid` mode, not for hot paths.

mod bast;
mod fast;
mod page_map;

pub use bast::BastFtl;
pub use fast::FastFtl;
pub use page_map::PageMapFtl;

use super::nand::{Nand, Stamp, NONE};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Which FTL, with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum FtlKind {
    /// Page-level mapping with greedy garbage collection.
    PageMapped,
    /// BAST: at most `log_blocks` log blocks, each owned by one data block.
    Bast {
        /// Log blocks (each serves one logical block at a time).
        log_blocks: u32,
    },
    /// FAST: one sequential log block plus a pool of `random_log_blocks` shared log blocks.
    Fast {
        /// Blocks in the shared random-write log pool.
        random_log_blocks: u32,
    },
}

impl FtlKind {
    /// Short name (`page-mapped`, `bast`, `fast`).
    pub fn name(&self) -> &'static str {
        match self {
            FtlKind::PageMapped => "page-mapped",
            FtlKind::Bast { .. } => "bast",
            FtlKind::Fast { .. } => "fast",
        }
    }
}

/// Counters of an FTL.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FtlStats {
    /// Host page reads (of written pages).
    pub host_reads: u64,
    /// Host page writes (pages programmed on behalf of the host).
    pub host_programs: u64,
    /// Flash page reads, host and internal.
    pub flash_reads: u64,
    /// Flash page programs, host and internal.
    pub flash_programs: u64,
    /// Block erases.
    pub erases: u64,
    /// Valid pages copied by garbage collection or merges.
    pub copied_pages: u64,
    /// Garbage collections (page-mapped FTL: victim blocks reclaimed).
    pub gc_runs: u64,
    /// Switch merges (hybrid FTLs).
    pub switch_merges: u64,
    /// Partial merges (hybrid FTLs).
    pub partial_merges: u64,
    /// Full merges (hybrid FTLs; FAST counts one per data block merged).
    pub full_merges: u64,
}

impl FtlStats {
    /// Flash programs per host program (1.0 before any write).
    pub fn write_amplification(&self) -> f64 {
        if self.host_programs == 0 {
            1.0
        } else {
            self.flash_programs as f64 / self.host_programs as f64
        }
    }
}

/// A flash translation layer. See the module docs for the contract.
pub trait Ftl: Send + std::fmt::Debug {
    /// Which FTL this is.
    fn kind(&self) -> FtlKind;
    /// Logical pages the FTL exports.
    fn logical_pages(&self) -> u32;
    /// Writes logical page `lpn` as host write number `seq`.
    fn write(&mut self, lpn: u32, seq: u64);
    /// Reads logical page `lpn`: the newest copy's stamp, or `None` if never written.
    fn read(&mut self, lpn: u32) -> Option<Stamp>;
    /// The physical page holding `lpn`'s newest copy, without recording an operation.
    fn lookup(&self, lpn: u32) -> Option<u32>;
    /// The NAND array.
    fn nand(&self) -> &Nand;
    /// The NAND array, mutably (to take recorded costs and reset counters).
    fn nand_mut(&mut self) -> &mut Nand;
    /// Counters (the flash counters are the array's).
    fn stats(&self) -> FtlStats;
    /// Resets the counters (not the wear).
    fn reset_stats(&mut self);
    /// Verifies the whole state; the error names the first broken invariant.
    fn check_invariants(&self) -> Result<(), String>;
}

/// Builds an FTL of `kind` over `nand` exporting `logical_pages` pages, with `seed`
/// choosing the initial order of the free blocks.
pub fn build_ftl(
    kind: FtlKind,
    nand: Nand,
    logical_pages: u32,
    seed: u64,
) -> Result<Box<dyn Ftl>, String> {
    Ok(match kind {
        FtlKind::PageMapped => Box::new(PageMapFtl::new(nand, logical_pages, seed)?),
        FtlKind::Bast { log_blocks } => {
            Box::new(BastFtl::new(nand, logical_pages, log_blocks, seed)?)
        }
        FtlKind::Fast { random_log_blocks } => {
            Box::new(FastFtl::new(nand, logical_pages, random_log_blocks, seed)?)
        }
    })
}

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
        let free_roles = self.role.iter().filter(|&&r| r == Role::Free).count();
        if free_roles != self.free.len() {
            return Err(format!(
                "{free_roles} blocks have the free role but {} are queued",
                self.free.len()
            ));
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

/// Counters of the array plus the FTL's own.
pub(crate) fn merge_counters(mut s: FtlStats, nand: &Nand) -> FtlStats {
    let c = nand.counters();
    s.flash_reads = c.reads;
    s.flash_programs = c.programs;
    s.erases = c.erases;
    s
}
