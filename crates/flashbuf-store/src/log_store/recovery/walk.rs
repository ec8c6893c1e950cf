//! Walking a segment at recovery: which of its blocks were written after the checkpoint
//! (see the parent module's steps 2 and 4).
//!
//! A segment's data blocks are read with one byte request; each block is checked from its
//! image at the block's start (the whole block with bytes, its head with metadata-only
//! pages: `super::super::data`), so both modes cost the device the same.

use super::super::data::block_image;
use super::super::layout::{Layout, SegmentId};
use super::super::map::L2pMap;
use super::super::scan::{read_blocks, read_summary};
use super::super::stamp::{self, Stamp};
use super::super::summary::{Entry, SegmentSummary};
use super::super::usage::{SegState, SegmentUsage};
use super::VOID_PID;
use crate::StoreError;
use flashbuf_core::page::{self, PAGE_MAGIC};
use flashbuf_core::AlignedBuf;
use flashbuf_device::Device;
use std::collections::HashMap;

/// What the walk of one segment found.
pub(super) struct SegScan {
    pub(super) seg: SegmentId,
    /// Block 0 belongs to a filling after the checkpoint.
    pub(super) fresh: bool,
    /// Entries of the blocks written before the checkpoint (continued segments).
    pub(super) prefix: Vec<Entry>,
    /// Valid blocks with sequence `≥ S`, by offset.
    pub(super) new: Vec<(u32, Stamp)>,
    /// Blocks with a page header that fail their checksum (offset, unchecked stamp).
    pub(super) holes: Vec<(u32, Stamp)>,
    /// Other damaged blocks (neither valid nor never written) in the new part.
    pub(super) damaged: Vec<u32>,
    /// A valid summary found in the summary region.
    pub(super) summary: Option<SegmentSummary>,
}

/// Walks `seg` if blocks after the checkpoint may lie in it.
#[allow(clippy::too_many_arguments)]
pub(super) fn walk<D: Device + ?Sized>(
    dev: &D,
    layout: &Layout,
    salt: u64,
    seg: SegmentId,
    row: &SegmentUsage,
    s: u64,
    data_blocks: u32,
    block_bytes: usize,
    owner: &HashMap<u32, u64>,
    buf: &mut AlignedBuf,
) -> Result<Option<SegScan>, StoreError> {
    let (ps, bb) = (layout.page_size, block_bytes);
    read_blocks(dev, layout, seg, 0, 1, buf)?;
    let first = stamp::check(&buf[..bb], salt, layout.addr(seg, 0));
    let mut fresh = first.is_some_and(|st| st.seq >= s);
    let continued = !fresh && row.state == SegState::Open && row.written > 0;
    if !fresh && !continued {
        // Block 0 damaged (neither valid nor never written): the filling it began may
        // still be new. The first valid block decides (regression test
        // `regression_log_store_damaged_first_block`: a fresh segment whose block 0 was
        // damaged was not walked, and after a fallback its blocks were skipped).
        if first.is_some() || page::is_all_zero(&buf[..bb]) {
            return Ok(None);
        }
        read_blocks(dev, layout, seg, 0, data_blocks, buf)?;
        fresh = (1..data_blocks)
            .find_map(|i| {
                let b = block_image(buf, ps, bb, i as usize);
                stamp::check(b, salt, layout.addr(seg, i))
            })
            .is_some_and(|st| st.seq >= s);
        if !fresh {
            return Ok(None);
        }
    } else {
        read_blocks(dev, layout, seg, 0, data_blocks, buf)?;
    }
    let mut out = SegScan {
        seg,
        fresh,
        prefix: Vec::new(),
        new: Vec::new(),
        holes: Vec::new(),
        damaged: Vec::new(),
        summary: None,
    };
    let start = if fresh {
        0
    } else {
        row.written.min(data_blocks)
    };
    for i in 0..start {
        let addr = layout.addr(seg, i);
        let e = match stamp::check(block_image(buf, ps, bb, i as usize), salt, addr) {
            Some(st) => Entry {
                pid: st.pid,
                version: st.version,
                seq: st.seq,
                crc: st.crc,
            },
            // Damaged since the checkpoint: the map still names the page it held.
            None => Entry {
                pid: owner.get(&addr.0).copied().unwrap_or(VOID_PID),
                version: 0,
                seq: 0,
                crc: 0,
            },
        };
        out.prefix.push(e);
    }
    let mut prev = 0;
    for i in start..data_blocks {
        let block = block_image(buf, ps, bb, i as usize);
        match stamp::check(block, salt, layout.addr(seg, i)) {
            Some(st) if st.seq >= s && st.seq > prev => {
                prev = st.seq;
                out.new.push((i, st));
            }
            Some(_) => break,
            None if block[4..8] == PAGE_MAGIC => out.holes.push((i, stamp::read(block, 0))),
            None if !page::is_all_zero(block) => out.damaged.push(i),
            None => {}
        }
    }
    out.summary = read_summary(dev, layout, salt, seg, data_blocks)?.ok();
    Ok(Some(out))
}

/// Who the checkpoint says lives in each block of the segments open then (block address
/// to page), for naming damaged blocks recovery reads there.
pub(super) fn open_block_owners(
    map: &L2pMap,
    usage: &[SegmentUsage],
    layout: &Layout,
) -> HashMap<u32, u64> {
    let open = |s: SegmentId| usage[s.0 as usize].state == SegState::Open;
    map.iter()
        .filter(|(_, a)| open(layout.split(*a).0))
        .map(|(p, a)| (a.0, p))
        .collect()
}
