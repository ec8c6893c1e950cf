//! [`GroupStack`]: one LRU stack of page entries with group-based distances (Kim, Hill
//! and Wood, SIGMETRICS 1991) and a present-condition threshold per entry; see the module
//! documentation of [`super`].

pub(super) const NIL: u32 = u32::MAX;

/// One LRU stack with group-based distances and a present-condition threshold per entry.
#[derive(Debug, Clone)]
pub struct GroupStack {
    cap: usize,
    z: usize,
    page: Vec<u64>,
    theta: Vec<u32>,
    group: Vec<u32>,
    /// Towards the top (more recent).
    prev: Vec<u32>,
    /// Towards the bottom (older).
    next: Vec<u32>,
    top: u32,
    bottom: u32,
    len: usize,
    free: Vec<u32>,
    /// `tails[g]`: the oldest entry of group `g`.
    tails: Vec<u32>,
    /// Group-boundary updates done so far (the estimator's per-access work).
    work: u64,
}

/// A stack entry as seen by [`GroupStack::found`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// Slot of the entry (valid until the stack changes).
    pub slot: u32,
    /// Smallest possible stack distance (first position of the entry's group; 1-based).
    pub lo: u32,
    /// Largest possible stack distance (last position of the group, at most the length).
    pub hi: u32,
    /// The distance `d̂` used in present conditions: the group's middle position
    /// `lo + (hi − lo) / 2` (exact when the group size is 1).
    pub distance: u32,
    /// The entry's present-condition threshold.
    pub theta: u32,
}

impl GroupStack {
    /// An empty stack holding at most `cap` entries, in groups of `group_size`.
    ///
    /// # Panics
    /// If `cap` or `group_size` is zero, or `cap` does not fit in 32 bits.
    pub fn new(cap: usize, group_size: usize) -> Self {
        assert!(cap > 0 && group_size > 0, "empty stack or group");
        assert!(cap < NIL as usize - 1, "stack too deep");
        let n = cap + 1;
        Self {
            cap,
            z: group_size,
            page: vec![0; n],
            theta: vec![0; n],
            group: vec![0; n],
            prev: vec![NIL; n],
            next: vec![NIL; n],
            top: NIL,
            bottom: NIL,
            len: 0,
            free: (0..n as u32).rev().collect(),
            tails: Vec::with_capacity(cap / group_size + 2),
            work: 0,
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the stack is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Group-boundary updates done so far.
    pub fn work(&self) -> u64 {
        self.work
    }

    /// The entry in `slot` (a slot returned by [`GroupStack::push_top`] and not removed
    /// since): its group-based distance and threshold.
    #[inline]
    pub fn found(&self, slot: u32) -> Found {
        let s = slot as usize;
        let g = self.group[s] as usize;
        let lo = (g * self.z + 1) as u32;
        let hi = ((g + 1) * self.z).min(self.len) as u32;
        Found {
            slot,
            lo,
            hi,
            distance: lo + (hi - lo) / 2,
            theta: self.theta[s],
        }
    }

    /// Sets the present-condition threshold of an entry.
    #[inline]
    pub fn set_theta(&mut self, slot: u32, theta: u32) {
        self.theta[slot as usize] = theta;
    }

    #[inline]
    fn unlink(&mut self, x: u32) {
        let (p, n) = (self.prev[x as usize], self.next[x as usize]);
        if p != NIL {
            self.next[p as usize] = n;
        } else {
            self.top = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        } else {
            self.bottom = p;
        }
    }

    #[inline]
    fn link_top(&mut self, x: u32) {
        self.prev[x as usize] = NIL;
        self.next[x as usize] = self.top;
        if self.top != NIL {
            self.prev[self.top as usize] = x;
        } else {
            self.bottom = x;
        }
        self.top = x;
    }

    /// Moves entry `slot` to the top (distance 1).
    pub fn move_to_top(&mut self, slot: u32) {
        if self.top == slot {
            return;
        }
        let k = self.group[slot as usize] as usize;
        if self.tails[k] == slot {
            // Its newer neighbour slides into its position, the last of group k.
            self.tails[k] = self.prev[slot as usize];
        }
        self.unlink(slot);
        self.link_top(slot);
        self.group[slot as usize] = 0;
        for g in 0..k {
            let t = self.tails[g];
            self.tails[g] = self.prev[t as usize];
            self.group[t as usize] = g as u32 + 1;
        }
        self.work += k as u64 + 1;
    }

    /// Pushes `page` (not in the stack) on top with threshold `theta`; drops the bottom
    /// entry if the stack would exceed its capacity. Returns the new entry's slot and the
    /// page of the dropped entry, if any.
    pub fn push_top(&mut self, page: u64, theta: u32) -> (u32, Option<u64>) {
        let x = match self.free.pop() {
            Some(x) => x,
            None => unreachable!("a stack of cap {} has cap + 1 slots", self.cap),
        };
        self.page[x as usize] = page;
        self.theta[x as usize] = theta;
        self.group[x as usize] = 0;
        let full_groups = self.len / self.z;
        let was_full = self.len.is_multiple_of(self.z);
        let old_bottom = self.bottom;
        self.link_top(x);
        for g in 0..full_groups {
            let t = self.tails[g];
            self.tails[g] = self.prev[t as usize];
            self.group[t as usize] = g as u32 + 1;
        }
        if was_full {
            if self.len == 0 {
                self.tails.push(x);
            } else {
                self.tails.push(old_bottom);
            }
        }
        self.work += full_groups as u64 + 1;
        self.len += 1;
        let mut dropped = None;
        if self.len > self.cap {
            let b = self.bottom;
            dropped = Some(self.page[b as usize]);
            self.remove(b);
        }
        (x, dropped)
    }

    /// Removes entry `slot`.
    pub fn remove(&mut self, slot: u32) {
        let k = self.group[slot as usize] as usize;
        let groups = self.tails.len();
        for g in k..groups.saturating_sub(1) {
            let nt = self.next[self.tails[g] as usize];
            self.group[nt as usize] = g as u32;
            self.tails[g] = nt;
        }
        self.work += (groups - k) as u64;
        self.unlink(slot);
        self.len -= 1;
        let g2 = self.len.div_ceil(self.z);
        self.tails.truncate(g2);
        if g2 > 0 {
            self.tails[g2 - 1] = self.bottom;
        }
        self.prev[slot as usize] = NIL;
        self.next[slot as usize] = NIL;
        self.free.push(slot);
    }

    /// Entries from the top: `(page, θ)`.
    pub fn entries(&self) -> Vec<(u64, u32)> {
        self.walk().into_iter().map(|(p, _, t)| (p, t)).collect()
    }

    /// Entries from the top: `(page, slot, θ)`.
    pub fn walk(&self) -> Vec<(u64, u32, u32)> {
        let mut v = Vec::with_capacity(self.len);
        let mut c = self.top;
        while c != NIL {
            v.push((self.page[c as usize], c, self.theta[c as usize]));
            c = self.next[c as usize];
        }
        v
    }

    /// Checks links, groups and the capacity.
    pub fn check(&self) -> Result<(), String> {
        if self.len > self.cap {
            return Err(format!("stack holds {} > cap {}", self.len, self.cap));
        }
        let mut pos = 0usize;
        let mut prev = NIL;
        let mut c = self.top;
        while c != NIL {
            if self.prev[c as usize] != prev {
                return Err(format!("stack slot {c}: broken prev link"));
            }
            let g = pos / self.z;
            if self.group[c as usize] as usize != g {
                return Err(format!(
                    "stack position {} in group {}, expected {g}",
                    pos + 1,
                    self.group[c as usize]
                ));
            }
            if ((pos + 1).is_multiple_of(self.z) || pos + 1 == self.len)
                && self.tails.get(g) != Some(&c)
            {
                return Err(format!("group {g} tail is not position {}", pos + 1));
            }
            pos += 1;
            if pos > self.len {
                return Err("stack longer than its length".into());
            }
            prev = c;
            c = self.next[c as usize];
        }
        if pos != self.len || prev != self.bottom {
            return Err(format!(
                "stack walk found {pos} entries, length {}",
                self.len
            ));
        }
        if self.tails.len() != self.len.div_ceil(self.z) {
            return Err(format!(
                "{} groups for {} entries",
                self.tails.len(),
                self.len
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_follow_positions_through_moves_pushes_and_removes() {
        for z in [1usize, 2, 3, 5] {
            let mut s = GroupStack::new(11, z);
            let mut slots: std::collections::HashMap<u64, u32> = Default::default();
            let mut model: Vec<u64> = Vec::new(); // top first
            let mut x = 12345u64;
            for step in 0..2000 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let page = (x >> 33) % 17;
                let op = (x >> 20) % 4;
                let find = |s: &GroupStack, slots: &std::collections::HashMap<u64, u32>| {
                    slots.get(&page).map(|&x| s.found(x))
                };
                if op == 0 {
                    if let Some(f) = find(&s, &slots) {
                        s.remove(f.slot);
                        slots.remove(&page);
                        model.retain(|&p| p != page);
                    }
                } else if let Some(f) = find(&s, &slots) {
                    let pos = model.iter().position(|&p| p == page).unwrap() + 1;
                    let hi = (pos.div_ceil(z) * z).min(model.len());
                    let lo = (pos - 1) / z * z + 1;
                    assert_eq!((f.lo as usize, f.hi as usize), (lo, hi));
                    assert!(lo <= pos && pos <= hi);
                    s.move_to_top(f.slot);
                    model.retain(|&p| p != page);
                    model.insert(0, page);
                } else {
                    let (x, dropped) = s.push_top(page, 0);
                    slots.insert(page, x);
                    if let Some(d) = dropped {
                        slots.remove(&d);
                    }
                    model.insert(0, page);
                    model.truncate(11);
                }
                s.check()
                    .unwrap_or_else(|e| panic!("z={z} step {step}: {e}"));
                let got: Vec<u64> = s.entries().iter().map(|e| e.0).collect();
                assert_eq!(got, model, "z={z} step {step}");
            }
        }
    }
}
