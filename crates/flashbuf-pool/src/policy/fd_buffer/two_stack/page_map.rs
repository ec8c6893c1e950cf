//! [`PageMap`]: a fixed-capacity hash map from page (or cluster) numbers to a small value,
//! for the estimator's ghost pages and the dirty pool's clusters (`super::super::cluster`).
//!
//! Open addressing with linear probing over one array of `(key, value)` pairs (a probe
//! reads one cache line, where a general map reads a control byte and then the pair), a
//! multiplicative hash (page numbers are `relation << 24 | block`: the high bits mix
//! both), and backward-shift deletion (no tombstones, so no rehashing ever). The capacity
//! is fixed at construction: the owner knows the most entries it can hold (`2 M` ghosts,
//! `M` clusters) and the table keeps its load at most 2/3, so it never allocates after
//! construction. A slot is free when its value is the map's `vacant` value, which callers
//! never store.

/// A fixed-capacity map from `u64` keys to `V`; see the module documentation.
#[derive(Debug, Clone)]
pub struct PageMap<V> {
    slots: Vec<(u64, V)>,
    /// `slots.len() − 1` (a power of two minus one).
    mask: usize,
    /// `64 − log2(slots.len())`: the hash keeps the product's high bits.
    shift: u32,
    vacant: V,
    len: usize,
}

impl<V: Copy + PartialEq> PageMap<V> {
    /// A map for at most `max_len` entries; `vacant` marks free slots and is never stored.
    pub fn new(max_len: usize, vacant: V) -> Self {
        let cap = (max_len + max_len / 2 + 1).next_power_of_two().max(8);
        Self {
            slots: vec![(0, vacant); cap],
            mask: cap - 1,
            shift: 64 - cap.trailing_zeros(),
            vacant,
            len: 0,
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes per entry slot (for memory reports).
    pub fn slot_bytes() -> usize {
        std::mem::size_of::<(u64, V)>()
    }

    /// Slots of the table (its capacity).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Hints the CPU that `key`'s entry will be looked up soon: its home slot's cache
    /// line starts moving towards the core (changes nothing; see
    /// [`flashbuf_core::prefetch`]).
    #[inline]
    pub fn prefetch(&self, key: u64) {
        flashbuf_core::prefetch::prefetch_at(&self.slots, self.home(key));
    }

    /// The slot holding `key`, or the free slot ending its probe sequence.
    #[inline]
    fn find(&self, key: u64) -> (usize, bool) {
        let mut i = self.home(key);
        loop {
            let (k, v) = self.slots[i];
            if v == self.vacant {
                return (i, false);
            }
            if k == key {
                return (i, true);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The value of `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<V> {
        match self.find(key) {
            (i, true) => Some(self.slots[i].1),
            _ => None,
        }
    }

    /// Whether `key` has an entry.
    pub fn contains_key(&self, key: u64) -> bool {
        self.find(key).1
    }

    /// Sets `key`'s value (not `vacant`), inserting it if absent.
    ///
    /// # Panics
    /// If the map already holds its `max_len` (more precisely, if no slot is free).
    #[inline]
    pub fn insert(&mut self, key: u64, value: V) {
        debug_assert!(value != self.vacant, "storing the vacant value");
        let (i, found) = self.find(key);
        if !found {
            assert!(self.len + 1 < self.slots.len(), "page map full");
            self.len += 1;
        }
        self.slots[i] = (key, value);
    }

    /// Removes `key`; returns its value if it had one.
    #[inline]
    pub fn remove(&mut self, key: u64) -> Option<V> {
        let (i, found) = self.find(key);
        found.then(|| {
            let v = self.slots[i].1;
            self.delete_at(i);
            v
        })
    }

    /// Applies `f` to `key`'s value if it has one; the entry is removed if `f` leaves the
    /// `vacant` value. One probe sequence.
    #[inline]
    pub fn update(&mut self, key: u64, f: impl FnOnce(&mut V)) {
        let (i, found) = self.find(key);
        if found {
            f(&mut self.slots[i].1);
            if self.slots[i].1 == self.vacant {
                self.delete_at(i);
            }
        }
    }

    /// Empties slot `hole` and shifts back the entries after it that may move (so that
    /// every entry stays reachable from its home slot without tombstones).
    fn delete_at(&mut self, mut hole: usize) {
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask;
            let (k, v) = self.slots[j];
            if v == self.vacant {
                break;
            }
            let home = self.home(k);
            // The entry at j may fill the hole if the hole lies on its probe path.
            if (j.wrapping_sub(home) & self.mask) >= (j.wrapping_sub(hole) & self.mask) {
                self.slots[hole] = (k, v);
                hole = j;
            }
        }
        self.slots[hole].1 = self.vacant;
        self.len -= 1;
    }

    /// Entries, in table order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, V)> + '_ {
        let vacant = self.vacant;
        self.slots.iter().copied().filter(move |e| e.1 != vacant)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_a_hash_map_through_inserts_updates_and_removes() {
        const VACANT: u32 = u32::MAX;
        let mut m = PageMap::new(300, VACANT);
        let mut model = std::collections::HashMap::new();
        let mut x = 7u64;
        for step in 0..200_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Keys shaped like page numbers: a few relations, clustered blocks.
            let key = ((x >> 60) << 24) | ((x >> 33) % 700);
            match (x >> 20) % 4 {
                0 => assert_eq!(m.remove(key), model.remove(&key), "step {step}"),
                1 => {
                    m.update(key, |v| *v = if *v % 2 == 0 { VACANT } else { *v + 1 });
                    if let Some(v) = model.get_mut(&key) {
                        if *v % 2 == 0 {
                            model.remove(&key);
                        } else {
                            *v += 1;
                        }
                    }
                }
                _ if model.len() < 300 || model.contains_key(&key) => {
                    m.insert(key, step);
                    model.insert(key, step);
                }
                _ => {}
            }
            assert_eq!(m.get(key), model.get(&key).copied(), "step {step}");
            assert_eq!(m.len(), model.len());
        }
        let mut all: Vec<_> = m.iter().collect();
        all.sort_unstable();
        let mut want: Vec<_> = model.into_iter().collect();
        want.sort_unstable();
        assert_eq!(all, want);
        assert!(m.capacity() >= 450);
    }
}
