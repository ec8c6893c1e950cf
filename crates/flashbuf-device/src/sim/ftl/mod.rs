//! Flash translation layers behind one small trait.
//!
//! An [`Ftl`] owns its [`Nand`] array and maps logical pages (the host's address divided by
//! the flash page size) to physical pages. Each host page read or write goes through
//! [`Ftl::read`] / [`Ftl::write`]; the flash operations it causes (including garbage
//! collection and merges) are recorded in the array, from which the device takes them
//! ([`Nand::take_cost`]) to time the request. The FTLs model mapping and timing only; the
//! simulated device keeps the bytes in a flat logical image.
//!
//! Implementations, one file each, each declaring its entry of the table [`FTLS`] (name,
//! typed options, builder):
//! - [`PageMapFtl`] (`page_map.rs`): page-level mapping with greedy garbage collection.
//! - [`BastFtl`] (`bast.rs`): block-associative sector translation, Kim et al. 2002.
//! - [`FastFtl`] (`fast.rs`): fully-associative sector translation, Lee et al. 2007.
//!
//! They share [`FtlCore`] (`core.rs`): the array, the location map, the block pool and the
//! counters, so the [`Ftl`] trait's common methods are written once. A flash profile names
//! its FTL as an [`FtlConfig`] (`bast:log-blocks=32`); [`FtlKind`] is the built-in three as
//! a typed value. Adding an FTL: its file (with its `ENTRY`), one line in [`FTLS`] (and its
//! `mod`), its golden row (`tests/golden/ftls.golden`; see ARCHITECTURE.md).
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
mod core;
mod fast;
mod page_map;
mod table;

pub use self::core::FtlCore;
pub use bast::BastFtl;
pub use fast::FastFtl;
pub use page_map::PageMapFtl;
pub use table::{BuiltFtl, FtlConfig, FtlEntry};

pub(crate) use self::core::Role;

use super::nand::{Nand, Stamp};
use serde::{Deserialize, Serialize};

/// Every FTL the simulator runs, by name. Tests, golden rows and the `ftl=` option of the
/// flash profiles iterate this table.
pub const FTLS: &[FtlEntry] = &[page_map::ENTRY, bast::ENTRY, fast::ENTRY];

/// Names of the FTLs of [`FTLS`].
pub fn ftl_names() -> Vec<&'static str> {
    FTLS.iter().map(|e| e.name).collect()
}

/// The built-in FTLs with their parameters, as a typed value (tests, benches, profiles);
/// converts into the table's [`FtlConfig`] (`FtlConfig::try_from`).
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

/// A flash translation layer. See the module docs for the contract. An FTL implements the
/// mapping (`write`, `check_invariants`) and hands out its [`FtlCore`]; the rest is
/// provided.
pub trait Ftl: Send + std::fmt::Debug {
    /// The shared state (array, location map, blocks, counters).
    fn core(&self) -> &FtlCore;
    /// The shared state, mutably.
    fn core_mut(&mut self) -> &mut FtlCore;
    /// A copy of the whole state (array, map, blocks, counters, wear): what the simulated
    /// device's cache of preconditioned states hands out instead of preconditioning again.
    fn clone_box(&self) -> Box<dyn Ftl>;
    /// Writes logical page `lpn` as host write number `seq`.
    fn write(&mut self, lpn: u32, seq: u64);
    /// Verifies the whole state; the error names the first broken invariant.
    fn check_invariants(&self) -> Result<(), String>;

    /// Which FTL this is (its name in [`FTLS`]).
    fn name(&self) -> &'static str {
        self.core().name()
    }
    /// Logical pages the FTL exports.
    fn logical_pages(&self) -> u32 {
        self.core().logical_pages()
    }
    /// Reads logical page `lpn`: the newest copy's stamp, or `None` if never written.
    fn read(&mut self, lpn: u32) -> Option<Stamp> {
        self.core_mut().read(lpn)
    }
    /// The physical page holding `lpn`'s newest copy, without recording an operation.
    fn lookup(&self, lpn: u32) -> Option<u32> {
        self.core().lookup(lpn)
    }
    /// The NAND array.
    fn nand(&self) -> &Nand {
        self.core().nand()
    }
    /// The NAND array, mutably (to take recorded costs and reset counters).
    fn nand_mut(&mut self) -> &mut Nand {
        self.core_mut().nand_mut()
    }
    /// Counters (the flash counters are the array's).
    fn stats(&self) -> FtlStats {
        self.core().stats()
    }
    /// Resets the counters (not the wear).
    fn reset_stats(&mut self) {
        self.core_mut().reset_stats()
    }
}

/// Builds an FTL of `kind` over `nand` exporting `logical_pages` pages, with `seed`
/// choosing the initial order of the free blocks (through the table: see [`FtlConfig`]).
pub fn build_ftl(
    kind: FtlKind,
    nand: Nand,
    logical_pages: u32,
    seed: u64,
) -> Result<Box<dyn Ftl>, String> {
    FtlConfig::try_from(kind)
        .map_err(|e| e.to_string())?
        .build(nand, logical_pages, seed)
}
