//! The written-page set below [`BITS_MAX_PAGES`]: a bit per page and a summary bit per
//! non-zero word, so that a membership test is a bit test and the set's ranges are read
//! off in one pass over the non-zero words (see the module documentation of [`super`],
//! *In memory*).

use super::sync::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

/// Pages the bitmap covers at most (16 MiB of bits; 1 TiB of 8 KB pages).
pub(super) const BITS_MAX_PAGES: u64 = 1 << 27;

/// Pages per chunk: the bitmap is allocated 64 KiB of bits at a time, where written.
const CHUNK_PAGES: u64 = 1 << 19;
const CHUNK_WORDS: usize = (CHUNK_PAGES / 64) as usize;
const CHUNKS: usize = (BITS_MAX_PAGES / CHUNK_PAGES) as usize;

/// A chunk's bits and its summary (bit `i` set once `words[i]` is non-zero).
#[derive(Debug)]
struct Chunk {
    words: Box<[AtomicU64]>,
    summary: Box<[AtomicU64]>,
}

impl Chunk {
    fn new() -> Self {
        let zeros = |n: usize| (0..n).map(|_| AtomicU64::new(0)).collect();
        Self {
            words: zeros(CHUNK_WORDS),
            summary: zeros(CHUNK_WORDS / 64),
        }
    }
}

/// A bit per page below [`BITS_MAX_PAGES`], shared without a lock: a test is one load,
/// the insert of a page already in the set one load, a first insert one or two atomic ORs
/// (the page's word, then the summary's, so that a reader that sees the summary bit
/// sees the word).
#[derive(Debug)]
pub(super) struct Bits {
    chunks: Box<[OnceLock<Chunk>]>,
}

impl Default for Bits {
    fn default() -> Self {
        Self {
            chunks: (0..CHUNKS).map(|_| OnceLock::new()).collect(),
        }
    }
}

/// Bits `lo..lo + n` of a word (`n` in 1..=64, `lo + n ≤ 64`).
#[inline(always)]
fn span(lo: u64, n: u64) -> u64 {
    (u64::MAX >> (64 - n)) << lo
}

/// (chunk, word in the chunk, bit) of page `p` (below the limit).
#[inline(always)]
fn place(p: u64) -> (usize, usize, u64) {
    (
        (p / CHUNK_PAGES) as usize,
        ((p % CHUNK_PAGES) / 64) as usize,
        1 << (p % 64),
    )
}

impl Bits {
    /// Whether page `p` is in the set (false for every page from the limit on).
    #[inline]
    pub(super) fn contains(&self, p: u64) -> bool {
        let (c, w, bit) = place(p);
        let word = |k: &Chunk| k.words[w].load(Ordering::Acquire);
        self.chunks
            .get(c)
            .and_then(OnceLock::get)
            .is_some_and(|k| word(k) & bit != 0)
    }

    /// Adds page `p` (below the limit); whether it was new.
    #[inline]
    pub(super) fn insert(&self, p: u64) -> bool {
        debug_assert!(p < BITS_MAX_PAGES);
        let (c, w, bit) = place(p);
        let Some(slot) = self.chunks.get(c) else {
            return false;
        };
        let k = slot.get_or_init(Chunk::new);
        let word = &k.words[w];
        if word.load(Ordering::Acquire) & bit != 0
            || word.fetch_or(bit, Ordering::Release) & bit != 0
        {
            return false;
        }
        let (s, sbit) = (&k.summary[w / 64], 1 << (w % 64));
        if s.load(Ordering::Acquire) & sbit == 0 {
            s.fetch_or(sbit, Ordering::Release);
        }
        true
    }

    /// Adds pages `s..e` (all below the limit), a word at a time.
    pub(super) fn insert_range(&self, s: u64, e: u64) {
        debug_assert!(s <= e && e <= BITS_MAX_PAGES);
        let mut p = s;
        while p < e {
            let (c, w, _) = place(p);
            let lo = p % 64;
            let n = (64 - lo).min(e - p);
            let k = self.chunks[c].get_or_init(Chunk::new);
            k.words[w].fetch_or(span(lo, n), Ordering::Release);
            k.summary[w / 64].fetch_or(1 << (w % 64), Ordering::Release);
            p += n;
        }
    }

    /// Calls `visit(start, end)` with the runs of each non-zero word, ascending, until
    /// it returns false; runs of neighbouring words may adjoin (a [`Joiner`] joins them).
    /// Visits only the allocated chunks' non-zero words.
    pub(super) fn word_runs(&self, mut visit: impl FnMut(u64, u64) -> bool) {
        for (c, k) in self.chunks.iter().enumerate() {
            let Some(k) = k.get() else { continue };
            for (si, s) in k.summary.iter().enumerate() {
                let mut sw = s.load(Ordering::Acquire);
                while sw != 0 {
                    let w = si * 64 + sw.trailing_zeros() as usize;
                    sw &= sw - 1;
                    let base = c as u64 * CHUNK_PAGES + w as u64 * 64;
                    let mut bits = k.words[w].load(Ordering::Acquire);
                    while bits != 0 {
                        let lo = u64::from(bits.trailing_zeros());
                        let len = u64::from((!(bits >> lo)).trailing_zeros()).min(64 - lo);
                        if !visit(base + lo, base + lo + len) {
                            return;
                        }
                        bits &= !span(lo, len);
                    }
                }
            }
        }
    }

    /// Calls `visit(start, end)` for the set's pages as maximal runs, ascending, until
    /// it returns false (the tests' view; the payload joins these with the ranges beyond
    /// the bitmap, `WrittenMap::each_range`).
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
