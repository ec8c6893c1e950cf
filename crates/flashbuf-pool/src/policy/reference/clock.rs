//! Naive CLOCK and naive clock sweep (PostgreSQL).

use crate::policy::{Access, Policy, Victim};
use flashbuf_core::{FrameId, PageId};
use std::collections::VecDeque;

/// CLOCK by a queue of `(frame, reference bit)`: the front is under the hand, a new page
/// goes to the back; advancing the hand rotates the front to the back.
#[derive(Debug, Clone)]
pub struct NaiveClock {
    frames_count: usize,
    init_ref: bool,
    ring: VecDeque<(FrameId, bool)>,
}

impl NaiveClock {
    /// A naive CLOCK for `frames_count` frames; `init_ref` sets a new page's bit.
    pub fn new(frames_count: usize, init_ref: bool) -> Self {
        Self {
            frames_count,
            init_ref,
            ring: VecDeque::new(),
        }
    }
}

impl Policy for NaiveClock {
    fn name(&self) -> &'static str {
        "naive-clock"
    }
    fn frames_count(&self) -> usize {
        self.frames_count
    }
    fn on_insert(&mut self, frame: FrameId, _pid: PageId, _access: Access) {
        self.ring.push_back((frame, self.init_ref));
    }
    fn on_hit(&mut self, frame: FrameId, _access: Access) {
        for e in self.ring.iter_mut().filter(|e| e.0 == frame) {
            e.1 = true;
        }
    }
    fn on_clean(&mut self, _frame: FrameId) {}
    fn on_remove(&mut self, frame: FrameId) {
        self.ring.retain(|e| e.0 != frame);
    }
    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        // Nothing evictable: the hand makes one full turn (bits untouched, back where it
        // started) and gives up.
        if !self.ring.iter().any(|e| evictable(e.0)) {
            return None;
        }
        loop {
            let (f, r) = self.ring[0];
            if evictable(f) && !r {
                return Some(Victim::Evict(f));
            }
            if evictable(f) {
                self.ring[0].1 = false;
            }
            self.ring.rotate_left(1);
        }
    }
    fn bytes_per_frame(&self) -> usize {
        std::mem::size_of::<(FrameId, bool)>()
    }
}

/// PostgreSQL's clock sweep by a plain array of usage counts indexed by frame (`None` =
/// not resident) and a hand index.
#[derive(Debug, Clone)]
pub struct NaiveClockSweep {
    usage: Vec<Option<u8>>,
    hand: usize,
    max_usage: u8,
}

impl NaiveClockSweep {
    /// A naive clock sweep for `frames_count` frames, usage counts capped at `max_usage`.
    pub fn new(frames_count: usize, max_usage: u8) -> Self {
        Self {
            usage: vec![None; frames_count],
            hand: 0,
            max_usage,
        }
    }
}

impl Policy for NaiveClockSweep {
    fn name(&self) -> &'static str {
        "naive-clock-sweep"
    }
    fn frames_count(&self) -> usize {
        self.usage.len()
    }
    fn on_insert(&mut self, frame: FrameId, _pid: PageId, _access: Access) {
        self.usage[frame.index()] = Some(1);
    }
    fn on_hit(&mut self, frame: FrameId, _access: Access) {
        if let Some(u) = &mut self.usage[frame.index()] {
            *u = (*u + 1).min(self.max_usage);
        }
    }
    fn on_clean(&mut self, _frame: FrameId) {}
    fn on_remove(&mut self, frame: FrameId) {
        self.usage[frame.index()] = None;
    }
    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let n = self.usage.len();
        let candidates =
            |u: &[Option<u8>]| (0..n).any(|i| u[i].is_some() && evictable(FrameId(i as u32)));
        if !candidates(&self.usage) {
            // The hand makes one full turn without a decrement and gives up.
            return None;
        }
        loop {
            let i = self.hand;
            self.hand = (self.hand + 1) % n;
            let f = FrameId(i as u32);
            match self.usage[i] {
                Some(0) if evictable(f) => return Some(Victim::Evict(f)),
                Some(u) if evictable(f) => self.usage[i] = Some(u - 1),
                _ => {}
            }
        }
    }
    fn bytes_per_frame(&self) -> usize {
        std::mem::size_of::<Option<u8>>()
    }
}
