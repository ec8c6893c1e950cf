//! Self-identifying page contents for crash tests.
//!
//! Payload layout (the bytes after the 32-byte page header), little-endian:
//!
//! | bytes | field |
//! |-------|-------|
//! | 0..8  | page id |
//! | 8..16 | tag: which write produced these bytes (a version, or a unique write number) |
//! | 16..  | bytes of that write (seeded, see [`fill`]) |
//!
//! A reader recovers the tag with [`stamp_of`] and compares the rest with what that write
//! put there; a page whose bytes match no single write is torn or mixed.

use flashbuf_core::page::{self, HEADER_BYTES};
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::PageId;

/// Bytes of the stamp (page id and tag) at the start of the payload.
pub const STAMP_BYTES: usize = 16;

/// Writes the stamp (`pid`, `tag`) into the first [`STAMP_BYTES`] of `payload`.
///
/// # Panics
/// If `payload` is shorter than [`STAMP_BYTES`] (a programming error).
pub fn write_stamp(payload: &mut [u8], pid: PageId, tag: u64) {
    payload[0..8].copy_from_slice(&pid.0.to_le_bytes());
    payload[8..16].copy_from_slice(&tag.to_le_bytes());
}

/// The stamp (`pid`, `tag`) of a payload, if it is long enough.
pub fn stamp_of(payload: &[u8]) -> Option<(PageId, u64)> {
    let p = payload.get(0..8)?;
    let t = payload.get(8..16)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(p);
    let mut b = [0u8; 8];
    b.copy_from_slice(t);
    Some((PageId(u64::from_le_bytes(a)), u64::from_le_bytes(b)))
}

fn stream_seed(seed: u64, pid: PageId, tag: u64) -> u64 {
    seed ^ pid.0.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ tag.rotate_left(32).wrapping_mul(0xD6E8_FEB8_6659_FD93)
}

/// Fills a whole payload with version `tag` of `pid`: the stamp, then bytes from a
/// generator seeded by (`seed`, `pid`, `tag`). The same arguments give the same bytes.
pub fn fill(payload: &mut [u8], pid: PageId, tag: u64, seed: u64) {
    write_stamp(payload, pid, tag);
    let mut rng = SplitMix64::new(stream_seed(seed, pid, tag));
    for chunk in payload[STAMP_BYTES..].chunks_mut(8) {
        let w = rng.next_u64().to_le_bytes();
        chunk.copy_from_slice(&w[..chunk.len()]);
    }
}

/// Whether `payload` is exactly what [`fill`] writes for (`pid`, `tag`, `seed`).
pub fn matches_fill(payload: &[u8], pid: PageId, tag: u64, seed: u64) -> bool {
    if stamp_of(payload) != Some((pid, tag)) {
        return false;
    }
    let mut rng = SplitMix64::new(stream_seed(seed, pid, tag));
    payload[STAMP_BYTES..].chunks(8).all(|chunk| {
        let w = rng.next_u64().to_le_bytes();
        chunk == &w[..chunk.len()]
    })
}

/// A sealed page of `page_size` bytes holding [`fill`]'s payload, header version `tag`.
pub fn filled_page(page_size: usize, pid: PageId, tag: u64, seed: u64) -> Vec<u8> {
    let mut p = vec![0u8; page_size];
    fill(&mut p[HEADER_BYTES..], pid, tag, seed);
    page::seal(&mut p, pid, tag);
    p
}

/// A sealed page of `page_size` bytes with `payload` (header version `version`).
///
/// # Panics
/// If `payload` is not `page_size - HEADER_BYTES` long (a programming error).
pub fn sealed_page(page_size: usize, pid: PageId, version: u64, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0u8; page_size];
    p[HEADER_BYTES..].copy_from_slice(payload);
    page::seal(&mut p, pid, version);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_is_deterministic_and_identifies_its_write() {
        let mut a = vec![0u8; 4064];
        fill(&mut a, PageId(7), 3, 42);
        assert_eq!(stamp_of(&a), Some((PageId(7), 3)));
        assert!(matches_fill(&a, PageId(7), 3, 42));
        assert!(!matches_fill(&a, PageId(7), 4, 42));
        assert!(!matches_fill(&a, PageId(7), 3, 43));
        a[2000] ^= 1;
        assert!(!matches_fill(&a, PageId(7), 3, 42));
        let mut odd = vec![0u8; 21];
        fill(&mut odd, PageId(1), 1, 1);
        assert!(matches_fill(&odd, PageId(1), 1, 1));
        assert_eq!(stamp_of(&[0u8; 5]), None);
        let p = filled_page(512, PageId(2), 9, 0);
        assert!(page::check(&p, PageId(2)).is_ok());
    }
}
