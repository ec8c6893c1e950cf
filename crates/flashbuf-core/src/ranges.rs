//! Merged sets of modified byte ranges within one page.
//!
//! A write guard records every range it hands out for modification; the pool passes the
//! merged set to the store on write-back, so that a write path such as ICL can log only the
//! changed bytes. The set is kept small and fixed-size ([`DirtyRanges::CAPACITY`] ranges,
//! 18 bytes) so it fits in the frame header: when one more disjoint range would not fit,
//! the two neighbouring ranges with the smallest gap between them are merged (the result
//! is a superset, never a subset, of the bytes modified).

use std::fmt;

/// A half-open byte range `start..end` within a page.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByteRange {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl ByteRange {
    /// A range from `start` of `len` bytes.
    #[inline]
    pub const fn new(start: u32, len: u32) -> Self {
        Self {
            start,
            end: start + len,
        }
    }
    /// Number of bytes.
    #[inline]
    pub const fn len(self) -> u32 {
        self.end - self.start
    }
    /// Whether the range is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.end <= self.start
    }
    /// As a `usize` range for slicing.
    #[inline]
    pub const fn as_usize(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

impl fmt::Debug for ByteRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// Up to [`DirtyRanges::CAPACITY`] disjoint, sorted, non-adjacent byte ranges of one page
/// (pages up to 64 KiB).
///
/// ```
/// use flashbuf_core::{ByteRange, DirtyRanges};
/// let mut d = DirtyRanges::new();
/// d.add(100, 10);
/// d.add(105, 10); // overlaps: merged
/// d.add(0, 4);
/// let v: Vec<ByteRange> = d.iter().collect();
/// assert_eq!(v, vec![ByteRange::new(0, 4), ByteRange::new(100, 15)]);
/// assert_eq!(d.total_bytes(), 19);
/// ```
#[derive(Clone, Copy, Default)]
pub struct DirtyRanges {
    /// `(first, last)` byte of each range, inclusive, sorted.
    bounds: [(u16, u16); Self::CAPACITY],
    len: u8,
}

impl DirtyRanges {
    /// Most disjoint ranges kept before neighbours are merged.
    pub const CAPACITY: usize = 4;

    /// The empty set.
    pub const fn new() -> Self {
        Self {
            bounds: [(0, 0); Self::CAPACITY],
            len: 0,
        }
    }

    /// A set covering `0..page_size`.
    pub fn full(page_size: usize) -> Self {
        let mut d = Self::new();
        d.add(0, page_size);
        d
    }

    /// Whether no byte is recorded.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of disjoint ranges.
    #[inline]
    pub fn count(&self) -> usize {
        self.len as usize
    }

    /// Forgets every range.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Records `start..start+len`. Empty ranges are ignored.
    ///
    /// # Panics
    /// In debug builds, if the range ends beyond 64 KiB.
    #[inline]
    pub fn add(&mut self, start: usize, len: usize) {
        if len == 0 {
            return;
        }
        let last = start + len - 1;
        debug_assert!(
            last <= u16::MAX as usize,
            "range {start}+{len} beyond 64 KiB"
        );
        let (lo, hi) = (start.min(65535) as u16, last.min(65535) as u16);
        // Already covered by the first range (the common case of a page written again and
        // again, and of a whole-page mark): nothing changes, no call.
        let (a, b) = self.bounds[0];
        if self.len == 0 {
            // The first range of a clean page (a frame's first write since it was
            // loaded or written back): no loop, no call.
            self.bounds[0] = (lo, hi);
            self.len = 1;
            return;
        }
        if a <= lo && hi <= b {
            return;
        }
        self.add_bounds(lo, hi);
    }

    /// `add` of the inclusive range `lo..=hi` past the first range's check.
    fn add_bounds(&mut self, mut lo: u16, mut hi: u16) {
        let n = self.len as usize;
        // Already covered by one range: nothing changes.
        if self.bounds[..n].iter().any(|&(a, b)| a <= lo && hi <= b) {
            return;
        }
        // Absorb every existing range that overlaps or touches [lo, hi].
        let mut out = [(0u16, 0u16); Self::CAPACITY + 1];
        let mut k = 0;
        let mut placed = false;
        for &(a, b) in &self.bounds[..n] {
            if (b as u32) + 1 < lo as u32 {
                out[k] = (a, b);
                k += 1;
            } else if (hi as u32) + 1 < a as u32 {
                if !placed {
                    out[k] = (lo, hi);
                    k += 1;
                    placed = true;
                }
                out[k] = (a, b);
                k += 1;
            } else {
                lo = lo.min(a);
                hi = hi.max(b);
            }
        }
        if !placed {
            out[k] = (lo, hi);
            k += 1;
        }
        if k > Self::CAPACITY {
            // Merge the neighbouring pair with the smallest gap.
            let mut best = 0;
            let mut best_gap = u32::MAX;
            for i in 0..k - 1 {
                let gap = out[i + 1].0 as u32 - out[i].1 as u32;
                if gap < best_gap {
                    best_gap = gap;
                    best = i;
                }
            }
            out[best].1 = out[best + 1].1;
            out.copy_within(best + 2..k, best + 1);
            k -= 1;
        }
        // A fixed-size copy (no call to `memcpy`); entries from `k` on are not read.
        self.bounds.copy_from_slice(&out[..Self::CAPACITY]);
        self.len = k as u8;
    }

    /// Adds every range of `other`.
    pub fn union(&mut self, other: &DirtyRanges) {
        for r in other.iter() {
            self.add(r.start as usize, r.len() as usize);
        }
    }

    /// The ranges in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = ByteRange> + '_ {
        self.bounds[..self.len as usize]
            .iter()
            .map(|&(a, b)| ByteRange {
                start: a as u32,
                end: b as u32 + 1,
            })
    }

    /// Total bytes covered.
    pub fn total_bytes(&self) -> usize {
        self.iter().map(|r| r.len() as usize).sum()
    }
}

/// Equal when they record the same ranges (entries past the live ones do not count).
impl PartialEq for DirtyRanges {
    fn eq(&self, other: &Self) -> bool {
        self.bounds[..self.len as usize] == other.bounds[..other.len as usize]
    }
}

impl Eq for DirtyRanges {}

impl fmt::Debug for DirtyRanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn merges_adjacent_and_overlapping() {
        let mut d = DirtyRanges::new();
        d.add(10, 5); // 10..15
        d.add(15, 5); // adjacent: 10..20
        d.add(0, 3);
        d.add(2, 20); // swallows both: 0..22
        assert_eq!(d.iter().collect::<Vec<_>>(), vec![ByteRange::new(0, 22)]);
    }

    #[test]
    fn overflow_merges_smallest_gap() {
        let mut d = DirtyRanges::new();
        for s in [0usize, 100, 200, 300] {
            d.add(s, 10);
        }
        d.add(215, 5); // gap 5 to 200..210 is the smallest
        assert_eq!(d.count(), 4);
        assert!(d.iter().any(|r| r == ByteRange::new(200, 20)));
    }

    #[test]
    fn first_range_after_clear_is_exactly_it() {
        // The empty set's fast path must not keep anything of the ranges before `clear`.
        let mut d = DirtyRanges::new();
        for s in [0usize, 100, 200, 300] {
            d.add(s, 10);
        }
        d.clear();
        d.add(150, 20);
        assert_eq!(d.iter().collect::<Vec<_>>(), vec![ByteRange::new(150, 20)]);
        d.add(0, 10); // a second range goes through the merge, sorted before the first
        assert_eq!(
            d.iter().collect::<Vec<_>>(),
            vec![ByteRange::new(0, 10), ByteRange::new(150, 20)]
        );
    }

    #[test]
    fn full_page_of_64k() {
        let d = DirtyRanges::full(65536);
        assert_eq!(d.total_bytes(), 65536);
    }

    proptest! {
        #[test]
        fn covers_every_added_byte_and_stays_sorted(
            adds in proptest::collection::vec((0usize..4000, 1usize..200), 0..40)
        ) {
            let mut d = DirtyRanges::new();
            let mut bytes = vec![false; 4200];
            for &(s, l) in &adds {
                d.add(s, l);
                for b in &mut bytes[s..s + l] { *b = true; }
            }
            let rs: Vec<_> = d.iter().collect();
            prop_assert!(rs.len() <= DirtyRanges::CAPACITY);
            for w in rs.windows(2) {
                prop_assert!(w[0].end < w[1].start, "not disjoint/sorted: {:?}", rs);
            }
            for (i, &b) in bytes.iter().enumerate() {
                if b {
                    prop_assert!(rs.iter().any(|r| r.as_usize().contains(&i)), "byte {} lost", i);
                }
            }
            // Exact when few enough disjoint ranges were added.
            if rs.len() < DirtyRanges::CAPACITY {
                let covered: usize = bytes.iter().filter(|&&b| b).count();
                prop_assert!(d.total_bytes() >= covered);
            }
        }
    }
}
