//! Naive CFLRU: one vector in recency order, the window found by position at each fault.

use crate::policy::cflru::{region_frames, CflruConfig};
use crate::policy::{Access, Policy, Victim};
use flashbuf_core::{ConfigError, FrameId, PageId};

/// CFLRU by scanning a recency vector (index 0 = least recent).
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::reference::NaiveCflru;
/// use flashbuf_pool::policy::{Access, CflruConfig, Policy, Victim};
/// let mut p = NaiveCflru::new(2, CflruConfig { window: 1.0 }).unwrap();
/// p.on_insert(FrameId(0), PageId(1), Access::Write);
/// p.on_insert(FrameId(1), PageId(2), Access::Read);
/// assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
/// ```
#[derive(Debug, Clone)]
pub struct NaiveCflru {
    frames_count: usize,
    window_frames: usize,
    order: Vec<FrameId>,
    dirty: Vec<bool>,
}

impl NaiveCflru {
    /// A naive CFLRU with the same options as [`crate::policy::Cflru::with_config`].
    pub fn new(frames_count: usize, cfg: CflruConfig) -> Result<Self, ConfigError> {
        Ok(Self {
            frames_count,
            window_frames: region_frames(frames_count, cfg.window, "cflru")?,
            order: Vec::new(),
            dirty: vec![false; frames_count],
        })
    }

    fn touch(&mut self, f: FrameId) {
        self.order.retain(|&x| x != f);
        self.order.push(f);
    }
}

impl Policy for NaiveCflru {
    fn name(&self) -> &'static str {
        "naive-cflru"
    }
    fn frames_count(&self) -> usize {
        self.frames_count
    }
    fn on_insert(&mut self, frame: FrameId, _pid: PageId, access: Access) {
        self.dirty[frame.index()] = access.is_write();
        self.touch(frame);
    }
    fn on_hit(&mut self, frame: FrameId, access: Access) {
        if access.is_write() {
            self.dirty[frame.index()] = true;
        }
        self.touch(frame);
    }
    fn on_clean(&mut self, frame: FrameId) {
        self.dirty[frame.index()] = false;
    }
    fn on_remove(&mut self, frame: FrameId) {
        self.order.retain(|&x| x != frame);
        self.dirty[frame.index()] = false;
    }
    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let window = self.window_frames.min(self.order.len());
        // The least recently used clean page inside the window...
        for &f in &self.order[..window] {
            if !self.dirty[f.index()] && evictable(f) {
                return Some(Victim::Evict(f));
            }
        }
        // ...else the least recently used page.
        self.order
            .iter()
            .copied()
            .find(|&f| evictable(f))
            .map(Victim::Evict)
    }
    fn bytes_per_frame(&self) -> usize {
        5
    }
}
