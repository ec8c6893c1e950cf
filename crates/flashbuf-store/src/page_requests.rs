//! Page-sized device requests in a store's data mode ([`DataMode`]): whole pages of bytes,
//! or metadata-only requests that keep each page's place and length
//! ([`Device::write_head`]) — the one place stores choose between them.

use crate::StoreError;
use flashbuf_core::DataMode;
use flashbuf_device::{Device, DeviceError, HeadWrite, WriteOp};

/// What the data mode adds to a store's superblock configuration fingerprint (nothing for
/// whole pages, as every store formatted before the mode existed).
pub(crate) fn fingerprint_tag(data: DataMode) -> u64 {
    match data {
        DataMode::Bytes => 0,
        DataMode::Metadata => u64::from_le_bytes(*b"no-bytes"),
    }
}

/// Refuses a store whose superblock fingerprint (`stored`) is its configuration's (`base`,
/// without the tag) in the other data mode than `data`, saying so.
pub(crate) fn check_mode(stored: u64, base: u64, data: DataMode) -> Result<(), StoreError> {
    let other = match data {
        DataMode::Bytes => DataMode::Metadata,
        DataMode::Metadata => DataMode::Bytes,
    };
    if stored == base ^ fingerprint_tag(other) {
        return Err(StoreError::Format(format!(
            "the store was not formatted for --data {data}: a store keeps its pages' bytes or only their metadata for life"
        )));
    }
    Ok(())
}

/// Reads the `page_size`-byte range at `off` into `buf` (one page as callers exchange it).
pub(crate) fn read_page<D: Device + ?Sized>(
    dev: &D,
    data: DataMode,
    page_size: usize,
    off: u64,
    buf: &mut [u8],
) -> Result<(), DeviceError> {
    match data {
        DataMode::Bytes => dev.read_at(off, buf),
        DataMode::Metadata => dev.read_head(off, page_size, buf),
    }
}

/// Writes `page` as the `page_size`-byte range at `off`.
pub(crate) fn write_page<D: Device + ?Sized>(
    dev: &D,
    data: DataMode,
    page_size: usize,
    off: u64,
    page: &[u8],
) -> Result<(), DeviceError> {
    match data {
        DataMode::Bytes => dev.write_at(off, page),
        DataMode::Metadata => dev.write_head(off, page_size, page),
    }
}

/// Writes `(offset, page)` pairs as one device batch of `page_size`-byte ranges.
pub(crate) fn write_pages<D: Device + ?Sized>(
    dev: &D,
    data: DataMode,
    page_size: usize,
    pages: &[(u64, &[u8])],
) -> Result<(), DeviceError> {
    match data {
        DataMode::Bytes => {
            let ops: Vec<WriteOp<'_>> = pages
                .iter()
                .map(|&(offset, data)| WriteOp { offset, data })
                .collect();
            dev.write_batch(&ops)
        }
        DataMode::Metadata => {
            let ops: Vec<HeadWrite<'_>> = pages
                .iter()
                .map(|&(offset, head)| HeadWrite {
                    offset,
                    len: page_size,
                    head,
                })
                .collect();
            dev.write_heads(&ops)
        }
    }
}
