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

use crate::state::StateArea;
use crate::{Poison, StoreError};
use flashbuf_core::PageId;
use flashbuf_device::Device;
use parking_lot::Mutex;
use std::collections::BTreeMap;

/// First byte of the payload.
const TAG: u8 = 0x57;

/// Bytes a store gives the map in its state record (a 4096-byte record copy less its
/// header, for the direct and ICL stores; StableBuffer adds as much to its own).
pub(crate) const BUDGET_BYTES: usize =
    crate::state::SMALL_COPY_BYTES as usize - crate::state::STATE_HEADER_BYTES;

/// The in-memory set and whether it changed since the last snapshot.
#[derive(Debug)]
struct Inner {
    /// `start → end` (exclusive), disjoint and non-adjacent.
    ranges: BTreeMap<u64, u64>,
    changed: bool,
    /// The durable cut (`u64::MAX`: none): pages at or beyond it are not described.
    cut: u64,
    /// A bit per page below [`BITS_MAX_PAGES`]: set exactly when `ranges` holds the page,
    /// so that a page written again (nearly every write of a replay) and a read of a page
    /// never written cost a bit test instead of a search of the ranges (8 % of a no-bytes
    /// LRU replay, measured with `perf`). Pages from the limit on are looked up in `ranges`.
    known: Vec<u64>,
}

/// Pages the `known` bitmap covers at most (16 MiB of bits; 1 TiB of 8 KB pages).
const BITS_MAX_PAGES: u64 = 1 << 27;

impl Inner {
    fn is_known(&self, p: u64) -> bool {
        self.known
            .get((p / 64) as usize)
            .is_some_and(|w| w & (1 << (p % 64)) != 0)
    }

    fn set_known(&mut self, p: u64) {
        if p >= BITS_MAX_PAGES {
            return;
        }
        let i = (p / 64) as usize;
        if i >= self.known.len() {
            self.known.resize((i + 1).next_power_of_two(), 0);
        }
        self.known[i] |= 1 << (p % 64);
    }
}

/// The written-page set of an open store.
#[derive(Debug)]
pub(crate) struct WrittenMap {
    inner: Mutex<Inner>,
}

/// What [`WrittenMap::snapshot`] took: the encoded payload to commit and its cut.
#[derive(Debug)]
pub(crate) struct Snapshot {
    pub(crate) payload: Vec<u8>,
    pub(crate) cut: u64,
}

impl WrittenMap {
    fn with(ranges: BTreeMap<u64, u64>, cut: u64) -> Self {
        let mut inner = Inner {
            ranges,
            changed: false,
            cut,
            known: Vec::new(),
        };
        let below: Vec<(u64, u64)> = inner
            .ranges
            .range(..BITS_MAX_PAGES)
            .map(|(&s, &e)| (s, e.min(BITS_MAX_PAGES)))
            .collect();
        for (s, e) in below {
            (s..e).for_each(|p| inner.set_known(p));
        }
        Self {
            inner: Mutex::new(inner),
        }
    }

    /// An empty set (a new store).
    pub(crate) fn new() -> Self {
        Self::with(BTreeMap::new(), u64::MAX)
    }

    /// The set a state record's payload describes; refuses a malformed or missing one
    /// (`kind` names the store in the message).
    pub(crate) fn decode(payload: &[u8], kind: &str) -> Result<Self, StoreError> {
        let (ranges, cut) = decode(payload, kind)?;
        Ok(Self::with(ranges, cut))
    }

    /// Records that `pid` was written (after its write returned).
    pub(crate) fn insert(&self, pid: PageId) {
        let p = pid.0;
        if p == u64::MAX {
            // Not addressable by any store; keeps every range non-empty.
            return;
        }
        let mut g = self.inner.lock();
        if g.is_known(p) {
            return;
        }
        g.set_known(p);
        let before = g.ranges.range(..=p).next_back().map(|(&s, &e)| (s, e));
        if let Some((_, e)) = before {
            if p < e {
                return;
            }
        }
        g.changed = true;
        let after = p
            .checked_add(1)
            .and_then(|n| g.ranges.get(&n).copied().map(|e| (n, e)));
        match (before.filter(|&(_, e)| e == p), after) {
            (Some((s, _)), Some((n, e))) => {
                g.ranges.remove(&n);
                g.ranges.insert(s, e);
            }
            (Some((s, _)), None) => {
                g.ranges.insert(s, p + 1);
            }
            (None, Some((n, e))) => {
                g.ranges.remove(&n);
                g.ranges.insert(p, e);
            }
            (None, None) => {
                g.ranges.insert(p, p.saturating_add(1));
            }
        }
    }

    /// Whether `pid` is known to have been written (as of this process: the durable set
    /// plus every write since). Pages at or beyond the durable cut are not known.
    pub(crate) fn contains(&self, pid: PageId) -> bool {
        let p = pid.0;
        let g = self.inner.lock();
        let held = if p < BITS_MAX_PAGES {
            g.is_known(p)
        } else {
            matches!(g.ranges.range(..=p).next_back(), Some((_, &e)) if p < e)
        };
        p < g.cut && held
    }

    /// The set's encoding within `budget_bytes` if it changed since the last snapshot
    /// (`None`: nothing to commit). Call before syncing the device.
    pub(crate) fn snapshot(&self, budget_bytes: usize) -> Option<Snapshot> {
        let changed = self.inner.lock().changed;
        changed.then(|| self.snapshot_always(budget_bytes))
    }

    /// The set's encoding within `budget_bytes`, changed or not (for a store that commits
    /// it beside other state and compares the whole payload).
    pub(crate) fn snapshot_always(&self, budget_bytes: usize) -> Snapshot {
        let mut g = self.inner.lock();
        g.changed = false;
        encode(&g.ranges, g.cut, budget_bytes)
    }

    /// After the commit of a snapshot with `cut`: the durable cut can only come down.
    pub(crate) fn committed(&self, cut: u64) {
        let mut g = self.inner.lock();
        g.cut = g.cut.min(cut);
    }

    /// A commit failed: the set must be committed again at the next sync.
    pub(crate) fn mark_changed(&self) {
        self.inner.lock().changed = true;
    }

    /// (ranges, durable cut or `None`), for the store's report and invariants.
    pub(crate) fn shape(&self) -> (usize, Option<u64>) {
        let g = self.inner.lock();
        (g.ranges.len(), (g.cut != u64::MAX).then_some(g.cut))
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
        encode(&BTreeMap::new(), u64::MAX, usize::MAX).payload
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint_len(v: u64) -> usize {
    (64 - v.max(1).leading_zeros() as usize).div_ceil(7)
}

/// Encodes the ranges below `cut` that fit `budget_bytes`; the first range left out (or
/// the old cut, if lower) becomes the cut.
fn encode(ranges: &BTreeMap<u64, u64>, cut: u64, budget_bytes: usize) -> Snapshot {
    // Worst case of the fixed fields: tag, a 10-byte cut, a 10-byte count.
    let mut used = 21usize;
    let mut prev_end = 0u64;
    let mut kept = 0usize;
    let mut new_cut = cut;
    for (&s, &e) in ranges {
        if s >= cut {
            break;
        }
        let e = e.min(cut);
        let pair = varint_len(s - prev_end) + varint_len(e - s);
        if used + pair > budget_bytes {
            new_cut = s;
            break;
        }
        used += pair;
        prev_end = e;
        kept += 1;
    }
    let mut out = vec![TAG];
    put_varint(&mut out, if new_cut == u64::MAX { 0 } else { new_cut + 1 });
    put_varint(&mut out, kept as u64);
    let mut prev_end = 0u64;
    for (&s, &e) in ranges.iter().take(kept) {
        let e = e.min(new_cut);
        put_varint(&mut out, s - prev_end);
        put_varint(&mut out, e - s);
        prev_end = e;
    }
    Snapshot {
        payload: out,
        cut: new_cut,
    }
}

fn malformed(why: &str) -> StoreError {
    StoreError::Format(format!(
        "the written-page map in the state record is malformed ({why}): the store is corrupt"
    ))
}

fn get_varint(b: &[u8], at: &mut usize) -> Result<u64, StoreError> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b
            .get(*at)
            .ok_or_else(|| malformed("ends inside a number"))?;
        *at += 1;
        let bits = u64::from(byte & 0x7f);
        if shift == 63 && bits > 1 {
            return Err(malformed("a number overflows"));
        }
        v |= bits << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(malformed("a number overflows"))
}

type Decoded = (BTreeMap<u64, u64>, u64);

fn decode(b: &[u8], kind: &str) -> Result<Decoded, StoreError> {
    match b.first() {
        Some(&TAG) => {}
        None => {
            return Err(StoreError::Format(format!(
                "this {kind} store was formatted by an earlier flashbuf (its state record has no written-page map, so pages lost at rest would read as never written); it is not opened: read it with that version or recreate it"
            )))
        }
        Some(t) => return Err(malformed(&format!("unknown tag {t:#04x}"))),
    }
    let mut at = 1;
    let cut = match get_varint(b, &mut at)? {
        0 => u64::MAX,
        c => c - 1,
    };
    let n = get_varint(b, &mut at)?;
    let mut ranges = BTreeMap::new();
    let mut prev_end = 0u64;
    for i in 0..n {
        let gap = get_varint(b, &mut at)?;
        let len = get_varint(b, &mut at)?;
        if len == 0 || (i > 0 && gap == 0) {
            return Err(malformed("an empty or adjacent range"));
        }
        let s = prev_end
            .checked_add(gap)
            .ok_or_else(|| malformed("a page id overflows"))?;
        let e = s
            .checked_add(len)
            .filter(|&e| e <= cut)
            .ok_or_else(|| malformed("a range beyond the cut"))?;
        ranges.insert(s, e);
        prev_end = e;
    }
    if at != b.len() {
        return Err(malformed("bytes after the last range"));
    }
    Ok((ranges, cut))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn roundtrip(m: &WrittenMap, budget: usize) -> WrittenMap {
        m.mark_changed();
        let s = m.snapshot(budget).unwrap();
        assert!(
            s.payload.len() <= budget.max(21),
            "{} > {budget}",
            s.payload.len()
        );
        m.committed(s.cut);
        WrittenMap::decode(&s.payload, "direct").unwrap()
    }

    #[test]
    fn merges_neighbours_and_round_trips() {
        let m = WrittenMap::new();
        for p in [5u64, 7, 6, 0, 1, 100, u64::MAX - 1] {
            m.insert(PageId(p));
        }
        assert_eq!(m.shape(), (4, None));
        let d = roundtrip(&m, 4032);
        for p in [0u64, 1, 5, 6, 7, 100, u64::MAX - 1] {
            assert!(d.contains(PageId(p)), "{p}");
        }
        for p in [2u64, 4, 8, 99, 101, u64::MAX] {
            assert!(!d.contains(PageId(p)), "{p}");
        }
        assert_eq!(m.snapshot(4032).map(|s| s.cut), None, "unchanged");
    }

    /// The bitmap covers pages below `BITS_MAX_PAGES` and the ranges the rest: membership
    /// is exact on both sides of the limit, before and after a round trip (which fills
    /// the bitmap from the decoded ranges).
    #[test]
    fn membership_is_exact_across_the_bitmap_limit() {
        let m = WrittenMap::new();
        let l = BITS_MAX_PAGES;
        for p in [l - 2, l - 1, l, l + 1, 3] {
            m.insert(PageId(p));
        }
        // Written twice: no change to record the second time.
        let _ = m.snapshot(4032);
        m.insert(PageId(l - 1));
        m.insert(PageId(l + 1));
        assert_eq!(m.snapshot(4032).map(|s| s.cut), None, "nothing new");
        let d = roundtrip(&m, 4032);
        for w in [&m, &d] {
            for p in [3, l - 2, l - 1, l, l + 1] {
                assert!(w.contains(PageId(p)), "{p}");
            }
            for p in [2, 4, l - 3, l + 2] {
                assert!(!w.contains(PageId(p)), "{p}");
            }
        }
        assert_eq!(d.shape(), (2, None));
    }

    #[test]
    fn a_set_beyond_the_budget_keeps_its_low_ranges_and_records_the_cut() {
        let m = WrittenMap::new();
        for p in (0..10_000u64).step_by(2) {
            m.insert(PageId(p));
        }
        let d = roundtrip(&m, 4032);
        let (_, cut) = d.shape();
        let cut = cut.unwrap();
        assert!(cut > 1000 && cut < 10_000, "cut {cut}");
        assert!(d.contains(PageId(cut - 2)) || d.contains(PageId(cut - 1)));
        assert!(!d.contains(PageId(cut)) && !d.contains(PageId(cut + 2)));
        // The cut never moves up again, even when the set would fit once more.
        let again = roundtrip(&d, usize::MAX);
        assert_eq!(again.shape().1, Some(cut));
    }

    #[test]
    fn a_missing_or_malformed_payload_is_refused() {
        let e = WrittenMap::decode(&[], "direct").unwrap_err().to_string();
        assert!(e.contains("earlier flashbuf"), "{e}");
        let good = {
            let m = WrittenMap::new();
            m.insert(PageId(3));
            m.insert(PageId(9));
            m.snapshot(4032).unwrap().payload
        };
        assert!(WrittenMap::decode(&good, "direct").is_ok());
        let mut cases = vec![vec![0x58u8], good[..good.len() - 1].to_vec()];
        let mut extra = good.clone();
        extra.push(0);
        cases.push(extra);
        // An adjacent second range (gap 0) and an empty range.
        cases.push(vec![TAG, 0, 2, 3, 1, 0, 1]);
        cases.push(vec![TAG, 0, 1, 3, 0]);
        // A range beyond the cut (cut = 4).
        cases.push(vec![TAG, 5, 1, 3, 2]);
        // An overflowing varint.
        cases.push(vec![
            TAG, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1,
        ]);
        for c in cases {
            let e = WrittenMap::decode(&c, "direct").unwrap_err().to_string();
            assert!(e.contains("malformed"), "{c:?}: {e}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x57_11),
            ..ProptestConfig::default()
        })]
        /// Against a `BTreeSet` model: membership below the cut is exact after a round
        /// trip, whatever the order of inserts and the budget.
        #[test]
        fn matches_a_set_model(pages in prop::collection::vec(0u64..400, 0..300), budget in 24usize..200) {
            let m = WrittenMap::new();
            let mut model = BTreeSet::new();
            for &p in &pages {
                m.insert(PageId(p));
                model.insert(p);
            }
            for p in 0..402u64 {
                prop_assert_eq!(m.contains(PageId(p)), model.contains(&p));
            }
            let d = roundtrip(&m, budget);
            let cut = d.shape().1.unwrap_or(u64::MAX);
            for p in 0..402u64 {
                let want = p < cut && model.contains(&p);
                prop_assert_eq!(d.contains(PageId(p)), want, "page {} cut {}", p, cut);
            }
        }
    }
}
