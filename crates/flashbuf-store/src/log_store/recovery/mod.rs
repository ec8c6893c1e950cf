//! Recovery: the newest valid checkpoint, then roll-forward through the blocks written
//! after it, in sequence order.
//!
//! 1. Both checkpoint slots are read; the valid one with the higher generation wins (a
//!    torn or damaged slot fails its checksums and the other is used).
//! 2. Blocks written after the checkpoint (sequence `≥ S`) can only lie in segments that
//!    were open or free then: a segment is *fresh* if its block 0 is valid with a sequence
//!    `≥ S`, *continued* if it was open at the checkpoint. Their data blocks are read and
//!    checked ([`super::stamp`]; `walk`: each block from its image at its start, its head
//!    with metadata-only pages); within a segment sequences rise, and a valid block with
//!    a lower one is what an earlier filling left: the walk stops there.
//! 3. The *promise* `P` is the highest "synced" horizon any new block carries, the
//!    promise the state record holds (what the last caller's sync promised; without it a
//!    damaged block of a synced tail would look torn), and `S`: every block below `P` was
//!    durable when a sync returned or before a later block was written.
//! 4. Blocks are applied in sequence order. A promised sequence with no valid block is a
//!    damaged promised block: if a readable block in the walked segments claims it, the
//!    map points there and reads report it corrupt (never an older copy); if none does,
//!    opening is refused — unless recovery fell back to the older checkpoint, after which
//!    segments may have been reused legitimately (then it is skipped and counted, but only
//!    while no walked segment holds a damaged block nobody claims: that block may be the
//!    missing one, so the open is refused). A segment whose block 0 is damaged is walked if
//!    its first valid block is new (regression test
//!    `regression_log_store_damaged_first_block`). At the
//!    first missing sequence at or above `P` the tail is cut: later blocks were never
//!    promised and are dropped, so the store comes back as some prefix of the writes
//!    after the last sync.
//! 5. Live counts come from the map; segments with none are free, the others sealed.
//!    Segments recovery closes get a summary written, and if anything was found after the
//!    checkpoint a new checkpoint is written (after a sync). New blocks start at the
//!    checkpoint's sequence limit: above every block written since, including dropped ones
//!    and ones in segments recovery did not read, so that none of them can ever pass for a
//!    newer block (found by `log_store_crash.rs`: a dropped block in a reused segment
//!    came back after a second crash).

use super::checkpoint::{self, Checkpoint};
use super::layout::{Layout, SegmentId};
use super::map::L2pMap;
use super::stamp::Stamp;
use super::stats::RecoveryReport;
use super::summary::{Entry, SegmentSummary};
use super::usage::{SegState, SegmentUsage};
use crate::StoreError;
use flashbuf_core::AlignedBuf;
use flashbuf_device::Device;
use std::collections::HashMap;
use walk::{open_block_owners, walk, SegScan};

mod walk;

/// Page id of a summary entry for a block that holds nothing (a hole recovery found).
pub const VOID_PID: u64 = u64::MAX;

/// What recovery rebuilt.
#[derive(Debug)]
pub(crate) struct Recovered {
    /// The map.
    pub map: L2pMap,
    /// Usage rows (states: sealed if live, free otherwise).
    pub usage: Vec<SegmentUsage>,
    /// Generation of the checkpoint started from.
    pub generation: u64,
    /// Sequence of the next block (above everything seen on the device).
    pub next_seq: u64,
    /// Epoch of the next filling.
    pub next_epoch: u64,
    /// Caller writes so far.
    pub user_writes: u64,
    /// Latest time known.
    pub time_ticks: f64,
    /// Summaries of the segments recovery closes, to be written.
    pub to_seal: Vec<SegmentSummary>,
    /// Blocks after the checkpoint were found: write a checkpoint.
    pub needs_checkpoint: bool,
    /// Findings.
    pub report: RecoveryReport,
}

/// The newest valid checkpoint, and whether the other slot was invalid.
fn load_checkpoint<D: Device + ?Sized>(
    dev: &D,
    layout: &Layout,
    salt: u64,
) -> Result<(Checkpoint, bool), StoreError> {
    let mut buf = AlignedBuf::zeroed(layout.slot_bytes(), 4096);
    let mut found = Vec::new();
    let mut why = Vec::new();
    for slot in 0..2 {
        dev.read_at(layout.slot_byte_offset(slot), &mut buf)?;
        match checkpoint::decode(&buf, layout, salt) {
            Ok(c) if checkpoint::slot_of(c.header.generation) == slot => found.push(c),
            Ok(c) => why.push(format!(
                "slot {slot}: generation {} belongs to the other slot",
                c.header.generation
            )),
            Err(e) => why.push(format!("slot {slot}: {e}")),
        }
    }
    let damaged = found.len() < 2;
    found
        .into_iter()
        .max_by_key(|c| c.header.generation)
        .map(|c| (c, damaged))
        .ok_or_else(|| {
            StoreError::Format(format!(
                "no valid checkpoint ({}): the store is corrupt",
                why.join("; ")
            ))
        })
}

/// A block to apply: sequence, segment, offset, stamp, damaged.
type Found = (u64, SegmentId, u32, Stamp, bool);

/// Recovers the store's state from `dev` (see the module docs).
pub(crate) fn recover<D: Device + ?Sized>(
    dev: &D,
    layout: &Layout,
    salt: u64,
    data_blocks: u32,
    block_bytes: usize,
    promised: u64,
) -> Result<Recovered, StoreError> {
    let (ckpt, fell_back) = load_checkpoint(dev, layout, salt)?;
    let h = ckpt.header;
    let s = h.next_seq;
    let mut map = ckpt.map;
    let mut usage = ckpt.usage;
    let owner = open_block_owners(&map, &usage, layout);
    let mut buf = AlignedBuf::zeroed(layout.page_size, 4096);
    let mut scans = Vec::new();
    for seg in (0..layout.segments).map(SegmentId) {
        let row = usage[seg.0 as usize];
        if let Some(sc) = walk(
            dev,
            layout,
            salt,
            seg,
            &row,
            s,
            data_blocks,
            block_bytes,
            &owner,
            &mut buf,
        )? {
            scans.push(sc);
        }
    }
    let mut found: Vec<Found> = scans
        .iter()
        .flat_map(|sc| {
            sc.new
                .iter()
                .map(move |&(i, st)| (st.seq, sc.seg, i, st, false))
        })
        .collect();
    found.sort_by_key(|f| f.0);
    let promise = found
        .iter()
        .map(|f| f.3.synced())
        .fold(s.max(promised), u64::max);
    let max_seq = found.last().map_or(0, |f| f.0);
    let mut report = RecoveryReport {
        checkpoint_generation: h.generation,
        other_slot_damaged: fell_back,
        segments_walked: scans.len() as u64,
        ..RecoveryReport::default()
    };
    if found.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err(StoreError::Format(
            "two blocks carry the same sequence number: the store is corrupt".into(),
        ));
    }
    claim_damaged(
        &mut found,
        &scans,
        s,
        promise,
        layout,
        fell_back,
        &mut report,
    )?;
    let applied = roll_forward(&found, s, promise, &mut map, layout, &mut report);
    let mut next_epoch = h.next_epoch;
    let to_seal = close_segments(
        &scans,
        &applied,
        &mut usage,
        &mut next_epoch,
        h.time_ticks,
        h.user_writes,
    );
    rebuild_usage(&map, &mut usage, layout, fell_back)?;
    let to_seal = to_seal
        .into_iter()
        .filter(|x| usage[x.segment.0 as usize].live > 0)
        .collect::<Vec<_>>();
    Ok(Recovered {
        needs_checkpoint: !found.is_empty() || !to_seal.is_empty(),
        map,
        usage,
        generation: h.generation,
        // Above every sequence used since the checkpoint, seen or not: its limit (after a
        // fallback, the newer checkpoint's limit is at most one window beyond it).
        next_seq: (max_seq + 1).max(if fell_back {
            h.seq_limit + super::writer::seq_window(layout)
        } else {
            h.seq_limit
        }),
        next_epoch,
        user_writes: h.user_writes,
        time_ticks: h.time_ticks,
        to_seal,
        report,
    })
}

/// Applies `found` in sequence order until the first missing sequence at or above
/// `promise` (the torn tail is cut there); returns the blocks applied per segment.
fn roll_forward(
    found: &[Found],
    s: u64,
    promise: u64,
    map: &mut L2pMap,
    layout: &Layout,
    report: &mut RecoveryReport,
) -> HashMap<SegmentId, Vec<(u32, Entry)>> {
    let mut applied: HashMap<SegmentId, Vec<(u32, Entry)>> = HashMap::new();
    let mut expected = s;
    for (i, &(seq, seg, off, st, damaged)) in found.iter().enumerate() {
        if seq > expected.max(promise) {
            report.blocks_cut = (found.len() - i) as u64;
            break;
        }
        map.set(st.pid, layout.addr(seg, off));
        let e = Entry {
            pid: st.pid,
            version: st.version,
            seq,
            crc: st.crc,
        };
        applied.entry(seg).or_default().push((off, e));
        report.blocks_rolled_forward += 1;
        report.damaged_blocks += u64::from(damaged);
        expected = seq + 1;
    }
    applied
}

/// Promised sequences without a valid block: claimed by a readable damaged block in the
/// walked segments (added to `found` as damaged), skipped after a fallback, refused
/// otherwise.
fn claim_damaged(
    found: &mut Vec<Found>,
    scans: &[SegScan],
    s: u64,
    promise: u64,
    layout: &Layout,
    fell_back: bool,
    report: &mut RecoveryReport,
) -> Result<(), StoreError> {
    let present: std::collections::BTreeSet<u64> = found.iter().map(|f| f.0).collect();
    let mut missing: std::collections::BTreeSet<u64> =
        (s..promise).filter(|q| !present.contains(q)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut claimed = std::collections::HashSet::new();
    for sc in scans {
        for &(off, st) in &sc.holes {
            if st.pid < layout.logical_pages && missing.remove(&st.seq) {
                found.push((st.seq, sc.seg, off, st, true));
                claimed.insert((sc.seg, st.seq));
            }
        }
    }
    found.sort_by_key(|f| f.0);
    if let Some(first) = missing.first() {
        // After a fallback a missing sequence may be a block of a segment reused since,
        // but not while a walked segment holds a damaged block nobody claims: it may be
        // the missing one (a torn, never promised tail cannot be told from it here).
        let unexplained = scans.iter().any(|sc| {
            !sc.damaged.is_empty()
                || sc
                    .holes
                    .iter()
                    .any(|&(_, st)| !claimed.contains(&(sc.seg, st.seq)))
        });
        if !fell_back || unexplained {
            return Err(StoreError::Format(format!(
                "{} block(s) promised durable by a sync are missing or unreadable (the first has sequence {first}): the pages they held cannot be recovered",
                missing.len()
            )));
        }
        report.skipped_blocks = missing.len() as u64;
    }
    Ok(())
}

/// Rows and summaries of the segments recovery walked: fresh fillings get a new epoch;
/// every walked segment is closed with a summary unless a valid one that matches is
/// already there.
fn close_segments(
    scans: &[SegScan],
    applied: &HashMap<SegmentId, Vec<(u32, Entry)>>,
    usage: &mut [SegmentUsage],
    next_epoch: &mut u64,
    time_ticks: f64,
    user_writes: u64,
) -> Vec<SegmentSummary> {
    let mut out = Vec::new();
    for sc in scans {
        let new = applied.get(&sc.seg).map_or(&[][..], |v| &v[..]);
        if sc.fresh && new.is_empty() {
            continue;
        }
        let prefix = sc.prefix.len() as u32;
        let written = new.iter().map(|(o, _)| o + 1).fold(prefix, u32::max);
        let mut entries = sc.prefix.clone();
        entries.resize(
            written as usize,
            Entry {
                pid: VOID_PID,
                version: 0,
                seq: 0,
                crc: 0,
            },
        );
        for &(o, e) in new {
            entries[o as usize] = e;
        }
        let row = &mut usage[sc.seg.0 as usize];
        if sc.fresh {
            row.epoch = *next_epoch;
            *next_epoch += 1;
            row.created_writes = user_writes;
            row.class = 0;
        }
        row.written = written;
        row.modified_ticks = time_ticks;
        if let Some(q) = new.iter().map(|(_, e)| e.seq).max() {
            row.last_seq = q;
        }
        if let Some(s) = sc.summary.as_ref().filter(|s| s.entries == entries) {
            row.epoch = s.epoch;
            row.class = s.class;
            row.created_writes = s.created_writes;
            row.modified_ticks = s.time;
            continue;
        }
        out.push(SegmentSummary {
            segment: sc.seg,
            epoch: row.epoch,
            time: row.modified_ticks,
            created_writes: row.created_writes,
            class: row.class,
            entries,
        });
    }
    out
}

/// Live counts from the map, states from the live counts. Every mapped block must lie in
/// the written part of its segment (unless recovery fell back to the older checkpoint,
/// whose pages may point into segments reused since: reading them reports corruption).
fn rebuild_usage(
    map: &L2pMap,
    usage: &mut [SegmentUsage],
    layout: &Layout,
    fell_back: bool,
) -> Result<(), StoreError> {
    for r in usage.iter_mut() {
        r.live = 0;
    }
    for (pid, a) in map.iter() {
        let (seg, off): (SegmentId, u32) = layout.split(a);
        let row = &mut usage[seg.0 as usize];
        if off >= row.written && !fell_back {
            return Err(StoreError::Format(format!(
                "page {pid} is mapped to block {off} of {seg}, beyond its {} written blocks: the store is corrupt",
                row.written
            )));
        }
        row.live += 1;
    }
    for r in usage.iter_mut() {
        r.state = if r.live > 0 {
            SegState::Sealed
        } else {
            SegState::Free
        };
    }
    Ok(())
}
