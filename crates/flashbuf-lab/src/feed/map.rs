//! The dense address map ([`AddressMap`], see the [module docs](super)) and the page sets
//! the reader and the replay count distinct pages with.
//!
//! The map is an open-addressing hash table (linear probing, Fibonacci hashing, at most
//! half full) from extent number to dense extent: a lookup is one multiply, one shift and
//! usually one compare, which matters because the reader thread maps every reference.

use super::EXTENT_PAGES;
use flashbuf_core::PageId;
use flashbuf_trace::PageRef;

/// Slots of a new table (a power of two).
const INITIAL_SLOTS: usize = 1 << 10;
/// Marks an empty slot (an extent number is at most `u64::MAX / EXTENT_PAGES`).
const EMPTY: u64 = u64::MAX;

/// Maps trace page numbers to dense page ids, extent by extent in order of first touch.
#[derive(Debug, Clone)]
pub struct AddressMap {
    /// `(extent, dense extent)`, or `(EMPTY, _)`; the length is a power of two.
    slots: Vec<(u64, u64)>,
    /// `64 - log2(slots.len())`: the hash is the top bits of the product.
    shift: u32,
    /// Extents assigned.
    len: u64,
}

impl Default for AddressMap {
    fn default() -> Self {
        Self {
            slots: vec![(EMPTY, 0); INITIAL_SLOTS],
            shift: 64 - INITIAL_SLOTS.trailing_zeros(),
            len: 0,
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
        PageId(self.dense_extent(ext) * EXTENT_PAGES + off)
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
        let mut m = AddressMap::default();
        let got = pages.iter().map(|&p| m.map(PageId(p)).0).collect();
        (got, m)
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
