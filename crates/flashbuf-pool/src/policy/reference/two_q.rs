//! Naive 2Q (full version, Johnson & Shasha, VLDB 1994), `reclaimfor` with vectors.

use crate::policy::two_q::two_q_limits;
use crate::policy::{Access, Policy, Victim};
use flashbuf_core::{FrameId, PageId};

/// 2Q by vectors, oldest first: `a1in` and `am` of `(frame, page)`, `a1out` of pages;
/// every operation scans.
#[derive(Debug, Clone)]
pub struct NaiveTwoQ {
    frames_count: usize,
    kin: usize,
    kout: usize,
    a1in: Vec<(FrameId, u64)>,
    am: Vec<(FrameId, u64)>,
    a1out: Vec<u64>,
    chosen: Option<FrameId>,
    /// The chosen page once removed, if it left `a1in`.
    to_a1out: Option<u64>,
}

impl NaiveTwoQ {
    /// A naive 2Q for `frames_count` frames, `Kin`, `Kout` as in `TwoQ::new`.
    pub fn new(frames_count: usize, kin: f64, kout: f64) -> Self {
        let (kin, kout) = two_q_limits(frames_count, kin, kout);
        Self {
            frames_count,
            kin,
            kout,
            a1in: Vec::new(),
            am: Vec::new(),
            a1out: Vec::new(),
            chosen: None,
            to_a1out: None,
        }
    }
}

impl Policy for NaiveTwoQ {
    fn name(&self) -> &'static str {
        "naive-2q"
    }
    fn frames_count(&self) -> usize {
        self.frames_count
    }
    fn on_insert(&mut self, frame: FrameId, pid: PageId, _access: Access) {
        self.chosen = None;
        // "if X is in A1out" is read before reclaimfor(X) updates A1out.
        let was_ghost = self.a1out.contains(&pid.0);
        if let Some(y) = self.to_a1out.take() {
            self.a1out.push(y);
            if self.a1out.len() > self.kout {
                self.a1out.remove(0);
            }
        }
        if was_ghost {
            self.a1out.retain(|&g| g != pid.0);
            self.am.push((frame, pid.0));
        } else {
            self.a1in.push((frame, pid.0));
        }
    }
    fn on_hit(&mut self, frame: FrameId, _access: Access) {
        if let Some(i) = self.am.iter().position(|e| e.0 == frame) {
            let e = self.am.remove(i);
            self.am.push(e);
        }
    }
    fn on_clean(&mut self, _frame: FrameId) {}
    fn on_remove(&mut self, frame: FrameId) {
        let chosen = self.chosen == Some(frame);
        if let Some(i) = self.a1in.iter().position(|e| e.0 == frame) {
            let (_, page) = self.a1in.remove(i);
            if chosen {
                self.to_a1out = Some(page);
            }
        }
        self.am.retain(|e| e.0 != frame);
        if chosen {
            self.chosen = None;
        }
    }
    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let first = |l: &Vec<(FrameId, u64)>| l.iter().map(|e| e.0).find(|&f| evictable(f));
        let f = if self.a1in.len() > self.kin {
            first(&self.a1in).or_else(|| first(&self.am))
        } else {
            first(&self.am).or_else(|| first(&self.a1in))
        }?;
        self.chosen = Some(f);
        Some(Victim::Evict(f))
    }
    fn bytes_per_frame(&self) -> usize {
        std::mem::size_of::<(FrameId, u64)>()
    }
}
