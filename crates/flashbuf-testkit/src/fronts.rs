//! What a crash scenario's operations go through: a [`Front`] — the store itself
//! ([`StoreFront`]), or a cache over it (the lab's `flashbuf_lab::torture::PoolFront` puts
//! a buffer pool there). [`crate::sim`] re-exports these names.

use crate::content::sealed_page;
use flashbuf_core::page::{HEADER_BYTES, MAX_PAGE_SIZE};
use flashbuf_core::{DirtyRanges, PageId, METADATA_PAGE_BYTES};
use flashbuf_store::{PageStore, PageWrite, ReadOutcome, StoreError};
use std::fmt;
use std::ops::Range;

/// An error from a [`Front`]: the store's own error (classified by the model), or any
/// other failure (a pool error, a broken contract).
#[derive(Debug)]
pub enum FrontError {
    /// The store's error.
    Store(StoreError),
    /// Anything else.
    Other(String),
}

impl fmt::Display for FrontError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrontError::Store(e) => write!(f, "{e}"),
            FrontError::Other(s) => f.write_str(s),
        }
    }
}

impl From<StoreError> for FrontError {
    fn from(e: StoreError) -> Self {
        FrontError::Store(e)
    }
}

/// What the operations go through: the store itself, or a cache over it.
///
/// Payloads are the page bytes after the header; `changed` lists the payload ranges this
/// write modified (the rest equals the page's previous payload).
pub trait Front {
    /// A short description for failure messages (`store`, `pool(4 frames)`).
    fn describe(&self) -> String;
    /// Writes (or modifies, in a cache) page `pid` to hold `payload`, tagged `tag`.
    fn write(
        &mut self,
        pid: PageId,
        tag: u64,
        payload: &[u8],
        changed: &[Range<usize>],
    ) -> Result<(), FrontError>;
    /// Writes several distinct pages (one store batch, if the front writes through).
    fn write_batch(&mut self, pages: &[BatchPage<'_>]) -> Result<(), FrontError>;
    /// Reads page `pid`'s payload into `payload`.
    fn read(&mut self, pid: PageId, payload: &mut [u8]) -> Result<ReadOutcome, FrontError>;
    /// Writes back what a cache holds (not durable yet); nothing for a store.
    fn flush(&mut self) -> Result<(), FrontError>;
    /// Makes every write before the call durable.
    fn sync(&mut self) -> Result<(), FrontError>;
    /// Whether a page the store reports corrupt can be overwritten through this front (a
    /// cache must read a page before modifying it, so it cannot).
    fn can_overwrite_corrupt(&self) -> bool;
    /// Internal invariants of the front (and the store under it).
    fn check_invariants(&self) -> Result<(), String>;
}

/// One page of [`Front::write_batch`].
#[derive(Debug, Clone)]
pub struct BatchPage<'a> {
    /// The page.
    pub pid: PageId,
    /// The write's tag.
    pub tag: u64,
    /// Its new payload.
    pub payload: &'a [u8],
    /// Payload ranges modified.
    pub changed: Vec<Range<usize>>,
}

/// The store as its own front: writes go straight to it (sealed, header version = tag).
pub struct StoreFront {
    store: Box<dyn PageStore>,
}

impl StoreFront {
    /// Wraps `store`.
    pub fn new(store: Box<dyn PageStore>) -> Self {
        Self { store }
    }

    /// The ranges a write of `payload_len` bytes changed, header included. A write of the
    /// whole payload to a metadata-only store changes the whole *logical* page: its mark
    /// runs to [`MAX_PAGE_SIZE`] as the pool's does (`touch_all`), and the store clips it
    /// to its page — without this, a scenario's whole-page writes would reach ICL as
    /// 64-byte changes and never as whole pages.
    fn dirty(&self, payload_len: usize, changed: &[Range<usize>]) -> DirtyRanges {
        let mut d = DirtyRanges::new();
        if self.store.page_size() == METADATA_PAGE_BYTES && is_whole(payload_len, changed) {
            d.add(0, MAX_PAGE_SIZE);
            return d;
        }
        d.add(0, HEADER_BYTES);
        for r in changed {
            d.add(HEADER_BYTES + r.start, r.len());
        }
        d
    }
}

impl Front for StoreFront {
    fn describe(&self) -> String {
        "store".to_string()
    }

    fn write(
        &mut self,
        pid: PageId,
        tag: u64,
        payload: &[u8],
        changed: &[Range<usize>],
    ) -> Result<(), FrontError> {
        let page = sealed_page(self.store.page_size(), pid, tag, payload);
        self.store
            .write_page(pid, &page, &self.dirty(payload.len(), changed))?;
        Ok(())
    }

    fn write_batch(&mut self, pages: &[BatchPage<'_>]) -> Result<(), FrontError> {
        let ps = self.store.page_size();
        let sealed: Vec<Vec<u8>> = pages
            .iter()
            .map(|p| sealed_page(ps, p.pid, p.tag, p.payload))
            .collect();
        let batch: Vec<PageWrite<'_>> = pages
            .iter()
            .zip(&sealed)
            .map(|(p, bytes)| PageWrite {
                pid: p.pid,
                page: bytes,
                dirty: self.dirty(p.payload.len(), &p.changed),
            })
            .collect();
        self.store.write_pages(&batch)?;
        Ok(())
    }

    fn read(&mut self, pid: PageId, payload: &mut [u8]) -> Result<ReadOutcome, FrontError> {
        let mut page = vec![0u8; self.store.page_size()];
        let r = self.store.read_page(pid, &mut page)?;
        payload.copy_from_slice(&page[HEADER_BYTES..]);
        Ok(r)
    }

    fn flush(&mut self) -> Result<(), FrontError> {
        Ok(())
    }

    fn sync(&mut self) -> Result<(), FrontError> {
        self.store.sync()?;
        Ok(())
    }

    fn can_overwrite_corrupt(&self) -> bool {
        true
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.store.check_invariants()
    }
}

/// Whether `changed` is the whole payload of `payload_len` bytes (a whole-page write).
pub fn is_whole(payload_len: usize, changed: &[Range<usize>]) -> bool {
    matches!(changed, [r] if r.start == 0 && r.end == payload_len)
}

/// Builds the front over a freshly created or reopened store.
pub type FrontBuilder<'a> = &'a dyn Fn(Box<dyn PageStore>) -> Result<Box<dyn Front>, FrontError>;

/// A front builder for [`StoreFront`].
pub fn store_front(store: Box<dyn PageStore>) -> Result<Box<dyn Front>, FrontError> {
    Ok(Box::new(StoreFront::new(store)))
}
