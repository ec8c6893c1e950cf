//! Pool-local orderings: the inner replacement policy that runs FD-Buffer's clean pool or
//! its dirty pool (On et al., IEEE TC 2014, §4.2: "each pool of FD-Buffer can be managed
//! by an independent policy" through *Lookup, Update, Add, Remove, GetVictim*).
//!
//! FD-Buffer keeps the page table (the pool's) and the pool membership itself, so an
//! ordering only needs four of the five calls: [`PoolOrder::add`], [`PoolOrder::update`],
//! [`PoolOrder::remove`] and [`PoolOrder::victim`] (*Lookup* is the membership test FD-Buffer
//! does with its own per-frame pool tag). An ordering never sees pages or dirtiness.
//!
//! Two orderings ship: [`LruOrder`] (the paper's choice for both pools, and the default)
//! and [`FifoOrder`] (insertion order, hits ignored), which mainly shows that the pools
//! are pluggable. `Box<dyn PoolOrder>` is itself a `PoolOrder`, so a run-time choice works.
//!
//! Note: the Two-Stack estimator (§4.3) models both pools as LRU whatever ordering runs
//! them; with another ordering its estimates are an approximation (as the paper says, the
//! stack model is for "LRU and its variants").

use flashbuf_core::FrameId;

/// The ordering of one FD-Buffer pool. Frames are `0..frames_count`; a frame is in the
/// ordering between `add` and `remove`. Implementations are `Send` and do no I/O.
pub trait PoolOrder: Send {
    /// Short name (`lru`, `fifo`).
    fn name(&self) -> &'static str;
    /// *Add*: frame `f` (not a member) joins the pool.
    fn add(&mut self, f: FrameId);
    /// *Update*: member `f` was referenced.
    fn update(&mut self, f: FrameId);
    /// *Remove*: member `f` leaves the pool.
    fn remove(&mut self, f: FrameId);
    /// *GetVictim*: the member to replace first among those `evictable` accepts.
    fn victim(&self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId>;
    /// Number of members.
    fn len(&self) -> usize;
    /// Whether the pool is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes of state per frame.
    fn bytes_per_frame(&self) -> usize;
    /// Checks the ordering's structure; `Err` names the first problem.
    fn check(&self) -> Result<(), String>;
    /// Members from the first victim candidate to the last (for checks and references).
    fn members_victim_first(&self) -> Vec<FrameId>;
}

impl<O: PoolOrder + ?Sized> PoolOrder for Box<O> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn add(&mut self, f: FrameId) {
        (**self).add(f)
    }
    fn update(&mut self, f: FrameId) {
        (**self).update(f)
    }
    fn remove(&mut self, f: FrameId) {
        (**self).remove(f)
    }
    fn victim(&self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        (**self).victim(evictable)
    }
    fn len(&self) -> usize {
        (**self).len()
    }
    fn bytes_per_frame(&self) -> usize {
        (**self).bytes_per_frame()
    }
    fn check(&self) -> Result<(), String> {
        (**self).check()
    }
    fn members_victim_first(&self) -> Vec<FrameId> {
        (**self).members_victim_first()
    }
}

/// Which ordering runs a pool (for run-time configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OrderKind {
    /// Least recently used (the paper's setting).
    #[default]
    Lru,
    /// First in, first out.
    Fifo,
}

impl OrderKind {
    /// A boxed ordering of this kind for `frames_count` frames.
    pub fn build(self, frames_count: usize) -> Box<dyn PoolOrder> {
        match self {
            OrderKind::Lru => Box::new(LruOrder::new(frames_count)),
            OrderKind::Fifo => Box::new(FifoOrder::new(frames_count)),
        }
    }
}

/// LRU over an intrusive list: O(1) add, update, remove; victim = least recently used.
/// Each frame's two links sit side by side (8 bytes per frame): a move touches one cache
/// line per frame involved.
#[derive(Debug, Clone)]
pub struct LruOrder {
    /// `[towards the head (newer), towards the tail (older)]` of each frame; both
    /// `UNLINKED` for a frame outside the ordering.
    links: Vec<[u32; 2]>,
    head: u32,
    tail: u32,
    len: usize,
    /// FIFO mode: `update` does nothing.
    fifo: bool,
}

/// End of the list.
const NIL: u32 = u32::MAX;
/// Link value of a frame outside the ordering.
const UNLINKED: u32 = u32::MAX - 1;

impl LruOrder {
    /// An empty LRU ordering for `frames_count` frames.
    ///
    /// # Panics
    /// If `frames_count` does not fit below the two reserved link values.
    pub fn new(frames_count: usize) -> Self {
        assert!(frames_count < UNLINKED as usize, "too many frames");
        Self {
            links: vec![[UNLINKED; 2]; frames_count],
            head: NIL,
            tail: NIL,
            len: 0,
            fifo: false,
        }
    }

    #[inline]
    fn unlink(&mut self, f: u32) {
        let [p, n] = self.links[f as usize];
        if p != NIL {
            self.links[p as usize][1] = n;
        } else {
            self.head = n;
        }
        if n != NIL {
            self.links[n as usize][0] = p;
        } else {
            self.tail = p;
        }
    }

    #[inline]
    fn link_head(&mut self, f: u32) {
        self.links[f as usize] = [NIL, self.head];
        if self.head != NIL {
            self.links[self.head as usize][0] = f;
        } else {
            self.tail = f;
        }
        self.head = f;
    }

    /// Members from the tail (the oldest) to the head.
    fn iter_from_tail(&self) -> impl Iterator<Item = FrameId> + '_ {
        let mut cur = self.tail;
        std::iter::from_fn(move || {
            let f = (cur != NIL).then_some(FrameId(cur))?;
            cur = self.links[cur as usize][0];
            Some(f)
        })
    }
}

impl PoolOrder for LruOrder {
    fn name(&self) -> &'static str {
        if self.fifo {
            "fifo"
        } else {
            "lru"
        }
    }
    #[inline]
    fn add(&mut self, f: FrameId) {
        debug_assert_eq!(self.links[f.index()], [UNLINKED; 2], "{f} added twice");
        self.link_head(f.0);
        self.len += 1;
    }
    #[inline]
    fn update(&mut self, f: FrameId) {
        debug_assert_ne!(self.links[f.index()], [UNLINKED; 2], "{f} not a member");
        if !self.fifo && self.head != f.0 {
            self.unlink(f.0);
            self.link_head(f.0);
        }
    }
    #[inline]
    fn remove(&mut self, f: FrameId) {
        debug_assert_ne!(self.links[f.index()], [UNLINKED; 2], "{f} not a member");
        self.unlink(f.0);
        self.links[f.index()] = [UNLINKED; 2];
        self.len -= 1;
    }
    #[inline]
    fn victim(&self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        self.iter_from_tail().find(|&f| evictable(f))
    }
    #[inline]
    fn len(&self) -> usize {
        self.len
    }
    fn bytes_per_frame(&self) -> usize {
        std::mem::size_of::<[u32; 2]>()
    }
    fn check(&self) -> Result<(), String> {
        let (mut n, mut newer, mut cur) = (0usize, NIL, self.head);
        while cur != NIL {
            let [p, next] = *self
                .links
                .get(cur as usize)
                .ok_or_else(|| format!("link to frame {cur} out of range"))?;
            if p != newer {
                return Err(format!("frame {cur}: broken link towards the head"));
            }
            n += 1;
            if n > self.len {
                return Err(format!("ordering longer than its length {}", self.len));
            }
            (newer, cur) = (cur, next);
        }
        if newer != self.tail {
            return Err("tail mismatch".into());
        }
        let linked = self.links.iter().filter(|l| **l != [UNLINKED; 2]).count();
        if n != self.len || linked != n {
            return Err(format!(
                "{n} frames walked, {linked} linked, length {}",
                self.len
            ));
        }
        Ok(())
    }
    fn members_victim_first(&self) -> Vec<FrameId> {
        self.iter_from_tail().collect()
    }
}

/// FIFO: victim = the member that joined first; references do not reorder.
#[derive(Debug, Clone)]
pub struct FifoOrder(LruOrder);

impl FifoOrder {
    /// An empty FIFO ordering for `frames_count` frames.
    pub fn new(frames_count: usize) -> Self {
        let mut o = LruOrder::new(frames_count);
        o.fifo = true;
        Self(o)
    }
}

impl PoolOrder for FifoOrder {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn add(&mut self, f: FrameId) {
        self.0.add(f)
    }
    fn update(&mut self, f: FrameId) {
        self.0.update(f)
    }
    fn remove(&mut self, f: FrameId) {
        self.0.remove(f)
    }
    fn victim(&self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        self.0.victim(evictable)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn bytes_per_frame(&self) -> usize {
        self.0.bytes_per_frame()
    }
    fn check(&self) -> Result<(), String> {
        self.0.check()
    }
    fn members_victim_first(&self) -> Vec<FrameId> {
        self.0.members_victim_first()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_and_fifo_differ_on_update() {
        let mut l = LruOrder::new(3);
        let mut f = FifoOrder::new(3);
        for i in 0..3 {
            l.add(FrameId(i));
            f.add(FrameId(i));
        }
        l.update(FrameId(0));
        f.update(FrameId(0));
        assert_eq!(l.victim(&|_| true), Some(FrameId(1)));
        assert_eq!(f.victim(&|_| true), Some(FrameId(0)));
        assert_eq!(l.victim(&|x| x != FrameId(1)), Some(FrameId(2)));
        l.remove(FrameId(2));
        assert_eq!(l.members_victim_first(), vec![FrameId(1), FrameId(0)]);
        assert!(l.check().is_ok() && f.check().is_ok());
    }
}
