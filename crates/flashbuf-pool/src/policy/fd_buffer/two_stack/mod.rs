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
//! With group size `z`, the stack is cut into groups of `z` consecutive positions (Kim,
//! Hill and Wood keep each group's oldest entry and move `k` group boundaries when an
//! entry of group `k` goes to the top; with more than 32 groups [`GroupStack`] finds the
//! group from the entry's position instead, counted on a bitmap of stamps, with the same
//! groups at `O(1)` updates: see [`group_stack`]). An access then knows only that its distance lies in its
//! group's positions `lo..=hi`. The paper sets all distances of
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
//!
//! # Files
//! - this file: [`TwoStack`], Algorithms 3 and 4 over the two stacks;
//! - [`group_stack`]: [`GroupStack`], one LRU stack with group-based distances;
//! - [`ranks`]: [`ranks::Ranks`], the live stamps that give an entry's position;
//! - [`counters`]: [`Counter`] and [`HitCounters`], the window's hit counters.

pub mod counters;
pub mod group_stack;
mod list_stack;
pub mod ranks;
mod stamp_stack;

pub use counters::{Counter, HitCounters};
pub use group_stack::{Found, GroupStack};

use group_stack::NIL;
use hashbrown::hash_map::Entry;
use hashbrown::HashMap;

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

    /// Stack work so far in both stacks ([`GroupStack::work`]).
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
        // One probe: the entry found is cleared or removed in place.
        if let Entry::Occupied(mut e) = map.entry(page) {
            e.get_mut()[which] = NIL;
            if *e.get() == [NIL, NIL] {
                e.remove();
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
