//! Checkpoints: the map and the usage table, written whole into one of two slots in turn.
//!
//! Byte layout of a slot (little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `b"FBLOGCKP"` |
//! | 8..16 | the store's salt |
//! | 16..24 | generation (1, 2, 3, ...; slot = generation mod 2) |
//! | 24..32 | next log sequence `S`: the checkpoint reflects every log below `S`, and all of them were durable before it was written |
//! | 32..40 | next segment epoch |
//! | 40..48 | time base ticks when written (f64) |
//! | 48..56 | caller page writes so far |
//! | 56..64 | logical pages |
//! | 64..68 | segments |
//! | 72..80 | body bytes |
//! | 80..84 | CRC32C of the body |
//! | 84..92 | sequence limit: no block gets a sequence at or above it before a newer checkpoint is durable |
//! | 124..128 | CRC32C of bytes 0..124 |
//! | 128.. | body: the map (4 bytes per page), then the usage table (48 bytes per segment) |
//!
//! A torn or damaged slot fails a checksum; recovery then takes the other slot
//! (`super::recovery`). Writing a checkpoint: flush every head, sync (all logs below `S`
//! durable), write the older slot, sync.

use super::bytes::{le_u32, le_u64};
use super::layout::{Layout, CHECKPOINT_HEADER_BYTES, USAGE_ENTRY_BYTES};
use super::map::L2pMap;
use super::usage::SegmentUsage;
use flashbuf_core::page::crc32c;
use flashbuf_core::AlignedBuf;

const MAGIC: [u8; 8] = *b"FBLOGCKP";

/// What a checkpoint records besides the map and the usage table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckpointHeader {
    /// Generation (slot = generation mod 2).
    pub generation: u64,
    /// Next block sequence `S` at the time of the checkpoint.
    pub next_seq: u64,
    /// Blocks get sequences below this until a newer checkpoint is durable, so a store
    /// recovered from this checkpoint can start above every sequence ever used, even those
    /// of blocks it never saw (dropped or left in unread segments).
    pub seq_limit: u64,
    /// Next segment epoch.
    pub next_epoch: u64,
    /// Time base ticks when written.
    pub time_ticks: f64,
    /// Caller page writes so far.
    pub user_writes: u64,
}

/// A decoded checkpoint.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    /// Its header.
    pub header: CheckpointHeader,
    /// The map.
    pub map: L2pMap,
    /// The usage table's rows.
    pub usage: Vec<SegmentUsage>,
}

/// The slot a generation goes to.
pub fn slot_of(generation: u64) -> usize {
    (generation % 2) as usize
}

/// Encodes a checkpoint into a slot-sized, aligned buffer.
pub fn encode(
    layout: &Layout,
    salt: u64,
    h: &CheckpointHeader,
    map: &L2pMap,
    usage: &[SegmentUsage],
) -> AlignedBuf {
    debug_assert_eq!(map.pages(), layout.logical_pages);
    debug_assert_eq!(usage.len(), layout.segments as usize);
    let mut body = Vec::with_capacity(
        (layout.logical_pages * 4 + u64::from(layout.segments) * USAGE_ENTRY_BYTES) as usize,
    );
    map.encode(&mut body);
    for r in usage {
        r.encode(&mut body);
    }
    let mut buf = AlignedBuf::zeroed(layout.slot_bytes(), 4096);
    buf[0..8].copy_from_slice(&MAGIC);
    buf[8..16].copy_from_slice(&salt.to_le_bytes());
    buf[16..24].copy_from_slice(&h.generation.to_le_bytes());
    buf[24..32].copy_from_slice(&h.next_seq.to_le_bytes());
    buf[32..40].copy_from_slice(&h.next_epoch.to_le_bytes());
    buf[40..48].copy_from_slice(&h.time_ticks.to_bits().to_le_bytes());
    buf[48..56].copy_from_slice(&h.user_writes.to_le_bytes());
    buf[56..64].copy_from_slice(&layout.logical_pages.to_le_bytes());
    buf[64..68].copy_from_slice(&layout.segments.to_le_bytes());
    buf[72..80].copy_from_slice(&(body.len() as u64).to_le_bytes());
    buf[80..84].copy_from_slice(&crc32c(&body).to_le_bytes());
    buf[84..92].copy_from_slice(&h.seq_limit.to_le_bytes());
    let hc = crc32c(&buf[..124]);
    buf[124..128].copy_from_slice(&hc.to_le_bytes());
    let at = CHECKPOINT_HEADER_BYTES as usize;
    buf[at..at + body.len()].copy_from_slice(&body);
    buf
}

/// Decodes a slot's bytes; the error says why the slot is not a valid checkpoint.
pub fn decode(buf: &[u8], layout: &Layout, salt: u64) -> Result<Checkpoint, String> {
    let hdr = CHECKPOINT_HEADER_BYTES as usize;
    if buf.len() < hdr || buf[0..8] != MAGIC {
        return Err("no checkpoint magic".into());
    }
    if le_u32(buf, 124) != crc32c(&buf[..124]) {
        return Err("header checksum mismatch".into());
    }
    if le_u64(buf, 8) != salt {
        return Err("written by another format (salt differs)".into());
    }
    if le_u64(buf, 56) != layout.logical_pages || le_u32(buf, 64) != layout.segments {
        return Err(format!(
            "sized for {} pages and {} segments, the layout has {} and {}",
            le_u64(buf, 56),
            le_u32(buf, 64),
            layout.logical_pages,
            layout.segments
        ));
    }
    let body_len = layout.logical_pages * 4 + u64::from(layout.segments) * USAGE_ENTRY_BYTES;
    if le_u64(buf, 72) != body_len || hdr as u64 + body_len > buf.len() as u64 {
        return Err(format!(
            "body of {} bytes, expected {body_len}",
            le_u64(buf, 72)
        ));
    }
    let body = &buf[hdr..hdr + body_len as usize];
    if le_u32(buf, 80) != crc32c(body) {
        return Err("body checksum mismatch".into());
    }
    let map_bytes = (layout.logical_pages * 4) as usize;
    let map = L2pMap::decode(&body[..map_bytes], layout.total_blocks())?;
    let usage = body[map_bytes..]
        .chunks_exact(USAGE_ENTRY_BYTES as usize)
        .enumerate()
        .map(|(i, c)| SegmentUsage::decode(c).ok_or_else(|| format!("segment {i}: unknown state")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Checkpoint {
        header: CheckpointHeader {
            generation: le_u64(buf, 16),
            next_seq: le_u64(buf, 24),
            seq_limit: le_u64(buf, 84),
            next_epoch: le_u64(buf, 32),
            time_ticks: f64::from_bits(le_u64(buf, 40)),
            user_writes: le_u64(buf, 48),
        },
        map,
        usage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log_store::layout::BlockAddr;
    use crate::log_store::usage::UsageTable;

    #[test]
    fn roundtrip_and_damage() {
        let layout = Layout::new(512, 8, 6, 40, 4096, 512);
        let mut map = L2pMap::new(40);
        map.set(3, BlockAddr(17));
        let usage = UsageTable::new(6).rows().to_vec();
        let h = CheckpointHeader {
            generation: 5,
            next_seq: 77,
            seq_limit: 1077,
            next_epoch: 4,
            time_ticks: 2.5,
            user_writes: 123,
        };
        let buf = encode(&layout, 9, &h, &map, &usage);
        assert_eq!(buf.len(), layout.slot_bytes());
        let c = decode(&buf, &layout, 9).unwrap();
        assert_eq!(c.header, h);
        assert_eq!(c.map.get(3), Some(BlockAddr(17)));
        assert_eq!(c.usage, usage);
        assert!(decode(&buf, &layout, 8).unwrap_err().contains("salt"));
        let mut bad = buf.to_vec();
        bad[200] ^= 1;
        assert!(decode(&bad, &layout, 9).unwrap_err().contains("body"));
        let mut bad = buf.to_vec();
        bad[20] ^= 1;
        assert!(decode(&bad, &layout, 9).unwrap_err().contains("header"));
        assert_eq!((slot_of(5), slot_of(6)), (1, 0));
    }
}
