//! Log pages: their header, and where their records are.
//!
//! # Log page layout (little-endian)
//! | bytes | field |
//! |---|---|
//! | 0..4 | CRC32C of bytes `4..page_size` |
//! | 4..8 | magic `FBIL` |
//! | 8..10 | format ([`super::layout::ICL_FORMAT`]) |
//! | 10..12 | number of records |
//! | 12..16 | slot (its position in the log space) |
//! | 16..24 | generation |
//! | 24..32 | sequence number (counts every log page the store wrote) |
//! | 32..40 | the store's salt |
//! | 40..44 | `durable_upto`: slots below it were made durable by a sync before this page was written |
//! | 44..48 | bytes used (header and records); the rest is zero |
//! | 48.. | records (`record.rs`) |
//!
//! Metadata only (`--data none`): a log page is written as a metadata-only request of the
//! whole page that keeps its first `used` bytes — the header and the records as stored,
//! without their content beyond the page head
//! ([`Log::encoded_bytes`](super::log::Log::encoded_bytes)) — and the checksum covers bytes
//! `4..used`. Records are *placed* (their offsets in the mapping table, the
//! packing) by their logical lengths, exactly as with bytes; a record is found by walking
//! the stored ones and adding up those lengths.

use super::layout::ICL_FORMAT;
use super::mapping::LogRef;
use super::record::{decode_view, u16_at, u32_at, u64_at, Record, RecordView};
use flashbuf_core::page::crc32c;
use flashbuf_core::PageId;

/// Bytes of a log page's header.
pub const LOG_HEADER_BYTES: usize = 48;
const LOG_MAGIC: [u8; 4] = *b"FBIL";

/// The header of a log page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogPageHeader {
    /// Records in the page.
    pub records: u16,
    /// Its slot.
    pub slot: u32,
    /// Its generation.
    pub gen: u64,
    /// Its sequence number.
    pub seq: u64,
    /// Slots below this were durable when it was written.
    pub durable_upto: u32,
    /// Bytes used.
    pub used: u32,
}

impl LogPageHeader {
    /// Writes the header into `page` (whose records are in place) and seals it.
    pub fn seal(&self, page: &mut [u8], salt: u64) {
        page[4..8].copy_from_slice(&LOG_MAGIC);
        page[8..10].copy_from_slice(&ICL_FORMAT.to_le_bytes());
        page[10..12].copy_from_slice(&self.records.to_le_bytes());
        page[12..16].copy_from_slice(&self.slot.to_le_bytes());
        page[16..24].copy_from_slice(&self.gen.to_le_bytes());
        page[24..32].copy_from_slice(&self.seq.to_le_bytes());
        page[32..40].copy_from_slice(&salt.to_le_bytes());
        page[40..44].copy_from_slice(&self.durable_upto.to_le_bytes());
        page[44..48].copy_from_slice(&self.used.to_le_bytes());
        let c = crc32c(&page[4..]);
        page[0..4].copy_from_slice(&c.to_le_bytes());
    }

    /// The header of `page` if it is a valid log page of this store (checksum, magic,
    /// format, salt, size); `None` for anything else (never written, torn, foreign).
    pub fn open(page: &[u8], salt: u64) -> Option<Self> {
        if page.len() < LOG_HEADER_BYTES
            || page[4..8] != LOG_MAGIC
            || u16_at(page, 8) != ICL_FORMAT
            || u64_at(page, 32) != salt
            || u32_at(page, 0) != crc32c(&page[4..])
        {
            return None;
        }
        let h = Self {
            records: u16_at(page, 10),
            slot: u32_at(page, 12),
            gen: u64_at(page, 16),
            seq: u64_at(page, 24),
            durable_upto: u32_at(page, 40),
            used: u32_at(page, 44),
        };
        let used = h.used as usize;
        (LOG_HEADER_BYTES..=page.len()).contains(&used).then_some(h)
    }

    /// [`LogPageHeader::open`] of a log page read whole (`page_size` bytes) in the store's
    /// mode: with `kept < page_size` (metadata only) the checksum covers the bytes used.
    pub fn open_image(page: &[u8], salt: u64, kept: usize) -> Option<Self> {
        if kept >= page.len() {
            return Self::open(page, salt);
        }
        let used = (page.len() >= LOG_HEADER_BYTES).then(|| u32_at(page, 44) as usize)?;
        (LOG_HEADER_BYTES..=page.len())
            .contains(&used)
            .then(|| Self::open(&page[..used], salt))
            .flatten()
    }
}

/// Every record of a valid log page with its byte offset in the logical log page (pages of
/// `page_size` held as `kept`-byte images: the stored offset with bytes); a malformed
/// record is an error.
pub fn parse_records(
    page: &[u8],
    h: &LogPageHeader,
    page_size: usize,
    kept: usize,
) -> Result<Vec<(u32, Record)>, String> {
    let mut out = Vec::with_capacity(h.records as usize);
    walk_records(page, h, page_size, kept, |o, v| {
        out.push((o, v.into_record()))
    })?;
    Ok(out)
}

/// Every record of a valid log page in order, decoded in place, to `f` with its byte offset
/// in the logical log page; a malformed record, or records that do not end where the
/// header says, is an error (after `f` saw the records before it).
fn walk_records<'a>(
    page: &'a [u8],
    h: &LogPageHeader,
    page_size: usize,
    kept: usize,
    mut f: impl FnMut(u32, RecordView<'a>),
) -> Result<(), String> {
    let used = h.used as usize;
    let (mut at, mut logical) = (LOG_HEADER_BYTES, LOG_HEADER_BYTES);
    for i in 0..h.records {
        let (r, n) = decode_view(&page[at..used], page_size, kept)
            .map_err(|m| format!("record {i} at byte {at}: {m}"))?;
        let len = r.record_bytes();
        f(logical as u32, r);
        at += n;
        logical += len;
    }
    if at != used || logical > page_size {
        return Err(format!(
            "records end at byte {at} (logical {logical}), the header says {used}"
        ));
    }
    Ok(())
}

/// The record `at` names in `page` (header `h`), checked to be `pid`'s and of `at`'s
/// length; pages of `page_size` held as `kept`-byte images (module docs). Decoded in
/// place: its content is borrowed from `page` ([`RecordView::into_record`] owns it).
pub fn view_at<'a>(
    page: &'a [u8],
    h: &LogPageHeader,
    at: &LogRef,
    pid: PageId,
    (page_size, kept): (usize, usize),
) -> Result<RecordView<'a>, String> {
    if kept < page_size {
        let mut found = None;
        walk_records(page, h, page_size, kept, |o, v| {
            if o == u32::from(at.offset) {
                found = Some(v);
            }
        })?;
        return match found {
            Some(r) if r.pid == pid && r.record_bytes() == usize::from(at.len) => Ok(r),
            Some(r) => Err(format!(
                "holds a record of {} ({} bytes) where one of {pid} ({} bytes) was written",
                r.pid,
                r.record_bytes(),
                at.len
            )),
            None => Err(format!("holds no record at byte {}", at.offset)),
        };
    }
    let start = usize::from(at.offset);
    let end = start + usize::from(at.len);
    if end > page.len() || start < LOG_HEADER_BYTES {
        return Err(format!(
            "record at bytes {start}..{end} lies outside the page"
        ));
    }
    let (r, n) = decode_view(&page[start..end], page_size, kept)?;
    if r.pid != pid || n != usize::from(at.len) {
        return Err(format!(
            "holds a record of {} ({n} bytes) where one of {pid} ({} bytes) was written",
            r.pid, at.len
        ));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_roundtrip_and_refuse_damage() {
        let mut p = vec![0u8; 512];
        let h = LogPageHeader {
            records: 0,
            slot: 3,
            gen: 2,
            seq: 17,
            durable_upto: 3,
            used: LOG_HEADER_BYTES as u32,
        };
        h.seal(&mut p, 9);
        assert_eq!(LogPageHeader::open(&p, 9), Some(h));
        assert_eq!(LogPageHeader::open(&p, 8), None);
        assert_eq!(parse_records(&p, &h, 512, 512).unwrap(), vec![]);
        p[200] = 1;
        assert_eq!(LogPageHeader::open(&p, 9), None);
        assert_eq!(LogPageHeader::open(&[0u8; 512], 0), None);
    }
}
