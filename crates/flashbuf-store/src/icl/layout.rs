//! Where ICL keeps things on its device, and its small metadata pages (the two
//! generation records and the double-write directory).
//!
//! # Layout (offsets in pages of `page_size` after the superblock's reserved bytes `R`)
//! | area | pages | holds |
//! |---|---|---|
//! | generation records | 2 | the log-space generation and how many of its log pages a sync made durable, written alternately (ping-pong) |
//! | double-write directory | 1 | which pages the double-write slots hold, and for which generation |
//! | double-write slots | `dw_pages` | images of merged pages, written and synced before their home copies |
//! | log space | `log_pages` | the ICL log pages (`log_space.rs`) |
//! | data area | grows | page `p` at `data_offset + p × page_size` |
//!
//! The paper has a log space and data pages only (ICL paper, §2, Figures 2–4); the
//! generation records and the double-write area are this implementation's answer to what
//! it leaves open about crashes (see the module docs of [`super`]).
//!
//! # Metadata page layout (little-endian)
//! | bytes | field |
//! |---|---|
//! | 0..4 | CRC32C of bytes `4..page_size` |
//! | 4..8 | magic (`FBIG` generation record, `FBID` double-write directory) |
//! | 8..10 | format ([`ICL_FORMAT`]) |
//! | 12..20 | the store's salt (chosen at format time) |
//! | 20.. | generation record: generation `u64`, next log-page sequence `u64`, record sequence `u64`, synced log pages `u32`; directory: generation `u64`, count `u32`, then per slot page id `u64` and page checksum `u32` |

use super::record::{u16_at, u32_at, u64_at};
use crate::StoreError;
use flashbuf_core::page::crc32c;
use flashbuf_core::PageId;

/// On-device format of ICL's own structures (log pages, metadata pages).
pub const ICL_FORMAT: u16 = 1;
const META_HEADER_BYTES: usize = 20;
const GEN_MAGIC: [u8; 4] = *b"FBIG";
const DIR_MAGIC: [u8; 4] = *b"FBID";
const DIR_ENTRY_BYTES: usize = 12;
const DIR_BODY_START: usize = META_HEADER_BYTES + 12;

/// Offsets of ICL's areas for a page size and area sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Page size in bytes.
    pub page_size: usize,
    /// Log pages in the log space.
    pub log_pages: u32,
    /// Double-write slots.
    pub dw_pages: u32,
    /// Byte offset of the first generation record.
    pub gen_offset: u64,
    /// Byte offset of the double-write directory.
    pub dw_dir_offset: u64,
    /// Byte offset of the first double-write slot.
    pub dw_offset: u64,
    /// Byte offset of the first log page.
    pub log_offset: u64,
    /// Byte offset of the data area.
    pub data_offset: u64,
}

impl Layout {
    /// The layout after `reserved` superblock bytes.
    pub fn new(page_size: usize, log_pages: u32, dw_pages: u32, reserved: u64) -> Self {
        let ps = page_size as u64;
        let gen_offset = reserved;
        let dw_dir_offset = gen_offset + 2 * ps;
        let dw_offset = dw_dir_offset + ps;
        let log_offset = dw_offset + u64::from(dw_pages) * ps;
        let data_offset = log_offset + u64::from(log_pages) * ps;
        Self {
            page_size,
            log_pages,
            dw_pages,
            gen_offset,
            dw_dir_offset,
            dw_offset,
            log_offset,
            data_offset,
        }
    }

    /// Offset of the generation record with record sequence `i` (they alternate between
    /// two pages).
    pub fn gen_record_offset(&self, i: u64) -> u64 {
        self.gen_offset + (i % 2) * self.page_size as u64
    }

    /// Offset of double-write slot `i`.
    pub fn dw_slot_offset(&self, i: usize) -> u64 {
        self.dw_offset + i as u64 * self.page_size as u64
    }

    /// Offset of log page `slot`.
    pub fn log_slot_offset(&self, slot: u32) -> u64 {
        self.log_offset + u64::from(slot) * self.page_size as u64
    }

    /// Offset of `pid`'s home page, if addressable (its end too).
    pub fn home_offset(&self, pid: PageId) -> Option<u64> {
        let ps = self.page_size as u64;
        pid.0
            .checked_mul(ps)
            .and_then(|o| o.checked_add(self.data_offset))
            .filter(|o| o.checked_add(ps).is_some())
    }

    /// Most entries a double-write directory holds at this page size.
    pub fn dir_capacity(page_size: usize) -> usize {
        page_size.saturating_sub(DIR_BODY_START) / DIR_ENTRY_BYTES
    }

    /// The configuration fingerprint in the superblock (what the on-device format depends
    /// on: page size, area sizes, format).
    pub fn fingerprint(&self) -> u64 {
        let mut b = Vec::with_capacity(24);
        b.extend_from_slice(&(self.page_size as u64).to_le_bytes());
        b.extend_from_slice(&self.log_pages.to_le_bytes());
        b.extend_from_slice(&self.dw_pages.to_le_bytes());
        b.extend_from_slice(&ICL_FORMAT.to_le_bytes());
        (u64::from(crc32c(&b)) << 32) | u64::from(crc32c(&b[4..]))
    }

    /// The superblock's store-specific bytes: format, log pages, double-write slots.
    pub fn encode_extra(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(10);
        b.extend_from_slice(&ICL_FORMAT.to_le_bytes());
        b.extend_from_slice(&self.log_pages.to_le_bytes());
        b.extend_from_slice(&self.dw_pages.to_le_bytes());
        b
    }

    /// The layout a superblock describes; refuses other formats and inconsistent offsets.
    pub fn decode_extra(
        extra: &[u8],
        page_size: usize,
        data_offset: u64,
        reserved: u64,
    ) -> Result<Self, StoreError> {
        if extra.len() != 10 {
            return Err(StoreError::Format(format!(
                "ICL superblock extra of {} bytes (expected 10): the store is corrupt",
                extra.len()
            )));
        }
        let format = u16_at(extra, 0);
        if format != ICL_FORMAT {
            return Err(StoreError::Format(format!(
                "ICL format {format}, this build reads format {ICL_FORMAT}"
            )));
        }
        let log_pages = u32_at(extra, 2);
        let dw_pages = u32_at(extra, 6);
        let l = Self::new(page_size, log_pages, dw_pages, reserved);
        if l.data_offset != data_offset {
            return Err(StoreError::Format(format!(
                "superblock data offset {data_offset} does not follow from {log_pages} log pages and {dw_pages} double-write slots ({} expected): the store is corrupt",
                l.data_offset
            )));
        }
        Ok(l)
    }
}

/// Seals a metadata page: header fields, then the checksum.
fn seal_meta(b: &mut [u8], magic: [u8; 4], salt: u64) {
    b[4..8].copy_from_slice(&magic);
    b[8..10].copy_from_slice(&ICL_FORMAT.to_le_bytes());
    b[10..12].fill(0);
    b[12..20].copy_from_slice(&salt.to_le_bytes());
    let c = crc32c(&b[4..]);
    b[0..4].copy_from_slice(&c.to_le_bytes());
}

/// Whether `b` is a valid metadata page with `magic` of this store (`salt`).
fn valid_meta(b: &[u8], magic: [u8; 4], salt: u64) -> bool {
    b.len() >= 64
        && b[4..8] == magic
        && u16_at(b, 8) == ICL_FORMAT
        && u64_at(b, 12) == salt
        && u32_at(b, 0) == crc32c(&b[4..])
}

/// A generation record: the log space's current generation, how many of its log pages a
/// sync made durable (written at a sync that flushed log pages, so that the last synced
/// log pages are known to be promised even when no later log page says so), and the next
/// log-page sequence number. Records are numbered; the valid one with the highest number
/// is current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenRecord {
    /// Number of this record (it goes to page `rseq % 2`).
    pub rseq: u64,
    /// The generation.
    pub gen: u64,
    /// The next log page's sequence number.
    pub next_seq: u64,
    /// Log pages `0..synced` of the generation were durable when it was written.
    pub synced: u32,
}

impl GenRecord {
    /// Encodes into a page-sized buffer.
    pub fn encode(&self, b: &mut [u8], salt: u64) {
        b.fill(0);
        b[20..28].copy_from_slice(&self.gen.to_le_bytes());
        b[28..36].copy_from_slice(&self.next_seq.to_le_bytes());
        b[36..44].copy_from_slice(&self.rseq.to_le_bytes());
        b[44..48].copy_from_slice(&self.synced.to_le_bytes());
        seal_meta(b, GEN_MAGIC, salt);
    }

    /// Decodes a page-sized buffer, if it holds a valid record of this store.
    pub fn decode(b: &[u8], salt: u64) -> Option<Self> {
        valid_meta(b, GEN_MAGIC, salt).then(|| Self {
            gen: u64_at(b, 20),
            next_seq: u64_at(b, 28),
            rseq: u64_at(b, 36),
            synced: u32_at(b, 44),
        })
    }
}

/// The double-write directory: for which generation's merge the slots were written, and
/// which page (and page checksum) each slot holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DwDirectory {
    /// The generation whose merge wrote the slots.
    pub gen: u64,
    /// Per slot: the page and the checksum of its image.
    pub entries: Vec<(PageId, u32)>,
}

impl DwDirectory {
    /// Encodes into a page-sized buffer.
    ///
    /// # Panics
    /// If there are more entries than [`Layout::dir_capacity`] (options are checked
    /// against it).
    pub fn encode(&self, b: &mut [u8], salt: u64) {
        assert!(self.entries.len() <= Layout::dir_capacity(b.len()));
        b.fill(0);
        b[20..28].copy_from_slice(&self.gen.to_le_bytes());
        b[28..32].copy_from_slice(&(self.entries.len() as u32).to_le_bytes());
        for (i, (pid, crc)) in self.entries.iter().enumerate() {
            let at = DIR_BODY_START + i * DIR_ENTRY_BYTES;
            b[at..at + 8].copy_from_slice(&pid.0.to_le_bytes());
            b[at + 8..at + 12].copy_from_slice(&crc.to_le_bytes());
        }
        seal_meta(b, DIR_MAGIC, salt);
    }

    /// Decodes a page-sized buffer, if it holds a valid directory of this store.
    pub fn decode(b: &[u8], salt: u64) -> Option<Self> {
        if !valid_meta(b, DIR_MAGIC, salt) {
            return None;
        }
        let n = u32_at(b, 28) as usize;
        if n > Layout::dir_capacity(b.len()) {
            return None;
        }
        let entries = (0..n)
            .map(|i| {
                let at = DIR_BODY_START + i * DIR_ENTRY_BYTES;
                let crc = u32_at(b, at + 8);
                (PageId(u64_at(b, at)), crc)
            })
            .collect();
        Some(Self {
            gen: u64_at(b, 20),
            entries,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_follow_each_other() {
        let l = Layout::new(4096, 10, 4, 4096);
        assert_eq!(l.dw_dir_offset, 4096 + 2 * 4096);
        assert_eq!(l.log_offset, l.dw_offset + 4 * 4096);
        assert_eq!(l.data_offset, l.log_offset + 10 * 4096);
        assert_eq!(l.home_offset(PageId(2)), Some(l.data_offset + 8192));
        assert_eq!(l.home_offset(PageId(u64::MAX)), None);
        let back = Layout::decode_extra(&l.encode_extra(), 4096, l.data_offset, 4096).unwrap();
        assert_eq!(back, l);
        assert!(Layout::decode_extra(&l.encode_extra(), 4096, 0, 4096).is_err());
        assert_ne!(
            l.fingerprint(),
            Layout::new(4096, 11, 4, 4096).fingerprint()
        );
    }

    #[test]
    fn metadata_pages_roundtrip_and_refuse_damage_or_another_salt() {
        let mut b = vec![0u8; 512];
        let g = GenRecord {
            rseq: 4,
            gen: 7,
            next_seq: 99,
            synced: 12,
        };
        g.encode(&mut b, 5);
        assert_eq!(GenRecord::decode(&b, 5), Some(g));
        assert_eq!(GenRecord::decode(&b, 6), None);
        assert_eq!(DwDirectory::decode(&b, 5), None, "magic tells them apart");
        b[300] ^= 1;
        assert_eq!(GenRecord::decode(&b, 5), None);
        let d = DwDirectory {
            gen: 3,
            entries: vec![(PageId(1), 11), (PageId(9), 99)],
        };
        d.encode(&mut b, 5);
        assert_eq!(DwDirectory::decode(&b, 5), Some(d));
        assert_eq!(Layout::dir_capacity(512), 40);
    }
}
