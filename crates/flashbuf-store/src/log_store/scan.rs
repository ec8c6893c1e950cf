//! Reading segments: a sealed segment's summary, and runs of blocks.

use super::layout::{Layout, SegmentId};
use super::summary::{self, SegmentSummary, SummaryError};
use flashbuf_core::AlignedBuf;
use flashbuf_device::{Device, DeviceError};

/// Reads and decodes `seg`'s summary (its last blocks, after `data_blocks` data blocks).
/// The outer error is the device's; the inner says why the blocks are not a summary.
pub(crate) fn read_summary<D: Device + ?Sized>(
    dev: &D,
    layout: &Layout,
    salt: u64,
    seg: SegmentId,
    data_blocks: u32,
) -> Result<Result<SegmentSummary, SummaryError>, DeviceError> {
    let k = layout.segment_blocks - data_blocks;
    let mut buf = AlignedBuf::zeroed(k as usize * layout.page_size, 4096);
    dev.read_at(layout.block_byte_offset(seg, data_blocks), &mut buf)?;
    Ok(summary::decode(&buf, salt, seg, layout.page_size))
}

/// Reads `n` consecutive blocks of `seg` from block `first` into `buf` (grown if needed),
/// as one byte request in either data mode (with metadata-only pages each block's image is
/// its first bytes: `super::data::block_image`).
pub(crate) fn read_blocks<D: Device + ?Sized>(
    dev: &D,
    layout: &Layout,
    seg: SegmentId,
    first: u32,
    n: u32,
    buf: &mut AlignedBuf,
) -> Result<(), DeviceError> {
    let len = n as usize * layout.page_size;
    if buf.len() < len {
        *buf = AlignedBuf::zeroed(len, 4096);
    }
    dev.read_at(layout.block_byte_offset(seg, first), &mut buf[..len])
}
