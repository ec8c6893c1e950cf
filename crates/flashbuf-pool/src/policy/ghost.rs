//! Ghost lists: page identifiers of pages no longer resident (ARC's B1 and B2, 2Q's A1out,
//! S3-FIFO's ghost queue), in a fixed number of slots allocated once.
//!
//! Each list is an intrusive list over the slots ([`List`] over [`Links`], a slot id in
//! place of a frame id); a page identifier is found by an open-addressing hash index
//! (linear probing, backward-shift deletion, at most half full). Push, pop, remove and
//! lookup are O(1) expected; nothing allocates after construction.

use super::list::{Links, List};
use flashbuf_core::{FrameId, PageId};

const EMPTY: u32 = u32::MAX;

/// Up to `capacity` ghost page identifiers in up to four lists.
#[derive(Debug, Clone)]
pub struct Ghosts {
    links: Links,
    lists: Vec<List>,
    /// Page identifier of each slot.
    pids: Vec<u64>,
    /// Free slots (a stack).
    free: Vec<u32>,
    /// Hash index: slot of a page identifier, or `EMPTY`.
    index: Vec<u32>,
    mask: usize,
}

impl Ghosts {
    /// Ghost lists `0..lists_count` sharing `capacity` slots.
    pub fn new(capacity: usize, lists_count: u8) -> Self {
        let index_len = (capacity.max(1) * 2).next_power_of_two();
        Self {
            links: Links::new(capacity),
            lists: (0..lists_count).map(List::new).collect(),
            pids: vec![0; capacity],
            free: (0..capacity as u32).rev().collect(),
            index: vec![EMPTY; index_len],
            mask: index_len - 1,
        }
    }

    /// Bytes per slot, index aside: identifier (8), links (9), free-stack entry (4).
    pub const BYTES_PER_SLOT: usize = 8 + Links::BYTES_PER_FRAME + 4;

    /// Bytes of state: the slots and the hash index (2 to 4 entries of 4 bytes per slot).
    pub fn bytes(&self) -> usize {
        self.pids.len() * Self::BYTES_PER_SLOT + self.index.len() * 4
    }

    /// Number of identifiers in list `l`.
    #[inline]
    pub fn len(&self, l: u8) -> usize {
        self.lists[usize::from(l)].len()
    }

    /// Which list holds `pid`, if any.
    #[inline]
    pub fn find(&self, pid: PageId) -> Option<u8> {
        self.slot_of(pid.0)
            .and_then(|s| self.links.owner(FrameId(s)))
    }

    /// Pushes `pid` (in no list) at the head (most recent end) of list `l`. Returns false
    /// (and does nothing) when every slot is taken.
    pub fn push(&mut self, l: u8, pid: PageId) -> bool {
        debug_assert!(self.slot_of(pid.0).is_none(), "{pid} already a ghost");
        let Some(s) = self.free.pop() else {
            return false;
        };
        self.pids[s as usize] = pid.0;
        let mut i = self.home(pid.0);
        while self.index[i] != EMPTY {
            i = (i + 1) & self.mask;
        }
        self.index[i] = s;
        self.lists[usize::from(l)].push_head(&mut self.links, FrameId(s));
        true
    }

    /// Pushes `pid` at the head of list `l`, first dropping the list's oldest identifier
    /// if it already holds `cap` (a ghost FIFO of `cap` entries; `cap = 0` keeps none).
    pub fn push_capped(&mut self, l: u8, pid: PageId, cap: usize) {
        if cap == 0 {
            return;
        }
        if self.len(l) >= cap {
            self.pop_oldest(l);
        }
        let pushed = self.push(l, pid);
        debug_assert!(pushed, "ghost slots exhausted");
    }

    /// Removes and returns the oldest identifier of list `l`.
    pub fn pop_oldest(&mut self, l: u8) -> Option<PageId> {
        let s = self.lists[usize::from(l)].tail()?;
        let pid = self.pids[s.index()];
        self.remove_slot(l, s.0);
        Some(PageId(pid))
    }

    /// Removes `pid` from whichever list holds it; returns that list.
    pub fn remove(&mut self, pid: PageId) -> Option<u8> {
        let s = self.slot_of(pid.0)?;
        let l = self.links.owner(FrameId(s))?;
        self.remove_slot(l, s);
        Some(l)
    }

    fn remove_slot(&mut self, l: u8, s: u32) {
        self.lists[usize::from(l)].remove(&mut self.links, FrameId(s));
        self.free.push(s);
        let Some(mut hole) = self.index_pos(self.pids[s as usize]) else {
            return;
        };
        // Backward-shift deletion: move later entries of the probe run into the hole.
        self.index[hole] = EMPTY;
        let mut i = (hole + 1) & self.mask;
        while self.index[i] != EMPTY {
            let home = self.home(self.pids[self.index[i] as usize]);
            // The entry at `i` may move to `hole` if its home is not in (hole, i].
            if (i.wrapping_sub(home) & self.mask) >= (i.wrapping_sub(hole) & self.mask) {
                self.index[hole] = self.index[i];
                self.index[i] = EMPTY;
                hole = i;
            }
            i = (i + 1) & self.mask;
        }
    }

    #[inline]
    fn home(&self, pid: u64) -> usize {
        (pid.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & self.mask
    }

    fn index_pos(&self, pid: u64) -> Option<usize> {
        let mut i = self.home(pid);
        loop {
            match self.index[i] {
                EMPTY => return None,
                s if self.pids[s as usize] == pid => return Some(i),
                _ => i = (i + 1) & self.mask,
            }
        }
    }

    fn slot_of(&self, pid: u64) -> Option<u32> {
        self.index_pos(pid).map(|i| self.index[i])
    }

    /// Checks the lists and that the index finds every identifier of every list.
    pub fn check(&self) -> Result<(), String> {
        let mut members = 0;
        for l in &self.lists {
            l.check(&self.links)?;
            for s in l.iter_from_tail(&self.links) {
                members += 1;
                let pid = self.pids[s.index()];
                if self.slot_of(pid) != Some(s.0) {
                    return Err(format!("ghost {pid} not found by the index"));
                }
            }
        }
        let indexed = self.index.iter().filter(|&&s| s != EMPTY).count();
        if indexed != members || members + self.free.len() != self.pids.len() {
            return Err(format!(
                "{members} ghosts, {indexed} indexed, {} free slots of {}",
                self.free.len(),
                self.pids.len()
            ));
        }
        Ok(())
    }
}

/// The victim a policy with ghost lists named, followed from `choose_victim` to
/// `on_remove` to `on_insert`: the pool removes the victim before `on_insert` names the
/// missed page, and the victim's ghost is due only then (after the missed page's own ghost
/// entry was read). A page removed without being chosen (a failed load) is not recorded.
#[derive(Debug, Clone, Copy, Default)]
pub struct Departure {
    chosen: Option<FrameId>,
    left: Option<(PageId, u8)>,
}

impl Departure {
    /// `choose_victim` named `frame`.
    pub fn chose(&mut self, frame: FrameId) {
        self.chosen = Some(frame);
    }

    /// `frame`, holding `pid`, left the policy's list `from`: kept if it is the victim.
    pub fn removed(&mut self, frame: FrameId, pid: PageId, from: u8) {
        if self.chosen == Some(frame) {
            self.chosen = None;
            self.left = Some((pid, from));
        }
    }

    /// `on_remove` of a policy whose resident lists are `lists` over `links` (the page of
    /// each frame in `page`): `frame` leaves the list it is on, kept if it is the victim.
    pub fn remove_from(
        &mut self,
        lists: &mut [List],
        links: &mut Links,
        page: &[u64],
        frame: FrameId,
    ) {
        let Some(l) = links.owner(frame) else {
            return;
        };
        lists[usize::from(l)].remove(links, frame);
        self.removed(frame, PageId(page[frame.index()]), l);
    }

    /// At `on_insert`: the victim that left since the last miss (its page and the list it
    /// left), if any; forgets any pending choice.
    pub fn take(&mut self) -> Option<(PageId, u8)> {
        self.chosen = None;
        self.left.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_find_remove_and_pop_keep_the_index_exact() {
        let mut g = Ghosts::new(64, 2);
        for p in 0..64u64 {
            assert!(g.push((p % 2) as u8, PageId(p * 1024)));
        }
        assert!(!g.push(0, PageId(1)), "full");
        assert_eq!(g.find(PageId(3 * 1024)), Some(1));
        assert_eq!(g.remove(PageId(3 * 1024)), Some(1));
        assert_eq!(g.find(PageId(3 * 1024)), None);
        assert_eq!(g.pop_oldest(0), Some(PageId(0)));
        assert_eq!(g.pop_oldest(1), Some(PageId(1024)));
        assert_eq!((g.len(0), g.len(1)), (31, 30));
        g.check().unwrap();
        for p in 0..64u64 {
            g.remove(PageId(p * 1024));
        }
        assert_eq!((g.len(0), g.len(1)), (0, 0));
        g.check().unwrap();
    }
}
