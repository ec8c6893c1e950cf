//! Naive LRU.

use crate::policy::{Access, Policy, Victim};
use flashbuf_core::{FrameId, PageId};

/// LRU by a vector in recency order (index 0 = least recent); every operation scans.
#[derive(Debug, Clone)]
pub struct NaiveLru {
    frames_count: usize,
    order: Vec<FrameId>,
}

impl NaiveLru {
    /// A naive LRU for `frames_count` frames.
    pub fn new(frames_count: usize) -> Self {
        Self {
            frames_count,
            order: Vec::new(),
        }
    }

    fn touch(&mut self, f: FrameId) {
        if let Some(i) = self.order.iter().position(|&x| x == f) {
            self.order.remove(i);
        }
        self.order.push(f);
    }
}

impl Policy for NaiveLru {
    fn name(&self) -> &'static str {
        "naive-lru"
    }
    fn frames_count(&self) -> usize {
        self.frames_count
    }
    fn on_insert(&mut self, frame: FrameId, _pid: PageId, _access: Access) {
        self.touch(frame);
    }
    fn on_hit(&mut self, frame: FrameId, _access: Access) {
        self.touch(frame);
    }
    fn on_clean(&mut self, _frame: FrameId) {}
    fn on_remove(&mut self, frame: FrameId) {
        self.order.retain(|&x| x != frame);
    }
    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        self.order
            .iter()
            .copied()
            .find(|&f| evictable(f))
            .map(Victim::Evict)
    }
    fn bytes_per_frame(&self) -> usize {
        std::mem::size_of::<FrameId>()
    }
}
