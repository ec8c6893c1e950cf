//! Intrusive doubly-linked lists over frame indices: O(1) push, remove and move, no
//! allocation after construction. Several lists can share one [`Links`] as long as each
//! frame is in at most one of them (a clean list and a dirty list, for instance).

use flashbuf_core::FrameId;

const NIL: u32 = u32::MAX;

/// The link fields of every frame (8 bytes per frame).
#[derive(Debug, Clone)]
pub struct Links {
    /// Both neighbours of a frame side by side: a list operation touches one cache line
    /// per frame it relinks, and one bounds check (cachegrind, LRU's hit: see `Link`).
    link: Vec<Link>,
    /// Which list a frame is in (`NIL` = none): lets `remove` check membership.
    owner: Vec<u8>,
}

/// One list: its ends and length. The *head* is the most recently pushed end (MRU), the
/// *tail* the oldest (LRU).
#[derive(Debug, Clone)]
pub struct List {
    id: u8,
    head: u32,
    tail: u32,
    len: usize,
}

/// A frame's neighbours: `prev` towards the head (newer), `next` towards the tail (older).
#[derive(Debug, Clone, Copy)]
struct Link {
    prev: u32,
    next: u32,
}

const UNLINKED: Link = Link {
    prev: NIL,
    next: NIL,
};

impl Links {
    /// Bytes of link state per frame.
    pub const BYTES_PER_FRAME: usize = 9;

    /// Links for `frames_count` frames, all unlinked.
    pub fn new(frames_count: usize) -> Self {
        assert!(frames_count < NIL as usize, "too many frames");
        Self {
            link: vec![UNLINKED; frames_count],
            owner: vec![u8::MAX; frames_count],
        }
    }

    /// Number of frames these links cover.
    pub fn owner_len(&self) -> usize {
        self.owner.len()
    }

    /// Which list (by id) holds `f`, if any.
    #[inline]
    pub fn owner(&self, f: FrameId) -> Option<u8> {
        match self.owner[f.index()] {
            u8::MAX => None,
            o => Some(o),
        }
    }
}

impl List {
    /// An empty list with an id (distinct per list sharing one `Links`, below 255).
    pub const fn new(id: u8) -> Self {
        Self {
            id,
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }

    /// Number of frames in the list.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `f` is in this list.
    #[inline]
    pub fn contains(&self, links: &Links, f: FrameId) -> bool {
        links.owner[f.index()] == self.id
    }

    /// The most recently pushed frame.
    #[inline]
    pub fn head(&self) -> Option<FrameId> {
        (self.head != NIL).then_some(FrameId(self.head))
    }

    /// The oldest frame.
    #[inline]
    pub fn tail(&self) -> Option<FrameId> {
        (self.tail != NIL).then_some(FrameId(self.tail))
    }

    /// Pushes `f` (not in any list) at the head.
    #[inline]
    pub fn push_head(&mut self, links: &mut Links, f: FrameId) {
        let i = f.0;
        debug_assert_eq!(links.owner[i as usize], u8::MAX, "{f} already linked");
        links.owner[i as usize] = self.id;
        links.link[i as usize] = Link {
            prev: NIL,
            next: self.head,
        };
        if self.head != NIL {
            links.link[self.head as usize].prev = i;
        } else {
            self.tail = i;
        }
        self.head = i;
        self.len += 1;
    }

    /// Pushes `f` (not in any list) at the tail.
    #[inline]
    pub fn push_tail(&mut self, links: &mut Links, f: FrameId) {
        let i = f.0;
        debug_assert_eq!(links.owner[i as usize], u8::MAX, "{f} already linked");
        links.owner[i as usize] = self.id;
        links.link[i as usize] = Link {
            prev: self.tail,
            next: NIL,
        };
        if self.tail != NIL {
            links.link[self.tail as usize].next = i;
        } else {
            self.head = i;
        }
        self.tail = i;
        self.len += 1;
    }

    /// Removes `f`, which must be in this list.
    #[inline]
    pub fn remove(&mut self, links: &mut Links, f: FrameId) {
        let i = f.index();
        debug_assert_eq!(links.owner[i], self.id, "{f} not in list {}", self.id);
        let Link { prev: p, next: n } = links.link[i];
        if p != NIL {
            links.link[p as usize].next = n;
        } else {
            self.head = n;
        }
        if n != NIL {
            links.link[n as usize].prev = p;
        } else {
            self.tail = p;
        }
        links.link[i] = UNLINKED;
        links.owner[i] = u8::MAX;
        self.len -= 1;
    }

    /// Moves `f` (in this list) to the head. Relinks in place; ownership and length do
    /// not change.
    #[inline]
    pub fn move_to_head(&mut self, links: &mut Links, f: FrameId) {
        let i = f.0;
        debug_assert_eq!(
            links.owner[i as usize], self.id,
            "{f} not in list {}",
            self.id
        );
        if self.head == i {
            return;
        }
        // Not the head, so it has a predecessor.
        let Link { prev: p, next: n } = links.link[i as usize];
        links.link[p as usize].next = n;
        if n != NIL {
            links.link[n as usize].prev = p;
        } else {
            self.tail = p;
        }
        links.link[i as usize] = Link {
            prev: NIL,
            next: self.head,
        };
        links.link[self.head as usize].prev = i;
        self.head = i;
    }

    /// The frame after `f` towards the tail (older).
    #[inline]
    pub fn next_older(&self, links: &Links, f: FrameId) -> Option<FrameId> {
        let n = links.link[f.index()].next;
        (n != NIL).then_some(FrameId(n))
    }

    /// The frame before `f` towards the head (newer).
    #[inline]
    pub fn next_newer(&self, links: &Links, f: FrameId) -> Option<FrameId> {
        let p = links.link[f.index()].prev;
        (p != NIL).then_some(FrameId(p))
    }

    /// Iterates from the tail (oldest) towards the head.
    pub fn iter_from_tail<'a>(&self, links: &'a Links) -> impl Iterator<Item = FrameId> + 'a {
        let mut cur = self.tail;
        std::iter::from_fn(move || {
            if cur == NIL {
                return None;
            }
            let f = FrameId(cur);
            cur = links.link[cur as usize].prev;
            Some(f)
        })
    }

    /// Checks links, ownership and length; `Err` names the first problem.
    pub fn check(&self, links: &Links) -> Result<(), String> {
        let mut n = 0usize;
        let mut prev = NIL;
        let mut cur = self.head;
        while cur != NIL {
            if links.owner[cur as usize] != self.id {
                return Err(format!(
                    "frame {cur} in list {} has owner {}",
                    self.id, links.owner[cur as usize]
                ));
            }
            if links.link[cur as usize].prev != prev {
                return Err(format!("frame {cur} in list {}: broken prev link", self.id));
            }
            n += 1;
            if n > self.len {
                return Err(format!(
                    "list {} longer than its length {}",
                    self.id, self.len
                ));
            }
            prev = cur;
            cur = links.link[cur as usize].next;
        }
        if prev != self.tail {
            return Err(format!("list {}: tail mismatch", self.id));
        }
        if n != self.len {
            return Err(format!(
                "list {} has {n} frames, length says {}",
                self.id, self.len
            ));
        }
        let owned = links.owner.iter().filter(|&&o| o == self.id).count();
        if owned != n {
            return Err(format!(
                "list {}: {owned} frames claim it, {n} linked",
                self.id
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_remove_move() {
        let mut l = Links::new(5);
        let mut a = List::new(0);
        let mut b = List::new(1);
        for i in 0..3 {
            a.push_head(&mut l, FrameId(i));
        }
        b.push_tail(&mut l, FrameId(3));
        assert_eq!(a.tail(), Some(FrameId(0)));
        a.move_to_head(&mut l, FrameId(0));
        assert_eq!(
            a.iter_from_tail(&l).collect::<Vec<_>>(),
            vec![FrameId(1), FrameId(2), FrameId(0)]
        );
        a.remove(&mut l, FrameId(2));
        b.push_head(&mut l, FrameId(2));
        assert!(b.contains(&l, FrameId(2)) && !a.contains(&l, FrameId(2)));
        a.check(&l).unwrap();
        b.check(&l).unwrap();
        assert_eq!((a.len(), b.len()), (2, 2));
        assert_eq!(l.owner(FrameId(4)), None);
    }
}
