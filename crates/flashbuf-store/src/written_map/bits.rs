//! The written-page set below [`BITS_MAX_PAGES`]: a bit per page and a summary bit per
//! non-zero word, so that a membership test is a bit test and the set's ranges are read
//! off in one pass over the non-zero words (see the module documentation of [`super`],
//! *In memory*).

/// Pages the bitmap covers at most (16 MiB of bits; 1 TiB of 8 KB pages).
pub(super) const BITS_MAX_PAGES: u64 = 1 << 27;

/// A bit per page below [`BITS_MAX_PAGES`]; `summary` has bit `i` set exactly when
/// `words[i]` is non-zero.
#[derive(Debug, Default)]
pub(super) struct Bits {
    words: Vec<u64>,
    summary: Vec<u64>,
}

impl Bits {
    /// Whether page `p` is in the set (false for every page from the limit on).
    #[inline]
    pub(super) fn contains(&self, p: u64) -> bool {
        self.words
            .get((p / 64) as usize)
            .is_some_and(|w| w & (1 << (p % 64)) != 0)
    }

    /// Adds page `p` (below the limit); whether it was new.
    #[inline]
    pub(super) fn insert(&mut self, p: u64) -> bool {
        debug_assert!(p < BITS_MAX_PAGES);
        let i = (p / 64) as usize;
        if i >= self.words.len() {
            self.grow(i);
        }
        let bit = 1 << (p % 64);
        let w = &mut self.words[i];
        if *w & bit != 0 {
            return false;
        }
        *w |= bit;
        self.summary[i / 64] |= 1 << (i % 64);
        true
    }

    /// Adds pages `s..e` (all below the limit), a word at a time.
    pub(super) fn insert_range(&mut self, s: u64, e: u64) {
        debug_assert!(s <= e && e <= BITS_MAX_PAGES);
        if s == e {
            return;
        }
        let (first, last) = ((s / 64) as usize, ((e - 1) / 64) as usize);
        if last >= self.words.len() {
            self.grow(last);
        }
        for i in first..=last {
            let lo = if i == first { s % 64 } else { 0 };
            let hi = if i == last { (e - 1) % 64 } else { 63 };
            // Bits lo..=hi.
            let mask = (u64::MAX >> (63 - hi)) & (u64::MAX << lo);
            self.words[i] |= mask;
            self.summary[i / 64] |= 1 << (i % 64);
        }
    }

    #[cold]
    fn grow(&mut self, i: usize) {
        let n = (i + 1).next_power_of_two();
        self.words.resize(n, 0);
        self.summary.resize(n.div_ceil(64), 0);
    }

    /// Calls `visit(start, end)` with the runs of each non-zero word, ascending, until
    /// it returns false; runs of neighbouring words may adjoin (a [`Joiner`] joins them).
    pub(super) fn word_runs(&self, mut visit: impl FnMut(u64, u64) -> bool) {
        for (si, &sw) in self.summary.iter().enumerate() {
            let mut sw = sw;
            while sw != 0 {
                let i = si * 64 + sw.trailing_zeros() as usize;
                sw &= sw - 1;
                let base = i as u64 * 64;
                let mut w = self.words[i];
                while w != 0 {
                    let lo = u64::from(w.trailing_zeros());
                    let len = u64::from((!(w >> lo)).trailing_zeros()).min(64 - lo);
                    if !visit(base + lo, base + lo + len) {
                        return;
                    }
                    // Clear bits lo..lo + len (len = 64 only when lo = 0).
                    w &= if len == 64 {
                        0
                    } else {
                        !(((1u64 << len) - 1) << lo)
                    };
                }
            }
        }
    }

    /// Calls `visit(start, end)` for the set's pages as maximal runs, ascending, until
    /// it returns false (the tests' view; the payload joins these with the ranges beyond
    /// the bitmap, [`super::Inner::each_range`]).
    #[cfg(test)]
    pub(super) fn runs(&self, visit: impl FnMut(u64, u64) -> bool) {
        let mut j = Joiner::new(visit);
        self.word_runs(|s, e| j.push(s, e));
        j.finish();
    }
}

/// Passes ranges given in ascending order on to a visitor, adjoining ones joined, until
/// the visitor returns false.
pub(super) struct Joiner<F> {
    pending: Option<(u64, u64)>,
    visit: F,
    stopped: bool,
}

impl<F: FnMut(u64, u64) -> bool> Joiner<F> {
    pub(super) fn new(visit: F) -> Self {
        Self {
            pending: None,
            visit,
            stopped: false,
        }
    }

    /// Takes `start..end` (at or after the end of the last); false once the visitor has
    /// stopped.
    pub(super) fn push(&mut self, s: u64, e: u64) -> bool {
        match self.pending {
            Some((ps, pe)) if pe == s => self.pending = Some((ps, e)),
            Some((ps, pe)) => {
                self.stopped = !(self.visit)(ps, pe);
                self.pending = Some((s, e));
            }
            None => self.pending = Some((s, e)),
        }
        !self.stopped
    }

    /// Passes on the last range (unless the visitor stopped).
    pub(super) fn finish(mut self) {
        if let (false, Some((s, e))) = (self.stopped, self.pending) {
            (self.visit)(s, e);
        }
    }
}
