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
//! # Finding a page's entries
//! Each page has at most one entry per stack; an access needs its two slots. A page in
//! the buffer is found through its frame: [`TwoStack::access_resident`] reads the slots
//! of the frame (an array indexed by frame, no hashing), and every stack entry records
//! the frame holding its page, so an entry dropped off the bottom clears its frame's slot.
//! An owner with per-frame state of its own keeps the slots there instead
//! ([`TwoStack::access_in`], [`TwoStack::admit_in`], [`TwoStack::release_in`]): FD-Buffer
//! keeps them beside each frame's page and pool tag, so a hit reads one cache line for
//! both (cachegrind, first million TPC-C references at 1,241 frames: 0.76 M fewer L1
//! data misses, 4 % of FD-Buffer's).
//! Only pages outside the buffer that still have entries (ghosts) are keyed by page, in a
//! [`PageMap`] (open addressing, one cache line per probe): [`TwoStack::admit`] moves a
//! page's slots from the map to its frame when it is loaded, [`TwoStack::release`] back
//! when it leaves. On the TPC-C trace at 3 % about 82 % of references are hits and touch
//! no map (before, every reference looked its page up in a hash map: with the drops, a
//! tenth of FD-Buffer's replay time). [`TwoStack::access`] drives the estimator by pages
//! alone (every page a ghost), as the tests and references do; one estimator is driven
//! one way or the other, not both. Counts and decisions are the same either way.
//!
//! # Files
//! - this file: [`TwoStack`], the slots of resident and ghost pages;
//! - `algorithms.rs`: Algorithms 3 and 4 over the two stacks, given a page's slots;
//! - `run.rs`: an access by the owner's table of slots, and a run of them as one loop;
//! - [`group_stack`]: [`GroupStack`], one LRU stack with group-based distances;
//! - [`ranks`]: [`ranks::Ranks`], the live stamps that give an entry's position;
//! - [`page_map`]: [`PageMap`], the fixed-capacity map of ghost pages;
//! - [`counters`]: [`Counter`] and [`HitCounters`], the window's hit counters.

mod algorithms;
pub mod counters;
pub mod group_stack;
mod list_stack;
pub mod page_map;
pub mod ranks;
mod run;
mod stamp_stack;

pub use counters::{Counter, HitCounters};
pub use group_stack::{Dropped, Found, GroupStack};

use crate::policy::stream::StreamRef;
use algorithms::Stacks;
use flashbuf_core::FrameId;
use group_stack::NIL;
pub use page_map::PageMap;
pub use run::TABLE_PREFETCH_AHEAD;
use run::{tabled, TabledRun};

/// A page's slots in CLRU and DLRU, `NIL` where absent.
pub type Slots = [u32; 2];

/// No slot in either stack.
pub const ABSENT: Slots = [NIL, NIL];

/// The Two-Stack estimator: CLRU, DLRU, the window's hit counters and the slots of each
/// page's entries (by frame for pages in the buffer, by page for ghosts).
#[derive(Debug, Clone)]
pub struct TwoStack {
    stacks: Stacks,
    /// Frames of the buffer.
    m: usize,
    /// Frame → (CLRU slot, DLRU slot) of the page it holds, `NIL` where absent; empty
    /// when the owner keeps the slots ([`TwoStack::for_owner`]).
    resident: Vec<[u32; 2]>,
    /// Ghost page → (CLRU slot, DLRU slot), `NIL` where absent; never both absent.
    ghosts: PageMap<[u32; 2]>,
}

impl TwoStack {
    /// An estimator for a buffer of `m` frames (stacks truncated at depth `m`), group
    /// size `group_size`, with or without present conditions.
    pub fn new(m: usize, group_size: usize, present_conditions: bool) -> Self {
        let mut s = Self::for_owner(m, group_size, present_conditions);
        s.resident = vec![ABSENT; m];
        s
    }

    /// [`TwoStack::new`] for an owner that keeps each frame's [`Slots`] itself (driven by
    /// [`TwoStack::access_in`], [`TwoStack::admit_in`], [`TwoStack::release_in`] and
    /// pages alone, never by [`TwoStack::access_resident`]): no slots of its own.
    pub fn for_owner(m: usize, group_size: usize, present_conditions: bool) -> Self {
        Self {
            stacks: Stacks::new(m, group_size, present_conditions),
            m,
            resident: Vec::new(),
            // At most M entries per stack, one more during a push.
            ghosts: PageMap::new(2 * m + 2, ABSENT),
        }
    }

    /// The window's counters so far.
    pub fn counters(&self) -> &HitCounters {
        &self.stacks.book.counters
    }

    /// The window's counters, to be zeroed by the caller (`super::cost::Curves`).
    pub(crate) fn counters_mut(&mut self) -> &mut HitCounters {
        &mut self.stacks.book.counters
    }

    /// Zeroes the counters (start of a window); the stacks persist.
    pub fn clear_counters(&mut self) {
        self.stacks.book.counters.clear();
    }

    /// CLRU.
    pub fn clru(&self) -> &GroupStack {
        &self.stacks.clru
    }

    /// DLRU.
    pub fn dlru(&self) -> &GroupStack {
        &self.stacks.dlru
    }

    /// Stack work so far in both stacks ([`GroupStack::work`]).
    pub fn work(&self) -> u64 {
        self.stacks.clru.work() + self.stacks.dlru.work()
    }

    /// Bytes of state per frame: both stacks, the frames' slots (unless the owner keeps
    /// them), the ghosts' slots, the counters.
    pub fn bytes_per_frame(&self) -> usize {
        let m = self.m.max(1);
        let s = &self.stacks;
        let per_entry = s.clru.bytes_per_entry() + s.dlru.bytes_per_entry() + 2 * 4;
        let ghosts = self.ghosts.capacity() * PageMap::<[u32; 2]>::slot_bytes();
        let own_slots = std::mem::size_of_val(&self.resident[..]).div_ceil(m);
        per_entry + own_slots + ghosts.div_ceil(m) + 4 * 2 * 8
    }

    /// Records one access to `page` (Algorithm 3 for reads, 4 for writes), the estimator
    /// driven by pages alone (no frame was ever admitted).
    #[inline]
    pub fn access(&mut self, page: u64, write: bool) {
        self.access_tabled(&mut [], page, write);
    }

    /// [`TwoStack::access`] for an owner that keeps the slots of pages `0..table.len()`
    /// itself, in `table` indexed by page (FD-Buffer's detached estimator); the other
    /// pages' slots stay in the estimator's map. A page must stay on its side: the table
    /// may grow between calls only over pages that never had an entry.
    #[inline(always)]
    pub fn access_tabled(&mut self, table: &mut [Slots], page: u64, write: bool) {
        tabled(
            &mut self.stacks.pair(),
            &mut self.ghosts,
            table,
            page,
            write,
        );
    }

    /// [`TwoStack::access_tabled`] for each of `refs` in order. The stacks' representation
    /// is dispatched once for the run (per stack operation otherwise: a match on each
    /// `found`, move, push and threshold), and the table slot of the reference
    /// [`TABLE_PREFETCH_AHEAD`] positions on starts moving towards the core before the
    /// current one is worked on.
    pub fn access_tabled_run(&mut self, table: &mut [Slots], refs: &[StreamRef]) {
        let Stacks { clru, dlru, book } = &mut self.stacks;
        let run = TabledRun {
            book,
            ghosts: &mut self.ghosts,
            table,
            refs,
        };
        GroupStack::with_pair(clru, dlru, run);
    }

    /// Records one access to `page`, held by `frame` since [`TwoStack::admit`].
    #[inline]
    pub fn access_resident(&mut self, frame: FrameId, page: u64, write: bool) {
        let mut slots = self.resident[frame.index()];
        let dropped = self.access_in(&mut slots, frame, page, write);
        self.resident[frame.index()] = slots;
        if let Some((f, which)) = dropped {
            self.resident[f.index()][which] = NIL;
        }
    }

    /// [`TwoStack::access_resident`] for an owner that keeps each frame's [`Slots`]
    /// itself (beside its own state of the frame: one cache line for both): `slots` are
    /// `frame`'s, from [`TwoStack::admit_in`]. Returns the frame whose slot in stack
    /// `which` (0 = CLRU, 1 = DLRU) the access dropped off the bottom, if any: the owner
    /// sets it to `NIL`.
    #[inline(always)]
    pub fn access_in(
        &mut self,
        slots: &mut Slots,
        frame: FrameId,
        page: u64,
        write: bool,
    ) -> Option<(FrameId, usize)> {
        let (d, which) = self.stacks.pair().access(slots, page, frame.0, write)?;
        let owner = self.stacks.book.owner[which][d.slot as usize];
        if owner != NIL {
            return Some((FrameId(owner), which));
        }
        self.ghosts.update(d.page, |e| e[which] = NIL);
        None
    }

    /// `page` was loaded into `frame` (free in the estimator): its entries, if it has any,
    /// are found through the frame from now on.
    #[inline]
    pub fn admit(&mut self, frame: FrameId, page: u64) {
        debug_assert_eq!(
            self.resident[frame.index()],
            ABSENT,
            "{frame} admitted twice"
        );
        self.resident[frame.index()] = self.admit_in(frame, page);
    }

    /// `page` is about to be admitted ([`TwoStack::admit`], [`TwoStack::admit_in`]): the
    /// CPU starts fetching its ghost entry's cache line now (a hint; changes nothing).
    #[inline]
    pub fn prefetch_admit(&self, page: u64) {
        self.ghosts.prefetch(page);
    }

    /// [`TwoStack::admit`] for an owner keeping the slots: returns `frame`'s [`Slots`].
    #[inline]
    pub fn admit_in(&mut self, frame: FrameId, page: u64) -> Slots {
        let slots = self.ghosts.remove(page).unwrap_or(ABSENT);
        self.set_owner(slots, frame.0);
        slots
    }

    /// `page` left `frame`: its entries, if any, become a ghost's.
    #[inline]
    pub fn release(&mut self, frame: FrameId, page: u64) {
        let slots = std::mem::replace(&mut self.resident[frame.index()], ABSENT);
        self.release_in(slots, page);
    }

    /// [`TwoStack::release`] for an owner keeping the slots: `slots` were the frame's.
    #[inline]
    pub fn release_in(&mut self, slots: Slots, page: u64) {
        if slots != ABSENT {
            self.set_owner(slots, NIL);
            self.ghosts.insert(page, slots);
        }
    }

    fn set_owner(&mut self, slots: Slots, frame: u32) {
        for (k, &s) in slots.iter().enumerate() {
            if s != NIL {
                self.stacks.book.owner[k][s as usize] = frame;
            }
        }
    }

    /// Checks an estimator driven by frames ([`TwoStack::access_resident`]): both stacks,
    /// the slots of every entry and the counters; `page_of` gives the page a frame holds
    /// (`None`: the frame is free).
    pub fn check_resident(&self, page_of: &dyn Fn(FrameId) -> Option<u64>) -> Result<(), String> {
        let held = |f: FrameId| page_of(f).map(|p| (p, self.resident[f.index()]));
        for (f, slots) in self.resident.iter().enumerate() {
            if page_of(FrameId(f as u32)).is_none() && *slots != ABSENT {
                return Err(format!("free frame {f} holds slots"));
            }
        }
        self.check_entries(Some(&held))
    }

    /// Checks an estimator whose owner keeps the slots ([`TwoStack::access_in`]): `held`
    /// gives the page a frame holds and its slots (`None`: the frame is free).
    pub fn check_in(&self, held: &dyn Fn(FrameId) -> Option<(u64, Slots)>) -> Result<(), String> {
        if let Some(f) = self.resident.iter().position(|e| *e != ABSENT) {
            return Err(format!("frame {f} holds slots in the estimator too"));
        }
        self.check_entries(Some(held))
    }

    /// Checks an estimator driven by pages alone ([`TwoStack::access`]).
    pub fn check(&self) -> Result<(), String> {
        if let Some(f) = self.resident.iter().position(|e| *e != ABSENT) {
            return Err(format!("frame {f} holds slots in a page-driven estimator"));
        }
        self.check_entries(None)
    }

    /// Checks the stacks and that every entry is found from its page: through `held`
    /// (frame → its page and slots) for an entry owned by a frame, in the ghosts otherwise.
    fn check_entries(
        &self,
        held: Option<&dyn Fn(FrameId) -> Option<(u64, Slots)>>,
    ) -> Result<(), String> {
        let s = &self.stacks;
        s.clru.check().map_err(|e| format!("CLRU: {e}"))?;
        s.dlru.check().map_err(|e| format!("DLRU: {e}"))?;
        let frames = (0..self.m as u32).map(FrameId);
        let resident: Vec<(u64, Slots)> = match held {
            Some(h) => frames.filter_map(h).collect(),
            None => Vec::new(),
        };
        if let Some(&(p, _)) = resident.iter().find(|e| self.ghosts.contains_key(e.0)) {
            return Err(format!("page {p} in a frame is also a ghost"));
        }
        for (k, stack) in [&s.clru, &s.dlru].into_iter().enumerate() {
            for (page, slot, _) in stack.walk() {
                let frame = s.book.owner[k][slot as usize];
                let holder = (frame != NIL).then(|| held.and_then(|h| h(FrameId(frame))));
                let found = match holder {
                    None => self.ghosts.get(page).map(|e| e[k]),
                    Some(Some((p, slots))) if p == page => Some(slots[k]),
                    _ => return Err(format!("page {page}: entry owned by frame {frame}")),
                };
                if found != Some(slot) {
                    return Err(format!("page {page} not mapped to its slot in stack {k}"));
                }
            }
            let ghosts = self.ghosts.iter().map(|e| e.1);
            let mapped = ghosts.chain(resident.iter().map(|e| e.1));
            let mapped = mapped.filter(|e| e[k] != NIL).count();
            if mapped != stack.len() {
                return Err(format!(
                    "{mapped} pages mapped to stack {k} of {}",
                    stack.len()
                ));
            }
        }
        let c = &s.book.counters;
        if c.c_write.accesses() != c.d_write.accesses()
            || c.c_read.accesses() != c.d_read.accesses()
        {
            return Err("CLRU and DLRU counted different accesses".into());
        }
        Ok(())
    }
}
