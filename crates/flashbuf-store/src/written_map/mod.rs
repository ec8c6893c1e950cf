//! The set of pages a store has ever written, kept durable in its state record, so that a
//! page whose bytes were lost at rest (zeroed entirely: a trimmed or unmapped block, a
//! firmware that loses a mapping) is reported corrupt instead of being served as "never
//! written" (issue 11: the damage-at-rest fuzzer found the direct store doing exactly that).
//!
//! The direct store has no per-page map: its pages live at `page_id × page_size`, and a page
//! never written reads as zeros. Only a durable record of *which* pages were written tells
//! those zeros from lost data. Pages are never unwritten again (no store deletes a page), so
//! the set only grows; databases allocate pages densely, so it is kept as ranges of page
//! ids, and it stays small: one range per file of a database, a few per B+-tree.
//!
//! # Encoding (the state record's payload)
//! | field | |
//! |---|---|
//! | tag `0x57` ('W') | version 1 of this payload |
//! | varint `cut + 1`, or 0 | see *Budget* |
//! | varint `n` | ranges that follow |
//! | `n` × (varint gap, varint length) | a range starts `gap` pages after the end of the previous one (after page 0 for the first) and holds `length ≥ 1` pages; ranges after the first have `gap ≥ 1` |
//!
//! # Budget
//! The record has a fixed size (`SMALL_COPY_BYTES`: the layout and every address of the
//! direct store stay as they were). A set too scattered to fit — thousands of separate
//! ranges, as a replay of a sparse trace writes — keeps its lowest ranges exactly and
//! records a *cut*: the first page it no longer describes. Pages from the cut on that read
//! as zeros are then reported unwritten, as before this map existed; the store reports the
//! cut (`written_map_cut_page`) so a user sees where precision ends. A real database on the
//! store (the native engine, SQLite) writes densely and never reaches the cut.
//!
//! # Ordering
//! A writer records its page after the device write returns; `sync` takes the set *before*
//! it syncs the device, then commits it. So the durable set only ever names pages whose
//! bytes were durable first: a crash can never leave a page in the set whose write was lost
//! (a false "corrupt").
//!
//! # In memory
//! Below [`BITS_MAX_PAGES`] the set is a bitmap (`bits.rs`: a bit per page, a summary bit
//! per non-zero word), the only copy: a write of a page already in the set (nearly every
//! write of a replay) and a read of a page never written cost a bit test, and a first
//! write sets two bits. Pages from the limit on are kept as ranges in a `BTreeMap`. The
//! ranges of the payload are read off both at `snapshot`, in order, stopping where the
//! budget or the cut stops the encoding. Before, every page was also kept in a
//! `BTreeMap` of ranges, and the first write of a page paid three searches of it
//! (≈ 1,000 instructions; 240 per write-back of a no-bytes LRU TPC-C replay):
//! cachegrind, 2 M no-bytes LRU TPC-C references at 1,241 frames, 839.1 -> 809.9 M.
//!
//! The bitmap is shared without a lock (atomic words, allocated 64 KiB of bits at a
//! time where pages are written): a membership test or a write of a known page is a
//! load; only a page's first write does an atomic OR (two with its summary word). The
//! change flag is set *after* the bit, and `snapshot` takes the flag *before* it reads
//! the bits, so an insert is either in the snapshot that takes its flag or leaves the
//! flag set for the next one. `schedules.rs` explores the interleavings with shuttle: with
//! the flag set before the bit, its PCT test fails (the randomised one did not find it in
//! 1,500 schedules); with the bits read before the flag is taken, both fail at once.
//! Before, a mutex around the set cost two locked instructions per store write and per
//! read of a page never written: the replay above executed 2.59 M locked instructions,
//! now 2.02 M (callgrind per instruction).

mod bits;
mod codec;
#[cfg(all(test, feature = "shuttle"))]
mod schedules;
mod sync;
#[cfg(test)]
mod tests;

use crate::state::StateArea;
use crate::{Poison, StoreError};
use bits::{Bits, Joiner, BITS_MAX_PAGES};
use flashbuf_core::PageId;
use flashbuf_device::Device;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use sync::{AtomicBool, AtomicU64};

/// First byte of the payload.
const TAG: u8 = 0x57;

/// Bytes a store gives the map in its state record (a 4096-byte record copy less its
/// header, for the direct and ICL stores; StableBuffer adds as much to its own).
pub(crate) const BUDGET_BYTES: usize =
    crate::state::SMALL_COPY_BYTES as usize - crate::state::STATE_HEADER_BYTES;

/// The pages from [`BITS_MAX_PAGES`] on, as `start → end` (exclusive), disjoint and
/// non-adjacent.
#[derive(Debug, Default)]
struct High(BTreeMap<u64, u64>);

impl High {
    fn contains(&self, p: u64) -> bool {
        matches!(self.0.range(..=p).next_back(), Some((_, &e)) if p < e)
    }

    /// Adds `p` to the ranges; whether it was new.
    fn insert(&mut self, p: u64) -> bool {
        let m = &mut self.0;
        let before = m.range(..=p).next_back().map(|(&s, &e)| (s, e));
        if matches!(before, Some((_, e)) if p < e) {
            return false;
        }
        let after = p
            .checked_add(1)
            .and_then(|n| m.get(&n).copied().map(|e| (n, e)));
        match (before.filter(|&(_, e)| e == p), after) {
            (Some((s, _)), Some((n, e))) => {
                m.remove(&n);
                m.insert(s, e);
            }
            (Some((s, _)), None) => {
                m.insert(s, p + 1);
            }
            (None, Some((n, e))) => {
                m.remove(&n);
                m.insert(p, e);
            }
            (None, None) => {
                m.insert(p, p.saturating_add(1));
            }
        }
        true
    }
}

/// The written-page set of an open store: shared by the store's threads without a lock
/// below [`BITS_MAX_PAGES`] (module documentation, *In memory*).
#[derive(Debug)]
pub(crate) struct WrittenMap {
    /// The pages below [`BITS_MAX_PAGES`].
    bits: Bits,
    high: Mutex<High>,
    /// Set after every page that enters the set (after its bit: a snapshot that takes
    /// the flag sees the bit), taken by [`WrittenMap::snapshot`].
    changed: AtomicBool,
    /// The durable cut (`u64::MAX`: none): pages at or beyond it are not described.
    cut: AtomicU64,
}

/// What [`WrittenMap::snapshot`] took: the encoded payload to commit and its cut.
#[derive(Debug)]
pub(crate) struct Snapshot {
    pub(crate) payload: Vec<u8>,
    pub(crate) cut: u64,
}

impl WrittenMap {
    /// The set of `ranges` (ascending, disjoint) with `cut`.
    fn with(ranges: &[(u64, u64)], cut: u64) -> Self {
        let mut high = High::default();
        let bits = Bits::default();
        for &(s, e) in ranges {
            bits.insert_range(s.min(BITS_MAX_PAGES), e.min(BITS_MAX_PAGES));
            if e > BITS_MAX_PAGES {
                high.0.insert(s.max(BITS_MAX_PAGES), e);
            }
        }
        Self {
            bits,
            high: Mutex::new(high),
            changed: AtomicBool::new(false),
            cut: AtomicU64::new(cut),
        }
    }

    /// An empty set (a new store).
    pub(crate) fn new() -> Self {
        Self::with(&[], u64::MAX)
    }

    /// The set a state record's payload describes; refuses a malformed or missing one
    /// (`kind` names the store in the message).
    pub(crate) fn decode(payload: &[u8], kind: &str) -> Result<Self, StoreError> {
        let (ranges, cut) = codec::decode(payload, kind)?;
        Ok(Self::with(&ranges, cut))
    }

    /// Records that `pid` was written (after its write returned).
    #[inline]
    pub(crate) fn insert(&self, pid: PageId) {
        let p = pid.0;
        if p == u64::MAX {
            // Not addressable by any store; keeps every range non-empty.
            return;
        }
        let new = if p < BITS_MAX_PAGES {
            self.bits.insert(p)
        } else {
            self.high.lock().insert(p)
        };
        if new {
            self.changed.store(true, Ordering::Release);
        }
    }

    /// Whether `pid` is known to have been written (as of this process: the durable set
    /// plus every write since). Pages at or beyond the durable cut are not known.
    pub(crate) fn contains(&self, pid: PageId) -> bool {
        let p = pid.0;
        if p >= self.cut.load(Ordering::Acquire) {
            return false;
        }
        if p < BITS_MAX_PAGES {
            self.bits.contains(p)
        } else {
            self.high.lock().contains(p)
        }
    }

    /// Calls `visit(start, end)` with the set as maximal ranges, ascending, until it
    /// returns false (a bitmap run ending at the limit joins a range starting there).
    fn each_range(&self, visit: &mut dyn FnMut(u64, u64) -> bool) {
        let mut j = Joiner::new(visit);
        let mut go = true;
        self.bits.word_runs(|s, e| {
            go = j.push(s, e);
            go
        });
        if go {
            for (&s, &e) in &self.high.lock().0 {
                if !j.push(s, e) {
                    break;
                }
            }
        }
        j.finish();
    }

    fn encode(&self, budget_bytes: usize) -> Snapshot {
        let cut = self.cut.load(Ordering::Acquire);
        codec::encode(|v| self.each_range(v), cut, budget_bytes)
    }

    /// The set's encoding within `budget_bytes` if it changed since the last snapshot
    /// (`None`: nothing to commit). Call before syncing the device.
    pub(crate) fn snapshot(&self, budget_bytes: usize) -> Option<Snapshot> {
        let changed = self.changed.swap(false, Ordering::AcqRel);
        changed.then(|| self.encode(budget_bytes))
    }

    /// The set's encoding within `budget_bytes`, changed or not (for a store that commits
    /// it beside other state and compares the whole payload).
    pub(crate) fn snapshot_always(&self, budget_bytes: usize) -> Snapshot {
        self.changed.store(false, Ordering::Release);
        self.encode(budget_bytes)
    }

    /// After the commit of a snapshot with `cut`: the durable cut can only come down.
    pub(crate) fn committed(&self, cut: u64) {
        self.cut.fetch_min(cut, Ordering::AcqRel);
    }

    /// A commit failed: the set must be committed again at the next sync.
    pub(crate) fn mark_changed(&self) {
        self.changed.store(true, Ordering::Release);
    }

    /// (maximal ranges, durable cut or `None`), for the store's report and tests; counts
    /// the ranges in a pass over the set.
    pub(crate) fn shape(&self) -> (usize, Option<u64>) {
        let mut n = 0;
        self.each_range(&mut |_, _| {
            n += 1;
            true
        });
        let cut = self.cut.load(Ordering::Acquire);
        (n, (cut != u64::MAX).then_some(cut))
    }

    /// After a device sync that began when the device held `len_before` bytes and when
    /// `snap` was taken: commits the grown extent and the changed set in one state record
    /// generation (nothing when neither changed).
    pub(crate) fn commit_after_sync(
        &self,
        area: &StateArea,
        dev: &dyn Device,
        poison: &Poison,
        len_before: u64,
        snap: Option<Snapshot>,
    ) -> Result<(), StoreError> {
        let grew = len_before > area.data_end();
        if !grew && snap.is_none() {
            return Ok(());
        }
        let (payload, cut) = match snap {
            Some(m) => (Some(m.payload), Some(m.cut)),
            None => (None, None),
        };
        match area.commit(dev, poison, grew.then_some(len_before), payload) {
            Ok(()) => {
                if let Some(c) = cut {
                    self.committed(c);
                }
                Ok(())
            }
            Err(e) => {
                if cut.is_some() {
                    self.mark_changed();
                }
                Err(e)
            }
        }
    }

    /// The payload of an empty set (for a new store).
    pub(crate) fn empty_payload() -> Vec<u8> {
        Self::new().encode(usize::MAX).payload
    }
}
