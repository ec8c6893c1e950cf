//! The on-device form of a log: a record in a log page, and its decoding, in place
//! ([`RecordView`]) or owning its content ([`Record`]). A record names its page and its
//! *target*, the version and checksum of the page it produces (see `log.rs`); a record
//! without ranges is a *tombstone*.
//!
//! # Record layout (little-endian), inside a log page
//! | bytes | field |
//! |---|---|
//! | 0..8 | page id |
//! | 8..16 | target version |
//! | 16..20 | target checksum |
//! | 20..22 | number of ranges `n` |
//! | 22..24 | flags (bit 0: tombstone) |
//! | 24..24+4n | ranges: start `u16`, length `u16` |
//! | then | the bytes of the ranges, in order |

use super::log::{apply_spans, check_shape, kept_bytes, newer_over_parts, record_bytes_of};
use super::log::{Ident, Log, LogBytes, Spans};
use flashbuf_core::PageId;

/// Bytes of a record's header.
pub const RECORD_HEADER_BYTES: usize = 24;
/// Bytes per range in a record.
pub const RANGE_BYTES: usize = 4;
/// Record flag: a tombstone (no ranges; the home page is the target).
const FLAG_TOMBSTONE: u16 = 1;

/// Appends a record's header: `pid`, `target`, `n` ranges, `flags`.
pub(super) fn encode_header(pid: PageId, target: Ident, n: usize, flags: u16, out: &mut Vec<u8>) {
    out.extend_from_slice(&pid.0.to_le_bytes());
    out.extend_from_slice(&target.version.to_le_bytes());
    out.extend_from_slice(&target.crc.to_le_bytes());
    out.extend_from_slice(&(n as u16).to_le_bytes());
    out.extend_from_slice(&flags.to_le_bytes());
}

/// Appends a tombstone record: `pid`'s home page is version `target`.
pub fn encode_tombstone(pid: PageId, target: Ident, out: &mut Vec<u8>) {
    encode_header(pid, target, 0, FLAG_TOMBSTONE, out);
}

/// A record decoded from a log page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The page.
    pub pid: PageId,
    /// The version the record produces (or, for a tombstone, the home page's).
    pub target: Ident,
    /// A tombstone: no ranges, the home page is the target.
    pub tombstone: bool,
    /// The ranges and bytes.
    pub log: Log,
}

/// A record decoded in place: its content is borrowed from the log page it was read from
/// (a read applies it and drops it: no copy of the content, no allocation up to 8 spans).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordView<'a> {
    /// The page.
    pub pid: PageId,
    /// The version the record produces (or, for a tombstone, the home page's).
    pub target: Ident,
    /// A tombstone: no ranges, the home page is the target.
    pub tombstone: bool,
    spans: Spans,
    bytes: &'a [u8],
}

impl RecordView<'_> {
    /// Bytes its record takes in a log page of the logical page size ([`Log::record_bytes`]).
    pub fn record_bytes(&self) -> usize {
        record_bytes_of(&self.spans)
    }

    /// Writes its bytes into `page` ([`Log::apply`]).
    pub fn apply(&self, page: &mut [u8]) {
        apply_spans(&self.spans, self.bytes, page);
    }

    /// [`Log::newer_over`] with this record's log as the older one, read in place (no
    /// copy of its content first), the content in `content` (emptied first; its heap
    /// room reused: the WOB's spare buffers).
    pub fn under(&self, newer: &Log, kept: usize, content: LogBytes) -> Log {
        newer_over_parts(&self.spans, self.bytes, newer, kept, content)
    }

    /// The record, owning its content.
    pub fn into_record(self) -> Record {
        Record {
            pid: self.pid,
            target: self.target,
            tombstone: self.tombstone,
            log: Log::from_content(self.spans, self.bytes),
        }
    }
}

/// The little-endian `u16` at `b[at..]`.
pub(crate) fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// The little-endian `u32` at `b[at..]`.
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The little-endian `u64` at `b[at..]`.
pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Decodes the record starting at `b[0]` for pages of `page_size` held as `kept`-byte
/// images (module docs); returns it and its stored length. Every field is checked, so a
/// damaged area is an error, never a panic.
pub fn decode_record(b: &[u8], page_size: usize, kept: usize) -> Result<(Record, usize), String> {
    decode_view(b, page_size, kept).map(|(v, n)| (v.into_record(), n))
}

/// [`decode_record`] in place: the record's content borrowed from `b`.
pub fn decode_view(
    b: &[u8],
    page_size: usize,
    kept: usize,
) -> Result<(RecordView<'_>, usize), String> {
    if b.len() < RECORD_HEADER_BYTES {
        return Err(format!("{} bytes left, less than a record header", b.len()));
    }
    let pid = PageId(u64_at(b, 0));
    let target = Ident {
        version: u64_at(b, 8),
        crc: u32_at(b, 16),
    };
    let n = u16_at(b, 20) as usize;
    let flags = u16_at(b, 22);
    if flags & !FLAG_TOMBSTONE != 0 {
        return Err(format!("record of {pid} has unknown flags {flags:#x}"));
    }
    let tombstone = flags & FLAG_TOMBSTONE != 0;
    if tombstone && n != 0 {
        return Err(format!("tombstone of {pid} has {n} ranges"));
    }
    let ranges_end = RECORD_HEADER_BYTES + RANGE_BYTES * n;
    if b.len() < ranges_end {
        return Err(format!("record of {pid} claims {n} ranges beyond the page"));
    }
    let mut spans = Spans::with_capacity(n);
    for i in 0..n {
        let at = RECORD_HEADER_BYTES + RANGE_BYTES * i;
        let s = u32::from(u16_at(b, at));
        let len = u32::from(u16_at(b, at + 2));
        spans.push((s, s + len));
    }
    let data = kept_bytes(&spans, kept);
    let end = ranges_end + data;
    if b.len() < end {
        return Err(format!(
            "record of {pid} claims {data} bytes beyond the page"
        ));
    }
    let bytes = &b[ranges_end..end];
    check_shape(&spans, bytes.len(), page_size, kept)
        .map_err(|m| format!("record of {pid}: {m}"))?;
    Ok((
        RecordView {
            pid,
            target,
            tombstone,
            spans,
            bytes,
        },
        end,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_roundtrip_and_damage_is_an_error() {
        let mut p = vec![7u8; 512];
        p[100] = 9;
        let log = Log::from_page(&p, [(0, 32), (100, 140)].into_iter().collect());
        let t = Ident { version: 5, crc: 9 };
        let mut out = Vec::new();
        log.encode_record(PageId(3), t, &mut out);
        encode_tombstone(PageId(4), t, &mut out);
        let (r, n) = decode_record(&out, 512, 512).unwrap();
        assert_eq!(
            (r.pid, r.target, r.tombstone, &r.log),
            (PageId(3), t, false, &log)
        );
        assert_eq!(n, log.record_bytes());
        // Decoded in place: the same record, and it writes the same bytes.
        let (v, vn) = decode_view(&out, 512, 512).unwrap();
        let (mut a, mut b) = (vec![0u8; 512], vec![0u8; 512]);
        v.apply(&mut a);
        assert_eq!((v.into_record(), vn), (r.clone(), n));
        r.log.apply(&mut b);
        assert_eq!(a, b);
        assert_eq!(&a[100..140], &p[100..140]);
        let (r2, m) = decode_record(&out[n..], 512, 512).unwrap();
        assert!(r2.tombstone && r2.log.is_empty() && m == RECORD_HEADER_BYTES);
        // A range beyond the page, a short buffer, unknown flags.
        assert!(decode_record(&out, 120, 120).is_err());
        assert!(decode_record(&out[..30], 512, 512).is_err());
        let mut bad = out.clone();
        bad[22] = 0x80;
        assert!(decode_record(&bad, 512, 512).is_err());
    }
}
