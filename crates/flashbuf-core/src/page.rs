//! The page header every flashbuf page carries, and its checksum.
//!
//! Byte layout of the first [`HEADER_BYTES`] bytes of a page (little-endian):
//!
//! | bytes  | field |
//! |--------|-------|
//! | 0..4   | CRC32C of bytes `4..page_size` |
//! | 4..8   | magic `b"FBPG"` |
//! | 8..16  | page id |
//! | 16..24 | version stamp (bumped by the pool each time it writes the page back) |
//! | 24..26 | header format version ([`HEADER_FORMAT`]) |
//! | 26..32 | reserved, zero |
//!
//! A page whose bytes are all zero has never been written ("unwritten"); stores return it
//! as such, never as data. Any other page must have a valid magic, the expected page id and
//! a matching checksum, or it is corrupt.
//!
//! Invariant: the pool seals a page (sets id, version, checksum) right before handing it to
//! a store; stores write exactly the bytes they are given and check them on every read.

use crate::PageId;
use thiserror::Error;

/// Size of the page header in bytes.
pub const HEADER_BYTES: usize = 32;
/// Magic bytes identifying a sealed flashbuf page.
pub const PAGE_MAGIC: [u8; 4] = *b"FBPG";
/// Current header format version.
pub const HEADER_FORMAT: u16 = 1;
/// Smallest supported page size in bytes.
pub const MIN_PAGE_SIZE: usize = 512;
/// Largest supported page size in bytes (dirty ranges are stored as 16-bit offsets).
pub const MAX_PAGE_SIZE: usize = 65536;

/// The decoded header of a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageHeader {
    /// Checksum stored in the page.
    pub checksum: u32,
    /// Page id stored in the page.
    pub page_id: PageId,
    /// Version stamp stored in the page.
    pub version: u64,
    /// Header format version.
    pub format: u16,
}

/// Why a page failed its check.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PageCheckError {
    /// The magic bytes are wrong and the page is not all zero.
    #[error("bad page magic {found:02x?}")]
    BadMagic {
        /// The four bytes found.
        found: [u8; 4],
    },
    /// The stored checksum does not match the page bytes.
    #[error("checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    Checksum {
        /// Checksum stored in the header.
        stored: u32,
        /// Checksum of the bytes read.
        computed: u32,
    },
    /// The page holds another page's id (a misdirected write or read).
    #[error("page holds {found} instead")]
    WrongPage {
        /// The id found in the header.
        found: PageId,
    },
    /// The header format version is not one this build understands.
    #[error("unknown page header format {found}")]
    Format {
        /// The format found.
        found: u16,
    },
    /// A valid copy of the page, but older than the version a completed sync promised
    /// (the promised copy was lost: a store that records its promises reports this).
    #[error("holds version {found}, older than version {promised} a completed sync promised (the promised copy is lost)")]
    Stale {
        /// The version found.
        found: u64,
        /// The version promised.
        promised: u64,
    },
    /// All bytes are zero, but the store recorded the page as written: its contents were
    /// lost at rest (a store that records which pages it wrote reports this).
    #[error("reads as all zeros, but it was written and synced (its contents were lost)")]
    Zeroed,
    /// The buffer is not a valid page size.
    #[error("page buffer of {len} bytes is not a supported page size")]
    Size {
        /// Length of the buffer.
        len: usize,
    },
}

/// What a successful check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageState {
    /// A sealed page with a valid checksum and the expected id.
    Sealed(PageHeader),
    /// All bytes are zero: the page has never been written.
    Unwritten,
}

/// Whether `len` is a supported page size (a power of two in
/// [`MIN_PAGE_SIZE`]..=[`MAX_PAGE_SIZE`]).
pub fn is_valid_page_size(len: usize) -> bool {
    len.is_power_of_two() && (MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&len)
}

/// Whether `len` is a page buffer [`seal`] and [`check`] take: a supported page size, or
/// a metadata-only page ([`crate::METADATA_PAGE_BYTES`], `--data none`).
pub fn is_valid_buffer_size(len: usize) -> bool {
    is_valid_page_size(len) || len == crate::METADATA_PAGE_BYTES
}

#[inline]
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Decodes the header without checking anything.
///
/// # Panics
/// If `page` is shorter than [`HEADER_BYTES`] (a programming error).
#[inline]
pub fn read_header(page: &[u8]) -> PageHeader {
    let mut c = [0u8; 4];
    c.copy_from_slice(&page[0..4]);
    PageHeader {
        checksum: u32::from_le_bytes(c),
        page_id: PageId(u64_at(page, 8)),
        version: u64_at(page, 16),
        format: u16::from_le_bytes([page[24], page[25]]),
    }
}

/// The version stamp stored in a page (0 for a fresh page).
#[inline]
pub fn version_of(page: &[u8]) -> u64 {
    u64_at(page, 16)
}

/// CRC32C (Castagnoli, "CRC-32/ISCSI") of `bytes`, hardware-accelerated (CLMUL folding
/// where the CPU has it).
#[inline]
pub fn crc32c(bytes: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if let Ok(b) = <&[u8; METADATA_CRC_BYTES]>::try_from(bytes) {
        if std::arch::is_x86_feature_detected!("sse4.2") {
            // SAFETY: the CPU has SSE4.2 (checked just above).
            return unsafe { crc32c_60_sse42(b) };
        }
    }
    // The Castagnoli CRC is 32 bits wide; the crate returns it in a u64.
    crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Iscsi, bytes) as u32
}

/// The bytes a metadata-only page's checksum covers (all but the checksum's 4).
const METADATA_CRC_BYTES: usize = crate::METADATA_PAGE_BYTES - 4;

/// CRC32C of exactly [`METADATA_CRC_BYTES`] bytes with the CPU's CRC32 instruction: one
/// 4-byte step and seven 8-byte steps, no dispatch or alignment loop (the checksum of a
/// metadata-only page is taken on every miss and write-back of a `--data none` replay).
/// The same value as `crc_fast` (the unit test compares them).
///
/// # Safety
/// The CPU must support SSE4.2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn crc32c_60_sse42(bytes: &[u8; METADATA_CRC_BYTES]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u32, _mm_crc32_u64};
    let (head, rest) = bytes.split_at(4);
    let mut h = [0u8; 4];
    h.copy_from_slice(head);
    let mut crc = u64::from(_mm_crc32_u32(!0, u32::from_le_bytes(h)));
    for w in rest.chunks_exact(8) {
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        crc = _mm_crc32_u64(crc, u64::from_le_bytes(a));
    }
    let crc = crc as u32;
    !crc
}

/// Computes the checksum a page should carry (CRC32C of every byte after the checksum).
#[inline]
pub fn compute_checksum(page: &[u8]) -> u32 {
    crc32c(&page[4..])
}

/// Writes the header fields (not the checksum) of a fresh, never-written page: magic, id,
/// version 0. The payload is left as is.
pub fn init_fresh(page: &mut [u8], pid: PageId) {
    write_fields(page, pid, 0);
    page[0..4].fill(0);
}

fn write_fields(page: &mut [u8], pid: PageId, version: u64) {
    page[4..8].copy_from_slice(&PAGE_MAGIC);
    page[8..16].copy_from_slice(&pid.0.to_le_bytes());
    page[16..24].copy_from_slice(&version.to_le_bytes());
    page[24..26].copy_from_slice(&HEADER_FORMAT.to_le_bytes());
    page[26..32].fill(0);
}

/// Seals a page for writing: sets id and `version`, then the checksum over the rest.
pub fn seal(page: &mut [u8], pid: PageId, version: u64) {
    debug_assert!(
        is_valid_buffer_size(page.len()),
        "page of {} bytes",
        page.len()
    );
    write_fields(page, pid, version);
    let c = compute_checksum(page);
    page[0..4].copy_from_slice(&c.to_le_bytes());
}

/// Whether every byte of `b` is zero (word-wise, with an early exit per 64 bytes).
#[inline]
pub fn is_all_zero(b: &[u8]) -> bool {
    let mut chunks = b.chunks_exact(64);
    let words_zero = chunks.by_ref().all(|c| {
        c.chunks_exact(8).fold(0u64, |acc, w| {
            let mut a = [0u8; 8];
            a.copy_from_slice(w);
            acc | u64::from_le_bytes(a)
        }) == 0
    });
    words_zero && chunks.remainder().iter().all(|&x| x == 0)
}

/// Checks a page read from a store: all-zero pages are [`PageState::Unwritten`]; otherwise
/// magic, format, page id and checksum must all be right.
pub fn check(page: &[u8], expected: PageId) -> Result<PageState, PageCheckError> {
    if !is_valid_buffer_size(page.len()) {
        return Err(PageCheckError::Size { len: page.len() });
    }
    let h = read_header(page);
    if page[4..8] != PAGE_MAGIC {
        if is_all_zero(page) {
            return Ok(PageState::Unwritten);
        }
        let mut found = [0u8; 4];
        found.copy_from_slice(&page[4..8]);
        return Err(PageCheckError::BadMagic { found });
    }
    let computed = compute_checksum(page);
    if computed != h.checksum {
        return Err(PageCheckError::Checksum {
            stored: h.checksum,
            computed,
        });
    }
    if h.format != HEADER_FORMAT {
        return Err(PageCheckError::Format { found: h.format });
    }
    if h.page_id != expected {
        return Err(PageCheckError::WrongPage { found: h.page_id });
    }
    Ok(PageState::Sealed(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_is_the_castagnoli_crc() {
        // The standard check value of CRC-32C.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        // The fixed-length path for metadata-only pages gives the crate's value.
        let mut b = [0u8; METADATA_CRC_BYTES + 1];
        for round in 0..200u32 {
            for (i, x) in b.iter_mut().enumerate() {
                *x = (i as u32 * 31 + round * 7919).wrapping_mul(2_654_435_761) as u8 ^ round as u8;
            }
            for bytes in [&b[..METADATA_CRC_BYTES], &b[1..]] {
                let want = crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Iscsi, bytes) as u32;
                assert_eq!(crc32c(bytes), want, "round {round}");
            }
        }
    }

    #[test]
    fn seal_then_check_roundtrips() {
        let mut p = vec![0u8; 4096];
        p[100] = 42;
        seal(&mut p, PageId(9), 3);
        match check(&p, PageId(9)) {
            Ok(PageState::Sealed(h)) => {
                assert_eq!(h.page_id, PageId(9));
                assert_eq!(h.version, 3);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn zero_test_sees_every_byte() {
        for len in [0usize, 1, 63, 64, 65, 4096] {
            let mut v = vec![0u8; len];
            assert!(is_all_zero(&v));
            for i in 0..len {
                v[i] = 1;
                assert!(!is_all_zero(&v), "byte {i} of {len}");
                v[i] = 0;
            }
        }
    }

    #[test]
    fn zero_page_is_unwritten() {
        let p = vec![0u8; 4096];
        assert_eq!(check(&p, PageId(1)), Ok(PageState::Unwritten));
    }

    #[test]
    fn every_single_bit_flip_is_caught() {
        let mut p = vec![0u8; 512];
        for (i, b) in p.iter_mut().enumerate() {
            *b = (i * 7) as u8;
        }
        seal(&mut p, PageId(5), 1);
        for bit in 0..p.len() * 8 {
            let mut q = p.clone();
            q[bit / 8] ^= 1 << (bit % 8);
            assert!(check(&q, PageId(5)).is_err(), "bit {bit} flip not caught");
        }
    }

    #[test]
    fn wrong_page_id_is_caught() {
        let mut p = vec![0u8; 1024];
        seal(&mut p, PageId(5), 1);
        assert_eq!(
            check(&p, PageId(6)),
            Err(PageCheckError::WrongPage { found: PageId(5) })
        );
    }

    #[test]
    fn garbage_has_bad_magic() {
        let p = vec![0xAAu8; 1024];
        assert!(matches!(
            check(&p, PageId(1)),
            Err(PageCheckError::BadMagic { .. })
        ));
        assert!(matches!(
            check(&p[..1000], PageId(1)),
            Err(PageCheckError::Size { len: 1000 })
        ));
    }
}
