//! The mapping table: for each page with records in the current log-space generation,
//! where its ICL log is.
//!
//! Paper (ICL paper, §2): "The mapping table maintains the links from each DBMS-page to
//! the corresponding log-page"; reading a page takes "only one log-page including the
//! most recently incremented log for the DBMS-page".
//!
//! # Readings
//! - An entry locates the record itself (log page, byte offset, length: 8 bytes) and
//!   keeps the record's ranges, so that a write can tell exactly whether the page's logs
//!   reached the merge threshold without reading the log page (4 bytes per range; see
//!   [`Mapping::memory_bytes`]). The paper's table needs only the log page.
//! - A page keeps its entry after it went home whole ([`Entry::Home`]) until the next
//!   generation: its older records are still in the log space, and a tombstone supersedes
//!   them at the next flush.
//! - After recovery an entry lists every record of the page in the log space, newest
//!   first ([`Entry::Unresolved`]); the first read or flush of the page picks the one that
//!   applies to its home page (see `read.rs`).
//! - Each entry remembers the sync epoch of the page's last write, so a log-space merge
//!   knows which home pages hold only synced data and must be double-written.

use super::log::{Span, Spans};
use flashbuf_core::PageId;
use std::collections::HashMap;

/// Where a record lies in the log space (pages are at most 64 KiB, records shorter than
/// a page).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogRef {
    /// Log page.
    pub slot: u32,
    /// Byte offset of the record in the log page.
    pub offset: u16,
    /// Bytes of the record.
    pub len: u16,
}

/// A range as (start, length), 4 bytes.
pub type PackedSpan = (u16, u16);

/// Spans packed for the table.
pub fn pack(spans: &[Span]) -> Box<[PackedSpan]> {
    spans
        .iter()
        .map(|&(s, e)| (s as u16, (e - s) as u16))
        .collect()
}

/// Packed spans back as `start..end`.
pub fn unpack(spans: &[PackedSpan]) -> Spans {
    spans
        .iter()
        .map(|&(s, l)| (u32::from(s), u32::from(s) + u32::from(l)))
        .collect()
}

/// What the mapping table knows of a page's records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// The page's ICL log is the record at `at`, over `spans`.
    Log {
        /// The record.
        at: LogRef,
        /// Its ranges.
        spans: Box<[PackedSpan]>,
    },
    /// Records of the page are in the log space, but none applies: the home page is
    /// newer (it went home whole), or the newest record is a tombstone.
    Home,
    /// Recovered, not yet checked against the home page: every record of the page in the
    /// log space, newest first.
    Unresolved(Vec<LogRef>),
}

/// A mapping-table entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapEntry {
    /// What is known of the page's records.
    pub state: Entry,
    /// Sync epoch of the page's last write (epochs count completed syncs).
    pub epoch: u64,
}

impl MapEntry {
    /// An upper bound of the record size of the page's ICL log (0 without one): exact
    /// for a resolved log, the largest candidate's for an unresolved page.
    pub fn log_record_bound(&self) -> usize {
        match &self.state {
            Entry::Log { at, .. } => at.len as usize,
            Entry::Home => 0,
            Entry::Unresolved(c) => c.iter().map(|r| r.len as usize).max().unwrap_or(0),
        }
    }
}

/// The mapping table.
#[derive(Debug, Default)]
pub struct Mapping {
    map: HashMap<PageId, MapEntry>,
}

impl Mapping {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The entry of `pid`.
    pub fn get(&self, pid: PageId) -> Option<&MapEntry> {
        self.map.get(&pid)
    }

    /// Sets `pid`'s entry.
    pub fn set(&mut self, pid: PageId, state: Entry, epoch: u64) {
        self.map.insert(pid, MapEntry { state, epoch });
    }

    /// [`Mapping::set`] of [`Entry::Log`]: `pid`'s log is record `at`, over `spans`. An
    /// entry that already holds as many packed spans (a copy forward usually keeps the
    /// page's ranges) is rewritten in place, without allocating new ones.
    pub fn set_log(&mut self, pid: PageId, at: LogRef, spans: &[Span], epoch: u64) {
        if let Some(MapEntry {
            state:
                Entry::Log {
                    at: old_at,
                    spans: old,
                },
            epoch: old_epoch,
        }) = self.map.get_mut(&pid)
        {
            if old.len() == spans.len() {
                for (o, &(s, e)) in old.iter_mut().zip(spans) {
                    *o = (s as u16, (e - s) as u16);
                }
                (*old_at, *old_epoch) = (at, epoch);
                return;
            }
        }
        self.set(
            pid,
            Entry::Log {
                at,
                spans: pack(spans),
            },
            epoch,
        );
    }

    /// Marks `pid` written in `epoch` (if it has an entry).
    pub fn touch(&mut self, pid: PageId, epoch: u64) {
        if let Some(e) = self.map.get_mut(&pid) {
            e.epoch = epoch;
        }
    }

    /// Pages with entries.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The pages with entries, sorted.
    pub fn pids(&self) -> Vec<PageId> {
        let mut v: Vec<PageId> = self.map.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// Pages whose ICL log is resolved, and pages not yet resolved.
    pub fn counts(&self) -> (usize, usize) {
        let mut logs = 0;
        let mut unresolved = 0;
        for e in self.map.values() {
            match e.state {
                Entry::Log { .. } => logs += 1,
                Entry::Unresolved(_) => unresolved += 1,
                Entry::Home => {}
            }
        }
        (logs, unresolved)
    }

    /// Forgets every entry (a new log-space generation).
    pub fn clear(&mut self) {
        self.map.clear();
    }

    /// Approximate bytes of memory: the hash table's slots (key, entry and one control
    /// byte each, at its capacity) and the entries' heap (ranges, candidates).
    pub fn memory_bytes(&self) -> usize {
        let slot = std::mem::size_of::<PageId>() + std::mem::size_of::<MapEntry>() + 1;
        let heap: usize = self
            .map
            .values()
            .map(|e| match &e.state {
                Entry::Log { spans, .. } => spans.len() * std::mem::size_of::<PackedSpan>(),
                Entry::Home => 0,
                Entry::Unresolved(c) => c.capacity() * std::mem::size_of::<LogRef>(),
            })
            .sum();
        self.map.capacity() * slot + heap
    }

    /// Every entry.
    pub fn iter(&self) -> impl Iterator<Item = (&PageId, &MapEntry)> {
        self.map.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new record of a page with as many ranges rewrites its packed spans in place;
    /// another count packs anew; either way the entry is the one `set` would make.
    #[test]
    fn set_log_rewrites_spans_of_the_same_count_in_place() {
        let mut m = Mapping::new();
        let at = |slot| LogRef {
            slot,
            offset: 48,
            len: 80,
        };
        m.set_log(PageId(1), at(0), &[(0, 32), (40, 84)], 1);
        let ptr = |m: &Mapping| match &m.get(PageId(1)).unwrap().state {
            Entry::Log { spans, .. } => spans.as_ptr(),
            _ => unreachable!(),
        };
        let first = ptr(&m);
        m.set_log(PageId(1), at(3), &[(0, 32), (100, 200)], 2);
        assert_eq!(ptr(&m), first, "rewritten in place");
        let want = |slot, spans: &[Span], epoch| MapEntry {
            state: Entry::Log {
                at: at(slot),
                spans: pack(spans),
            },
            epoch,
        };
        assert_eq!(m.get(PageId(1)), Some(&want(3, &[(0, 32), (100, 200)], 2)));
        m.set_log(PageId(1), at(4), &[(0, 300)], 5);
        assert_eq!(m.get(PageId(1)), Some(&want(4, &[(0, 300)], 5)));
    }

    #[test]
    fn entries_bound_their_log_and_count() {
        let mut m = Mapping::new();
        let r = |slot, len| LogRef {
            slot,
            offset: 48,
            len,
        };
        m.set(
            PageId(1),
            Entry::Log {
                at: r(0, 100),
                spans: pack(&[(0, 32), (40, 84)]),
            },
            0,
        );
        assert_eq!(
            unpack(&pack(&[(0, 32), (40, 84)])).as_slice(),
            &[(0, 32), (40, 84)]
        );
        assert_eq!(std::mem::size_of::<LogRef>(), 8);
        m.set(PageId(2), Entry::Unresolved(vec![r(3, 60), r(1, 90)]), 0);
        m.set(PageId(3), Entry::Home, 0);
        assert_eq!(m.get(PageId(1)).unwrap().log_record_bound(), 100);
        assert_eq!(m.get(PageId(2)).unwrap().log_record_bound(), 90);
        assert_eq!(m.get(PageId(3)).unwrap().log_record_bound(), 0);
        assert_eq!(m.counts(), (1, 1));
        m.touch(PageId(3), 5);
        assert_eq!(m.get(PageId(3)).unwrap().epoch, 5);
        assert_eq!(m.pids(), vec![PageId(1), PageId(2), PageId(3)]);
        assert!(m.memory_bytes() > 0);
        m.clear();
        assert!(m.is_empty());
    }
}
