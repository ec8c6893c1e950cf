//! A set of `u64` ids filled and emptied once per advisor window (the clustered-cost
//! variant's walk over the recent writes, `super::clustered_cost`): ids below
//! [`BITS_MAX_ID`] are bits of a bitmap, cleared word by word through the list of words
//! set; larger ids go to a hash set. The same answers as a hash set, without hashing the
//! dense page and cluster numbers a database (and a replay's address map) produces: the
//! hash set's inserts were 3.7 % of a no-bytes replay of the variant once its windows went
//! back to the paper's 5,000 references (four times as many walks; measured with `perf`).
//! `insert` is inlined into the walk, and the walk finds a page's cluster with a shift
//! (`super::cluster_of`) where it divided: the variant's first million TPC-C references
//! at 1,241 frames take 1,300 M instructions instead of 1,317 M (cachegrind).

use hashbrown::HashSet;

/// Ids below this are bits (16 Mi ids: at most 2 MiB of bitmap, grown to the largest id
/// seen).
pub const BITS_MAX_ID: u64 = 1 << 24;

/// The set (module docs).
#[derive(Debug, Clone, Default)]
pub struct IdSet {
    bits: Vec<u64>,
    /// Words of `bits` with a bit set, each once.
    touched: Vec<u32>,
    large: HashSet<u64>,
    len: usize,
}

impl IdSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `id`; whether it was absent.
    #[inline(always)]
    pub fn insert(&mut self, id: u64) -> bool {
        let added = if id < BITS_MAX_ID {
            let w = (id / 64) as usize;
            if w >= self.bits.len() {
                self.bits.resize((w + 1).next_power_of_two(), 0);
            }
            let mask = 1u64 << (id % 64);
            let word = &mut self.bits[w];
            if *word & mask != 0 {
                false
            } else {
                if *word == 0 {
                    self.touched.push(w as u32);
                }
                *word |= mask;
                true
            }
        } else {
            self.large.insert(id)
        };
        self.len += usize::from(added);
        added
    }

    /// Ids in the set.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Empties the set, keeping its memory.
    pub fn clear(&mut self) {
        for &w in &self.touched {
            self.bits[w as usize] = 0;
        }
        self.touched.clear();
        self.large.clear();
        self.len = 0;
    }

    /// Bytes allocated.
    pub fn bytes(&self) -> usize {
        self.bits.capacity() * 8 + self.touched.capacity() * 4 + self.large.capacity() * 9
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn behaves_like_a_hash_set(
            rounds in proptest::collection::vec(
                proptest::collection::vec(
                    prop_oneof![0u64..5_000, (BITS_MAX_ID - 100)..(BITS_MAX_ID + 100), any::<u64>()],
                    0..300,
                ),
                1..6,
            )
        ) {
            let mut s = IdSet::new();
            for ids in rounds {
                let mut model = std::collections::HashSet::new();
                for id in ids {
                    prop_assert_eq!(s.insert(id), model.insert(id));
                    prop_assert_eq!(s.len(), model.len());
                }
                s.clear();
                prop_assert!(s.is_empty());
            }
        }
    }

    #[test]
    fn clear_forgets_every_id() {
        let mut s = IdSet::new();
        for id in [0, 63, 64, 1_000_000, BITS_MAX_ID, u64::MAX] {
            assert!(s.insert(id));
            assert!(!s.insert(id));
        }
        assert_eq!(s.len(), 6);
        s.clear();
        assert!(s.bits.iter().all(|&w| w == 0));
        for id in [0, 63, 64, 1_000_000, BITS_MAX_ID, u64::MAX] {
            assert!(s.insert(id));
        }
    }
}
