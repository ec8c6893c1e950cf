//! [`Ranks`]: a set of live *times* (`0..capacity`) that answers "how many live times
//! are later than `t`" in a few word reads, the stack position of an entry stamped `t`.
//!
//! A bitmap of live times with two levels of counts: one byte per 64-time word and a
//! `u16` per *block* of eight words (512 times). Setting or clearing a time is `O(1)`;
//! counting the later ones reads the rest of `t`'s word (a popcount), the later word
//! counts of its block (its eight bytes loaded as one `u64` and summed in-register) and
//! the counts of the later blocks, only up to the newest time handed out. At 1,241 frames
//! (4,968 times: ten blocks) a count reads at most eleven counters; with blocks of 64
//! words it read up to 63 word counts (cachegrind, first million references of the
//! TPC-C trace, clustered-cost variant: finding positions took 128 M instructions
//! instead of 157 M, the stamped stacks 254 M instead of 283 M). The owner hands out times
//! in increasing order and renumbers its entries when they run out
//! ([`GroupStack`](super::GroupStack) compacts them to `0..len`, `O(capacity)` once per
//! `capacity − len` new times).
//!
//! The eight word counts of a block are kept as the bytes of one `u64` (they were a byte
//! slice, read through a checked eight-byte sub-slice), and the count, insert and remove
//! are inlined into the stamped stack: with the stamped stack's own entry points inlined
//! too, the clustered-cost variant's first million TPC-C references at 1,241 frames
//! take 1,317 M instructions instead of 1,355 M (cachegrind, whole replay), the same
//! counts.
//!
//! Tried and dropped: summing the block's later word counts without the branch (shifting
//! all of them, the words past `end` count zero): the clustered-cost variant's million
//! references took 1,468.8 M instructions instead of 1,437.0 M (cachegrind).

/// Times per word.
const WORD: usize = 64;
/// Words per block (the bytes of one `u64`).
const BLOCK: usize = 8;

/// The sum of the eight bytes of `x`, each at most 64 (at most 512).
#[inline]
fn byte_sum(x: u64) -> u32 {
    const LOW: u64 = 0x00FF_00FF_00FF_00FF;
    let pairs = (x & LOW) + ((x >> 8) & LOW);
    (pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48) as u32
}

/// Live times with their counts; see the module documentation.
#[derive(Debug, Clone)]
pub struct Ranks {
    words: Vec<u64>,
    /// Live times per word, the eight words of a block as the bytes of one `u64` (byte
    /// `i` of `word_count[b]`: word `8b + i`): a count reads them with one load, and a
    /// word's count changes by adding `1 << 8i` (a count is at most 64, no carry).
    word_count: Vec<u64>,
    block_count: Vec<u16>,
}

impl Ranks {
    /// An empty set of times `0..capacity` (rounded up to a multiple of 64).
    pub fn new(capacity: usize) -> Self {
        let words = capacity.div_ceil(WORD).max(1);
        let blocks = words.div_ceil(BLOCK);
        Self {
            words: vec![0; words],
            word_count: vec![0; blocks],
            block_count: vec![0; blocks],
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
    #[inline(always)]
    pub fn insert(&mut self, t: u32) {
        let t = t as usize;
        debug_assert!(!self.contains(t as u32), "time {t} live twice");
        self.words[t / WORD] |= 1 << (t % WORD);
        self.word_count[t / WORD / BLOCK] += 1 << (8 * (t / WORD % BLOCK));
        self.block_count[t / WORD / BLOCK] += 1;
    }

    /// Makes time `t` (live) dead.
    #[inline(always)]
    pub fn remove(&mut self, t: u32) {
        let t = t as usize;
        debug_assert!(self.contains(t as u32), "time {t} not live");
        self.words[t / WORD] &= !(1 << (t % WORD));
        self.word_count[t / WORD / BLOCK] -= 1 << (8 * (t / WORD % BLOCK));
        self.block_count[t / WORD / BLOCK] -= 1;
    }

    /// The word counts of block `b` (byte `i`: word `8b + i`).
    #[inline(always)]
    fn block_words(&self, b: usize) -> u64 {
        self.word_count.get(b).copied().unwrap_or(0)
    }

    /// Live times later than `t`, counting only times below `end` (no time at or above
    /// `end` may be live). Returns the count and the counters read (the work).
    #[inline(always)]
    pub fn count_later(&self, t: u32, end: u32) -> (u32, u32) {
        let t = t as usize;
        let (w, bit) = (t / WORD, t % WORD);
        let mut n = (self.words[w] >> bit >> 1).count_ones();
        let last_word = (end as usize).saturating_sub(1) / WORD;
        let block = w / BLOCK;
        // Word counts of words w + 1 ..= min(last_word, the block's last word); the words
        // past `last_word` hold no live time, so their counts (zero) may be summed too.
        let mut work = 1;
        if w % BLOCK + 1 < BLOCK && last_word > w {
            n += byte_sum(self.block_words(block) >> (8 * (w % BLOCK + 1)));
            work += 1;
        }
        let later = self.block_count.get(block + 1..=last_word / BLOCK);
        let later = later.unwrap_or(&[]);
        n += later.iter().map(|&c| u32::from(c)).sum::<u32>();
        (n, work + later.len() as u32)
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
            self.word_count[w / BLOCK] |= (bits as u64) << (8 * (w % BLOCK));
            self.block_count[w / BLOCK] += bits as u16;
        }
    }

    /// Checks the counts against the bitmap; returns the number of live times.
    pub fn check(&self) -> Result<usize, String> {
        let mut blocks = vec![0u16; self.block_count.len()];
        for w in 0..self.block_count.len() * BLOCK {
            let count = self.block_words(w / BLOCK) >> (8 * (w % BLOCK)) & 0xFF;
            let bits = self.words.get(w).copied().unwrap_or(0);
            if u64::from(bits.count_ones()) != count {
                return Err(format!("word {w}: count {count} for {bits:#x}"));
            }
            blocks[w / BLOCK] += bits.count_ones() as u16;
        }
        if blocks != self.block_count {
            return Err("block counts disagree with the bitmap".into());
        }
        Ok(blocks.iter().map(|&b| usize::from(b)).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Toggles `steps` random times of a set of `capacity` times, comparing every count
    /// with a plain set's; returns the set and its model.
    fn follow(capacity: usize, steps: u32) -> (Ranks, std::collections::BTreeSet<u32>) {
        let mut r = Ranks::new(capacity);
        let mut live = std::collections::BTreeSet::new();
        let mut x = 99u64;
        let cap = r.capacity() as u32;
        for _ in 0..steps {
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
        (r, live)
    }

    #[test]
    fn counts_match_a_set_across_words_and_blocks() {
        // Dense words (counts up to 64 summed in a block), then sparse blocks.
        follow(3 * WORD * BLOCK + 5, 20_000);
        let (mut r, _) = follow(40 * WORD * BLOCK + 5, 20_000);
        let cap = r.capacity() as u32;
        let n = 20 * WORD * BLOCK + WORD + 3;
        r.reset_to_prefix(n);
        assert_eq!(r.check().unwrap(), n);
        for q in [0, 1, 63, 64, 511, 512, 4_000, (n - 2) as u32] {
            assert_eq!(r.count_later(q, cap).0, (n - 1) as u32 - q, "after {q}");
        }
        assert!(r.contains((n - 1) as u32) && !r.contains(n as u32));
    }
}
