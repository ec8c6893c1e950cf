//! The crash-consistency harness every store must pass (issue 6), public so that the
//! store tests, the lab's `flashbuf torture` and later stores share one implementation.
//!
//! Modelled on redb's crash backend and SQLite's crash VFS: a store runs over a
//! [`FaultDevice`](flashbuf_device::fault::FaultDevice) that keeps a *live* and a *durable*
//! image; at a crash point the harness builds the images a power cut could leave
//! ([`CrashMode`](flashbuf_device::fault::CrashMode): nothing unsynced, everything, a prefix,
//! a seeded subset in any order, each write possibly torn at 512 B or 4 KB sectors with old
//! bytes or garbage), reopens the store on each and checks every page against a [`Model`](model::Model).
//!
//! - [`StoreFactory`] / [`STORES`]: how the harness creates and reopens each store. **A new
//!   store joins every suite (crash, fail-stop, fuzzed open, `flashbuf torture`) with one
//!   entry in [`STORES`]**: a name and two functions, `create(device, page_size)` and
//!   `open(device, page_size)`.
//! - [`content`]: self-identifying page payloads (page id and a tag in the first 16 bytes,
//!   seeded bytes after), so a reader can tell which write a page came from.
//! - [`model`]: what each page may hold after a crash (design.md §6), and the verdicts.
//! - [`sim`]: operation sequences (writes, batches, reads, flushes, syncs, crashes) run
//!   through a [`sim::Front`] (the store itself, or a buffer pool over it) against the
//!   model, with every crash point verified under several crash modes.
//!
//! # The model ("old or new")
//! For each page the model keeps its *durable* state (as of the last completed `sync`, or
//! as observed after the last recovery) and the versions written since. After a crash a
//! read must return exactly one of: the durable state (old), any version written since
//! (new — not only the last: a crash may persist an earlier write of the page and lose a
//! later one), or — only if the page was written since the durable point — a
//! [`crate::StoreError::Corrupt`] error (a torn write the store
//! detected and refused to return). Anything else is a violation: lost synced data, a page
//! whose bytes match no single write (torn or mixed), a version older than the durable one,
//! a phantom (data in a page never written), or a corrupt page that was synced.
//!
//! Nothing here panics on a store's misbehaviour: violations come back as values, so the
//! lab can report them and proptest can shrink them.

pub mod content;
pub mod model;
pub mod sim;

use crate::log_store::{CleanerConfig, CleanerKind, LogStore, LogStoreConfig, TimeBase};
use crate::stable_buffer::{FlushMode, Recognition, StableBufferConfig, StableBufferStore};
use crate::{DirectStore, DirectStoreConfig, PageStore, StoreError};
use flashbuf_device::Device;

/// Creates a fresh store of `page_size` on a device (formatting it).
pub type CreateFn = fn(Box<dyn Device>, usize) -> Result<Box<dyn PageStore>, StoreError>;
/// Opens (and recovers) an existing store of `page_size` on a device.
pub type OpenFn = fn(Box<dyn Device>, usize) -> Result<Box<dyn PageStore>, StoreError>;

/// How the harness builds one store.
#[derive(Debug, Clone, Copy)]
pub struct StoreFactory {
    /// The store's name (as in the lab: `direct`, `stable-buffer`, ...).
    pub name: &'static str,
    /// Formats a device.
    pub create: CreateFn,
    /// Opens and recovers a device.
    pub open: OpenFn,
    /// Whether the store hides torn writes entirely: after any crash a page is old or new,
    /// never reported corrupt (StableBuffer: a torn staged copy fails its slot checksum and
    /// recovery falls back to the previous valid copy). The suites then assert that no
    /// page ever comes back corrupt; for other stores they assert that torn unsynced
    /// writes are seen (and reported as corrupt, never returned).
    pub masks_torn_writes: bool,
}

impl StoreFactory {
    /// Formats `dev` as a fresh store.
    pub fn create(
        &self,
        dev: Box<dyn Device>,
        page_size: usize,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        (self.create)(dev, page_size)
    }

    /// Opens and recovers the store on `dev`.
    pub fn open(
        &self,
        dev: Box<dyn Device>,
        page_size: usize,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        (self.open)(dev, page_size)
    }
}

/// Bytes the direct store grows by in the harness (small, so crash images stay small).
const DIRECT_GROW_PAGES: u64 = 8;

fn direct_config(page_size: usize) -> DirectStoreConfig {
    DirectStoreConfig {
        page_size,
        grow_bytes: DIRECT_GROW_PAGES * page_size as u64,
    }
}

fn direct_create(dev: Box<dyn Device>, page_size: usize) -> Result<Box<dyn PageStore>, StoreError> {
    Ok(Box::new(DirectStore::create(
        dev,
        direct_config(page_size),
    )?))
}

fn direct_open(dev: Box<dyn Device>, page_size: usize) -> Result<Box<dyn PageStore>, StoreError> {
    Ok(Box::new(DirectStore::open(dev, direct_config(page_size))?))
}

/// StableBuffer with a small staging area (16 slots), so that crash points fall into
/// flushes often, with the given recognition method (passive flushing: the background
/// flusher's own crash suite is in `tests/stable_buffer_crash.rs`).
fn stable_buffer_config(page_size: usize, recognition: Recognition) -> StableBufferConfig {
    StableBufferConfig {
        staging_bytes: 16 * page_size as u64,
        recognition,
        flush: FlushMode::Passive,
        // Small growth steps keep crash images (copied at every crash point) small.
        grow_bytes: DIRECT_GROW_PAGES * page_size as u64,
        ..StableBufferConfig::with_page_size(page_size)
    }
}

fn sb_create(dev: Box<dyn Device>, page_size: usize) -> Result<Box<dyn PageStore>, StoreError> {
    let cfg = stable_buffer_config(page_size, Recognition::OnDemand);
    Ok(Box::new(StableBufferStore::create(dev, cfg)?))
}

fn sb_open(dev: Box<dyn Device>, page_size: usize) -> Result<Box<dyn PageStore>, StoreError> {
    let cfg = stable_buffer_config(page_size, Recognition::OnDemand);
    Ok(Box::new(StableBufferStore::open(dev, cfg)?))
}

fn sbi_create(dev: Box<dyn Device>, page_size: usize) -> Result<Box<dyn PageStore>, StoreError> {
    let cfg = stable_buffer_config(page_size, Recognition::Incremental);
    Ok(Box::new(StableBufferStore::create(dev, cfg)?))
}

fn sbi_open(dev: Box<dyn Device>, page_size: usize) -> Result<Box<dyn PageStore>, StoreError> {
    let cfg = stable_buffer_config(page_size, Recognition::Incremental);
    Ok(Box::new(StableBufferStore::open(dev, cfg)?))
}

/// The log-structured store with small segments (8 blocks) so that crash points fall into
/// log writes, cleaning and checkpoints often: SepBIT's six heads (the most involved
/// write path), the `writes` clock (deterministic), eager background cleaning and a
/// checkpoint every two segments. 40 segments hold the 128 pages `flashbuf torture` uses.
pub fn log_store_config(page_size: usize) -> LogStoreConfig {
    let segment_bytes = 8 * page_size as u64;
    let layout_pad = 64 * page_size as u64;
    LogStoreConfig {
        segment_bytes,
        capacity_bytes: Some(layout_pad + 40 * segment_bytes),
        logical_pages: Some(256),
        align_bytes: page_size as u64,
        cleaner: CleanerConfig {
            kind: CleanerKind::SepBit,
            cleaning_interval_ticks: 4.0,
            segments_per_clean: 2,
            protection_period_ticks: 2.0,
            min_free_segments: Some(28),
            max_free_segments: Some(32),
            background: true,
        },
        time_base: TimeBase::Writes,
        checkpoint_segments: Some(2),
        salt: Some(0x106_5701e),
        ..LogStoreConfig::with_page_size(page_size)
    }
}

fn log_create(dev: Box<dyn Device>, page_size: usize) -> Result<Box<dyn PageStore>, StoreError> {
    Ok(Box::new(LogStore::create(
        dev,
        log_store_config(page_size),
    )?))
}

fn log_open(dev: Box<dyn Device>, page_size: usize) -> Result<Box<dyn PageStore>, StoreError> {
    Ok(Box::new(LogStore::open(dev, log_store_config(page_size))?))
}

/// Every store the suites run. Add a store here (one entry) and it joins them all.
pub const STORES: &[StoreFactory] = &[
    StoreFactory {
        name: "direct",
        create: direct_create,
        open: direct_open,
        masks_torn_writes: false,
    },
    StoreFactory {
        name: "stable-buffer",
        create: sb_create,
        open: sb_open,
        masks_torn_writes: true,
    },
    StoreFactory {
        name: "stable-buffer-incremental",
        create: sbi_create,
        open: sbi_open,
        masks_torn_writes: true,
    },
    StoreFactory {
        name: "log-structured",
        create: log_create,
        open: log_open,
        masks_torn_writes: true,
    },
];

/// The store named `name`; the error lists the names known.
pub fn store_by_name(name: &str) -> Result<&'static StoreFactory, String> {
    STORES.iter().find(|s| s.name == name).ok_or_else(|| {
        format!(
            "no crash-test factory for store '{name}'; known: {}",
            store_names().join(", ")
        )
    })
}

/// Names of the stores in [`STORES`].
pub fn store_names() -> Vec<&'static str> {
    STORES.iter().map(|s| s.name).collect()
}
