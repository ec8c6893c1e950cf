//! On-device layout: where the staging area and the data area lie, the slot format, and
//! the superblock's store-specific bytes.
//!
//! ```text
//! 0                                  staging_offset                       data_offset
//! | superblock | state A | state B | pad | slot 0 | ... | slot n-1 | pad | page 0 | page 1 | ...
//! ```
//! The two state record copies ([`crate::state`]) hold the data extent and the promise
//! record ([`super::promise`]); each is [`Layout::state_copy_bytes`] long.
//! `staging_offset` and `data_offset` are multiples of the alignment chosen at format time
//! (default 4 MiB, so both areas start on erase-block boundaries). Page `p`'s home is
//! `data_offset + p × page_size`; slot `i` is `staging_offset + i × page_size`.
//!
//! # Slot format
//! A slot holds exactly one page (`page_size` bytes): the caller's sealed page with two
//! header fields replaced, so that staging costs one aligned page write.
//!
//! | bytes  | in the page                      | in the slot |
//! |--------|----------------------------------|-------------|
//! | 0..4   | page CRC32C of bytes 4..         | slot checksum: CRC32C of bytes 4.. XOR a 32-bit mask derived from the generation salt and the slot index |
//! | 4..26  | magic, page id (= destination), version, header format | unchanged |
//! | 26..32 | reserved, zero                   | staging sequence number (48 bits, little-endian) |
//!
//! A slot is valid iff its magic and header format are right and its checksum matches with
//! *this* format's salt and *this* slot's index: a torn slot fails the CRC, a slot left by
//! an earlier format of the device (another salt) or copied from another slot fails the
//! mask (a false match has probability 2^-32). Reading a slot restores the page exactly:
//! bytes 26..32 back to zero and the page CRC recomputed over the (checksum-verified) bytes.

use crate::StoreError;
use flashbuf_core::page::{self, HEADER_BYTES, HEADER_FORMAT, PAGE_MAGIC};
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::PageId;

/// Version of this layout (in the superblock's extra bytes and the fingerprint). Version
/// 2 (issue 11) adds the state record with the promise record before the staging area.
pub const LAYOUT_VERSION: u32 = 2;
/// Largest staging sequence number (48 bits).
pub const SEQ_MAX: u64 = (1 << 48) - 1;
const SEQ_AT: usize = 26;

/// Where things are on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Page size in bytes.
    pub page_size: usize,
    /// Slots in the staging area.
    pub slots: u32,
    /// Byte offset of slot 0.
    pub staging_offset: u64,
    /// Byte offset of page 0's home.
    pub data_offset: u64,
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

impl Layout {
    /// The layout a format with `slots` slots of `page_size` bytes gets, both areas aligned
    /// to `align` after a superblock of `reserved` bytes.
    pub fn new(page_size: usize, slots: u32, reserved: u64, align: u64) -> Self {
        let staging_offset = align_up(reserved, align);
        let staging_end = staging_offset + u64::from(slots) * page_size as u64;
        Self {
            page_size,
            slots,
            staging_offset,
            data_offset: align_up(staging_end, align),
        }
    }

    /// The layout [`StableBufferStore::create`](super::StableBufferStore::create) formats:
    /// `slots` slots after the superblock and the two state record copies, aligned to
    /// `align`.
    pub fn for_format(page_size: usize, slots: u32, align: u64) -> Self {
        let reserved = crate::Superblock::area_bytes(page_size, Self::state_copy_bytes(slots));
        Self::new(page_size, slots, reserved, align)
    }

    /// The most slots, at most `want`, whose layout leaves room for `data_pages` pages of
    /// data on a device of `max_bytes` (at least one slot: a store that cannot hold the
    /// data even then is refused by the writes that do not fit).
    pub fn fitting_slots(
        page_size: usize,
        want: u32,
        align: u64,
        data_pages: u64,
        max_bytes: u64,
    ) -> u32 {
        let ps = page_size as u64;
        let data = data_pages.saturating_mul(ps);
        let mut slots = want.max(1);
        while slots > 1 {
            let end = Self::for_format(page_size, slots, align)
                .data_offset
                .saturating_add(data);
            let Some(excess) = end.checked_sub(max_bytes).filter(|&e| e > 0) else {
                break;
            };
            let less = u32::try_from(excess.div_ceil(ps))
                .unwrap_or(u32::MAX)
                .max(1);
            slots = slots.saturating_sub(less).max(1);
        }
        slots
    }

    /// Bytes of one state record copy of a store with `slots` slots (room for the promise
    /// record's largest payload, then the written-page map's budget).
    pub fn state_copy_bytes(slots: u32) -> u64 {
        crate::state::copy_bytes_for(
            super::promise::payload_max(slots) + crate::written_map::BUDGET_BYTES,
        )
    }

    /// [`Self::state_copy_bytes`] of the format before the written-page map (refused with
    /// a message saying so).
    pub fn state_copy_bytes_before_map(slots: u32) -> u64 {
        crate::state::copy_bytes_for(super::promise::payload_max(slots))
    }

    /// Byte offset of slot `slot`.
    #[inline]
    pub fn slot_offset(&self, slot: u32) -> u64 {
        self.staging_offset + u64::from(slot) * self.page_size as u64
    }

    /// Byte offset of page `pid`'s home, if addressable.
    #[inline]
    pub fn home_offset(&self, pid: PageId) -> Option<u64> {
        pid.0
            .checked_mul(self.page_size as u64)
            .and_then(|o| o.checked_add(self.data_offset))
            .filter(|o| o.checked_add(self.page_size as u64).is_some())
    }

    /// Bytes of the staging area.
    pub fn staging_bytes(&self) -> u64 {
        u64::from(self.slots) * self.page_size as u64
    }

    /// The superblock's store-specific bytes.
    pub fn encode_extra(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(16);
        b.extend_from_slice(&LAYOUT_VERSION.to_le_bytes());
        b.extend_from_slice(&self.slots.to_le_bytes());
        b.extend_from_slice(&self.staging_offset.to_le_bytes());
        b
    }

    /// Decodes the superblock's store-specific bytes (with the data offset and page size
    /// from the superblock itself).
    pub fn decode_extra(
        extra: &[u8],
        page_size: usize,
        data_offset: u64,
    ) -> Result<Self, StoreError> {
        if extra.len() != 16 {
            return Err(StoreError::Format(format!(
                "stable-buffer superblock has {} extra bytes, expected 16",
                extra.len()
            )));
        }
        let u32_at =
            |i: usize| u32::from_le_bytes([extra[i], extra[i + 1], extra[i + 2], extra[i + 3]]);
        let version = u32_at(0);
        if version != LAYOUT_VERSION {
            return Err(StoreError::Format(format!(
                "stable-buffer layout version {version}, this build reads version {LAYOUT_VERSION}"
            )));
        }
        let mut o = [0u8; 8];
        o.copy_from_slice(&extra[8..16]);
        let l = Self {
            page_size,
            slots: u32_at(4),
            staging_offset: u64::from_le_bytes(o),
            data_offset,
        };
        if l.slots == 0
            || l.staging_offset
                .checked_add(l.staging_bytes())
                .is_none_or(|end| end > l.data_offset)
        {
            return Err(StoreError::Format(format!(
                "stable-buffer superblock describes an impossible layout ({} slots at byte {}, data at byte {})",
                l.slots, l.staging_offset, l.data_offset
            )));
        }
        Ok(l)
    }

    /// The configuration fingerprint: what must match for a reopen (layout version, page
    /// size, slot count).
    pub fn fingerprint(page_size: usize, slots: u32) -> u64 {
        let mut r = SplitMix64::new(
            u64::from(LAYOUT_VERSION) << 48 ^ (page_size as u64) << 32 ^ u64::from(slots),
        );
        r.next_u64()
    }
}

/// The 32-bit mask of slot `slot` under `salt`.
#[inline]
fn slot_mask(salt: u64, slot: u32) -> u32 {
    let mut r = SplitMix64::new(salt ^ u64::from(slot).wrapping_mul(0xA24B_AED4_963E_E407));
    (r.next_u64() >> 16) as u32
}

/// Turns the sealed page in `buf` into the image of slot `slot` with sequence `seq`.
///
/// The page must be sealed with zero reserved bytes (the writer checked it).
pub fn encode_slot(buf: &mut [u8], salt: u64, slot: u32, seq: u64) {
    debug_assert!(seq <= SEQ_MAX);
    debug_assert!(buf[SEQ_AT..HEADER_BYTES].iter().all(|&b| b == 0));
    buf[SEQ_AT..HEADER_BYTES].copy_from_slice(&seq.to_le_bytes()[..6]);
    let c = page::crc32c(&buf[4..]) ^ slot_mask(salt, slot);
    buf[0..4].copy_from_slice(&c.to_le_bytes());
}

/// What a valid slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotHeader {
    /// Destination page.
    pub dest: PageId,
    /// The page's version stamp.
    pub version: u64,
    /// Staging sequence number.
    pub seq: u64,
}

/// Why a slot is not valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotInvalid {
    /// All zero: never written since the format.
    Empty,
    /// Wrong magic or header format (garbage, or never a slot).
    NotASlot,
    /// The checksum does not match (torn, corrupt, another format's salt, another slot).
    Checksum,
}

/// Decodes and validates the image of slot `slot`.
pub fn decode_slot(buf: &[u8], salt: u64, slot: u32) -> Result<SlotHeader, SlotInvalid> {
    if buf[4..8] != PAGE_MAGIC || u16::from_le_bytes([buf[24], buf[25]]) != HEADER_FORMAT {
        return Err(if page::is_all_zero(buf) {
            SlotInvalid::Empty
        } else {
            SlotInvalid::NotASlot
        });
    }
    let stored = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]);
    if stored != page::crc32c(&buf[4..]) ^ slot_mask(salt, slot) {
        return Err(SlotInvalid::Checksum);
    }
    let h = page::read_header(buf);
    let mut s = [0u8; 8];
    s[..6].copy_from_slice(&buf[SEQ_AT..HEADER_BYTES]);
    Ok(SlotHeader {
        dest: h.page_id,
        version: h.version,
        seq: u64::from_le_bytes(s),
    })
}

/// Restores a validated slot image to the page it stages (zero reserved bytes, page CRC).
pub fn restore_page(buf: &mut [u8]) {
    buf[SEQ_AT..HEADER_BYTES].fill(0);
    let c = page::compute_checksum(buf);
    buf[0..4].copy_from_slice(&c.to_le_bytes());
}

/// Whether a sealed page has the zero reserved bytes the slot format needs.
pub fn reserved_is_zero(page: &[u8]) -> bool {
    page[SEQ_AT..HEADER_BYTES].iter().all(|&b| b == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed(pid: u64, version: u64) -> Vec<u8> {
        let mut p = vec![0u8; 512];
        p[100] = pid as u8;
        page::seal(&mut p, PageId(pid), version);
        p
    }

    #[test]
    fn slot_roundtrip_restores_the_exact_page() {
        let p = sealed(9, 4);
        let mut s = p.clone();
        encode_slot(&mut s, 77, 3, 123_456);
        let h = decode_slot(&s, 77, 3).unwrap();
        assert_eq!((h.dest, h.version, h.seq), (PageId(9), 4, 123_456));
        restore_page(&mut s);
        assert_eq!(s, p);
    }

    #[test]
    fn another_salt_or_slot_or_a_flip_is_invalid() {
        let mut s = sealed(9, 4);
        encode_slot(&mut s, 77, 3, 1);
        assert_eq!(decode_slot(&s, 78, 3), Err(SlotInvalid::Checksum));
        assert_eq!(decode_slot(&s, 77, 4), Err(SlotInvalid::Checksum));
        for i in (0..512).step_by(7) {
            let mut t = s.clone();
            t[i] ^= 0x10;
            assert!(decode_slot(&t, 77, 3).is_err(), "flip at {i}");
        }
        assert_eq!(decode_slot(&[0u8; 512], 77, 3), Err(SlotInvalid::Empty));
        assert_eq!(decode_slot(&[7u8; 512], 77, 3), Err(SlotInvalid::NotASlot));
        // A plain sealed page (as written home) is not a valid slot.
        assert!(decode_slot(&sealed(9, 4), 77, 3).is_err());
    }

    #[test]
    fn layout_is_aligned_and_roundtrips() {
        let l = Layout::new(8192, 512, 8192, 4 << 20);
        assert_eq!(l.staging_offset, 4 << 20);
        assert_eq!(l.data_offset, 8 << 20);
        assert_eq!(l.slot_offset(1), (4 << 20) + 8192);
        let d = Layout::decode_extra(&l.encode_extra(), 8192, l.data_offset).unwrap();
        assert_eq!(d, l);
        let small = Layout::new(512, 3, 4096, 512);
        assert_eq!(
            (small.staging_offset, small.data_offset),
            (4096, 4096 + 1536)
        );
        assert_ne!(Layout::fingerprint(512, 3), Layout::fingerprint(512, 4));
    }
}
