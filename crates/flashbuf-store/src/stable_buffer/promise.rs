//! What `sync()` promised, durably (issue 11, bugs B and C): the promise record and the
//! promise sync.
//!
//! # Why a record
//! Recovery must tell a torn slot that no sync promised (fine to drop: the page comes back
//! old) from a slot whose contents a completed `sync()` promised (its loss is corruption:
//! the page must be reported, never served as an older copy). A slot's own bytes cannot
//! say which: a damaged slot's header is damaged too. So every promise sync leaves a
//! durable *promise record* in the state record ([`crate::state`]): the staging sequence
//! high-water mark `S` (every slot write numbered `≤ S` had completed when the sync
//! started) and, for every page staged at that moment, the slot, sequence number,
//! destination and version of its promised copy — plus the pages already known lost.
//!
//! # The promise sync
//! 1. Fence (bug C): raise `promise_fence` (no new in-place update starts: a writer that
//!    would update a fresh slot in place takes a new slot instead) and wait until no
//!    in-place write is in flight. Without the fence a sync could promise a copy an
//!    in-place write was overwriting, and a torn overwrite would lose it.
//! 2. Under the state lock: clear `fresh` (promised copies are never overwritten in
//!    place), move held slots to releasing, and take the snapshot: every mapped slot (all
//!    their writes have completed: new slots are mapped only when their write returns,
//!    and no in-place write is in flight) and `S`, just below the lowest sequence number
//!    of a slot write still in flight — so every write numbered `≤ S` has completed, and a
//!    copy numbered `≤ S` that the snapshot does not list was superseded or flushed. (A
//!    mark at the last number assigned would make an in-flight new slot's copy dead at
//!    recovery, and a torn flush of it home then lost a page no sync had promised: the
//!    schedule explorer found that.)
//! 3. Sync the device: everything the snapshot lists is durable.
//! 4. Commit the record (both state copies, one after the other, each synced: see
//!    [`crate::state`]). Only now does `sync()` return, and only now are the releasing slots free: a slot a
//!    durable record lists is reused only after a later record that no longer lists it is
//!    durable — or after a flush made the page's home copy durable (a flush frees its
//!    slots after its own sync), which recovery checks through the home version.
//!
//! Three device syncs per promise that promises something new (a record listing copies
//! must never be durable before them, and must survive damage to one of its copies); the
//! record is skipped when it would say what the durable one says.
//!
//! # Recovery's reading of the record
//! For each destination `d`, with `R` the durable record:
//! - *candidates* are valid slots that `R` lists with exactly their (sequence, page,
//!   version), and valid slots numbered `> S` (written after the promise, never promised);
//!   a valid slot numbered `≤ S` that `R` does not list is dead (superseded or flushed
//!   before the promise) and is never served — even if the home copy is damaged;
//! - the newest candidate (highest sequence) is staged if its version is newer than the
//!   home copy's (a home copy failing its check counts as older), as in the paper;
//! - if `R` promised `d` at version `v` and no candidate survives, the promise holds only
//!   if the home copy is valid at version `≥ v` (the page was flushed); otherwise `d` is
//!   *lost*: reads report it corrupt ([`PageCheckError::Stale`]), the next records carry
//!   it (so every later open reports it too), and only a new write of `d` clears it.
//!
//! A torn never-promised slot is either unlisted (dropped) or a listed slot reused after
//! a flush (its page's home copy then holds the promised version): dropped silently
//! either way. Both state copies hold the latest record at rest, so damage to one loses
//! nothing; a commit cut short by a crash leaves the previous record (the durable truth:
//! that sync never returned), under which the cut promise's copies, numbered above its
//! `S`, still count as candidates.
//!
//! Not detectable: a device that silently returns an older *valid* image of a home page
//! after its staged copy was flushed and reused (a lost write at rest; no store here keeps
//! a per-page version map).

use super::{Inner, State};
use crate::StoreError;
use flashbuf_core::page::PageCheckError;
use flashbuf_core::PageId;
use flashbuf_device::Device;
use std::collections::HashMap;
use std::sync::atomic::Ordering::Relaxed;

/// Slot number of a lost page's entry (no slot holds its promised copy).
pub const NO_SLOT: u32 = u32::MAX;
/// Bytes of one entry: slot (4), sequence (6), destination (8), version (8).
const ENTRY_BYTES: usize = 26;
/// Bytes before the entries: `S` (8) and the entry count (4).
const HEAD_BYTES: usize = 12;

/// One promised copy (or, with [`NO_SLOT`], one lost page).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The slot holding the promised copy, or [`NO_SLOT`].
    pub slot: u32,
    /// Its staging sequence number.
    pub seq: u64,
    /// The page.
    pub dest: u64,
    /// The promised version.
    pub version: u64,
}

/// The store-specific payload of the state record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromiseRecord {
    /// Sequence high-water mark at the promise.
    pub hwm: u64,
    /// Promised copies and lost pages.
    pub entries: Vec<Entry>,
}

/// The state record's payload: the promise record, then the written-page map
/// (`crate::written_map`).
pub fn payload(record: &PromiseRecord, map: &[u8]) -> Vec<u8> {
    let mut b = record.encode();
    b.extend_from_slice(map);
    b
}

/// Splits a state record's payload into the promise record's bytes (their length follows
/// from its entry count; a payload too short for it stays whole, and its decoding then
/// reports it) and the written-page map's.
pub fn split_payload(b: &[u8]) -> (&[u8], &[u8]) {
    if b.len() < HEAD_BYTES {
        return (b, &[]);
    }
    let mut n = [0u8; 4];
    n.copy_from_slice(&b[8..12]);
    let len = (u32::from_le_bytes(n) as usize)
        .checked_mul(ENTRY_BYTES)
        .and_then(|x| x.checked_add(HEAD_BYTES))
        .filter(|&l| l <= b.len());
    match len {
        Some(l) => b.split_at(l),
        None => (b, &[]),
    }
}

/// Largest payload for `slots` slots: one entry per slot, and as many lost pages.
pub fn payload_max(slots: u32) -> usize {
    HEAD_BYTES + 2 * slots as usize * ENTRY_BYTES
}

impl PromiseRecord {
    /// Encodes the payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(HEAD_BYTES + self.entries.len() * ENTRY_BYTES);
        b.extend_from_slice(&self.hwm.to_le_bytes());
        b.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        for e in &self.entries {
            b.extend_from_slice(&e.slot.to_le_bytes());
            b.extend_from_slice(&e.seq.to_le_bytes()[..6]);
            b.extend_from_slice(&e.dest.to_le_bytes());
            b.extend_from_slice(&e.version.to_le_bytes());
        }
        b
    }

    /// Decodes a payload (an empty one is the record of a new format: nothing promised).
    pub fn decode(b: &[u8], slots: u32) -> Result<Self, StoreError> {
        let bad = |m: &str| {
            StoreError::Format(format!(
                "stable-buffer promise record {m}: the store is corrupt"
            ))
        };
        if b.is_empty() {
            return Ok(Self::default());
        }
        if b.len() < HEAD_BYTES {
            return Err(bad("is too short"));
        }
        let u64_at = |at: usize, n: usize| {
            let mut a = [0u8; 8];
            a[..n].copy_from_slice(&b[at..at + n]);
            u64::from_le_bytes(a)
        };
        let count = u64_at(8, 4) as usize;
        if b.len() != HEAD_BYTES + count * ENTRY_BYTES {
            return Err(bad("has the wrong length"));
        }
        let mut entries = Vec::with_capacity(count);
        for k in 0..count {
            let at = HEAD_BYTES + k * ENTRY_BYTES;
            let e = Entry {
                slot: u64_at(at, 4) as u32,
                seq: u64_at(at + 4, 6),
                dest: u64_at(at + 10, 8),
                version: u64_at(at + 18, 8),
            };
            if e.slot != NO_SLOT && e.slot >= slots {
                return Err(bad(&format!("names slot {} of {slots}", e.slot)));
            }
            entries.push(e);
        }
        Ok(Self {
            hwm: u64_at(0, 8),
            entries,
        })
    }
}

impl<D: Device> Inner<D> {
    /// The record a promise starting now makes: every mapped slot and every lost page.
    fn snapshot_promise(&self, st: &State) -> PromiseRecord {
        let mut entries: Vec<Entry> = st
            .sbtt
            .iter()
            .map(|(dest, slot)| {
                let m = st.meta[slot as usize];
                Entry {
                    slot,
                    seq: m.seq,
                    dest,
                    version: m.version,
                }
            })
            .chain(st.lost.iter().map(|(&dest, l)| Entry {
                slot: NO_SLOT,
                seq: 0,
                dest,
                version: l.promised,
            }))
            .collect();
        entries.sort_unstable_by_key(|e| (e.dest, e.slot));
        // Every write numbered up to the mark has completed: a write still in flight
        // (a new slot, mapped only when it returns) keeps its copy a candidate.
        let hwm = st
            .seqs_in_flight
            .first()
            .map_or(st.next_seq - 1, |&s| s - 1);
        PromiseRecord { hwm, entries }
    }

    /// Syncs the device. A *promise* sync (callers' `sync`, recovery, releasing held
    /// slots) fences in-place writers, promises the staged copies and commits the promise
    /// record (see the module docs); a flush's own syncs only make its pages durable and
    /// promise nothing, so staged pages keep being updated in place between callers'
    /// syncs.
    pub(super) fn sync_device(&self, promise: bool) -> Result<(), StoreError> {
        self.sync_on(&self.dev, promise)
    }

    /// [`Inner::sync_device`] with the device sync issued through `dev` (the device, or
    /// its background queue for a background flush's own syncs).
    pub(super) fn sync_on(&self, dev: &dyn Device, promise: bool) -> Result<(), StoreError> {
        let _serial = self.sync_lock.lock();
        self.poison.check()?;
        let record = {
            let mut st = self.state.lock();
            let record = if promise {
                if !self.unfenced_sync.load(Relaxed) {
                    st.promise_fence = true;
                    while st.in_place_in_flight > 0 {
                        self.changed.wait(&mut st);
                    }
                    st.promise_fence = false;
                }
                st.bits.start_sync();
                // The written-page map, like the promise, before the device sync.
                let map = self
                    .written
                    .snapshot_always(crate::written_map::BUDGET_BYTES);
                Some((self.snapshot_promise(&st), map))
            } else {
                None
            };
            st.syncs_in_flight += 1;
            record
        };
        let len_before = self.dev.len();
        let mut r = self.poison.guard(dev.sync());
        let mut committed = false;
        let mut map_committed = None;
        if let (Ok(()), Some((rec, map))) = (&r, record) {
            // The promise and the written-page map, and the data area's extent if it grew
            // (see `crate::state`).
            let payload = payload(&rec, &map.payload);
            let durable = self.state_area.record();
            let grew = len_before > durable.data_end;
            let changed = payload != durable.payload;
            if changed || grew {
                r = self.state_area.commit(
                    &self.dev,
                    &self.poison,
                    grew.then_some(len_before),
                    changed.then_some(payload),
                );
                committed = true;
            }
            map_committed = Some(map.cut);
        }
        if let (Ok(()), Some(cut)) = (&r, map_committed) {
            self.written.committed(cut);
        }
        let mut st = self.state.lock();
        st.syncs_in_flight -= 1;
        if r.is_ok() {
            if promise {
                st.bits.finish_sync();
            }
            st.stats.device_syncs += 1 + u64::from(committed);
            st.stats.promise_records += u64::from(committed);
        }
        self.changed.notify_all();
        if r.is_err() {
            self.flusher_wake.notify_all();
        }
        r
    }

    /// The error a read of lost page `pid` returns.
    pub(super) fn lost_error(pid: PageId, found: u64, promised: u64) -> StoreError {
        StoreError::Corrupt {
            pid,
            reason: PageCheckError::Stale { found, promised },
        }
    }
}

/// Recovery's verdict on one destination (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Stage the copy in this slot (sequence, version).
    Stage { slot: u32, seq: u64, version: u64 },
    /// Serve the home copy.
    Home,
    /// The promised version is lost: report the page corrupt.
    Lost { promised: u64, found: u64 },
}

/// A candidate copy found by the scan.
#[derive(Debug, Clone, Copy)]
pub(super) struct Candidate {
    pub(super) slot: u32,
    pub(super) seq: u64,
    pub(super) version: u64,
}

/// Judges destination `d`: its newest candidate, its promised entry (if the record has
/// one), and its home version (`Some(0)` unwritten, `None` failing its check).
pub(super) fn judge(
    newest: Option<Candidate>,
    promised: Option<Entry>,
    home: Option<u64>,
) -> Verdict {
    match (newest, promised) {
        (Some(c), _) => {
            if home.is_none_or(|h| c.version > h) {
                Verdict::Stage {
                    slot: c.slot,
                    seq: c.seq,
                    version: c.version,
                }
            } else {
                Verdict::Home
            }
        }
        (None, Some(e)) if home.is_some_and(|h| h >= e.version) => Verdict::Home,
        (None, Some(e)) => Verdict::Lost {
            promised: e.version,
            found: home.unwrap_or(0),
        },
        (None, None) => Verdict::Home,
    }
}

/// Whether a valid slot image (`seq`, `dest`, `version`) in `slot` is a candidate under
/// `record`, whose entries are indexed by slot in `listed`.
pub(super) fn is_candidate(
    record: &PromiseRecord,
    listed: &HashMap<u32, Entry>,
    slot: u32,
    seq: u64,
    dest: u64,
    version: u64,
) -> bool {
    seq > record.hwm
        || listed
            .get(&slot)
            .is_some_and(|e| e.seq == seq && e.dest == dest && e.version == version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_roundtrips_and_refuses_bad_lengths() {
        let r = PromiseRecord {
            hwm: 77,
            entries: vec![
                Entry {
                    slot: 3,
                    seq: 70,
                    dest: 9,
                    version: 4,
                },
                Entry {
                    slot: NO_SLOT,
                    seq: 0,
                    dest: 11,
                    version: 2,
                },
            ],
        };
        let b = r.encode();
        assert_eq!(b.len(), HEAD_BYTES + 2 * ENTRY_BYTES);
        assert_eq!(PromiseRecord::decode(&b, 8).unwrap(), r);
        assert!(PromiseRecord::decode(&b[..b.len() - 1], 8).is_err());
        assert!(PromiseRecord::decode(&b, 3)
            .unwrap_err()
            .to_string()
            .contains("slot 3 of 3"));
        assert_eq!(
            PromiseRecord::decode(&[], 8).unwrap(),
            PromiseRecord::default()
        );
        assert!(b.len() <= payload_max(1));
    }

    #[test]
    fn verdicts() {
        let c = |seq, version| {
            Some(Candidate {
                slot: 1,
                seq,
                version,
            })
        };
        let e = Some(Entry {
            slot: 2,
            seq: 5,
            dest: 0,
            version: 3,
        });
        assert!(matches!(
            judge(c(9, 4), e, Some(3)),
            Verdict::Stage { slot: 1, .. }
        ));
        assert_eq!(judge(c(9, 4), e, Some(4)), Verdict::Home);
        assert!(matches!(judge(c(9, 4), None, None), Verdict::Stage { .. }));
        // The promised copy is gone: home must hold at least the promised version.
        assert_eq!(judge(None, e, Some(3)), Verdict::Home);
        assert_eq!(
            judge(None, e, Some(2)),
            Verdict::Lost {
                promised: 3,
                found: 2
            }
        );
        assert_eq!(
            judge(None, e, None),
            Verdict::Lost {
                promised: 3,
                found: 0
            }
        );
        assert_eq!(judge(None, None, None), Verdict::Home);
        let rec = PromiseRecord {
            hwm: 10,
            entries: vec![],
        };
        let listed: HashMap<u32, Entry> = [(
            2,
            Entry {
                slot: 2,
                seq: 5,
                dest: 0,
                version: 3,
            },
        )]
        .into();
        assert!(is_candidate(&rec, &listed, 2, 5, 0, 3));
        assert!(
            !is_candidate(&rec, &listed, 2, 5, 0, 2),
            "not the promised copy"
        );
        assert!(
            !is_candidate(&rec, &listed, 4, 6, 0, 2),
            "dead: numbered below S, unlisted"
        );
        assert!(
            is_candidate(&rec, &listed, 4, 11, 0, 2),
            "written after the promise"
        );
    }
}
