//! Where everything lives on the device, and the identifiers of segments and blocks.
//!
//! ```text
//! | superblock | checkpoint slot 0 | checkpoint slot 1 | pad to align | segment 0 | segment 1 | ...
//! ```
//! - The superblock (`max(4096, page size)` bytes, [`Superblock`](crate::Superblock)) names
//!   the kind `log-structured`; its extra bytes hold this layout ([`Layout::encode_extra`])
//!   and its data offset is the first segment's byte offset.
//! - Two checkpoint slots of `slot_blocks` pages each, written alternately
//!   ([`super::checkpoint`]).
//! - `segments` segments of `segment_blocks` page-sized blocks, starting at a multiple of
//!   the alignment (so that segments line up with erase blocks). A block is addressed by a
//!   [`BlockAddr`]: `segment × segment_blocks + offset`.
//!
//! Format fields (refused on a mismatch when reopening): page size, blocks per segment,
//! segments, logical pages. Everything else (cleaner, knobs, time base) may change from
//! one open to the next.

use super::bytes::{le_u32, le_u64};
use crate::StoreError;
use std::fmt;

/// A segment's index, `0..segments`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SegmentId(pub u32);

impl fmt::Display for SegmentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "segment {}", self.0)
    }
}

/// A block's address: `segment × segment_blocks + offset within the segment`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlockAddr(pub u32);

impl fmt::Display for BlockAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "block {}", self.0)
    }
}

/// Bytes of the layout in the superblock's extra area.
const EXTRA_BYTES: usize = 40;

/// The store's geometry on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Page (block) size in bytes.
    pub page_size: usize,
    /// Blocks per segment.
    pub segment_blocks: u32,
    /// Segments.
    pub segments: u32,
    /// Page ids the store accepts: `0..logical_pages`.
    pub logical_pages: u64,
    /// Pages of one checkpoint slot.
    pub slot_blocks: u32,
    /// Byte offset of checkpoint slot 0 (slot 1 follows it).
    pub slot_offset: u64,
    /// Byte offset of segment 0.
    pub segment_offset: u64,
}

/// Bytes of a checkpoint's fixed header (before the map).
pub const CHECKPOINT_HEADER_BYTES: u64 = 128;
/// Bytes per segment in a checkpoint's usage table.
pub const USAGE_ENTRY_BYTES: u64 = 48;
/// Bytes per page in a checkpoint's map (and in memory): a [`BlockAddr`].
pub const MAP_ENTRY_BYTES: u64 = 4;

impl Layout {
    /// The layout of a store of `segments` segments of `segment_blocks` pages and
    /// `logical_pages` page ids, behind a superblock of `reserved` bytes, segments aligned
    /// to `align_bytes`.
    pub fn new(
        page_size: usize,
        segment_blocks: u32,
        segments: u32,
        logical_pages: u64,
        reserved: u64,
        align_bytes: u64,
    ) -> Self {
        let ps = page_size as u64;
        let slot_bytes = CHECKPOINT_HEADER_BYTES
            + logical_pages * MAP_ENTRY_BYTES
            + u64::from(segments) * USAGE_ENTRY_BYTES;
        let slot_blocks = slot_bytes.div_ceil(ps) as u32;
        let slot_offset = reserved;
        let end = slot_offset + 2 * u64::from(slot_blocks) * ps;
        let align = align_bytes.max(ps);
        let segment_offset = end.div_ceil(align) * align;
        Self {
            page_size,
            segment_blocks,
            segments,
            logical_pages,
            slot_blocks,
            slot_offset,
            segment_offset,
        }
    }

    /// Bytes of one segment.
    pub fn segment_bytes(&self) -> u64 {
        u64::from(self.segment_blocks) * self.page_size as u64
    }

    /// Bytes from the start of the device to the end of the last segment.
    pub fn total_bytes(&self) -> u64 {
        self.segment_offset + u64::from(self.segments) * self.segment_bytes()
    }

    /// Blocks of all segments.
    pub fn total_blocks(&self) -> u64 {
        u64::from(self.segments) * u64::from(self.segment_blocks)
    }

    /// Byte offset of checkpoint slot `slot` (0 or 1).
    pub fn slot_byte_offset(&self, slot: usize) -> u64 {
        self.slot_offset + slot as u64 * u64::from(self.slot_blocks) * self.page_size as u64
    }

    /// Bytes of one checkpoint slot.
    pub fn slot_bytes(&self) -> usize {
        self.slot_blocks as usize * self.page_size
    }

    /// Byte offset of block `offset` of `seg`.
    pub fn block_byte_offset(&self, seg: SegmentId, offset: u32) -> u64 {
        self.segment_offset
            + u64::from(seg.0) * self.segment_bytes()
            + u64::from(offset) * self.page_size as u64
    }

    /// The address of block `offset` of `seg`.
    pub fn addr(&self, seg: SegmentId, offset: u32) -> BlockAddr {
        debug_assert!(seg.0 < self.segments && offset < self.segment_blocks);
        BlockAddr(seg.0 * self.segment_blocks + offset)
    }

    /// The segment and offset of `addr`.
    pub fn split(&self, addr: BlockAddr) -> (SegmentId, u32) {
        (
            SegmentId(addr.0 / self.segment_blocks),
            addr.0 % self.segment_blocks,
        )
    }

    /// Byte offset of `addr`.
    pub fn addr_byte_offset(&self, addr: BlockAddr) -> u64 {
        let (s, o) = self.split(addr);
        self.block_byte_offset(s, o)
    }

    /// Fingerprint of the format fields (stored in the superblock; a mismatch is refused).
    pub fn fingerprint(&self) -> u64 {
        let mut b = Vec::with_capacity(24);
        b.extend_from_slice(&(self.page_size as u32).to_le_bytes());
        b.extend_from_slice(&self.segment_blocks.to_le_bytes());
        b.extend_from_slice(&self.segments.to_le_bytes());
        b.extend_from_slice(&self.logical_pages.to_le_bytes());
        let lo = flashbuf_core::page::crc32c(&b);
        b.reverse();
        let hi = flashbuf_core::page::crc32c(&b);
        u64::from(hi) << 32 | u64::from(lo)
    }

    /// The layout as superblock extra bytes.
    pub fn encode_extra(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(EXTRA_BYTES);
        b.extend_from_slice(&self.segment_blocks.to_le_bytes());
        b.extend_from_slice(&self.segments.to_le_bytes());
        b.extend_from_slice(&self.logical_pages.to_le_bytes());
        b.extend_from_slice(&self.slot_blocks.to_le_bytes());
        // Bytes 20..24: the data mode (`super::data::mark_extra`; 0 is bytes).
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&self.slot_offset.to_le_bytes());
        b.extend_from_slice(&self.segment_offset.to_le_bytes());
        b
    }

    /// Decodes and validates the layout in a superblock's extra bytes: every region must
    /// fit where the superblock says and agree with the sizes it implies, so that a
    /// damaged superblock cannot make the store allocate or address beyond the device.
    pub fn decode_extra(
        extra: &[u8],
        page_size: usize,
        data_offset: u64,
        reserved: u64,
    ) -> Result<Self, StoreError> {
        let bad = |m: String| Err(StoreError::Format(format!("log-structured layout: {m}")));
        if extra.len() != EXTRA_BYTES {
            return bad(format!(
                "{} extra bytes, expected {EXTRA_BYTES}",
                extra.len()
            ));
        }
        let u32_at = |at: usize| le_u32(extra, at);
        let u64_at = |at: usize| le_u64(extra, at);
        let l = Layout {
            page_size,
            segment_blocks: u32_at(0),
            segments: u32_at(4),
            logical_pages: u64_at(8),
            slot_blocks: u32_at(16),
            slot_offset: u64_at(24),
            segment_offset: u64_at(32),
        };
        if l.segment_blocks < MIN_SEGMENT_BLOCKS || l.segments < MIN_SEGMENTS {
            return bad(format!(
                "{} segments of {} blocks (at least {MIN_SEGMENTS} of {MIN_SEGMENT_BLOCKS})",
                l.segments, l.segment_blocks
            ));
        }
        if l.total_blocks() >= u64::from(u32::MAX) || l.logical_pages >= 1 << 40 {
            return bad(format!(
                "{} blocks and {} logical pages exceed the address space",
                l.total_blocks(),
                l.logical_pages
            ));
        }
        let expect = Layout::new(
            page_size,
            l.segment_blocks,
            l.segments,
            l.logical_pages,
            reserved,
            1,
        );
        if l.slot_offset != reserved || l.slot_blocks != expect.slot_blocks {
            return bad(format!(
                "checkpoint slots at byte {} of {} pages, expected byte {reserved} of {} pages",
                l.slot_offset, l.slot_blocks, expect.slot_blocks
            ));
        }
        if l.segment_offset != data_offset
            || l.segment_offset < expect.segment_offset
            || !l.segment_offset.is_multiple_of(page_size as u64)
        {
            return bad(format!(
                "segments at byte {} overlap the checkpoint slots or disagree with the data offset {data_offset}",
                l.segment_offset
            ));
        }
        Ok(l)
    }
}

/// Fewest blocks per segment (a summary and at least three data blocks).
pub const MIN_SEGMENT_BLOCKS: u32 = 4;
/// Fewest segments a store can clean with.
pub const MIN_SEGMENTS: u32 = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_do_not_overlap_and_roundtrip() {
        let l = Layout::new(4096, 2048, 10, 1000, 4096, 4 << 20);
        assert_eq!(l.slot_offset, 4096);
        assert!(l.slot_byte_offset(1) + l.slot_bytes() as u64 <= l.segment_offset);
        assert!(l.segment_offset.is_multiple_of(4 << 20));
        assert_eq!(
            l.addr_byte_offset(l.addr(SegmentId(2), 3)),
            l.segment_offset + 2 * (8 << 20) + 3 * 4096
        );
        assert_eq!(l.split(l.addr(SegmentId(9), 2047)), (SegmentId(9), 2047));
        let d = Layout::decode_extra(&l.encode_extra(), 4096, l.segment_offset, 4096).unwrap();
        assert_eq!(d, l);
        assert!(
            Layout::decode_extra(&l.encode_extra(), 4096, l.segment_offset + 4096, 4096).is_err()
        );
        let mut e = l.encode_extra();
        e[9] ^= 0x10; // 4,096 more logical pages: the slot size no longer matches
        assert!(Layout::decode_extra(&e, 4096, l.segment_offset, 4096).is_err());
        assert_ne!(l.fingerprint(), Layout { segments: 11, ..l }.fingerprint());
    }
}
