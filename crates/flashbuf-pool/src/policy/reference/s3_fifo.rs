//! Naive S3-FIFO (Yang et al., SOSP 2023), with the readings of `crate::policy::s3_fifo`.

use crate::policy::s3_fifo::S3FifoConfig;
use crate::policy::{Access, Policy, Victim};
use flashbuf_core::{FrameId, PageId};
use std::collections::VecDeque;

/// S3-FIFO by queues, oldest at the front: `small` and `main` of frames, `ghost` of pages,
/// and plain per-frame arrays for the frequency and the page; every operation scans.
#[derive(Debug, Clone)]
pub struct NaiveS3Fifo {
    cfg: S3FifoConfig,
    small_target: usize,
    ghost_capacity: usize,
    small: VecDeque<FrameId>,
    main: VecDeque<FrameId>,
    ghost: VecDeque<u64>,
    freq: Vec<u8>,
    page: Vec<u64>,
    has_evicted: bool,
    chosen: Option<FrameId>,
    to_ghost: Option<u64>,
}

impl NaiveS3Fifo {
    /// A naive S3-FIFO for `frames_count` frames.
    pub fn new(frames_count: usize, cfg: S3FifoConfig) -> Self {
        let (small_target, ghost_capacity) = cfg.sizes(frames_count);
        Self {
            cfg,
            small_target,
            ghost_capacity,
            small: VecDeque::new(),
            main: VecDeque::new(),
            ghost: VecDeque::new(),
            freq: vec![0; frames_count],
            page: vec![0; frames_count],
            has_evicted: false,
            chosen: None,
            to_ghost: None,
        }
    }

    fn evict_small(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let mut i = 0;
        while i < self.small.len() {
            let f = self.small[i];
            if !evictable(f) {
                i += 1;
            } else if self.freq[f.index()] < self.cfg.threshold {
                return Some(f);
            } else {
                self.small.remove(i);
                self.freq[f.index()] = 0;
                self.main.push_back(f);
            }
        }
        None
    }

    fn evict_main(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        if !self.main.iter().any(|&f| evictable(f)) {
            return None;
        }
        loop {
            let f = self.main[0];
            if evictable(f) && self.freq[f.index()] == 0 {
                return Some(f);
            }
            if evictable(f) {
                self.freq[f.index()] -= 1;
            }
            self.main.rotate_left(1);
        }
    }
}

impl Policy for NaiveS3Fifo {
    fn name(&self) -> &'static str {
        "naive-s3-fifo"
    }
    fn frames_count(&self) -> usize {
        self.freq.len()
    }
    fn on_insert(&mut self, frame: FrameId, pid: PageId, _access: Access) {
        self.chosen = None;
        let ghost_hit = self.ghost.contains(&pid.0);
        self.ghost.retain(|&g| g != pid.0);
        if let Some(y) = self.to_ghost.take() {
            self.ghost.push_back(y);
            while self.ghost.len() > self.ghost_capacity {
                self.ghost.pop_front();
            }
        }
        self.page[frame.index()] = pid.0;
        self.freq[frame.index()] = 0;
        let filling = self.cfg.fill_main && !self.has_evicted;
        if ghost_hit || (filling && self.small.len() >= self.small_target) {
            self.main.push_back(frame);
        } else {
            self.small.push_back(frame);
        }
    }
    fn on_hit(&mut self, frame: FrameId, _access: Access) {
        self.freq[frame.index()] = (self.freq[frame.index()] + 1).min(3);
    }
    fn on_clean(&mut self, _frame: FrameId) {}
    fn on_remove(&mut self, frame: FrameId) {
        let in_small = self.small.contains(&frame);
        self.small.retain(|&f| f != frame);
        self.main.retain(|&f| f != frame);
        if self.chosen == Some(frame) {
            self.chosen = None;
            if in_small {
                self.to_ghost = Some(self.page[frame.index()]);
            }
        }
    }
    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        self.has_evicted = true;
        let f = if !self.small.is_empty() && self.small.len() >= self.small_target {
            match self.evict_small(evictable) {
                Some(f) => Some(f),
                None => self.evict_main(evictable),
            }
        } else {
            match self.evict_main(evictable) {
                Some(f) => Some(f),
                None => match self.evict_small(evictable) {
                    Some(f) => Some(f),
                    None => self.evict_main(evictable),
                },
            }
        }?;
        self.chosen = Some(f);
        Some(Victim::Evict(f))
    }
    fn bytes_per_frame(&self) -> usize {
        std::mem::size_of::<(FrameId, u8, u64)>()
    }
}
