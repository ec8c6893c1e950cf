//! Data blocks on the device in each data mode, the mode in the superblock, and the check
//! of a block read for a caller.
//!
//! In [`DataMode::Bytes`] a data block is the whole stamped page. In
//! [`DataMode::Metadata`] it is the page's [`METADATA_PAGE_BYTES`]-byte image (header with
//! the stamp, and the lab's stamp), written and read as metadata-only requests of the
//! whole block ([`Device::write_head`], [`Device::write_heads`], [`Device::read_head`]), so
//! the device times and counts exactly what it would with bytes. A run of blocks read with
//! one byte request ([`super::scan::read_blocks`]) holds each block's head at the block's
//! start ([`block_image`]); the rest of the run is unspecified and never looked at.
//!
//! The superblock records the mode in the layout's reserved word ([`mark_extra`]) and in
//! its configuration fingerprint ([`fingerprint`]); a store formatted in one mode is
//! refused in the other ([`check_extra`]).

use super::config::LogStoreConfig;
use super::layout::{BlockAddr, Layout};
use super::stamp;
use crate::{page_requests, StoreError};
use flashbuf_core::page::{PageCheckError, PAGE_MAGIC};
#[cfg(doc)]
use flashbuf_core::METADATA_PAGE_BYTES;
use flashbuf_core::{DataMode, PageId};
use flashbuf_device::{Device, DeviceError};

/// Byte range of the layout's superblock extra bytes that holds the data mode.
const MODE_AT: std::ops::Range<usize> = 20..24;

/// The code of `data` in the superblock (0 for bytes, as every store formatted before the
/// mode existed).
fn mode_code(data: DataMode) -> u32 {
    match data {
        DataMode::Bytes => 0,
        DataMode::Metadata => 1,
    }
}

/// The superblock's configuration fingerprint of `layout` in mode `data` (the layout's
/// own for bytes).
pub(crate) fn fingerprint(layout: &Layout, data: DataMode) -> u64 {
    match data {
        DataMode::Bytes => layout.fingerprint(),
        DataMode::Metadata => layout.fingerprint() ^ page_requests::fingerprint_tag(data),
    }
}

/// Records `data` in the layout's superblock extra bytes.
pub(crate) fn mark_extra(extra: &mut [u8], data: DataMode) {
    if let Some(w) = extra.get_mut(MODE_AT) {
        w.copy_from_slice(&mode_code(data).to_le_bytes());
    }
}

/// Refuses a store whose superblock extra bytes record another mode than `data`.
pub(crate) fn check_extra(extra: &[u8], data: DataMode) -> Result<(), StoreError> {
    let code = extra
        .get(MODE_AT)
        .map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
    let formatted = [DataMode::Bytes, DataMode::Metadata]
        .into_iter()
        .find(|&m| mode_code(m) == code);
    match formatted {
        Some(m) if m == data => Ok(()),
        Some(m) => Err(StoreError::Format(format!(
            "the log-structured store was formatted for --data {m}, not --data {data}: a store keeps its pages' bytes or only their metadata for life"
        ))),
        None => Err(StoreError::Format(format!(
            "log-structured layout: unknown data mode {code}: the store is corrupt"
        ))),
    }
}

/// Writes queued block images (`buf` holds one image of `cfg.block_bytes()` per offset,
/// in order) with one device request of whole blocks.
pub(crate) fn write_blocks<D: Device + ?Sized>(
    dev: &D,
    cfg: &LogStoreConfig,
    offsets: &[u64],
    buf: &[u8],
) -> Result<(), DeviceError> {
    let (ps, bb) = (cfg.page_size, cfg.block_bytes());
    let image = |i: usize| &buf[i * bb..(i + 1) * bb];
    if let &[offset] = offsets {
        return page_requests::write_page(dev, cfg.data, ps, offset, image(0));
    }
    let pages: Vec<(u64, &[u8])> = offsets
        .iter()
        .enumerate()
        .map(|(i, &offset)| (offset, image(i)))
        .collect();
    page_requests::write_pages(dev, cfg.data, ps, &pages)
}

/// Reads the block at byte `offset` into `buf` (`cfg.block_bytes()` long) as one request
/// of a whole block.
pub(crate) fn read_block<D: Device + ?Sized>(
    dev: &D,
    cfg: &LogStoreConfig,
    offset: u64,
    buf: &mut [u8],
) -> Result<(), DeviceError> {
    page_requests::read_page(dev, cfg.data, cfg.page_size, offset, buf)
}

/// Block `i`'s image in a run of blocks of `page_size` bytes read with one byte request:
/// its first `block_bytes` bytes (see the module docs).
pub(crate) fn block_image(buf: &[u8], page_size: usize, block_bytes: usize, i: usize) -> &[u8] {
    &buf[i * page_size..i * page_size + block_bytes]
}

/// [`block_image`], mutable.
pub(crate) fn block_image_mut(
    buf: &mut [u8],
    page_size: usize,
    block_bytes: usize,
    i: usize,
) -> &mut [u8] {
    &mut buf[i * page_size..i * page_size + block_bytes]
}

/// Checks a block read for `pid` at `addr`: `Ok` restores the caller's page in `block`;
/// `Err` says why the block is not page `pid` (the caller zeroes it).
pub(crate) fn check_read(
    block: &mut [u8],
    salt: u64,
    addr: BlockAddr,
    pid: PageId,
) -> Result<(), PageCheckError> {
    match stamp::check(block, salt, addr) {
        Some(s) if s.pid != pid.0 => Err(PageCheckError::WrongPage {
            found: PageId(s.pid),
        }),
        // The cleaner's copy of a block that had failed its checksum.
        Some(s) if s.damaged() => Err(PageCheckError::Checksum {
            stored: s.crc,
            computed: 0,
        }),
        Some(_) => {
            stamp::restore(block);
            Ok(())
        }
        None if block[4..8] != PAGE_MAGIC => {
            let mut found = [0u8; 4];
            found.copy_from_slice(&block[4..8]);
            Err(PageCheckError::BadMagic { found })
        }
        None => Err(PageCheckError::Checksum {
            stored: u32::from_le_bytes([block[0], block[1], block[2], block[3]]),
            computed: stamp::expected_crc(block, salt, addr),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_roundtrips_through_the_extra_bytes() {
        let l = Layout::new(4096, 16, 8, 64, 4096, 4096);
        for data in [DataMode::Bytes, DataMode::Metadata] {
            let mut extra = l.encode_extra();
            mark_extra(&mut extra, data);
            check_extra(&extra, data).unwrap();
            let other = if data == DataMode::Bytes {
                DataMode::Metadata
            } else {
                DataMode::Bytes
            };
            let e = check_extra(&extra, other).unwrap_err().to_string();
            assert!(e.contains(&format!("--data {data}")), "{e}");
            assert_ne!(fingerprint(&l, data), fingerprint(&l, other));
        }
        assert_eq!(fingerprint(&l, DataMode::Bytes), l.fingerprint());
        let mut extra = l.encode_extra();
        extra[20] = 7;
        assert!(check_extra(&extra, DataMode::Bytes).is_err());
        assert_eq!(
            l.encode_extra()[MODE_AT],
            [0; 4],
            "bytes mode is the old format"
        );
    }
}
