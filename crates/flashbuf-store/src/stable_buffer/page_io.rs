//! Page-sized device requests in the store's data mode.
//!
//! With whole pages ([`DataMode::Bytes`]) a slot or home copy is one page of bytes. With
//! metadata only ([`DataMode::Metadata`], `--data none`, issue 17) callers exchange
//! [`flashbuf_core::METADATA_PAGE_BYTES`]-byte pages; a slot image is the same header
//! rewrite over those bytes (`layout::encode_slot` checksums whatever the buffer holds),
//! and every request keeps its place and its whole page length
//! ([`Device::write_head`](flashbuf_device::Device::write_head)), so the device times and
//! counts what it would with bytes and every decision (slots, SBTT, patterns, flushes) is
//! the same. Bulk slot scans stay one byte read; each slot is decoded from its first
//! bytes, where the device keeps a metadata-only write's head.

use super::Inner;
use crate::{page_requests, StoreError};
#[cfg(doc)]
use flashbuf_core::DataMode;
use flashbuf_device::Device;

impl<D: Device> Inner<D> {
    /// Bytes of a page as callers exchange it.
    pub(super) fn buf_bytes(&self) -> usize {
        self.cfg.data.buffer_bytes(self.cfg.page_size)
    }

    /// Reads the page-sized range at `off` into `buf` (one page, as exchanged).
    pub(super) fn read_page_at(&self, off: u64, buf: &mut [u8]) -> Result<(), StoreError> {
        self.read_page_on(&self.dev, off, buf)
    }

    /// [`Inner::read_page_at`] through `dev` (the device or its background queue).
    pub(super) fn read_page_on(
        &self,
        dev: &dyn Device,
        off: u64,
        buf: &mut [u8],
    ) -> Result<(), StoreError> {
        let r = page_requests::read_page(dev, self.cfg.data, self.cfg.page_size, off, buf);
        self.poison.guard(r)
    }

    /// Writes `page` (one page, as exchanged) as the page-sized range at `off`.
    pub(super) fn write_page_at(&self, off: u64, page: &[u8]) -> Result<(), StoreError> {
        let r = page_requests::write_page(&self.dev, self.cfg.data, self.cfg.page_size, off, page);
        self.poison.guard(r)
    }

    /// Writes `(offset, page)` pairs as one batch of page-sized ranges through `dev`.
    pub(super) fn write_pages_on(
        &self,
        dev: &dyn Device,
        pages: &[(u64, &[u8])],
    ) -> Result<(), StoreError> {
        let r = page_requests::write_pages(dev, self.cfg.data, self.cfg.page_size, pages);
        self.poison.guard(r)
    }
}
