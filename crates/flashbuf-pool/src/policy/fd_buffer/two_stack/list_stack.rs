//! [`ListStack`]: Kim, Hill and Wood's group-based LRU stack as a list with the oldest
//! entry of each group marked: moving an entry of group `k` to the top moves `k` group
//! boundaries, a push moves all of them. Cheaper than the stamped representation
//! ([`super::group_stack`]) when the groups are few (the paper's 64 pages per group);
//! the same groups either way. An entry's link towards the top and its group sit together
//! in one 8-byte [`Up`], its link towards the bottom and its threshold in an 8-byte
//! [`Node`]: a tail slide up (every push slides every group's tail) reads and writes one
//! `Up`, and `found` reads the group without the rest. The length
//! modulo the group size is kept beside the length, so a push or a removal divides
//! nothing (two 64-bit divisions each before; instructions barely change, cachegrind
//! cannot see a division's latency).
//!
//! A sliding tail changes the crossing entry's group by one (an increment or decrement
//! in place, no group counter beside the loop), and a push onto a full stack drops the
//! bottom inline (the last group's entry: no tail slides, the last tail is the new
//! bottom) instead of calling the general removal. FD-Buffer's first million TPC-C
//! references at 1,241 frames (20 groups): 1,486.2 M -> 1,474.9 M instructions for the
//! whole replay (cachegrind), push and removal 105 M -> 91 M; the same counts.
//!
//! The tail slides (a push's, a move's and a removal's) read and write the tails' nodes
//! unchecked: a tail is always a live entry's slot, below `node.len()` (`check` walks the
//! tails; debug builds assert it). FD-Buffer, first 2 M TPC-C references at 1,241 frames
//! (`flashbuf bench --data none --limit 2000000`, cachegrind, whole replay): 1,956.7 M ->
//! 1,899.3 M instructions; `bench --json` the same but for timings at 1,241 and 400
//! frames, with and without `cost=clustered`.
//!
//! `move_to_top` is inlined into the reference path (it was a call per stack hit, about
//! 3.2 M calls for 2 M references, each saving and restoring registers): the same run,
//! `FdBuffer::on_hit`, `on_insert` and `move_to_top` together 513.2 M -> 504.7 M
//! instructions.
//!
//! `move_to_top` and `push_top` read the moved entry's node once and write it once (the
//! unlinking and linking on top were separate calls, each indexing the node again: a
//! bounds check and a reload of the vector each, since a store through one vector may
//! alias another's length for the compiler); below the top an entry always has a newer
//! neighbour, so the move tests for neither end of the list. Same run, whole replay:
//! 1,814.0 M -> 1,783.8 M instructions (`on_hit` 427.5 M -> 403.6 M). Tried and dropped:
//! the same for `remove` (49.3 M -> 49.9 M).
//!
//! Stop 32, same run (2 M references, whole replay, cachegrind with cache and branch
//! simulation): one 16-byte node split into [`Up`] and [`Node`] 1,696.0 M -> 1,672.2 M
//! instructions (`found`'s share 46.8 M -> 26.3 M), L1 data misses 27.2 M -> 28.1 M,
//! mispredicted branches 11.5 M -> 11.3 M; the push's slides still miss the L1 on 40 % of
//! the tails (4.7 M of 11.6 M: the tails are scattered over the slots). `move_to_top` and
//! `push_top` then take the vectors as slices once: 1,658.3 M -> 1,652.7 M. The same
//! counts (`bench --json` at 1,241 and 400 frames, with and without `cost=clustered`).

//!
//! Stop 42: a removal leaves a *hole* (the entry stays in the list as an entry of no page,
//! no tail moves) and the next push takes the hole's slot to the top (a move from its
//! group) instead of pushing a new entry: a removal followed by a push slid every tail
//! below the removed entry down and then every tail up, the same tails back. While the
//! hole stands, `found` counts an entry below it one position higher (its group is one
//! less when it is the first of its group in the list: one comparison with the previous
//! group's tail). At most one hole: a second removal unlinks the deeper of the two.
//! Counted on pgbench s50 (1,762 frames, 28 groups, binary page trace): CLRU's pushes slid
//! 14.1 M tails and its removals 11.2 M for 524 k pushes and 402 k removals, against 0.17 M
//! for its 674 k moves. cachegrind, whole run: the estimator's functions 651.7 M → 527.7 M
//! instructions (`found` must stay inlined: out of line it cost 94 M), mispredicted
//! branches 8.0 M → 8.4 M for the run; the reader's estimator time (`bench --runs 3`,
//! 6 interleaved rounds) 57.8–74.5 → 50.4–64.4 ms, the least 57.8 → 50.4. The same counts
//! (every golden file and the estimator's tests against exact stacks pass unchanged); the
//! stack work reported (`stack_work`) is lower, as fewer tails move.

use super::group_stack::{Dropped, Found, NIL};

/// One LRU stack with group-based distances and a present-condition threshold per entry.
#[derive(Debug, Clone)]
pub(super) struct ListStack {
    cap: usize,
    z: usize,
    page: Vec<u64>,
    /// Per slot: the link towards the top and the group, the only fields a tail slide
    /// reads and writes (kept apart from `node`, see the module documentation).
    up: Vec<Up>,
    node: Vec<Node>,
    top: u32,
    bottom: u32,
    len: usize,
    /// `len % z`, kept as entries come and go: a push or removal then divides nothing
    /// (a 64-bit division per push and removal was a few percent of FD-Buffer's stack
    /// time at 64 pages per group).
    rem: usize,
    free: Vec<u32>,
    /// `tails[g]`: the oldest entry of group `g`.
    tails: Vec<u32>,
    /// Group-boundary updates done so far (the estimator's per-access work).
    work: u64,
    /// A removed entry left in its place (`NIL`: none), until a push takes its slot or
    /// another removal needs it gone: the list, the tails and the groups are those of the
    /// stack with the hole as an entry (see [`ListStack::remove`]).
    hole: u32,
}

/// An entry's link towards the top and its group: what a tail slide touches.
#[derive(Debug, Clone, Copy)]
struct Up {
    /// Towards the top (more recent).
    prev: u32,
    group: u32,
}

/// An entry's link towards the bottom and its present-condition threshold.
#[derive(Debug, Clone, Copy)]
struct Node {
    /// Towards the bottom (older).
    next: u32,
    theta: u32,
}

/// The tails of groups `0..tails.len()` each slide one entry up into the next group (an
/// entry went on top from the group after them or, for a push, from beyond the bottom).
/// The old tail of group `g` is in group `g` (the invariant), so it moves with one
/// increment: no group counter in the loop.
#[inline(always)]
fn slide_up(up: &mut [Up], tails: &mut [u32]) {
    for t in tails {
        // A tail is a live entry's slot (`check` walks them), below `up.len()`.
        debug_assert!((*t as usize) < up.len(), "tail {t} out of range");
        // SAFETY: every tail is a live slot, and slots are `0..up.len()` (handed out by
        // `free`, which holds only those); `check` verifies the tails.
        let tail = unsafe { up.get_unchecked_mut(*t as usize) };
        tail.group += 1;
        *t = tail.prev;
    }
}

impl ListStack {
    /// An empty stack holding at most `cap` entries, in groups of `group_size`.
    ///
    /// # Panics
    /// If `cap` or `group_size` is zero, or `cap` does not fit in 32 bits.
    pub(super) fn new(cap: usize, group_size: usize) -> Self {
        assert!(cap > 0 && group_size > 0, "empty stack or group");
        assert!(cap < NIL as usize - 1, "stack too deep");
        let n = cap + 1;
        Self {
            cap,
            z: group_size,
            page: vec![0; n],
            up: vec![
                Up {
                    prev: NIL,
                    group: 0
                };
                n
            ],
            node: vec![
                Node {
                    next: NIL,
                    theta: 0
                };
                n
            ],
            top: NIL,
            bottom: NIL,
            len: 0,
            rem: 0,
            free: (0..n as u32).rev().collect(),
            tails: Vec::with_capacity(cap / group_size + 2),
            work: 0,
            hole: NIL,
        }
    }

    /// Number of entries (the hole is none).
    pub(super) fn len(&self) -> usize {
        self.len - usize::from(self.hole != NIL)
    }

    /// Whether the stack is empty.
    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Group-boundary updates done so far.
    pub(super) fn work(&self) -> u64 {
        self.work
    }

    /// The entry in `slot` (a slot returned by [`ListStack::push_top`] and not removed
    /// since): its group-based distance and threshold.
    ///
    /// With a hole, an entry below it is one position higher than the list says: its
    /// group is one less exactly when it is the first of its group in the list (the entry
    /// above it is the previous group's tail) and the hole is in an earlier group (a hole
    /// in its own group is above it, and it is not the first).
    #[inline(always)]
    pub(super) fn found(&self, slot: u32) -> Found {
        let Up { prev, group } = self.up[slot as usize];
        let mut g = group as usize;
        let mut len = self.len;
        if self.hole != NIL {
            len -= 1;
            if group > self.up[self.hole as usize].group && self.tails[g - 1] == prev {
                g -= 1;
            }
        }
        let lo = (g * self.z + 1) as u32;
        let hi = ((g + 1) * self.z).min(len) as u32;
        Found {
            slot,
            lo,
            hi,
            distance: lo + (hi - lo) / 2,
            theta: self.node[slot as usize].theta,
        }
    }

    /// Sets the present-condition threshold of an entry.
    #[inline]
    pub(super) fn set_theta(&mut self, slot: u32, theta: u32) {
        self.node[slot as usize].theta = theta;
    }

    #[inline]
    fn unlink(&mut self, x: u32) {
        let p = self.up[x as usize].prev;
        let n = self.node[x as usize].next;
        if p != NIL {
            self.node[p as usize].next = n;
        } else {
            self.top = n;
        }
        if n != NIL {
            self.up[n as usize].prev = p;
        } else {
            self.bottom = p;
        }
    }

    /// Moves entry `slot` to the top (distance 1).
    ///
    /// The entry's node is read once and written once, and its neighbours once each:
    /// an entry below the top always has a newer neighbour, and the top is then another
    /// entry (no test for either). The vectors are taken as slices once (a store through
    /// one would otherwise reload the others' pointers and lengths).
    #[inline(always)]
    pub(super) fn move_to_top(&mut self, slot: u32) {
        let top = self.top;
        if top == slot {
            return;
        }
        let (up, node, tails) = (&mut self.up[..], &mut self.node[..], &mut self.tails[..]);
        let Up { prev: p, group } = up[slot as usize];
        let n = node[slot as usize].next;
        let k = group as usize;
        if tails[k] == slot {
            // Its newer neighbour slides into its position, the last of group k.
            tails[k] = p;
        }
        node[p as usize].next = n;
        if n != NIL {
            up[n as usize].prev = p;
        } else {
            self.bottom = p;
        }
        up[top as usize].prev = slot;
        up[slot as usize] = Up {
            prev: NIL,
            group: 0,
        };
        node[slot as usize].next = top;
        self.top = slot;
        slide_up(up, &mut tails[..k]);
        self.work += k as u64 + 1;
    }

    /// Pushes `page` (not in the stack) on top with threshold `theta`; drops the bottom
    /// entry if the stack would exceed its capacity. Returns the new entry's slot and the
    /// dropped entry, if any.
    ///
    /// With a hole, the hole's slot goes to the top with the new page: a move from its
    /// group (its group's tails above it slide), where a removal and a push would slide
    /// every tail below it down and then every tail up.
    pub(super) fn push_top(&mut self, page: u64, theta: u32) -> (u32, Option<Dropped>) {
        if self.hole != NIL {
            let x = std::mem::replace(&mut self.hole, NIL);
            self.page[x as usize] = page;
            self.node[x as usize].theta = theta;
            self.move_to_top(x);
            return (x, None);
        }
        let x = match self.free.pop() {
            Some(x) => x,
            None => unreachable!("a stack of cap {} has cap + 1 slots", self.cap),
        };
        self.page[x as usize] = page;
        let was_full = self.rem == 0;
        let full_groups = self.tails.len() - usize::from(!was_full);
        let old_bottom = self.bottom;
        // Linked on top: the node written once (slices taken once, as in `move_to_top`).
        let top = self.top;
        let up = &mut self.up[..];
        up[x as usize] = Up {
            prev: NIL,
            group: 0,
        };
        self.node[x as usize] = Node { next: top, theta };
        if top != NIL {
            up[top as usize].prev = x;
        } else {
            self.bottom = x;
        }
        self.top = x;
        slide_up(up, &mut self.tails[..full_groups]);
        if was_full {
            if self.len == 0 {
                self.tails.push(x);
            } else {
                self.tails.push(old_bottom);
            }
        }
        self.work += full_groups as u64 + 1;
        self.len += 1;
        self.rem = if self.rem + 1 == self.z {
            0
        } else {
            self.rem + 1
        };
        let dropped = (self.len > self.cap).then(|| self.drop_bottom());
        (x, dropped)
    }

    /// [`ListStack::remove`] of the bottom entry of a stack of at least two entries: it is
    /// the last group's, so no tail slides and the last group's tail is the new bottom.
    #[inline]
    fn drop_bottom(&mut self) -> Dropped {
        let b = self.bottom;
        let dropped = Dropped {
            slot: b,
            page: self.page[b as usize],
        };
        let p = self.up[b as usize].prev;
        self.node[p as usize].next = NIL;
        self.bottom = p;
        self.work += 1;
        self.len -= 1;
        self.rem = if self.rem == 0 {
            self.z - 1
        } else {
            self.rem - 1
        };
        if self.rem == 0 {
            self.tails.pop();
        }
        if let Some(t) = self.tails.last_mut() {
            *t = p;
        }
        self.up[b as usize].prev = NIL;
        self.free.push(b);
        dropped
    }

    /// Removes entry `slot`: it becomes the hole if there is none (no tail moves; the
    /// next push takes its slot). With a hole already, the deeper of the two is unlinked
    /// (the tails below it slide; a shallower hole is cheaper for the push to move).
    pub(super) fn remove(&mut self, slot: u32) {
        if self.hole == NIL {
            self.hole = slot;
            return;
        }
        let (h, k) = (
            self.up[self.hole as usize].group,
            self.up[slot as usize].group,
        );
        if k >= h {
            self.unlink_entry(slot);
        } else {
            let deeper = std::mem::replace(&mut self.hole, slot);
            self.unlink_entry(deeper);
        }
    }

    /// Unlinks entry `slot` from the list (the hole or not), sliding the tails below it.
    fn unlink_entry(&mut self, slot: u32) {
        let k = self.up[slot as usize].group as usize;
        let groups = self.tails.len();
        // The tails of groups k.. slide one entry down: the entry below each (in group
        // g + 1) moves up into group g.
        let (node, up) = (&self.node[..], &mut self.up[..]);
        for t in self
            .tails
            .get_mut(k..groups.saturating_sub(1))
            .unwrap_or_default()
        {
            debug_assert!((*t as usize) < node.len(), "tail {t} out of range");
            // SAFETY: a tail is a live slot (below `node.len()`, see `slide_up`),
            // and the tail of a group that is not the last has a live entry below it.
            let nt = unsafe { node.get_unchecked(*t as usize) }.next;
            debug_assert!((nt as usize) < up.len(), "no entry below tail {t}");
            // SAFETY: as above, `nt` is a live slot (`up` and `node` have one entry per
            // slot).
            unsafe { up.get_unchecked_mut(nt as usize) }.group -= 1;
            *t = nt;
        }
        self.work += (groups - k) as u64;
        self.unlink(slot);
        self.len -= 1;
        self.rem = if self.rem == 0 {
            self.z - 1
        } else {
            self.rem - 1
        };
        let g2 = groups - usize::from(self.rem == 0);
        self.tails.truncate(g2);
        if g2 > 0 {
            self.tails[g2 - 1] = self.bottom;
        }
        self.up[slot as usize].prev = NIL;
        self.node[slot as usize].next = NIL;
        self.free.push(slot);
    }

    /// Entries from the top: `(page, slot, θ)`.
    pub(super) fn walk(&self) -> Vec<(u64, u32, u32)> {
        let mut v = Vec::with_capacity(self.len);
        let mut c = self.top;
        while c != NIL {
            if c != self.hole {
                v.push((self.page[c as usize], c, self.node[c as usize].theta));
            }
            c = self.node[c as usize].next;
        }
        v
    }

    /// Checks links, groups and the capacity.
    pub(super) fn check(&self) -> Result<(), String> {
        if self.len > self.cap {
            return Err(format!("stack holds {} > cap {}", self.len, self.cap));
        }
        let mut pos = 0usize;
        let mut prev = NIL;
        let mut c = self.top;
        let mut hole_seen = false;
        while c != NIL {
            hole_seen |= c == self.hole;
            let (e, u) = (self.node[c as usize], self.up[c as usize]);
            if u.prev != prev {
                return Err(format!("stack slot {c}: broken prev link"));
            }
            let g = pos / self.z;
            if u.group as usize != g {
                return Err(format!(
                    "stack position {} in group {}, expected {g}",
                    pos + 1,
                    u.group
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
            c = e.next;
        }
        if self.hole != NIL && !hole_seen {
            return Err(format!("the hole {} is not in the stack", self.hole));
        }
        if pos != self.len || prev != self.bottom {
            return Err(format!(
                "stack walk found {pos} entries, length {}",
                self.len
            ));
        }
        if self.tails.len() != self.len.div_ceil(self.z) || self.rem != self.len % self.z {
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
mod tests;
