//! Two-Stack miss-rate estimation (On et al., IEEE TC 2014, §4.3, Algorithms 3 and 4)
//! with *present conditions* and the group-based stack optimization of Kim, Hill and Wood
//! (SIGMETRICS 1991) that the paper adopts (group size 64).
//!
//! # The model
//! Two LRU stacks, CLRU (clean pool) and DLRU (dirty pool), hold page entries in
//! recency order. Each entry carries a present condition, a predicate on the pool sizes
//! telling for which configurations the page is really in that pool. Every condition the
//! algorithms build is a threshold, so an entry stores one integer `θ`:
//! - CLRU: present iff `M_c ≥ θ` (`θ = 0` is *true*). Algorithm 3 line 17,
//!   `PCond_c = (M_c > M − d_d)`, is `θ = M − d_d + 1`; line 24's disjunction is the
//!   minimum of two thresholds.
//! - DLRU: present iff `M_d ≥ θ` (`θ = 0` is *true*). `PCond_d = (M_d ≥ d_d)` is
//!   `θ = d_d`; line 26's conjunction is the maximum.
//!
//! An access at stack distance `d` to an entry with threshold `θ` is a hit for every pool
//! size `≥ max(d, θ)` (the paper's `i = Max{d, d'}`), so the hit counter at index
//! `max(d, θ)` is incremented; an access to a page absent from a stack counts at `∞`.
//! Separate counters are kept for reads and writes in each stack (`Hit_c^r`, `Hit_c^w`,
//! `Hit_d^r`, `Hit_d^w`), from which [`super::cost`] computes Eqs. (5)–(7).
//!
//! # Readings of the printed algorithms
//! - Algorithm 4 lines 6–7 (`if p ∉ CLRU then Hit_c^w[∞]++`) follow line 5, which has
//!   just removed `p` from CLRU; read literally every write hit in CLRU would also count
//!   a miss. We read them as the `else` branch (one count per access and stack, as Eq. (5)
//!   requires).
//! - Algorithm 3 line 21 prints `i = d_c` for case (a) of the DLRU index; it is `j = d_d`.
//! - Algorithm 3 lines 11–15 (page only in DLRU) use `d_d` without the entry's condition.
//!   A DLRU-only entry always has `θ = 0` unless its CLRU twin fell off the bottom of a
//!   truncated stack (below), so we use `max(d_d, θ)` and `θ' = max(θ, d_d)`: identical to
//!   the printed lines whenever they apply.
//! - Stacks are truncated at depth `M` (the buffer size): an entry deeper than `M` can
//!   never count as a hit for any `M_c, M_d ≤ M`, and truncating the bottom does not move
//!   any entry above it, so estimates are unchanged while the stacks stay `O(M)`.
//! - *Without present conditions* (the "w/o PR" rows of Table 5) every condition is
//!   *true*: `θ` is always 0.
//!
//! # Group-based distances
//! With group size `z`, the stack is cut into groups of `z` consecutive positions; each
//! entry stores its group number, and each group its oldest entry. Moving an entry of
//! group `k` to the top moves the oldest entry of each group `0..k` into the next group:
//! `O(k)` work instead of `O(d)` (Kim, Hill and Wood). An access then knows only that
//! its distance lies in its group's positions `lo..=hi`. The paper sets all distances of
//! a group to "approximately the same value"; we take two decisions, both exact when
//! `z = 1`:
//! - the hit is *spread uniformly* over the group's positions (a difference array of
//!   densities, see [`Counter`]), so the cumulative hit curves are exact at every pool
//!   size that is a multiple of `z` and linear in between;
//! - present conditions use the group's middle position `d̂ = lo + (hi − lo)/2`.
//!
//! Measured on the TPC-C trace (`tests/fd_buffer_two_stack.rs`, M = 1,024, windows of
//! 5,000 references, every `M_c`): the estimates of `P_c`, `P_d`, `P_d^w` are exact at
//! multiples of 64; the mean absolute difference from exact stacks is 1.3, 0.9 and 1.3
//! percentage points over all sizes (0.7, 0.1, 0.1 for pool sizes ≥ 64; the largest
//! differences are inside the first group, where the hits crowd at small distances).

use hashbrown::HashMap;

const NIL: u32 = u32::MAX;

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

/// One hit-counter array (`Hit[1..=M]`, `Hit[∞]`) of one window.
///
/// An access whose effective distance `i = max(d, θ)` is known exactly adds 1 at `i`. A
/// group-based access only knows `d ∈ [lo, hi]` (its group's positions); its unit of
/// count is spread uniformly over the possible values of `max(d, θ)`: a mass of
/// `(θ − lo + 1)/w` at `θ` if `θ` falls inside the group, and `1/w` at each index of the
/// rest of the group (`w = hi − lo + 1`). Spreads are kept as a difference array of
/// densities, so adding is `O(1)` and the cumulative curve costs `O(M)` per window.
#[derive(Debug, Clone, PartialEq)]
pub struct Counter {
    /// Point masses; index `M + 1` is `∞`.
    point: Vec<f64>,
    /// Difference array of uniform densities over index ranges.
    ramp: Vec<f64>,
    /// Accesses counted.
    n: u64,
}

impl Counter {
    fn new(m: usize) -> Self {
        Self {
            point: vec![0.0; m + 2],
            ramp: vec![0.0; m + 3],
            n: 0,
        }
    }

    fn clear(&mut self) {
        self.point.fill(0.0);
        self.ramp.fill(0.0);
        self.n = 0;
    }

    /// The `∞` index (`M + 1`).
    #[inline]
    pub fn inf(&self) -> usize {
        self.point.len() - 1
    }

    /// Accesses counted.
    pub fn accesses(&self) -> u64 {
        self.n
    }

    /// An access absent from the stack (`Hit[∞]`).
    #[inline]
    pub fn add_miss(&mut self) {
        let inf = self.inf();
        self.point[inf] += 1.0;
        self.n += 1;
    }

    /// An access at a distance in `lo..=hi` (exact when `lo == hi`) to an entry with
    /// present-condition threshold `theta`.
    #[inline]
    pub fn add(&mut self, lo: u32, hi: u32, theta: u32) {
        self.n += 1;
        if lo >= hi || theta >= hi {
            self.point[lo.max(theta) as usize] += 1.0;
            return;
        }
        let w = f64::from(hi - lo + 1);
        let start = if theta >= lo {
            self.point[theta as usize] += f64::from(theta - lo + 1) / w;
            theta + 1
        } else {
            lo
        };
        self.ramp[start as usize] += 1.0 / w;
        self.ramp[hi as usize + 1] -= 1.0 / w;
    }

    /// Cumulative hits for pool sizes `0..=M` (`out[s]` = expected accesses that hit with
    /// `s` frames).
    pub fn cumulative(&self, out: &mut Vec<f64>) {
        let m = self.inf() - 1;
        out.clear();
        out.resize(m + 1, 0.0);
        let (mut density, mut total) = (0.0f64, 0.0f64);
        for (s, o) in out.iter_mut().enumerate().skip(1) {
            density += self.ramp[s];
            total += self.point[s] + density;
            *o = total;
        }
    }

    /// The point masses and the density difference array.
    #[inline]
    pub(crate) fn parts(&self) -> (&[f64], &[f64]) {
        (&self.point, &self.ramp)
    }

    /// Nonzero point masses `(index, count)` (the whole counter when every access had an
    /// exact distance, as with group size 1).
    pub fn points(&self) -> Vec<(usize, f64)> {
        self.point
            .iter()
            .enumerate()
            .filter(|e| *e.1 != 0.0)
            .map(|(i, &v)| (i, v))
            .collect()
    }
}

/// Hit counters of one window: `Hit_c^r`, `Hit_c^w`, `Hit_d^r`, `Hit_d^w` for a buffer of
/// `M` frames (distances `1..=M`, and `∞`).
#[derive(Debug, Clone, PartialEq)]
pub struct HitCounters {
    /// `Hit_c^r`.
    pub c_read: Counter,
    /// `Hit_c^w`.
    pub c_write: Counter,
    /// `Hit_d^r`.
    pub d_read: Counter,
    /// `Hit_d^w`.
    pub d_write: Counter,
}

impl HitCounters {
    /// Zeroed counters for a buffer of `m` frames.
    pub fn new(m: usize) -> Self {
        Self {
            c_read: Counter::new(m),
            c_write: Counter::new(m),
            d_read: Counter::new(m),
            d_write: Counter::new(m),
        }
    }

    /// The buffer size `M`.
    pub fn m(&self) -> usize {
        self.c_read.inf() - 1
    }

    /// Zeroes every counter.
    pub fn clear(&mut self) {
        self.c_read.clear();
        self.c_write.clear();
        self.d_read.clear();
        self.d_write.clear();
    }

    /// Accesses counted (each access counts once in each stack's counters).
    pub fn accesses(&self) -> u64 {
        self.c_read.n + self.c_write.n
    }

    /// Writes counted.
    pub fn writes(&self) -> u64 {
        self.d_write.n
    }
}

/// The Two-Stack estimator: CLRU, DLRU and the window's hit counters.
#[derive(Debug, Clone)]
pub struct TwoStack {
    m: u32,
    present_conditions: bool,
    clru: GroupStack,
    dlru: GroupStack,
    counters: HitCounters,
    /// Page → (CLRU slot, DLRU slot), `NIL` where absent: one lookup per access.
    map: HashMap<u64, [u32; 2]>,
}

impl TwoStack {
    /// An estimator for a buffer of `m` frames (stacks truncated at depth `m`), group
    /// size `group_size`, with or without present conditions.
    pub fn new(m: usize, group_size: usize, present_conditions: bool) -> Self {
        Self {
            m: m as u32,
            present_conditions,
            clru: GroupStack::new(m, group_size),
            dlru: GroupStack::new(m, group_size),
            counters: HitCounters::new(m),
            map: HashMap::with_capacity(2 * m + 2),
        }
    }

    /// The window's counters so far.
    pub fn counters(&self) -> &HitCounters {
        &self.counters
    }

    /// Zeroes the counters (start of a window); the stacks persist.
    pub fn clear_counters(&mut self) {
        self.counters.clear();
    }

    /// CLRU.
    pub fn clru(&self) -> &GroupStack {
        &self.clru
    }

    /// DLRU.
    pub fn dlru(&self) -> &GroupStack {
        &self.dlru
    }

    /// Stack work so far (group-boundary updates in both stacks).
    pub fn work(&self) -> u64 {
        self.clru.work() + self.dlru.work()
    }

    /// Records one access (Algorithm 3 for reads, 4 for writes).
    #[inline]
    pub fn access(&mut self, page: u64, write: bool) {
        if write {
            self.write(page)
        } else {
            self.read(page)
        }
    }

    /// Clears the stack slot `which` (0 = CLRU, 1 = DLRU) of `page`, a page dropped off
    /// the bottom of that stack.
    fn forget(map: &mut HashMap<u64, [u32; 2]>, page: u64, which: usize) {
        if let Some(e) = map.get_mut(&page) {
            e[which] = NIL;
            if *e == [NIL, NIL] {
                map.remove(&page);
            }
        }
    }

    /// Algorithm 3: a read of `page`.
    pub fn read(&mut self, page: u64) {
        let Self {
            m,
            present_conditions: pr,
            clru,
            dlru,
            counters,
            map,
        } = self;
        let (m, pr) = (*m, *pr);
        let slots = map.entry(page).or_insert([NIL, NIL]);
        let ec = (slots[0] != NIL).then(|| clru.found(slots[0]));
        let ed = (slots[1] != NIL).then(|| dlru.found(slots[1]));
        let mut dropped = None;
        match (ec, ed) {
            (None, None) => {
                counters.c_read.add_miss();
                counters.d_read.add_miss();
                let (x, d) = clru.push_top(page, 0);
                slots[0] = x;
                dropped = d;
            }
            (Some(c), None) => {
                counters.c_read.add(c.lo, c.hi, c.theta);
                counters.d_read.add_miss();
                clru.move_to_top(c.slot);
                clru.set_theta(c.slot, 0);
            }
            (None, Some(d)) => {
                counters.d_read.add(d.lo, d.hi, d.theta);
                counters.c_read.add_miss();
                dlru.move_to_top(d.slot);
                let (td, tc) = if pr {
                    (d.theta.max(d.distance), m - d.distance + 1)
                } else {
                    (0, 0)
                };
                dlru.set_theta(d.slot, td);
                let (x, dr) = clru.push_top(page, tc);
                slots[0] = x;
                dropped = dr;
            }
            (Some(c), Some(d)) => {
                counters.c_read.add(c.lo, c.hi, c.theta);
                counters.d_read.add(d.lo, d.hi, d.theta);
                clru.move_to_top(c.slot);
                dlru.move_to_top(d.slot);
                if pr {
                    clru.set_theta(c.slot, c.theta.min(m - d.distance + 1));
                    dlru.set_theta(d.slot, d.theta.max(d.distance));
                }
            }
        }
        if let Some(p) = dropped {
            Self::forget(map, p, 0);
        }
    }

    /// Algorithm 4: a write of `page`.
    pub fn write(&mut self, page: u64) {
        let Self {
            clru,
            dlru,
            counters,
            map,
            ..
        } = self;
        let slots = map.entry(page).or_insert([NIL, NIL]);
        if slots[0] != NIL {
            let c = clru.found(slots[0]);
            counters.c_write.add(c.lo, c.hi, c.theta);
            clru.remove(c.slot);
            slots[0] = NIL;
        } else {
            counters.c_write.add_miss();
        }
        let mut dropped = None;
        if slots[1] != NIL {
            let d = dlru.found(slots[1]);
            counters.d_write.add(d.lo, d.hi, d.theta);
            dlru.move_to_top(d.slot);
            dlru.set_theta(d.slot, 0);
        } else {
            counters.d_write.add_miss();
            let (x, dr) = dlru.push_top(page, 0);
            slots[1] = x;
            dropped = dr;
        }
        if let Some(p) = dropped {
            Self::forget(map, p, 1);
        }
    }

    /// Checks both stacks.
    pub fn check(&self) -> Result<(), String> {
        self.clru.check().map_err(|e| format!("CLRU: {e}"))?;
        self.dlru.check().map_err(|e| format!("DLRU: {e}"))?;
        for (k, stack) in [&self.clru, &self.dlru].into_iter().enumerate() {
            for (page, slot, _) in stack.walk() {
                if self.map.get(&page).map(|e| e[k]) != Some(slot) {
                    return Err(format!("page {page} not mapped to its slot in stack {k}"));
                }
            }
            let mapped = self.map.values().filter(|e| e[k] != NIL).count();
            if mapped != stack.len() {
                return Err(format!(
                    "{mapped} pages mapped to stack {k} of {}",
                    stack.len()
                ));
            }
        }
        if self.map.values().any(|e| *e == [NIL, NIL]) {
            return Err("a page mapped to neither stack".into());
        }
        let c = &self.counters;
        if c.c_write.accesses() != c.d_write.accesses()
            || c.c_read.accesses() != c.d_read.accesses()
        {
            return Err("CLRU and DLRU counted different accesses".into());
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
