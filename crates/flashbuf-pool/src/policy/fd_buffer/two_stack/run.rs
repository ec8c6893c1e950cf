//! An access through the owner's table of slots ([`tabled`]), and a run of them as one
//! loop over the stacks as their representation ([`TabledRun`]): the parts of
//! [`super::TwoStack::access_tabled`] and [`super::TwoStack::access_tabled_run`].

use super::algorithms::{Book, Pair};
use super::group_stack::{PairFn, StackOps, NIL};
use super::{PageMap, Slots, ABSENT};
use crate::policy::stream::StreamRef;
use flashbuf_core::prefetch::prefetch_at;

/// How many references ahead [`super::TwoStack::access_tabled_run`] starts fetching a page's
/// table slot (perf: 18 % of the detached estimator's samples sat on the load of the slot
/// before it did; 16 ahead was no better than 8).
pub const TABLE_PREFETCH_AHEAD: usize = 8;

/// [`super::TwoStack::access_tabled`] on the estimator's parts.
#[inline(always)]
pub(super) fn tabled<S: StackOps>(
    pair: &mut Pair<'_, S>,
    ghosts: &mut PageMap<Slots>,
    table: &mut [Slots],
    page: u64,
    write: bool,
) {
    let dropped = match table.get_mut(page as usize) {
        Some(slots) => pair.access(slots, page, NIL, write),
        None => {
            let mut slots = ghosts.get(page).unwrap_or(ABSENT);
            let d = pair.access(&mut slots, page, NIL, write);
            // An access leaves the page in one stack at least.
            ghosts.insert(page, slots);
            d
        }
    };
    if let Some((d, which)) = dropped {
        // No frame was ever admitted: the entry is a page's in the table or the map.
        match table.get_mut(d.page as usize) {
            Some(e) => e[which] = NIL,
            None => ghosts.update(d.page, |e| e[which] = NIL),
        }
    }
}

/// [`super::TwoStack::access_tabled_run`]'s loop, over the stacks as their
/// representation.
pub(super) struct TabledRun<'a> {
    pub(super) book: &'a mut Book,
    pub(super) ghosts: &'a mut PageMap<Slots>,
    pub(super) table: &'a mut [Slots],
    pub(super) refs: &'a [StreamRef],
}

impl PairFn for TabledRun<'_> {
    type Out = ();

    fn call<S: StackOps>(self, clru: &mut S, dlru: &mut S) {
        let Self {
            book,
            ghosts,
            table,
            refs,
        } = self;
        let mut pair = Pair { clru, dlru, book };
        for (i, r) in refs.iter().enumerate() {
            if let Some(a) = refs.get(i + TABLE_PREFETCH_AHEAD) {
                prefetch_at(table, a.page.0 as usize);
            }
            tabled(&mut pair, ghosts, table, r.page.0, r.write);
        }
    }
}
