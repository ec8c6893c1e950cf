//! The dense address map ([`AddressMap`], see the [module docs](super)) and the page sets
//! the reader and the replay count distinct pages with.
//!
//! The map is an open-addressing hash table (linear probing, Fibonacci hashing, at most
//! half full) from extent number to dense extent: a lookup is one multiply, one shift and
//! usually one compare, which matters because the reader thread maps every reference.
//! In front of it sits a direct table for page numbers below 2^40 (PostgreSQL's
//! `relation << 24 | block`, and most others): per group of 2^24 page numbers, the dense
//! extent of each of its 65,536 extents, grown as they are touched, within a budget of
//! [`DIRECT_ENTRIES_MAX`] entries (the hash table alone serves the rest). A lookup there is
//! two loads and no probe loop, whose mispredicted exits the hash's collisions cost: on the
//! OLTP t8 trace's 2 M references, 2.8 → 1.3 ns a reference (the hash alone at an eighth
//! full instead of a half: 2.2). Pages beyond it go to the hash table inline, as before:
//! 2 M references to 20,000 random 64-bit ids (libCacheSim's object ids) 1.2 → 1.7 ns a
//! reference (the missed lookup and the range check; with the hash table out of line,
//! as first committed, 3.3).

use super::EXTENT_PAGES;
use flashbuf_core::PageId;
use flashbuf_trace::PageRef;

/// Slots of a new table (a power of two).
const INITIAL_SLOTS: usize = 1 << 10;
/// Marks an empty slot (an extent number is at most `u64::MAX / EXTENT_PAGES`).
const EMPTY: u64 = u64::MAX;
/// Page numbers per group of the direct table (its bits above are the group).
const GROUP_BITS: u32 = 24;
/// Groups the direct table covers: page numbers below 2^40.
const DIRECT_GROUPS: u64 = 1 << 16;
/// Most entries the direct table holds, over all groups (4 bytes each: 16 MiB).
pub const DIRECT_ENTRIES_MAX: usize = 1 << 22;

/// Maps trace page numbers to dense page ids, extent by extent in order of first touch.
#[derive(Debug, Clone)]
pub struct AddressMap {
    /// `(extent, dense extent)`, or `(EMPTY, _)`; the length is a power of two.
    slots: Vec<(u64, u64)>,
    /// `64 - log2(slots.len())`: the hash is the top bits of the product.
    shift: u32,
    /// Extents assigned.
    len: u64,
    /// Per group of 2^24 page numbers below 2^40: the dense extent + 1 of each of its
    /// extents (0: not recorded here), covering its extents up to the highest touched.
    /// A lookaside for the hash table, which holds every extent.
    direct: Vec<Vec<u32>>,
    /// Entries the direct table may still grow by.
    direct_budget: usize,
}

impl Default for AddressMap {
    fn default() -> Self {
        Self {
            slots: vec![(EMPTY, 0); INITIAL_SLOTS],
            shift: 64 - INITIAL_SLOTS.trailing_zeros(),
            len: 0,
            direct: Vec::new(),
            direct_budget: DIRECT_ENTRIES_MAX,
        }
    }
}

impl AddressMap {
    /// The dense id of trace page `page`, assigning a new extent on first touch.
    ///
    /// ```
    /// use flashbuf_core::PageId;
    /// use flashbuf_lab::feed::AddressMap;
    /// let mut m = AddressMap::default();
    /// assert_eq!(m.map(PageId((5 << 24) + 3)), PageId(3));
    /// assert_eq!(m.map(PageId(7 << 24)), PageId(256));
    /// assert_eq!(m.map(PageId((5 << 24) + 300)), PageId(512 + 44));
    /// ```
    #[inline]
    pub fn map(&mut self, page: PageId) -> PageId {
        let ext = page.0 / EXTENT_PAGES;
        let off = page.0 % EXTENT_PAGES;
        let (group, at) = direct_place(ext);
        let recorded = self.direct.get(group).and_then(|g| g.get(at)).copied();
        let dense = match recorded {
            Some(d) if d != 0 => u64::from(d - 1),
            _ => {
                let dense = self.dense_extent(ext);
                if (group as u64) < DIRECT_GROUPS {
                    self.record(group, at, dense);
                }
                dense
            }
        };
        PageId(dense * EXTENT_PAGES + off)
    }

    /// Records `dense`, the dense extent of the extent at `at` of group `group` (below
    /// [`DIRECT_GROUPS`]), in the direct table if the budget allows the table to reach it.
    #[cold]
    #[inline(never)]
    fn record(&mut self, group: usize, at: usize, dense: u64) {
        let Ok(value) = u32::try_from(dense + 1) else {
            return;
        };
        if self.direct.len() <= group {
            self.direct.resize_with(group + 1, Vec::new);
        }
        let g = &mut self.direct[group];
        let grow = (at + 1).saturating_sub(g.len());
        if grow <= self.direct_budget {
            self.direct_budget -= grow;
            if grow > 0 {
                g.resize(at + 1, 0);
            }
            g[at] = value;
        }
    }

    /// Maps every reference of `refs` in place and marks the dense pages in `seen`.
    #[inline]
    pub(crate) fn map_all(&mut self, refs: &mut [PageRef], seen: &mut PageBits) {
        for r in refs {
            r.page = self.map(r.page);
            seen.mark(r.page.0);
        }
    }

    /// Number of dense page ids in use (extents × [`EXTENT_PAGES`]).
    pub fn pages_count(&self) -> u64 {
        self.len * EXTENT_PAGES
    }

    #[inline(always)]
    fn slot_of(&self, ext: u64) -> usize {
        (ext.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The dense extent of `ext`, assigned on first touch.
    #[inline(always)]
    fn dense_extent(&mut self, ext: u64) -> u64 {
        let mask = self.slots.len() - 1;
        let mut i = self.slot_of(ext);
        loop {
            let (key, dense) = self.slots[i];
            if key == ext {
                return dense;
            }
            if key == EMPTY {
                return self.insert_at(i, ext);
            }
            i = (i + 1) & mask;
        }
    }

    /// Assigns the next dense extent to `ext`, which belongs in the empty slot `i`.
    #[cold]
    #[inline(never)]
    fn insert_at(&mut self, i: usize, ext: u64) -> u64 {
        let dense = self.len;
        self.slots[i] = (ext, dense);
        self.len += 1;
        if self.len * 2 > self.slots.len() as u64 {
            self.grow();
        }
        dense
    }

    /// Doubles the table.
    fn grow(&mut self) {
        let doubled = vec![(EMPTY, 0); self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        self.shift -= 1;
        let mask = self.slots.len() - 1;
        for (key, dense) in old.into_iter().filter(|&(k, _)| k != EMPTY) {
            let mut i = self.slot_of(key);
            while self.slots[i].0 != EMPTY {
                i = (i + 1) & mask;
            }
            self.slots[i] = (key, dense);
        }
    }
}

/// Where extent `ext` sits in the direct table: its group and its index there (a group
/// beyond [`DIRECT_GROUPS`] is not in the table).
#[inline(always)]
fn direct_place(ext: u64) -> (usize, usize) {
    const EXTENT_BITS: u32 = EXTENT_PAGES.trailing_zeros();
    let group = ext >> (GROUP_BITS - EXTENT_BITS);
    let at = ext & ((1 << (GROUP_BITS - EXTENT_BITS)) - 1);
    (usize::try_from(group).unwrap_or(usize::MAX), at as usize)
}

/// A bitmap of dense page ids, counted only at the end: marking is one OR, no branch on
/// whether the page is new (`insert` says it, for a caller that keeps a running count).
#[derive(Debug, Default)]
pub(crate) struct PageBits {
    words: Vec<u64>,
}

impl PageBits {
    /// The word holding page `i` (grown to reach it) and the page's bit.
    #[inline(always)]
    fn word(&mut self, i: u64) -> (&mut u64, u64) {
        let w = (i / 64) as usize;
        if w >= self.words.len() {
            self.words.resize((w + 1).next_power_of_two(), 0);
        }
        (&mut self.words[w], 1u64 << (i % 64))
    }

    /// Adds page `i`.
    #[inline(always)]
    pub(crate) fn mark(&mut self, i: u64) {
        let (w, b) = self.word(i);
        *w |= b;
    }

    /// Adds page `i`; true if it was new.
    #[inline]
    pub(crate) fn insert(&mut self, i: u64) -> bool {
        let (w, b) = self.word(i);
        let new = *w & b == 0;
        *w |= b;
        new
    }

    /// Distinct pages added.
    pub(crate) fn count(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_core::rng::SplitMix64;
    use hashbrown::HashMap;

    /// The map's definition: dense extents in order of first touch.
    fn model(pages: &[u64]) -> Vec<u64> {
        let mut extents: HashMap<u64, u64> = HashMap::new();
        pages
            .iter()
            .map(|&p| {
                let n = extents.len() as u64;
                let d = *extents.entry(p / EXTENT_PAGES).or_insert(n);
                d * EXTENT_PAGES + p % EXTENT_PAGES
            })
            .collect()
    }

    fn mapped(pages: &[u64]) -> (Vec<u64>, AddressMap) {
        mapped_within(pages, DIRECT_ENTRIES_MAX)
    }

    /// [`mapped`] with a direct table of at most `budget` entries.
    fn mapped_within(pages: &[u64], budget: usize) -> (Vec<u64>, AddressMap) {
        let mut m = AddressMap {
            direct_budget: budget,
            ..AddressMap::default()
        };
        let got = pages.iter().map(|&p| m.map(PageId(p)).0).collect();
        (got, m)
    }

    /// Entries the direct table holds, and how many of them are recorded.
    fn direct_entries(m: &AddressMap) -> (usize, usize) {
        let all = m.direct.iter().map(Vec::len).sum();
        let recorded = m.direct.iter().flatten().filter(|&&d| d != 0).count();
        (all, recorded)
    }

    #[test]
    fn agrees_with_the_definition_across_growth() {
        // PostgreSQL-like page numbers (relation << 24 | block), extremes, and enough
        // extents to double the table several times, each revisited after growing.
        let mut pages = vec![0, 255, 256, u64::MAX, u64::MAX - 255, 1 << 63];
        let mut x = 0x1234_5678_9abc_def0u64;
        for k in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let rel = 16_384 + x % 40;
            pages.push((rel << 24) + (x >> 20) % 70_000);
            pages.push(k * EXTENT_PAGES * 3 + x % 256);
            pages.push(pages[(x % pages.len() as u64) as usize]);
        }
        let (got, m) = mapped(&pages);
        let want = model(&pages);
        assert_eq!(got, want);
        let extents = want
            .iter()
            .map(|d| d / EXTENT_PAGES)
            .max()
            .map_or(0, |d| d + 1);
        assert_eq!(m.pages_count(), extents * EXTENT_PAGES);
        assert!(
            m.slots.len() > INITIAL_SLOTS,
            "the test must cross a growth"
        );
        let (all, recorded) = direct_entries(&m);
        assert!(
            recorded > 0 && all <= DIRECT_ENTRIES_MAX,
            "{recorded} of {all}"
        );
        // Pages beyond the direct table's 2^40 (the extremes) are served by the hash.
        assert!(m.direct.len() as u64 <= DIRECT_GROUPS);
    }

    /// The direct table is a lookaside: however small its budget (here: none, a few
    /// entries, part of the extents), the map is the same.
    #[test]
    fn the_direct_tables_budget_changes_no_mapping() {
        let mut pages = Vec::new();
        let mut rng = SplitMix64::new(5);
        for _ in 0..30_000 {
            let x = rng.next_u64();
            // Relations 5..25, blocks spread over up to 2^24, revisited.
            pages.push(((5 + x % 20) << 24) + (x >> 24) % (1 << 24));
            pages.push(pages[(x % pages.len() as u64) as usize]);
        }
        let want = model(&pages);
        for budget in [0, 3, 1_000, 100_000] {
            let (got, m) = mapped_within(&pages, budget);
            assert_eq!(got, want, "budget {budget}");
            let (all, _) = direct_entries(&m);
            assert!(all <= budget, "budget {budget}: {all} entries");
            assert_eq!(m.direct_budget, budget - all);
        }
    }

    #[test]
    fn colliding_extents_probe_past_each_other() {
        // Extents that are multiples of a large power of two share their hash's low bits.
        let pages: Vec<u64> = (0..3_000u64)
            .flat_map(|k| [(k << 40) * EXTENT_PAGES + 7, (k << 40) * EXTENT_PAGES + 9])
            .collect();
        let (got, m) = mapped(&pages);
        assert_eq!(got, model(&pages));
        assert_eq!(m.pages_count(), 3_000 * EXTENT_PAGES);
        assert_eq!(&got[..4], &[7, 9, 256 + 7, 256 + 9]);
    }

    #[test]
    fn map_all_maps_in_place_and_counts_distinct_pages() {
        let pages = [5 << 24, (5 << 24) + 1, 9 << 24, 5 << 24, (9 << 24) + 200];
        let mut refs: Vec<PageRef> = pages.iter().map(|&p| PageRef::read(p)).collect();
        let mut m = AddressMap::default();
        let mut seen = PageBits::default();
        m.map_all(&mut refs, &mut seen);
        let got: Vec<u64> = refs.iter().map(|r| r.page.0).collect();
        assert_eq!(got, [0, 1, 256, 0, 456]);
        assert_eq!(seen.count(), 4);
        let mut set = PageBits::default();
        let new: Vec<bool> = got.iter().map(|&p| set.insert(p)).collect();
        assert_eq!(new, [true, true, true, false, true]);
        assert_eq!(set.count(), 4);
    }
}
