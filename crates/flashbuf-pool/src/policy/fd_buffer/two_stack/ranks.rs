//! [`Ranks`]: a set of live *times* (`0..capacity`) that answers "how many live times
//! are later than `t`" in a few word reads, the stack position of an entry stamped `t`.
//!
//! A bitmap of live times with two levels of counts: one per 64-time word and one per
//! block of 64 words (4,096 times). Setting or clearing a time is `O(1)`; counting the
//! later ones reads the rest of `t`'s word (a popcount), the counts of the later words of
//! its block (at most 63 bytes) and the counts of the later blocks, and only up to the
//! newest time handed out. The owner hands out times in increasing order and renumbers
//! its entries when they run out ([`GroupStack`](super::GroupStack) compacts them to
//! `0..len`, `O(capacity)` once per `capacity − len` new times).

/// Times per word.
const WORD: usize = 64;
/// Words per block.
const BLOCK: usize = 64;

/// Live times with their counts; see the module documentation.
#[derive(Debug, Clone)]
pub struct Ranks {
    words: Vec<u64>,
    word_count: Vec<u8>,
    block_count: Vec<u32>,
}

impl Ranks {
    /// An empty set of times `0..capacity` (rounded up to a multiple of 64).
    pub fn new(capacity: usize) -> Self {
        let words = capacity.div_ceil(WORD).max(1);
        Self {
            words: vec![0; words],
            word_count: vec![0; words],
            block_count: vec![0; words.div_ceil(BLOCK)],
        }
    }

    /// Number of times the set can hold (a multiple of 64).
    pub fn capacity(&self) -> usize {
        self.words.len() * WORD
    }

    /// Whether time `t` is live.
    #[inline]
    pub fn contains(&self, t: u32) -> bool {
        let t = t as usize;
        self.words[t / WORD] >> (t % WORD) & 1 == 1
    }

    /// Makes time `t` (not live) live.
    #[inline]
    pub fn insert(&mut self, t: u32) {
        let t = t as usize;
        debug_assert!(!self.contains(t as u32), "time {t} live twice");
        self.words[t / WORD] |= 1 << (t % WORD);
        self.word_count[t / WORD] += 1;
        self.block_count[t / WORD / BLOCK] += 1;
    }

    /// Makes time `t` (live) dead.
    #[inline]
    pub fn remove(&mut self, t: u32) {
        let t = t as usize;
        debug_assert!(self.contains(t as u32), "time {t} not live");
        self.words[t / WORD] &= !(1 << (t % WORD));
        self.word_count[t / WORD] -= 1;
        self.block_count[t / WORD / BLOCK] -= 1;
    }

    /// Live times later than `t`, counting only times below `end` (no time at or above
    /// `end` may be live). Returns the count and the counters read (the work).
    #[inline]
    pub fn count_later(&self, t: u32, end: u32) -> (u32, u32) {
        let t = t as usize;
        let (w, b) = (t / WORD, t % WORD);
        let mut n = (self.words[w] >> b >> 1).count_ones();
        let last_word = (end as usize).saturating_sub(1) / WORD;
        let block = w / BLOCK;
        let block_end = ((block + 1) * BLOCK).min(last_word + 1);
        let later_words = self.word_count.get(w + 1..block_end).unwrap_or(&[]);
        n += later_words.iter().map(|&c| u32::from(c)).sum::<u32>();
        let last_block = last_word / BLOCK;
        let later_blocks = self.block_count.get(block + 1..=last_block).unwrap_or(&[]);
        n += later_blocks.iter().sum::<u32>();
        (n, 1 + (later_words.len() + later_blocks.len()) as u32)
    }

    /// The first live time at or after `t`, below `end`.
    pub fn first_from(&self, t: u32, end: u32) -> Option<u32> {
        let (mut w, end) = (t as usize / WORD, end as usize);
        let mut bits = self.words.get(w)? & (!0u64 << (t as usize % WORD));
        loop {
            if bits != 0 {
                let found = w * WORD + bits.trailing_zeros() as usize;
                return (found < end).then_some(found as u32);
            }
            w += 1;
            if w * WORD >= end {
                return None;
            }
            bits = self.words[w];
        }
    }

    /// Empties the set and makes `0..n` live.
    pub fn reset_to_prefix(&mut self, n: usize) {
        self.words.fill(0);
        self.word_count.fill(0);
        self.block_count.fill(0);
        for w in 0..n.div_ceil(WORD) {
            let bits = (n - w * WORD).min(WORD);
            self.words[w] = if bits == WORD { !0 } else { (1 << bits) - 1 };
            self.word_count[w] = bits as u8;
            self.block_count[w / BLOCK] += bits as u32;
        }
    }

    /// Checks the counts against the bitmap; returns the number of live times.
    pub fn check(&self) -> Result<usize, String> {
        let mut blocks = vec![0u32; self.block_count.len()];
        for (w, &bits) in self.words.iter().enumerate() {
            if bits.count_ones() != u32::from(self.word_count[w]) {
                return Err(format!(
                    "word {w}: count {} for {bits:#x}",
                    self.word_count[w]
                ));
            }
            blocks[w / BLOCK] += bits.count_ones();
        }
        if blocks != self.block_count {
            return Err("block counts disagree with the bitmap".into());
        }
        Ok(blocks.iter().map(|&b| b as usize).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_a_set_across_words_and_blocks() {
        let mut r = Ranks::new(3 * WORD * BLOCK + 5);
        let mut live = std::collections::BTreeSet::new();
        let mut x = 99u64;
        let cap = r.capacity() as u32;
        for _ in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let t = ((x >> 33) % u64::from(cap)) as u32;
            if live.insert(t) {
                r.insert(t);
            } else {
                live.remove(&t);
                r.remove(t);
            }
            let q = ((x >> 13) % u64::from(cap)) as u32;
            let want = live.range(q + 1..).count() as u32;
            assert_eq!(r.count_later(q, cap).0, want);
            let end = live.iter().next_back().map_or(0, |&m| m + 1).max(q + 1);
            assert_eq!(r.count_later(q, end).0, want);
            assert_eq!(r.first_from(q, cap), live.range(q..).next().copied());
        }
        assert_eq!(r.check().unwrap(), live.len());
        r.reset_to_prefix(WORD * BLOCK + 3);
        assert_eq!(r.check().unwrap(), WORD * BLOCK + 3);
        assert_eq!(r.count_later(0, cap).0, (WORD * BLOCK + 2) as u32);
        assert!(r.contains((WORD * BLOCK + 2) as u32) && !r.contains((WORD * BLOCK + 3) as u32));
    }
}
