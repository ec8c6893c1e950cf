//! Segment summaries: the last blocks of every filled segment describe its data blocks
//! (page id, version, sequence and checksum per block), so that the cleaner finds the live
//! blocks of a segment without the map (Rosenblum & Ousterhout, "The Design and
//! Implementation of a Log-Structured File System", TOCS 1992, §3.3, "segment summary
//! block"). A segment's data blocks describe themselves too ([`super::stamp`]); the
//! summary, written when the segment is sealed, saves reading them.
//!
//! A segment of `B` blocks holds `B − k` data blocks and `k` summary blocks at its end, `k`
//! the fewest that describe the rest ([`summary_blocks`]). Byte layout of summary block `j`
//! (little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `b"FBLOGSUM"` |
//! | 8..16 | the store's salt |
//! | 16..20 | segment id |
//! | 20..24 | `j` |
//! | 24..28 | `k` |
//! | 28..32 | entries `n` in the whole summary |
//! | 32..40 | epoch of the segment's filling |
//! | 40..48 | time the segment was sealed (time base, f64) |
//! | 48..56 | caller writes when the segment was opened |
//! | 56 | class (the head that filled it) |
//! | 72.. | entries `j·E .. min(n, (j+1)·E)`: page id (u64), version (u64), sequence (u64), block checksum (u32) |
//! | last 4 | CRC32C of everything before |

use super::bytes::{le_u32, le_u64};
use super::layout::SegmentId;
use flashbuf_core::page::crc32c;
use flashbuf_core::AlignedBuf;

const MAGIC: [u8; 8] = *b"FBLOGSUM";
const HEADER_BYTES: usize = 72;
const ENTRY_BYTES: usize = 28;

/// Entries one summary block of `page_size` bytes holds.
pub fn entries_per_block(page_size: usize) -> u32 {
    ((page_size - HEADER_BYTES - 4) / ENTRY_BYTES) as u32
}

/// Summary blocks of a segment of `segment_blocks` blocks: the fewest `k` with
/// `segment_blocks − k ≤ k · entries_per_block`.
pub fn summary_blocks(segment_blocks: u32, page_size: usize) -> u32 {
    segment_blocks.div_ceil(entries_per_block(page_size) + 1)
}

/// One data block of a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Page id.
    pub pid: u64,
    /// The page's version stamp.
    pub version: u64,
    /// The block's sequence number.
    pub seq: u64,
    /// The block's stored checksum ([`super::stamp`]).
    pub crc: u32,
}

/// A decoded summary.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentSummary {
    /// The segment.
    pub segment: SegmentId,
    /// Epoch of the filling.
    pub epoch: u64,
    /// When it was sealed (time base ticks).
    pub time: f64,
    /// Caller writes when it was opened.
    pub created_writes: u64,
    /// Head (class) that filled it.
    pub class: u8,
    /// One entry per data block, from block 0.
    pub entries: Vec<Entry>,
}

/// Why blocks are not a valid summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryError {
    /// Wrong magic, salt, segment or block numbering.
    NotOurs,
    /// A checksum does not match (torn or damaged).
    Checksum,
    /// More entries than the blocks hold.
    Count,
}

/// Encodes `s` into `k` blocks of `page_size` bytes.
pub fn encode(s: &SegmentSummary, salt: u64, k: u32, page_size: usize) -> AlignedBuf {
    let e = entries_per_block(page_size) as usize;
    debug_assert!(s.entries.len() <= k as usize * e);
    let mut buf = AlignedBuf::zeroed(k as usize * page_size, 4096);
    for (j, block) in buf.chunks_exact_mut(page_size).enumerate() {
        block[0..8].copy_from_slice(&MAGIC);
        block[8..16].copy_from_slice(&salt.to_le_bytes());
        block[16..20].copy_from_slice(&s.segment.0.to_le_bytes());
        block[20..24].copy_from_slice(&(j as u32).to_le_bytes());
        block[24..28].copy_from_slice(&k.to_le_bytes());
        block[28..32].copy_from_slice(&(s.entries.len() as u32).to_le_bytes());
        block[32..40].copy_from_slice(&s.epoch.to_le_bytes());
        block[40..48].copy_from_slice(&s.time.to_bits().to_le_bytes());
        block[48..56].copy_from_slice(&s.created_writes.to_le_bytes());
        block[56] = s.class;
        let first = (j * e).min(s.entries.len());
        let last = ((j + 1) * e).min(s.entries.len());
        for (i, en) in s.entries[first..last].iter().enumerate() {
            let at = HEADER_BYTES + i * ENTRY_BYTES;
            block[at..at + 8].copy_from_slice(&en.pid.to_le_bytes());
            block[at + 8..at + 16].copy_from_slice(&en.version.to_le_bytes());
            block[at + 16..at + 24].copy_from_slice(&en.seq.to_le_bytes());
            block[at + 24..at + 28].copy_from_slice(&en.crc.to_le_bytes());
        }
        let c = crc32c(&block[..page_size - 4]);
        block[page_size - 4..].copy_from_slice(&c.to_le_bytes());
    }
    buf
}

/// Decodes the `k` summary blocks of `seg` in `buf`.
pub fn decode(
    buf: &[u8],
    salt: u64,
    seg: SegmentId,
    page_size: usize,
) -> Result<SegmentSummary, SummaryError> {
    let k = buf.len() / page_size;
    let e = entries_per_block(page_size) as usize;
    let mut out: Option<SegmentSummary> = None;
    let mut n = 0;
    for (j, block) in buf.chunks_exact(page_size).enumerate() {
        if block[0..8] != MAGIC
            || le_u64(block, 8) != salt
            || le_u32(block, 16) != seg.0
            || le_u32(block, 20) as usize != j
            || le_u32(block, 24) as usize != k
        {
            return Err(SummaryError::NotOurs);
        }
        if le_u32(block, page_size - 4) != crc32c(&block[..page_size - 4]) {
            return Err(SummaryError::Checksum);
        }
        let s = out.get_or_insert_with(|| {
            n = le_u32(block, 28) as usize;
            SegmentSummary {
                segment: seg,
                epoch: le_u64(block, 32),
                time: f64::from_bits(le_u64(block, 40)),
                created_writes: le_u64(block, 48),
                class: block[56],
                entries: Vec::with_capacity(n.min(k * e)),
            }
        });
        if n > k * e || le_u32(block, 28) as usize != n || le_u64(block, 32) != s.epoch {
            return Err(SummaryError::Count);
        }
        for i in 0..(n.saturating_sub(j * e)).min(e) {
            let at = HEADER_BYTES + i * ENTRY_BYTES;
            s.entries.push(Entry {
                pid: le_u64(block, at),
                version: le_u64(block, at + 8),
                seq: le_u64(block, at + 16),
                crc: le_u32(block, at + 24),
            });
        }
    }
    out.ok_or(SummaryError::NotOurs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(entries_per_block(512), 15);
        assert_eq!(entries_per_block(8192), 289);
        assert_eq!(summary_blocks(8, 512), 1);
        assert_eq!(summary_blocks(1024, 8192), 4);
        assert_eq!(summary_blocks(2048, 4096), 15);
        for (b, ps) in [(8u32, 512usize), (1024, 8192), (2048, 4096), (4, 512)] {
            let k = summary_blocks(b, ps);
            assert!(b - k <= k * entries_per_block(ps));
        }
    }

    #[test]
    fn roundtrip_and_refusals() {
        let s = SegmentSummary {
            segment: SegmentId(3),
            epoch: 9,
            time: 2.5,
            created_writes: 40,
            class: 2,
            entries: (0..20)
                .map(|i| Entry {
                    pid: i,
                    version: i + 1,
                    seq: 100 + i,
                    crc: i as u32 * 3,
                })
                .collect(),
        };
        let buf = encode(&s, 5, 2, 512);
        assert_eq!(decode(&buf, 5, SegmentId(3), 512).unwrap(), s);
        assert_eq!(
            decode(&buf, 6, SegmentId(3), 512),
            Err(SummaryError::NotOurs)
        );
        assert_eq!(
            decode(&buf, 5, SegmentId(4), 512),
            Err(SummaryError::NotOurs)
        );
        let mut bad = buf.to_vec();
        bad[600] ^= 1;
        assert_eq!(
            decode(&bad, 5, SegmentId(3), 512),
            Err(SummaryError::Checksum)
        );
        assert!(decode(&[0u8; 512], 5, SegmentId(3), 512).is_err());
    }
}
