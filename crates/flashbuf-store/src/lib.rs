//! Page stores: the write paths under the buffer pool.
//!
//! A [`PageStore`] maps page ids to device I/O and owns its on-device format and recovery.
//! Implementations:
//! - [`DirectStore`]: in-place writes to a data area behind a superblock.
//! - [`StableBufferStore`]: pages staged in a small on-device area and flushed home in
//!   efficient write patterns ([`stable_buffer`]).
//! - [`IclStore`]: only the changed bytes of a page, as logs in a write-optimized buffer
//!   and a log space, merged home when they grow ([`icl`]).
//! - [`LogStore`]: pages written out of place into segments, with a cleaner
//!   ([`log_store`]).
//!
//! [`registry::STORES`] is the one table of stores (name, typed options, factory, crash
//! variants): the lab, `flashbuf check`/`torture` and every crash suite of the test kit
//! (crate `flashbuf-testkit`) build stores through it.
//!
//! Every store follows the durability contract of `design.md` §6: after
//! [`PageStore::sync`] returns, every page written before it survives a crash with exactly
//! its bytes; a page whose check fails is an error naming the page, never data; any device
//! error poisons the store (fail-stop) until it is reopened.

mod checks;
mod counters;
mod direct;
mod error;
mod forward;
mod growth;
pub mod icl;
pub mod log_store;
mod page_requests;
mod poison;
pub mod registry;
mod salt;
mod scratch;
pub mod stable_buffer;
pub mod state;
mod superblock;
mod written_map;

pub use direct::{DirectStore, DirectStoreConfig};
pub use error::StoreError;
/// The core crate, for [`forward_store!`]'s expansions in other crates.
#[doc(hidden)]
pub use flashbuf_core as __core;
pub use icl::{IclConfig, IclStore};
pub use log_store::{LogStore, LogStoreConfig};
pub use poison::Poison;
pub use registry::{StoreContext, StoreEntry, StoreFactory, STORES};
pub use stable_buffer::{StableBufferConfig, StableBufferStore};
pub use superblock::{Superblock, SUPERBLOCK_FORMAT, SUPERBLOCK_MAGIC};

use flashbuf_core::{DeviceStats, DirtyRanges, PageId};
use serde::Serialize;

/// What a page read found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOutcome {
    /// The page's last written bytes, checked.
    Found,
    /// The page has never been written; the buffer was zero-filled.
    Unwritten,
}

/// One page of a batch write.
#[derive(Debug, Clone, Copy)]
pub struct PageWrite<'a> {
    /// The page.
    pub pid: PageId,
    /// Its sealed bytes (exactly [`PageStore::page_size`] long).
    pub page: &'a [u8],
    /// Byte ranges modified since the store last saw this page (header included).
    pub dirty: DirtyRanges,
}

/// Counters of a store, in pages (device-level traffic is in [`PageStore::device_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StoreStats {
    /// Pages read by callers.
    pub page_reads: u64,
    /// Reads of pages never written.
    pub unwritten_reads: u64,
    /// Pages written by callers.
    pub page_writes: u64,
    /// `write_pages` calls.
    pub batches: u64,
    /// Completed syncs.
    pub syncs: u64,
}

/// A write path: page ids to device I/O.
///
/// # Contract
/// - Pages are self-describing (see `flashbuf_core::page`): callers hand over *sealed* pages
///   (`page::seal`); the store writes those bytes and, on every read, checks magic, page id
///   and checksum. A failed check is [`StoreError::Corrupt`] naming the page; the bytes are
///   never returned as data.
/// - `read_page` of a page never written fills `buf` with zeros and returns
///   [`ReadOutcome::Unwritten`].
/// - `write_page` / `write_pages` are not durable until a later `sync` returns `Ok`.
///   `dirty` tells the store which bytes changed since it last saw the page; stores that
///   write whole pages may ignore it.
/// - After any device error the store is poisoned: that call and every later one returns
///   an error ([`StoreError::Poisoned`] after the first) until the store is reopened.
/// - Methods take `&self`; a store is `Send + Sync` and serialises internally what it must.
///   Concurrent writes of the *same* page are the caller's race (the pool never does that).
pub trait PageStore: Send + Sync {
    /// Short name (`direct`, `stable-buffer`, ...).
    fn name(&self) -> &'static str;
    /// Page size in bytes.
    fn page_size(&self) -> usize;
    /// Reads and checks page `pid` into `buf` (`page_size` bytes).
    fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError>;
    /// Writes the sealed page `pid`.
    fn write_page(&self, pid: PageId, page: &[u8], dirty: &DirtyRanges) -> Result<(), StoreError>;
    /// Writes several pages; the default writes them one by one. Stores that can write a
    /// batch more efficiently (sorted, in one device batch) override it.
    fn write_pages(&self, batch: &[PageWrite<'_>]) -> Result<(), StoreError> {
        for w in batch {
            self.write_page(w.pid, w.page, &w.dirty)?;
        }
        Ok(())
    }
    /// A hint that `pid` will be read soon (PostgreSQL's `PrefetchBuffer`, an
    /// `fadvise(WILLNEED)`): the store may start moving its copy towards memory. It
    /// changes no result, counts nothing and may do nothing (the default); it never
    /// fails (a page it cannot place is simply not hinted).
    fn prefetch_page(&self, pid: PageId) {
        let _ = pid;
    }
    /// Makes every page written before the call durable.
    fn sync(&self) -> Result<(), StoreError>;
    /// Page counters.
    fn stats(&self) -> StoreStats;
    /// Counters of the device under the store (all traffic: data, staging, logs, GC).
    fn device_stats(&self) -> DeviceStats;
    /// Verifies internal invariants (tests and `--paranoid`); `Err` describes the first
    /// violation.
    fn check_invariants(&self) -> Result<(), String> {
        Ok(())
    }
    /// Store-specific figures for reports (`name`, value), in a fixed order: counters by
    /// kind (ICL: data-page and log-page reads and writes, merges, WOB bytes), write
    /// amplification, cleaning I/O, staging counters, memory, ... Names are snake case with
    /// the unit last (`log_writes`, `wob_bytes`). The lab prints them beside the run's
    /// result; wrappers forward them; empty by default.
    fn report(&self) -> Vec<(String, f64)> {
        Vec::new()
    }
}

impl<S: PageStore + ?Sized> PageStore for Box<S> {
    forward_store!(deref => name, page_size, read_page, write_page, write_pages,
                   prefetch_page, sync, stats, device_stats, check_invariants, report);
}

impl<S: PageStore + ?Sized> PageStore for std::sync::Arc<S> {
    forward_store!(deref => name, page_size, read_page, write_page, write_pages,
                   prefetch_page, sync, stats, device_stats, check_invariants, report);
}
