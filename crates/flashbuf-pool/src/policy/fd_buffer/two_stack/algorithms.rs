//! Algorithms 3 and 4 over CLRU and DLRU for one page whose stack slots the caller has
//! found ([`super::TwoStack`] keeps them per resident frame or per ghost page); see the
//! module documentation of [`super`] for the model and its readings.
//!
//! [`Stacks::read`] and [`Stacks::write`] are inlined into the reference path (they were
//! a call per reference, saving and restoring six registers and a spill area): the
//! first million TPC-C references at 1,241 frames take 1,474.9 M -> 1,449.8 M
//! instructions with `fd-buffer`, 1,464.3 M -> 1,437.0 M with its clustered-cost
//! variant (cachegrind, whole replay); the same counts.

use super::group_stack::{Dropped, GroupStack, StackOps, NIL};
use super::HitCounters;

/// The two stacks and what the algorithms keep beside them.
#[derive(Debug, Clone)]
pub(super) struct Stacks {
    pub(super) clru: GroupStack,
    pub(super) dlru: GroupStack,
    pub(super) book: Book,
}

/// What Algorithms 3 and 4 keep besides the stacks: the buffer size, whether present
/// conditions are on, the window's counters and which frame owns each stack entry.
#[derive(Debug, Clone)]
pub(super) struct Book {
    pub(super) m: u32,
    pub(super) present_conditions: bool,
    pub(super) counters: HitCounters,
    /// Per stack (0 = CLRU, 1 = DLRU), per slot: the frame holding the entry's page, `NIL`
    /// for a page not in the buffer (or an estimator driven by pages only).
    pub(super) owner: [Vec<u32>; 2],
}

impl Stacks {
    pub(super) fn new(m: usize, group_size: usize, present_conditions: bool) -> Self {
        Self {
            clru: GroupStack::new(m, group_size),
            dlru: GroupStack::new(m, group_size),
            book: Book {
                m: m as u32,
                present_conditions,
                counters: HitCounters::new(m),
                owner: [vec![NIL; m + 1], vec![NIL; m + 1]],
            },
        }
    }

    /// The two stacks (dispatched per operation) and the book, for one access.
    #[inline(always)]
    pub(super) fn pair(&mut self) -> Pair<'_, GroupStack> {
        Pair {
            clru: &mut self.clru,
            dlru: &mut self.dlru,
            book: &mut self.book,
        }
    }
}

/// The two stacks, as one representation's type, and the book: what Algorithms 3 and 4
/// work on for one access.
pub(super) struct Pair<'a, S> {
    pub(super) clru: &'a mut S,
    pub(super) dlru: &'a mut S,
    pub(super) book: &'a mut Book,
}

impl<S: StackOps> Pair<'_, S> {
    /// Algorithm 3 (a read) or 4 (a write) on `page`'s `slots`, its new entry owned by
    /// `frame` (`NIL`: none); the entry dropped off the bottom and its stack (0 = CLRU,
    /// 1 = DLRU), if any.
    #[inline(always)]
    pub(super) fn access(
        &mut self,
        slots: &mut [u32; 2],
        page: u64,
        frame: u32,
        write: bool,
    ) -> Option<(Dropped, usize)> {
        if write {
            self.write(slots, page, frame).map(|d| (d, 1))
        } else {
            self.read(slots, page, frame).map(|d| (d, 0))
        }
    }

    /// Algorithm 3: a read of `page`, whose (CLRU, DLRU) slots are `slots` (`NIL` where
    /// absent; updated), held by `frame` (`NIL`: none). Returns the CLRU entry dropped off
    /// the bottom, if any (the caller clears its page's slot).
    #[inline(always)]
    pub(super) fn read(&mut self, slots: &mut [u32; 2], page: u64, frame: u32) -> Option<Dropped> {
        let (clru, dlru, book) = (&mut *self.clru, &mut *self.dlru, &mut *self.book);
        let Book {
            m,
            present_conditions: pr,
            counters,
            owner,
        } = book;
        let (m, pr) = (*m, *pr);
        let ec = (slots[0] != NIL).then(|| clru.found(slots[0]));
        let ed = (slots[1] != NIL).then(|| dlru.found(slots[1]));
        match (ec, ed) {
            (None, None) => {
                counters.c_read.add_miss();
                counters.d_read.add_miss();
                let (x, dropped) = clru.push_top(page, 0);
                slots[0] = x;
                owner[0][x as usize] = frame;
                dropped
            }
            (Some(c), None) => {
                counters.c_read.add(c.lo, c.hi, c.theta);
                counters.d_read.add_miss();
                clru.move_to_top(c.slot);
                clru.set_theta(c.slot, 0);
                None
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
                let (x, dropped) = clru.push_top(page, tc);
                slots[0] = x;
                owner[0][x as usize] = frame;
                dropped
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
                None
            }
        }
    }

    /// Algorithm 4: a write of `page`; arguments as for [`Pair::read`]. Returns the DLRU
    /// entry dropped off the bottom, if any.
    #[inline(always)]
    pub(super) fn write(&mut self, slots: &mut [u32; 2], page: u64, frame: u32) -> Option<Dropped> {
        let (clru, dlru, book) = (&mut *self.clru, &mut *self.dlru, &mut *self.book);
        let Book {
            counters, owner, ..
        } = book;
        if slots[0] != NIL {
            let c = clru.found(slots[0]);
            counters.c_write.add(c.lo, c.hi, c.theta);
            clru.remove(c.slot);
            slots[0] = NIL;
        } else {
            counters.c_write.add_miss();
        }
        if slots[1] != NIL {
            let d = dlru.found(slots[1]);
            counters.d_write.add(d.lo, d.hi, d.theta);
            dlru.move_to_top(d.slot);
            dlru.set_theta(d.slot, 0);
            None
        } else {
            counters.d_write.add_miss();
            let (x, dropped) = dlru.push_top(page, 0);
            slots[1] = x;
            owner[1][x as usize] = frame;
            dropped
        }
    }
}
