//! The segment usage table and the free-segment pool.
//!
//! Per segment: live blocks, blocks written, the newest log's sequence, the filling's
//! epoch, last-modified time, caller writes at opening, class (head) and state:
//!
//! ```text
//!  Free ──open──► Open ──seal──► Sealed ──(live reaches 0)──► PreFree ──checkpoint──► Free
//!                   └──(sealed with no live block)──────────────┘
//! ```
//! A segment whose last live block died is *pre-free* (F2FS's term): it may not be written
//! again until a checkpoint newer than every log in it is durable. The checkpoint's sync
//! makes the newer copies of its blocks durable first, and roll-forward from that
//! checkpoint never needs the segment's logs again; so every log with a sequence at or
//! after the newest checkpoint's is still intact on the device, and recovery can tell a
//! missing log from a reused segment.

use super::bytes::{le_u32, le_u64};
use super::layout::{SegmentId, USAGE_ENTRY_BYTES};
use std::collections::BTreeSet;

/// A segment's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegState {
    /// Holds nothing the store needs; may be opened.
    Free,
    /// A head appends to it.
    Open,
    /// Full (or closed by recovery); a cleaning candidate.
    Sealed,
    /// No live block, waiting for a checkpoint before it may be reused.
    PreFree,
}

impl SegState {
    fn code(self) -> u8 {
        match self {
            SegState::Free => 0,
            SegState::Open => 1,
            SegState::Sealed => 2,
            SegState::PreFree => 3,
        }
    }

    fn from_code(c: u8) -> Option<Self> {
        Some(match c {
            0 => SegState::Free,
            1 => SegState::Open,
            2 => SegState::Sealed,
            3 => SegState::PreFree,
            _ => return None,
        })
    }
}

/// One segment's row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SegmentUsage {
    /// Blocks the map points to.
    pub live: u32,
    /// Blocks written (summaries included): the next log starts here.
    pub written: u32,
    /// Sequence of the newest log written into it (0: none).
    pub last_seq: u64,
    /// Epoch of the current filling.
    pub epoch: u64,
    /// Time of the last write (time base ticks).
    pub modified_ticks: f64,
    /// Caller writes when it was opened.
    pub created_writes: u64,
    /// Head (class) that fills it.
    pub class: u8,
    /// State.
    pub state: SegState,
}

impl SegmentUsage {
    fn free() -> Self {
        Self {
            live: 0,
            written: 0,
            last_seq: 0,
            epoch: 0,
            modified_ticks: 0.0,
            created_writes: 0,
            class: 0,
            state: SegState::Free,
        }
    }

    /// Encodes into [`USAGE_ENTRY_BYTES`] bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.live.to_le_bytes());
        out.extend_from_slice(&self.written.to_le_bytes());
        out.extend_from_slice(&self.last_seq.to_le_bytes());
        out.extend_from_slice(&self.epoch.to_le_bytes());
        out.extend_from_slice(&self.modified_ticks.to_bits().to_le_bytes());
        out.extend_from_slice(&self.created_writes.to_le_bytes());
        out.push(self.class);
        out.push(self.state.code());
        out.extend_from_slice(&[0u8; 6]);
    }

    /// Decodes [`USAGE_ENTRY_BYTES`] bytes; `None` if the state is unknown.
    pub fn decode(b: &[u8]) -> Option<Self> {
        debug_assert_eq!(b.len() as u64, USAGE_ENTRY_BYTES);
        let u32_at = |at: usize| le_u32(b, at);
        let u64_at = |at: usize| le_u64(b, at);
        Some(Self {
            live: u32_at(0),
            written: u32_at(4),
            last_seq: u64_at(8),
            epoch: u64_at(16),
            modified_ticks: f64::from_bits(u64_at(24)),
            created_writes: u64_at(32),
            class: b[40],
            state: SegState::from_code(b[41])?,
        })
    }
}

/// The table and the pools.
#[derive(Debug, Clone)]
pub struct UsageTable {
    segs: Vec<SegmentUsage>,
    free: BTreeSet<u32>,
    prefree: Vec<u32>,
}

impl UsageTable {
    /// `n` free segments.
    pub fn new(n: u32) -> Self {
        Self::from_rows(vec![SegmentUsage::free(); n as usize])
    }

    /// A table of `rows`, pools rebuilt from their states.
    pub fn from_rows(segs: Vec<SegmentUsage>) -> Self {
        let free = (0..segs.len() as u32)
            .filter(|&i| segs[i as usize].state == SegState::Free)
            .collect();
        let prefree = (0..segs.len() as u32)
            .filter(|&i| segs[i as usize].state == SegState::PreFree)
            .collect();
        Self {
            segs,
            free,
            prefree,
        }
    }

    /// Rows, by segment.
    pub fn rows(&self) -> &[SegmentUsage] {
        &self.segs
    }

    /// Segment `s`'s row.
    pub fn get(&self, s: SegmentId) -> &SegmentUsage {
        &self.segs[s.0 as usize]
    }

    /// Segment `s`'s row, mutable (callers keep the state consistent with the pools).
    pub fn get_mut(&mut self, s: SegmentId) -> &mut SegmentUsage {
        &mut self.segs[s.0 as usize]
    }

    /// Free segments.
    pub fn free_count(&self) -> u32 {
        self.free.len() as u32
    }

    /// Pre-free segments.
    pub fn prefree_count(&self) -> u32 {
        self.prefree.len() as u32
    }

    /// Opens the lowest free segment for a head of `class`; `None` if none is free.
    pub fn open(
        &mut self,
        class: u8,
        epoch: u64,
        now_ticks: f64,
        user_writes: u64,
    ) -> Option<SegmentId> {
        let s = self.free.pop_first()?;
        self.segs[s as usize] = SegmentUsage {
            live: 0,
            written: 0,
            last_seq: 0,
            epoch,
            modified_ticks: now_ticks,
            created_writes: user_writes,
            class,
            state: SegState::Open,
        };
        Some(SegmentId(s))
    }

    /// Seals an open segment (pre-free at once if nothing in it is live).
    pub fn seal(&mut self, s: SegmentId) {
        let row = &mut self.segs[s.0 as usize];
        debug_assert_eq!(row.state, SegState::Open);
        if row.live == 0 {
            row.state = SegState::PreFree;
            self.prefree.push(s.0);
        } else {
            row.state = SegState::Sealed;
        }
    }

    /// One more live block in `s`.
    pub fn add_live(&mut self, s: SegmentId) {
        self.segs[s.0 as usize].live += 1;
    }

    /// One live block of `s` died; a sealed segment with none left becomes pre-free.
    pub fn remove_live(&mut self, s: SegmentId) {
        let row = &mut self.segs[s.0 as usize];
        debug_assert!(row.live > 0, "{s} has no live block to remove");
        row.live -= 1;
        if row.live == 0 && row.state == SegState::Sealed {
            row.state = SegState::PreFree;
            self.prefree.push(s.0);
        }
    }

    /// A checkpoint is durable: every pre-free segment is free.
    pub fn release_prefree(&mut self) {
        for s in self.prefree.drain(..) {
            let row = &mut self.segs[s as usize];
            debug_assert_eq!(row.state, SegState::PreFree);
            row.state = SegState::Free;
            self.free.insert(s);
        }
    }

    /// The pre-free segments.
    pub fn prefree_segments(&self) -> impl Iterator<Item = u32> + '_ {
        self.prefree.iter().copied()
    }

    /// Sealed segments (cleaning candidates before filtering).
    pub fn sealed(&self) -> impl Iterator<Item = (SegmentId, &SegmentUsage)> + '_ {
        self.segs
            .iter()
            .enumerate()
            .filter(|(_, r)| r.state == SegState::Sealed)
            .map(|(i, r)| (SegmentId(i as u32), r))
    }

    /// Checks the pools against the states.
    pub fn check(&self) -> Result<(), String> {
        for (i, r) in self.segs.iter().enumerate() {
            let i = i as u32;
            let in_free = self.free.contains(&i);
            let in_pre = self.prefree.contains(&i);
            let ok = match r.state {
                SegState::Free => in_free && !in_pre && r.live == 0,
                SegState::PreFree => in_pre && !in_free && r.live == 0,
                SegState::Open => !in_free && !in_pre,
                SegState::Sealed => !in_free && !in_pre && r.live > 0,
            };
            if !ok {
                return Err(format!(
                    "segment {i}: state {:?} with {} live blocks, in free pool {in_free}, pre-free {in_pre}",
                    r.state, r.live
                ));
            }
        }
        if self.free.len() + self.prefree.len() > self.segs.len() {
            return Err("free and pre-free pools hold more segments than exist".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_go_round_the_states() {
        let mut t = UsageTable::new(3);
        let s = t.open(2, 7, 5.0, 9).unwrap();
        assert_eq!(s, SegmentId(0));
        t.add_live(s);
        t.seal(s);
        assert_eq!(t.get(s).state, SegState::Sealed);
        assert_eq!(t.sealed().count(), 1);
        t.remove_live(s);
        assert_eq!(
            (t.get(s).state, t.prefree_count(), t.free_count()),
            (SegState::PreFree, 1, 2)
        );
        t.check().unwrap();
        t.release_prefree();
        assert_eq!(t.free_count(), 3);
        t.check().unwrap();
        let mut bytes = Vec::new();
        let row = SegmentUsage {
            class: 4,
            state: SegState::Sealed,
            live: 3,
            modified_ticks: 1.25,
            ..SegmentUsage::free()
        };
        row.encode(&mut bytes);
        assert_eq!(bytes.len() as u64, USAGE_ENTRY_BYTES);
        assert_eq!(SegmentUsage::decode(&bytes), Some(row));
        bytes[41] = 9;
        assert_eq!(SegmentUsage::decode(&bytes), None);
    }
}
