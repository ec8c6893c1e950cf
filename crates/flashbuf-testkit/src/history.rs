//! The model of concurrent runs (issue 11): a history of invocations and returns, and
//! what a crash may leave of each page given it.
//!
//! Each page has one writer thread (concurrent writes of one page are the caller's race,
//! see [`flashbuf_store::PageStore`]), whose writes carry increasing tags. A `sync` promises every
//! write that *returned before it was invoked*, once it returns itself. So at a crash, for
//! page `p`:
//! - the *promised* tag is the highest tag of `p` whose write returned before the
//!   invocation of some sync that returned (none: unwritten);
//! - allowed reads: the promised tag, or any tag of `p` written (invoked) after it — a
//!   crash may keep an in-flight or unsynced write, or lose it;
//! - reported corrupt: only for a store that does not mask torn writes, and only if some
//!   write of `p` after the promised one was invoked.
//!
//! Anything else — a tag older than promised, unwritten after a promise, a tag never
//! written, bytes that are not exactly the tag's — is a violation.

use super::content::{matches_fill, stamp_of};
use flashbuf_core::PageId;
use flashbuf_store::{ReadOutcome, StoreError};
use std::collections::BTreeMap;

/// One event of a concurrent run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A write of `pid` with `tag` was invoked.
    WriteInvoked {
        /// The page.
        pid: PageId,
        /// Its tag.
        tag: u64,
    },
    /// That write returned.
    WriteReturned {
        /// The page.
        pid: PageId,
        /// Its tag.
        tag: u64,
    },
    /// Sync number `id` was invoked.
    SyncInvoked {
        /// The sync (unique per run).
        id: u64,
    },
    /// Sync `id` returned successfully.
    SyncReturned {
        /// The sync.
        id: u64,
    },
}

/// What each page may hold at a point of a history.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowed {
    /// Per page: (promised tag or 0, tags invoked after it).
    pages: BTreeMap<PageId, (u64, Vec<u64>)>,
}

impl Allowed {
    /// Evaluates `history` (in the order the events happened).
    pub fn of(history: &[Event]) -> Self {
        // Position of each completed sync's invocation.
        let mut sync_at: BTreeMap<u64, usize> = BTreeMap::new();
        let mut returned_syncs = Vec::new();
        for (i, e) in history.iter().enumerate() {
            match *e {
                Event::SyncInvoked { id } => {
                    sync_at.insert(id, i);
                }
                Event::SyncReturned { id } => returned_syncs.push(id),
                _ => {}
            }
        }
        // Writes returned before the latest invocation of a sync that returned.
        let cut = returned_syncs
            .iter()
            .filter_map(|id| sync_at.get(id).copied())
            .max();
        let mut pages: BTreeMap<PageId, (u64, Vec<u64>)> = BTreeMap::new();
        for (i, e) in history.iter().enumerate() {
            if let Event::WriteReturned { pid, tag } = *e {
                if cut.is_some_and(|c| i < c) {
                    let p = pages.entry(pid).or_default();
                    p.0 = p.0.max(tag);
                }
            }
        }
        for e in history {
            if let Event::WriteInvoked { pid, tag } = *e {
                let p = pages.entry(pid).or_default();
                if tag > p.0 {
                    p.1.push(tag);
                }
            }
        }
        Self { pages }
    }

    /// The promised tag of `pid` (0: none).
    pub fn promised(&self, pid: PageId) -> u64 {
        self.pages.get(&pid).map_or(0, |p| p.0)
    }

    /// Judges a read of `pid` after a crash: `payload` is the page minus its header, `seed`
    /// the content seed of the run. `masks_torn` forbids corrupt pages.
    pub fn judge(
        &self,
        pid: PageId,
        result: Result<ReadOutcome, &StoreError>,
        payload: &[u8],
        seed: u64,
        masks_torn: bool,
    ) -> Result<(), String> {
        let (promised, later) = self.pages.get(&pid).cloned().unwrap_or_default();
        let allowed = || {
            let mut v = vec![if promised == 0 {
                "unwritten".to_string()
            } else {
                format!("write #{promised} (promised)")
            }];
            v.extend(later.iter().map(|t| format!("write #{t}")));
            v.join(" | ")
        };
        match result {
            Ok(ReadOutcome::Unwritten) if promised == 0 => Ok(()),
            Ok(ReadOutcome::Unwritten) => Err(format!(
                "{pid}: lost a promised write: reads unwritten; allowed {}",
                allowed()
            )),
            Ok(ReadOutcome::Found) => match stamp_of(payload) {
                Some((spid, tag)) if spid == pid && (tag == promised || later.contains(&tag)) => {
                    if matches_fill(payload, pid, tag, seed) {
                        Ok(())
                    } else {
                        Err(format!(
                            "{pid}: write #{tag} read back with other bytes (torn or mixed)"
                        ))
                    }
                }
                Some((spid, tag)) => Err(format!(
                    "{pid}: reads write #{tag} of {spid} (stale or phantom); allowed {}",
                    allowed()
                )),
                None => Err(format!("{pid}: short payload")),
            },
            Err(StoreError::Corrupt { .. }) if !masks_torn && !later.is_empty() => Ok(()),
            Err(e) => Err(format!("{pid}: {e}; allowed {}", allowed())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::fill;

    #[test]
    fn a_sync_promises_writes_returned_before_its_invocation() {
        let p = PageId(1);
        let h = [
            Event::WriteInvoked { pid: p, tag: 1 },
            Event::WriteReturned { pid: p, tag: 1 },
            Event::WriteInvoked { pid: p, tag: 2 },
            Event::SyncInvoked { id: 1 },
            Event::WriteReturned { pid: p, tag: 2 },
            Event::SyncReturned { id: 1 },
            Event::WriteInvoked { pid: p, tag: 3 },
        ];
        let a = Allowed::of(&h);
        assert_eq!(a.promised(p), 1);
        let mut pl = vec![0u8; 64];
        for (tag, ok) in [(1, true), (2, true), (3, true)] {
            fill(&mut pl, p, tag, 9);
            assert_eq!(a.judge(p, Ok(ReadOutcome::Found), &pl, 9, true).is_ok(), ok);
        }
        assert!(a
            .judge(p, Ok(ReadOutcome::Unwritten), &[], 9, true)
            .is_err());
        let c = StoreError::Corrupt {
            pid: p,
            reason: flashbuf_core::PageCheckError::Size { len: 1 },
        };
        assert!(a.judge(p, Err(&c), &[], 9, true).is_err());
        assert!(a.judge(p, Err(&c), &[], 9, false).is_ok());
        // Before the sync returned, nothing was promised.
        let b = Allowed::of(&h[..5]);
        assert_eq!(b.promised(p), 0);
        assert!(b.judge(p, Ok(ReadOutcome::Unwritten), &[], 9, true).is_ok());
        fill(&mut pl, p, 1, 9);
        pl[40] ^= 1;
        assert!(a.judge(p, Ok(ReadOutcome::Found), &pl, 9, true).is_err());
    }
}
