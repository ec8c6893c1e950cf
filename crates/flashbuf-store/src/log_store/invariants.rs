//! `check_invariants`: the map, the summaries and the usage counts agree.
//!
//! - Pools and states agree ([`super::usage::UsageTable::check`]).
//! - Heads: one open segment each at most, every open segment has a head, and its
//!   written count is the number of summary entries the head holds for it.
//! - Every sealed segment has a valid summary of its filling (epoch) with one entry per
//!   written block.
//! - Every mapped page points into an open or sealed segment, below its written count, at
//!   a block whose summary entry (the head's, for an open segment) names the page.
//! - Each segment's live count is the number of map entries pointing into it.

use super::layout::SegmentId;
use super::scan::read_summary;
use super::state::{Ctx, State};
use super::summary::Entry;
use super::usage::SegState;
use flashbuf_device::Device;
use std::collections::HashMap;

impl State {
    /// Verifies the invariants; `Err` names the first violation.
    pub fn check_invariants<D: Device + ?Sized>(&self, cx: &Ctx<'_, D>) -> Result<(), String> {
        let l = cx.layout;
        self.usage.check()?;
        if !self.queue.offsets.is_empty() {
            return Err(format!(
                "{} blocks queued between calls",
                self.queue.offsets.len()
            ));
        }
        let mut entries: HashMap<SegmentId, Vec<Entry>> = self.check_heads()?;
        for (i, row) in self.usage.rows().iter().enumerate() {
            let seg = SegmentId(i as u32);
            if row.state != SegState::Sealed {
                continue;
            }
            let s = read_summary(cx.dev, l, cx.salt, seg, cx.data_blocks())
                .map_err(|e| format!("reading {seg}'s summary: {e}"))?
                .map_err(|e| format!("{seg} is sealed but its summary is invalid ({e:?})"))?;
            if s.epoch != row.epoch || s.entries.len() != row.written as usize {
                return Err(format!(
                    "{seg}: summary of epoch {} with {} entries, usage says epoch {} with {} blocks",
                    s.epoch,
                    s.entries.len(),
                    row.epoch,
                    row.written
                ));
            }
            entries.insert(seg, s.entries);
        }
        let mut live = vec![0u32; l.segments as usize];
        for (pid, a) in self.map.iter() {
            let (seg, off) = l.split(a);
            let row = self.usage.get(seg);
            if !matches!(row.state, SegState::Open | SegState::Sealed) || off >= row.written {
                return Err(format!(
                    "page {pid} is mapped to block {off} of {seg}, which is {:?} with {} blocks written",
                    row.state, row.written
                ));
            }
            live[seg.0 as usize] += 1;
            let named = entries
                .get(&seg)
                .and_then(|e| e.get(off as usize))
                .map(|e| e.pid);
            if named != Some(pid) {
                return Err(format!(
                    "page {pid} is mapped to block {off} of {seg}, whose summary names {named:?}"
                ));
            }
        }
        for (i, row) in self.usage.rows().iter().enumerate() {
            if row.live != live[i] {
                return Err(format!(
                    "segment {i}: usage counts {} live blocks, the map points {} into it",
                    row.live, live[i]
                ));
            }
        }
        if self.map.mapped() != live.iter().map(|&x| u64::from(x)).sum::<u64>() {
            return Err("mapped pages and live blocks differ".into());
        }
        Ok(())
    }

    /// Heads against the usage table; returns the open segments' entries.
    fn check_heads(&self) -> Result<HashMap<SegmentId, Vec<Entry>>, String> {
        let mut out = HashMap::new();
        for (h, head) in self.heads.iter().enumerate() {
            let Some(seg) = head.seg else {
                if !head.entries.is_empty() {
                    return Err(format!("head {h} holds entries without a segment"));
                }
                continue;
            };
            let row = self.usage.get(seg);
            if row.state != SegState::Open || out.contains_key(&seg) {
                return Err(format!(
                    "head {h} writes {seg}, which is {:?} or shared",
                    row.state
                ));
            }
            if head.entries.len() != row.written as usize {
                return Err(format!(
                    "head {h}: {} entries for {seg}, which has {} blocks written",
                    head.entries.len(),
                    row.written
                ));
            }
            out.insert(seg, head.entries.clone());
        }
        let opened = self
            .usage
            .rows()
            .iter()
            .filter(|r| r.state == SegState::Open)
            .count();
        if opened != out.len() {
            return Err(format!(
                "{opened} segments are open but {} heads write",
                out.len()
            ));
        }
        Ok(out)
    }
}
