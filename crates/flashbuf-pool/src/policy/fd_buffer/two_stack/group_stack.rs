//! [`GroupStack`]: one LRU stack of page entries with group-based distances (Kim, Hill
//! and Wood, SIGMETRICS 1991) and a present-condition threshold per entry; see the module
//! documentation of [`super`].
//!
//! # Representation
//! Kim, Hill and Wood keep the stack as a list with the oldest entry of each group marked,
//! and move one boundary per group above the referenced entry: `O(k)` for an entry of
//! group `k`, and a push moves every boundary (`O(M / z)`; 248 groups per stack at 1,242
//! frames with `groups=256`). The groups are a function of the positions only (entry at
//! position `p` is in group `(p − 1) / z`), so this stack keeps the positions instead:
//! every entry is stamped with the time it was last put on top, and its position is one
//! plus the number of live stamps later than its own, counted by
//! [`Ranks`](super::ranks::Ranks) (a bitmap with per-word and per-block counts; the
//! stamped stack is `stamp_stack.rs`). Moving to the top, pushing and removing are `O(1)`
//! updates; finding an entry's group is one count (a popcount, at most 63 word counts and
//! a few block counts). The groups, `lo`, `hi`, the dropped bottom entries and every
//! count are the same as the list's (the unit test checks them against a plain stack).
//! Stamps run out after `4 (M + 1)` moves; the live ones are then renumbered `0..len` in
//! order (`O(M)`, amortised `O(1)`).
//!
//! With few groups the list is cheaper (a handful of boundary moves against a count), so
//! a stack of at most [`LIST_MAX_GROUPS`] groups keeps the list (`list_stack.rs`):
//! the paper's 64 pages per group up to 2,048 frames. Measured on the TPC-C trace at
//! 1,241 frames (20 groups), the stamps cost FD-Buffer about 9 % more CPU than the list;
//! with `groups=256` (248 groups) they cut the clustered-cost variant's CPU by 40 %.
//!
//! Tried and dropped (cachegrind, first million TPC-C references, 1,241 frames, the list's
//! 1,323 M instructions and 17.9 M L1 data misses): the stamps at 20 groups, after the
//! stamped stack's own speed-ups, 1,345 M and 13.4 M; stamps with each group's tail kept
//! as a stamp (a group is the count of tails later than the entry's stamp, a tail slides
//! by a search in the bitmap of live stamps, no list links) 1,646 M and 13.0 M. Fewer
//! misses, more instructions, and wall time followed the instructions (0.57 s against
//! 0.72 s for the whole trace): the list stays.
//!
//! Where the list's time goes (FD-Buffer, first million TPC-C references at 1,241 frames,
//! after the list's tighter slides, cachegrind): the stack work counter (one per
//! boundary moved plus one per move, push or removal) reads 6.23 M, and there are about 1.38 M
//! moves, pushes and removals, so fewer than 4.9 M tail slides per million references:
//! at nine instructions a slide, under 45 M of the 503 M in FD-Buffer's functions.
//! Finding the entries, linking, the counters and the bounds checks around them cost
//! more than the slides.
//! A structure that moved no boundary at all would save at most those 45 M, less what
//! its own counting costs (the stamps above, at 20 groups, cost more than they saved).

use super::list_stack::ListStack;
use super::stamp_stack::StampStack;

/// The most groups a stack keeps as Kim, Hill and Wood's list; more: stamps.
pub const LIST_MAX_GROUPS: usize = 32;

pub(super) const NIL: u32 = u32::MAX;

/// One LRU stack with group-based distances and a present-condition threshold per entry.
#[derive(Debug, Clone)]
pub struct GroupStack {
    repr: Repr,
}

/// The stack's representation (the same groups either way).
#[derive(Debug, Clone)]
enum Repr {
    List(ListStack),
    Stamps(StampStack),
}

/// The operations Algorithms 3 and 4 apply to one stack (`super::algorithms`), whatever
/// its representation: implemented by each representation, and by [`GroupStack`] through
/// a dispatch per call. Contract, for every implementation: a slot is one returned by
/// `push_top` and not removed (nor dropped off the bottom) since; `found` gives its
/// group's `lo..=hi`, middle distance and threshold; `move_to_top` puts it at distance 1;
/// `push_top` adds a page not in the stack and drops the bottom entry past the capacity
/// (its slot free again and not the new one); `remove` takes an entry out; groups are
/// those of the positions (`z` consecutive positions a group), the same in every
/// representation.
pub(super) trait StackOps {
    /// The entry in `slot`: its group-based distance and threshold.
    fn found(&mut self, slot: u32) -> Found;
    /// Sets the present-condition threshold of an entry.
    fn set_theta(&mut self, slot: u32, theta: u32);
    /// Moves entry `slot` to the top (distance 1).
    fn move_to_top(&mut self, slot: u32);
    /// Pushes `page` on top with threshold `theta`: its slot, and the entry dropped off
    /// the bottom, if any.
    fn push_top(&mut self, page: u64, theta: u32) -> (u32, Option<Dropped>);
    /// Removes entry `slot`.
    fn remove(&mut self, slot: u32);
}

/// Implements [`StackOps`] by the representation's own methods, inlined.
macro_rules! stack_ops {
    ($t:ty) => {
        impl StackOps for $t {
            #[inline(always)]
            fn found(&mut self, slot: u32) -> Found {
                <$t>::found(self, slot)
            }
            #[inline(always)]
            fn set_theta(&mut self, slot: u32, theta: u32) {
                <$t>::set_theta(self, slot, theta)
            }
            #[inline(always)]
            fn move_to_top(&mut self, slot: u32) {
                <$t>::move_to_top(self, slot)
            }
            #[inline(always)]
            fn push_top(&mut self, page: u64, theta: u32) -> (u32, Option<Dropped>) {
                <$t>::push_top(self, page, theta)
            }
            #[inline(always)]
            fn remove(&mut self, slot: u32) {
                <$t>::remove(self, slot)
            }
        }
    };
}

stack_ops!(ListStack);
stack_ops!(StampStack);
stack_ops!(GroupStack);

/// A computation over two stacks of one representation, given them as that
/// representation's type ([`GroupStack::with_pair`]).
pub(super) trait PairFn {
    /// What the computation returns.
    type Out;
    /// Runs over `a` and `b`.
    fn call<S: StackOps>(self, a: &mut S, b: &mut S) -> Self::Out;
}

/// Dispatches a call to the representation.
macro_rules! each {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            Repr::List($s) => $e,
            Repr::Stamps($s) => $e,
        }
    };
}

impl GroupStack {
    /// An empty stack holding at most `cap` entries, in groups of `group_size`: a list
    /// for at most [`LIST_MAX_GROUPS`] groups, stamps beyond.
    ///
    /// # Panics
    /// If `cap` or `group_size` is zero, or `cap` does not fit in 32 bits.
    pub fn new(cap: usize, group_size: usize) -> Self {
        let few = cap.div_ceil(group_size.max(1)) <= LIST_MAX_GROUPS;
        Self::with_stamps(cap, group_size, !few)
    }

    /// [`GroupStack::new`] with the representation chosen: stamps or the list.
    pub fn with_stamps(cap: usize, group_size: usize, stamps: bool) -> Self {
        let repr = if stamps {
            Repr::Stamps(StampStack::new(cap, group_size))
        } else {
            Repr::List(ListStack::new(cap, group_size))
        };
        Self { repr }
    }

    /// Runs `f` over `a` and `b` as their representation's type: one dispatch for a whole
    /// run of accesses instead of one per stack operation (`f` is monomorphised per
    /// representation). Stacks of different representations (never built by
    /// `super::algorithms`) run as [`GroupStack`]s.
    #[inline]
    pub(super) fn with_pair<F: PairFn>(a: &mut GroupStack, b: &mut GroupStack, f: F) -> F::Out {
        match (&mut a.repr, &mut b.repr) {
            (Repr::List(x), Repr::List(y)) => f.call(x, y),
            (Repr::Stamps(x), Repr::Stamps(y)) => f.call(x, y),
            _ => f.call(a, b),
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        each!(&self.repr, s => s.len())
    }

    /// Whether the stack is empty.
    pub fn is_empty(&self) -> bool {
        each!(&self.repr, s => s.is_empty())
    }

    /// Bytes of state per entry (page, links or stamps, threshold).
    pub fn bytes_per_entry(&self) -> usize {
        match &self.repr {
            // Page, then links, group and threshold in one node.
            Repr::List(_) => 8 + 16,
            // Page, stamp and threshold, four times' slot and a bit of the ranks.
            Repr::Stamps(_) => 8 + 8 + 4 * 4 + 1,
        }
    }

    /// Work so far: group boundaries moved (list) or counters read and stamps updated.
    pub fn work(&self) -> u64 {
        each!(&self.repr, s => s.work())
    }

    /// The entry in `slot` (a slot returned by [`GroupStack::push_top`] and not removed
    /// since): its group-based distance and threshold.
    #[inline]
    pub fn found(&mut self, slot: u32) -> Found {
        each!(&mut self.repr, s => s.found(slot))
    }

    /// Sets the present-condition threshold of an entry.
    #[inline]
    pub fn set_theta(&mut self, slot: u32, theta: u32) {
        each!(&mut self.repr, s => s.set_theta(slot, theta))
    }

    /// Moves entry `slot` to the top (distance 1).
    #[inline]
    pub fn move_to_top(&mut self, slot: u32) {
        each!(&mut self.repr, s => s.move_to_top(slot))
    }

    /// Pushes `page` (not in the stack) on top with threshold `theta`; drops the bottom
    /// entry if the stack would exceed its capacity. Returns the new entry's slot and the
    /// dropped entry, if any (its slot is free again, and differs from the new one).
    #[inline]
    pub fn push_top(&mut self, page: u64, theta: u32) -> (u32, Option<Dropped>) {
        each!(&mut self.repr, s => s.push_top(page, theta))
    }

    /// Removes entry `slot`.
    #[inline]
    pub fn remove(&mut self, slot: u32) {
        each!(&mut self.repr, s => s.remove(slot))
    }

    /// Entries from the top: `(page, θ)`.
    pub fn entries(&self) -> Vec<(u64, u32)> {
        self.walk().into_iter().map(|(p, _, t)| (p, t)).collect()
    }

    /// Entries from the top: `(page, slot, θ)`.
    pub fn walk(&self) -> Vec<(u64, u32, u32)> {
        each!(&self.repr, s => s.walk())
    }

    /// Checks the representation's structure and the capacity.
    pub fn check(&self) -> Result<(), String> {
        each!(&self.repr, s => s.check())
    }
}

/// The bottom entry [`GroupStack::push_top`] dropped: its former slot and its page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropped {
    /// The slot it held (free now).
    pub slot: u32,
    /// Its page.
    pub page: u64,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_follow_positions_through_moves_pushes_and_removes() {
        // Small stacks renumber their stamps often; the deep one spans several words.
        for (cap, pages, steps) in [(11usize, 17u64, 2000), (300, 450, 20_000)] {
            for z in [1usize, 2, 3, 5, 64] {
                follow_a_plain_stack(cap, pages, steps, z, true);
                follow_a_plain_stack(cap, pages, steps, z, false);
            }
        }
    }

    fn follow_a_plain_stack(cap: usize, pages: u64, steps: usize, z: usize, stamps: bool) {
        let mut s = GroupStack::with_stamps(cap, z, stamps);
        let mut slots: std::collections::HashMap<u64, u32> = Default::default();
        let mut model: Vec<u64> = Vec::new(); // top first
        let mut x = 12345u64;
        for step in 0..steps {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let page = (x >> 33) % pages;
            let op = (x >> 20) % 4;
            let found = slots.get(&page).map(|&x| s.found(x));
            if op == 0 {
                if let Some(f) = found {
                    s.remove(f.slot);
                    slots.remove(&page);
                    model.retain(|&p| p != page);
                }
            } else if let Some(f) = found {
                let pos = model.iter().position(|&p| p == page).unwrap() + 1;
                let hi = (pos.div_ceil(z) * z).min(model.len());
                let lo = (pos - 1) / z * z + 1;
                assert_eq!(
                    (f.lo as usize, f.hi as usize),
                    (lo, hi),
                    "z={z} step {step}"
                );
                s.move_to_top(f.slot);
                model.retain(|&p| p != page);
                model.insert(0, page);
            } else {
                let (x, dropped) = s.push_top(page, 0);
                slots.insert(page, x);
                let want = (model.len() == cap).then(|| model[cap - 1]);
                assert_eq!(
                    dropped.map(|d| d.page),
                    want,
                    "z={z} step {step}: dropped bottom"
                );
                if let Some(d) = dropped {
                    assert_eq!(slots.remove(&d.page), Some(d.slot), "z={z} step {step}");
                    assert_ne!(
                        d.slot, x,
                        "z={z} step {step}: new entry in the dropped slot"
                    );
                }
                model.insert(0, page);
                model.truncate(cap);
            }
            if step % 97 == 0 || cap < 20 {
                s.check()
                    .unwrap_or_else(|e| panic!("z={z} step {step}: {e}"));
                let got: Vec<u64> = s.entries().iter().map(|e| e.0).collect();
                assert_eq!(got, model, "z={z} step {step}");
            }
        }
    }
}
