//! LRU stack distances in O(log n) per reference: a Fenwick tree over time slots with one
//! marker at each page's most recent reference (Bennett & Kruskal's method, as in
//! Olken's and SHARDS' implementations).
//!
//! The stack distance of a reference to page `p` last referenced at slot `l` is one plus
//! the number of distinct pages referenced since, i.e. the markers after `l`. Slots are
//! handed out in time order; when they run out, the live markers are relabelled densely
//! in order (distances only depend on order), so memory stays proportional to the
//! distinct pages, not to the trace length.

/// Marks "no slot" / "no page".
const NONE: u32 = u32::MAX;
/// Smallest slot capacity.
const MIN_SLOTS: usize = 1 << 16;

/// LRU stack distances of a reference stream over dense page ids.
#[derive(Debug, Clone, Default)]
pub struct StackDistance {
    /// Fenwick tree over slots (1-based internally).
    tree: Vec<u32>,
    /// Page whose marker is at each slot, or `NONE`.
    slot_page: Vec<u32>,
    /// Each page's marker slot, or `NONE`.
    last_slot: Vec<u32>,
    /// Next free slot.
    next: usize,
    /// Markers set (distinct pages currently tracked).
    live: usize,
}

impl StackDistance {
    /// An empty stack.
    pub fn new() -> Self {
        Self::default()
    }

    /// Distinct pages tracked.
    pub fn live(&self) -> usize {
        self.live
    }

    /// References `page`: its stack distance (`None` on its first reference, an infinite
    /// distance), and it becomes the top of the stack.
    ///
    /// ```
    /// use flashbuf_lab::mrc::stack::StackDistance;
    /// let mut s = StackDistance::new();
    /// let d: Vec<_> = [1, 2, 3, 1, 1, 3].iter().map(|&p| s.access(p)).collect();
    /// assert_eq!(d, [None, None, None, Some(3), Some(1), Some(2)]);
    /// ```
    pub fn access(&mut self, page: u32) -> Option<u64> {
        let p = page as usize;
        if p >= self.last_slot.len() {
            self.last_slot.resize((p + 1).next_power_of_two(), NONE);
        }
        let d = match self.last_slot[p] {
            NONE => None,
            l => {
                let d = self.after(l) + 1;
                self.unmark(l);
                Some(d)
            }
        };
        if self.next >= self.slot_page.len() {
            self.compact();
        }
        let slot = self.next;
        self.next += 1;
        self.mark(slot, page);
        d
    }

    /// The distance `page` would have if referenced now (`None` if not tracked), without
    /// referencing it: one plus the distinct pages referenced since its last reference.
    pub fn distance_now(&self, page: u32) -> Option<u64> {
        match self.last_slot.get(page as usize).copied() {
            None | Some(NONE) => None,
            Some(l) => Some(self.after(l) + 1),
        }
    }

    /// Stops tracking `page` (its next reference is a first reference again).
    pub fn forget(&mut self, page: u32) {
        if let Some(&l) = self.last_slot.get(page as usize) {
            if l != NONE {
                self.unmark(l);
            }
        }
    }

    /// Pages tracked, in no particular order.
    pub fn pages(&self) -> impl Iterator<Item = u32> + '_ {
        self.slot_page[..self.next.min(self.slot_page.len())]
            .iter()
            .copied()
            .filter(|&p| p != NONE)
    }

    /// Bytes of memory held.
    pub fn memory_bytes(&self) -> usize {
        4 * (self.tree.capacity() + self.slot_page.capacity() + self.last_slot.capacity())
    }

    /// Markers at slots after `slot`.
    fn after(&self, slot: u32) -> u64 {
        (self.live as u64).saturating_sub(self.prefix(slot as usize))
    }

    /// Markers at slots `0..=slot`.
    fn prefix(&self, slot: usize) -> u64 {
        let mut i = slot + 1;
        let mut s = 0u64;
        while i > 0 {
            s += u64::from(self.tree[i]);
            i &= i - 1;
        }
        s
    }

    fn add(&mut self, slot: usize, up: bool) {
        let mut i = slot + 1;
        while i < self.tree.len() {
            if up {
                self.tree[i] += 1;
            } else {
                self.tree[i] -= 1;
            }
            i += i & i.wrapping_neg();
        }
    }

    fn mark(&mut self, slot: usize, page: u32) {
        self.add(slot, true);
        self.slot_page[slot] = page;
        self.last_slot[page as usize] = slot as u32;
        self.live += 1;
    }

    fn unmark(&mut self, slot: u32) {
        let s = slot as usize;
        self.add(s, false);
        let page = self.slot_page[s];
        self.slot_page[s] = NONE;
        self.last_slot[page as usize] = NONE;
        self.live -= 1;
    }

    /// Relabels the live markers `0..live` in order and makes room for as many new slots
    /// again as there are live pages (at least [`MIN_SLOTS`]), so compaction costs O(1)
    /// amortized per reference.
    fn compact(&mut self) {
        let live: Vec<u32> = self.pages().collect();
        let cap = (2 * live.len()).max(MIN_SLOTS);
        assert!(cap < NONE as usize, "more than 2^31 distinct pages");
        self.slot_page.clear();
        self.slot_page.resize(cap, NONE);
        self.tree.clear();
        self.tree.resize(cap + 1, 0);
        for (i, &p) in live.iter().enumerate() {
            self.slot_page[i] = p;
            self.last_slot[p as usize] = i as u32;
            self.tree[i + 1] = 1;
        }
        // Linear-time Fenwick construction from the point values.
        for i in 1..=cap {
            let j = i + (i & i.wrapping_neg());
            if j <= cap {
                self.tree[j] += self.tree[i];
            }
        }
        self.next = live.len();
        self.live = live.len();
    }

    /// Checks the tree against the markers (tests).
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut count = 0u64;
        for (slot, &p) in self.slot_page.iter().enumerate().take(self.next) {
            if p != NONE {
                count += 1;
                if self.last_slot[p as usize] as usize != slot {
                    return Err(format!("page {p} at slot {slot} points elsewhere"));
                }
            }
            if self.prefix(slot) != count {
                return Err(format!("prefix({slot}) != {count}"));
            }
        }
        if count != self.live as u64 {
            return Err(format!("{count} markers, live says {}", self.live));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_core::rng::SplitMix64;

    /// Naive LRU stack: distance = position in a most-recent-first list.
    fn naive(refs: &[u32]) -> Vec<Option<u64>> {
        let mut stack: Vec<u32> = Vec::new();
        refs.iter()
            .map(|&p| {
                let pos = stack.iter().position(|&q| q == p);
                if let Some(i) = pos {
                    stack.remove(i);
                }
                stack.insert(0, p);
                pos.map(|i| i as u64 + 1)
            })
            .collect()
    }

    #[test]
    fn equals_a_naive_stack_across_compactions() {
        let mut rng = SplitMix64::new(3);
        // Enough references to compact several times (MIN_SLOTS = 65,536).
        let refs: Vec<u32> = (0..300_000)
            .map(|i| {
                if i % 7 == 0 {
                    rng.below(5_000) as u32
                } else {
                    rng.below(60) as u32
                }
            })
            .collect();
        let mut s = StackDistance::new();
        let got: Vec<_> = refs.iter().map(|&p| s.access(p)).collect();
        let want = naive(&refs);
        assert_eq!(got, want);
        s.check_invariants().unwrap();
        s.forget(3);
        assert_eq!(s.distance_now(3), None);
        s.check_invariants().unwrap();
    }
}
