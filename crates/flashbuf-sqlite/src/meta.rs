//! The VFS's own record: SQLite's file size and the write epoch, in two copies.
//!
//! A store knows pages, not file sizes, so the VFS keeps SQLite's database size (in
//! pages) itself, with the *epoch* that orders the version stamps of pages it seals
//! (pass-through mode: a page written in epoch `e` carries version `e << 32 | n`, so a
//! later write always carries a larger version than any earlier one, across reopenings,
//! which stores comparing versions during recovery rely on).
//!
//! The record lives in flashbuf pages 0 and 1 (the payload after the page header; the
//! header's CRC32C covers it). Record number `seq` goes to page `seq % 2`, so a torn
//! write of one copy leaves the other, older one intact; opening takes the valid copy
//! with the larger `seq`. Payload layout (little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `b"FBSQLVFS"` |
//! | 8..12 | format ([`META_FORMAT`]) |
//! | 12..16 | page size |
//! | 16..24 | `seq` (record number) |
//! | 24..32 | database size in pages |
//! | 32..40 | epoch |

/// Magic of the record.
pub const META_MAGIC: [u8; 8] = *b"FBSQLVFS";
/// Record format version.
pub const META_FORMAT: u32 = 1;
/// Bytes of the record.
pub const META_BYTES: usize = 40;

/// One copy of the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Meta {
    /// Record number (copy `seq % 2`).
    pub seq: u64,
    /// SQLite's database size in pages.
    pub db_pages: u64,
    /// Write epoch: bumped (durably) every time the database is opened for writing.
    pub epoch: u64,
}

/// What a payload holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// A valid record.
    Record(Meta),
    /// All zero: never written.
    Empty,
}

impl Meta {
    /// The page (0 or 1) this copy goes to.
    pub fn slot(&self) -> u64 {
        self.seq % 2
    }

    /// Encodes the record into the start of `payload` (the rest is left zero).
    pub fn encode(&self, page_size: usize, payload: &mut [u8]) {
        payload.fill(0);
        payload[0..8].copy_from_slice(&META_MAGIC);
        payload[8..12].copy_from_slice(&META_FORMAT.to_le_bytes());
        payload[12..16].copy_from_slice(&(page_size as u32).to_le_bytes());
        payload[16..24].copy_from_slice(&self.seq.to_le_bytes());
        payload[24..32].copy_from_slice(&self.db_pages.to_le_bytes());
        payload[32..40].copy_from_slice(&self.epoch.to_le_bytes());
    }

    /// Decodes a payload; the error says why it is not a record of this page size.
    pub fn decode(page_size: usize, payload: &[u8]) -> Result<Decoded, String> {
        if payload.iter().all(|&b| b == 0) {
            return Ok(Decoded::Empty);
        }
        let u32_at = |o: usize| {
            u32::from_le_bytes([payload[o], payload[o + 1], payload[o + 2], payload[o + 3]])
        };
        let u64_at = |o: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&payload[o..o + 8]);
            u64::from_le_bytes(b)
        };
        if payload[0..8] != META_MAGIC {
            return Err(
                "the store does not hold a flashbuf-sqlite database (no VFS record)".into(),
            );
        }
        if u32_at(8) != META_FORMAT {
            return Err(format!(
                "VFS record format {}, this build reads format {META_FORMAT}",
                u32_at(8)
            ));
        }
        if u32_at(12) as usize != page_size {
            return Err(format!(
                "the database was made with {}-byte pages, the store has {page_size}",
                u32_at(12)
            ));
        }
        Ok(Decoded::Record(Meta {
            seq: u64_at(16),
            db_pages: u64_at(24),
            epoch: u64_at(32),
        }))
    }

    /// The newer of two decoded copies; `None` if neither holds a record.
    pub fn newest(a: Option<Meta>, b: Option<Meta>) -> Option<Meta> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if a.seq >= b.seq { a } else { b }),
            (x, None) | (None, x) => x,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_refuse_other_page_sizes_and_formats() {
        let m = Meta {
            seq: 9,
            db_pages: 1234,
            epoch: 77,
        };
        let mut p = vec![0u8; 4064];
        m.encode(4096, &mut p);
        assert_eq!(Meta::decode(4096, &p), Ok(Decoded::Record(m)));
        assert!(Meta::decode(8192, &p)
            .unwrap_err()
            .contains("4096-byte pages"));
        p[8] = 2;
        assert!(Meta::decode(4096, &p).unwrap_err().contains("format 2"));
        p[0] = b'X';
        assert!(Meta::decode(4096, &p)
            .unwrap_err()
            .contains("no VFS record"));
        assert_eq!(Meta::decode(4096, &vec![0u8; 4064]), Ok(Decoded::Empty));
        assert_eq!(m.slot(), 1);
    }

    #[test]
    fn the_newest_copy_wins() {
        let a = Meta {
            seq: 4,
            ..Meta::default()
        };
        let b = Meta {
            seq: 5,
            ..Meta::default()
        };
        assert_eq!(Meta::newest(Some(a), Some(b)), Some(b));
        assert_eq!(Meta::newest(Some(a), None), Some(a));
        assert_eq!(Meta::newest(None, None), None);
    }
}
