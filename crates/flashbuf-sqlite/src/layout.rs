//! Where SQLite's bytes sit in a flashbuf page, and the pages the VFS keeps for itself.
//!
//! SQLite's page size equals the store's page size `P`, and SQLite is told to reserve
//! [`RESERVED_BYTES`] (32) bytes at the end of every page (`SQLITE_FCNTL_RESERVE_BYTES`,
//! as the `cksumvfs` extension does for its checksum). SQLite never stores anything in
//! them, so flashbuf's 32-byte page header takes their place, moved to the front where
//! every flashbuf store expects it:
//!
//! ```text
//! SQLite page n (P bytes):  [ SQLite's usable bytes 0..P-32 ][ reserved 32 ]
//! flashbuf page (P bytes):  [ header 32 ][ SQLite's usable bytes 0..P-32 ]
//! ```
//!
//! On a write the reserved bytes SQLite hands over are dropped (the header is sealed in
//! their place); on a read SQLite gets zeros there. The VFS refuses to write a page 1
//! whose header does not declare page size `P` and exactly 32 reserved bytes, so SQLite's
//! data can never reach the bytes the header overwrites.
//!
//! Page ids: [`META_PAGES`] (2) pages hold the VFS's own record (database size in pages,
//! write epoch; two copies, see [`crate::meta`]); SQLite page `n` (1-based) is flashbuf
//! page `n + 1`, so the store sees SQLite's page numbers shifted by one.

use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::PageId;

/// Bytes SQLite reserves at the end of every page: flashbuf's page header.
pub const RESERVED_BYTES: usize = HEADER_BYTES;

/// Pages before SQLite's first page (the two copies of the VFS record).
pub const META_PAGES: u64 = 2;

/// The flashbuf page holding SQLite's page at 0-based index `index` (SQLite page
/// `index + 1`).
#[inline]
pub fn page_id(index: u64) -> PageId {
    PageId(index + META_PAGES)
}

/// Copies SQLite's usable bytes out of a flashbuf payload (`P - 32` bytes) into a whole
/// SQLite page `out` (`P` bytes); the reserved tail reads as zeros.
#[inline]
pub fn payload_to_sqlite(payload: &[u8], out: &mut [u8]) {
    let usable = out.len() - RESERVED_BYTES;
    debug_assert_eq!(payload.len(), usable);
    out[..usable].copy_from_slice(payload);
    out[usable..].fill(0);
}

/// SQLite's usable bytes of a whole SQLite page: what goes into the flashbuf payload.
#[inline]
pub fn sqlite_usable(page: &[u8]) -> &[u8] {
    &page[..page.len() - RESERVED_BYTES]
}

/// Checks SQLite's database header on page 1 (`page` is the whole page): the page size
/// must be `page_size` and the reserved bytes exactly [`RESERVED_BYTES`]. The error says
/// what was found.
pub fn check_page1(page: &[u8], page_size: usize) -> Result<(), String> {
    if page.len() < 100 || &page[..16] != b"SQLite format 3\0" {
        return Err("page 1 does not start with SQLite's database header".to_string());
    }
    let raw = u16::from_be_bytes([page[16], page[17]]);
    let declared = if raw == 1 { 65536 } else { usize::from(raw) };
    if declared != page_size {
        return Err(format!(
            "SQLite page size {declared}, the store's page size is {page_size} (set PRAGMA \
             page_size before the first table, or open through flashbuf_sqlite::Database)"
        ));
    }
    if usize::from(page[20]) != RESERVED_BYTES {
        return Err(format!(
            "page 1 reserves {} bytes per page; flashbuf's page header needs exactly \
             {RESERVED_BYTES} (SQLITE_FCNTL_RESERVE_BYTES before the first table, or open \
             through flashbuf_sqlite::Database)",
            page[20]
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page1(page_size: u16, reserved: u8) -> Vec<u8> {
        let mut p = vec![0u8; 4096];
        p[..16].copy_from_slice(b"SQLite format 3\0");
        p[16..18].copy_from_slice(&page_size.to_be_bytes());
        p[20] = reserved;
        p
    }

    #[test]
    fn page1_needs_the_page_size_and_32_reserved_bytes() {
        assert!(check_page1(&page1(4096, 32), 4096).is_ok());
        let e = check_page1(&page1(4096, 0), 4096).unwrap_err();
        assert!(e.contains("reserves 0 bytes"), "{e}");
        let e = check_page1(&page1(4096, 8), 4096).unwrap_err();
        assert!(e.contains("reserves 8 bytes"), "{e}");
        let e = check_page1(&page1(8192, 32), 4096).unwrap_err();
        assert!(e.contains("page size 8192"), "{e}");
        assert!(check_page1(&page1(1, 32), 65536).is_ok(), "1 means 65536");
        assert!(check_page1(&vec![0u8; 4096], 4096).is_err());
    }

    #[test]
    fn usable_bytes_round_trip_and_the_tail_reads_zero() {
        let mut sq = vec![7u8; 512];
        sq[..480]
            .iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = i as u8);
        let payload = sqlite_usable(&sq).to_vec();
        assert_eq!(payload.len(), 480);
        let mut back = vec![1u8; 512];
        payload_to_sqlite(&payload, &mut back);
        assert_eq!(&back[..480], &sq[..480]);
        assert!(back[480..].iter().all(|&b| b == 0));
        assert_eq!(page_id(0), PageId(2));
    }
}
