//! The stamp every block carries on the device, so that a block describes itself: a
//! write costs one page write, and recovery finds what was written after the checkpoint
//! without any other record.
//!
//! A block is the caller's sealed page with two header fields replaced:
//!
//! | bytes | in the page | in the block |
//! |---|---|---|
//! | 0..4 | page CRC32C of bytes 4.. | CRC32C of bytes 4.. (stamp included) XOR a mask of the store's salt and the block's address |
//! | 4..24 | magic, page id, version | unchanged |
//! | 24..29 | header format, reserved zeros | the block's sequence number (40 bits) |
//! | 29..32 | reserved zeros | `seq − synced`: every block with a smaller sequence than `synced` was durable when this one was written (24 bits; [`DELTA_UNKNOWN`] if further back, [`DELTA_DAMAGED`] for a copy of a damaged block) |
//!
//! A block is valid iff its magic is right and its checksum matches with *this* format's
//! salt at *this* address: a torn block fails the CRC, a block of an earlier format or
//! copied from elsewhere fails the mask (a false match has probability 2⁻³²). Reading a
//! block restores the page exactly: bytes 24..32 back to the header format and zeros, the
//! page CRC recomputed over the checked bytes. (Same scheme as the StableBuffer store's
//! slots, [`crate::stable_buffer::layout`].)

use super::layout::BlockAddr;
use flashbuf_core::page::{self, crc32c, HEADER_FORMAT, PAGE_MAGIC};
use flashbuf_core::rng::SplitMix64;

/// Largest sequence number (40 bits).
pub const SEQ_MAX: u64 = (1 << 40) - 1;
/// `seq − synced` too large to record: no promise is known.
pub const DELTA_UNKNOWN: u32 = 0xFF_FFFF;
/// The block is the cleaner's copy of a block that failed its checksum: reads report it
/// corrupt.
pub const DELTA_DAMAGED: u32 = 0xFF_FFFE;

/// What a valid block's stamp says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Page id.
    pub pid: u64,
    /// The page's version.
    pub version: u64,
    /// Sequence number.
    pub seq: u64,
    /// `seq − synced`, or one of the markers.
    pub delta: u32,
    /// The checksum stored in bytes 0..4.
    pub crc: u32,
}

impl Stamp {
    /// Every block with a smaller sequence was durable when this one was written (0 if
    /// unknown).
    pub fn synced(&self) -> u64 {
        if self.delta >= DELTA_DAMAGED {
            0
        } else {
            self.seq - u64::from(self.delta)
        }
    }

    /// The block is a copy of a damaged block.
    pub fn damaged(&self) -> bool {
        self.delta == DELTA_DAMAGED
    }
}

/// The mask of the block checksum at `addr`.
fn mask(salt: u64, addr: BlockAddr) -> u32 {
    let mut r = SplitMix64::new(salt ^ u64::from(addr.0).wrapping_mul(0xD6E8_FEB8_6659_FD93));
    r.next_u64() as u32
}

/// Turns sealed `page` (in place) into the block written at `addr` with sequence `seq`,
/// `synced` as the durable horizon (or a damaged copy); returns the stored checksum.
pub fn stamp(
    block: &mut [u8],
    salt: u64,
    addr: BlockAddr,
    seq: u64,
    synced: u64,
    damaged: bool,
) -> u32 {
    debug_assert!(seq <= SEQ_MAX && synced <= seq);
    let delta = if damaged {
        DELTA_DAMAGED
    } else {
        u32::try_from(seq - synced)
            .ok()
            .filter(|d| *d < DELTA_DAMAGED)
            .unwrap_or(DELTA_UNKNOWN)
    };
    block[24..29].copy_from_slice(&seq.to_le_bytes()[..5]);
    block[29..32].copy_from_slice(&delta.to_le_bytes()[..3]);
    let c = crc32c(&block[4..]) ^ mask(salt, addr);
    block[0..4].copy_from_slice(&c.to_le_bytes());
    c
}

/// The stamp of the block read at `addr`, if it is valid there.
pub fn check(block: &[u8], salt: u64, addr: BlockAddr) -> Option<Stamp> {
    if block[4..8] != PAGE_MAGIC {
        return None;
    }
    let stored = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
    if stored != crc32c(&block[4..]) ^ mask(salt, addr) {
        return None;
    }
    Some(read(block, stored))
}

/// The checksum a valid block at `addr` would store (for error messages).
pub fn expected_crc(block: &[u8], salt: u64, addr: BlockAddr) -> u32 {
    crc32c(&block[4..]) ^ mask(salt, addr)
}

/// The stamp fields of `block`, unchecked.
pub fn read(block: &[u8], crc: u32) -> Stamp {
    let h = page::read_header(block);
    let mut seq = [0u8; 8];
    seq[..5].copy_from_slice(&block[24..29]);
    let mut delta = [0u8; 4];
    delta[..3].copy_from_slice(&block[29..32]);
    Stamp {
        pid: h.page_id.0,
        version: h.version,
        seq: u64::from_le_bytes(seq),
        delta: u32::from_le_bytes(delta),
        crc,
    }
}

/// Restores a checked block into the page it was (header format, reserved zeros, page
/// checksum).
pub fn restore(block: &mut [u8]) {
    block[24..26].copy_from_slice(&HEADER_FORMAT.to_le_bytes());
    block[26..32].fill(0);
    let c = page::compute_checksum(block);
    block[0..4].copy_from_slice(&c.to_le_bytes());
}

/// Makes a damaged block's bytes a block for page `pid` at `version` that a later stamp
/// with `damaged = true` can carry (its payload stays as it was).
pub fn mark_for_damaged_copy(block: &mut [u8], pid: u64, version: u64) {
    block[4..8].copy_from_slice(&PAGE_MAGIC);
    block[8..16].copy_from_slice(&pid.to_le_bytes());
    block[16..24].copy_from_slice(&version.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_core::PageId;

    #[test]
    fn stamp_check_restore_roundtrip() {
        let mut p = vec![7u8; 512];
        page::seal(&mut p, PageId(9), 4);
        let orig = p.clone();
        let crc = stamp(&mut p, 11, BlockAddr(3), 1000, 990, false);
        let s = check(&p, 11, BlockAddr(3)).unwrap();
        assert_eq!(
            s,
            Stamp {
                pid: 9,
                version: 4,
                seq: 1000,
                delta: 10,
                crc
            }
        );
        assert_eq!(s.synced(), 990);
        assert!(check(&p, 12, BlockAddr(3)).is_none(), "another salt");
        assert!(check(&p, 11, BlockAddr(4)).is_none(), "another address");
        let mut torn = p.clone();
        torn[300] ^= 1;
        assert!(check(&torn, 11, BlockAddr(3)).is_none());
        restore(&mut p);
        assert_eq!(p, orig);
        let far = stamp(&mut p, 11, BlockAddr(3), SEQ_MAX, 1, false);
        assert_eq!(check(&p, 11, BlockAddr(3)).unwrap().crc, far);
        assert_eq!(check(&p, 11, BlockAddr(3)).unwrap().synced(), 0);
        stamp(&mut p, 11, BlockAddr(3), 5, 5, true);
        assert!(check(&p, 11, BlockAddr(3)).unwrap().damaged());
    }
}
