//! Naive ARC: Fig. 4 of Megiddo & Modha (FAST 2003) with vectors, in the call order
//! `crate::policy::arc` documents (`p` adapted in `prepare_miss`, `REPLACE(x, p)` in
//! `choose_victim`).

use crate::policy::{Access, Policy, Victim};
use flashbuf_core::{FrameId, PageId};

/// ARC by vectors in LRU order (index 0 = least recent): `t1`, `t2` of `(frame, page)`,
/// ghosts `b1`, `b2` of pages; every operation scans.
#[derive(Debug, Clone)]
pub struct NaiveArc {
    c: usize,
    t1: Vec<(FrameId, u64)>,
    t2: Vec<(FrameId, u64)>,
    b1: Vec<u64>,
    b2: Vec<u64>,
    p: f64,
    chosen: Option<FrameId>,
    /// The chosen page once removed: its identifier and whether it left `t1`.
    evicted: Option<(u64, bool)>,
    /// The announced miss: page, and whether it was in `b2`; `p` adapted for it.
    pending: Option<(u64, bool)>,
}

impl NaiveArc {
    /// A naive ARC for `frames_count` frames.
    pub fn new(frames_count: usize) -> Self {
        Self {
            c: frames_count,
            t1: Vec::new(),
            t2: Vec::new(),
            b1: Vec::new(),
            b2: Vec::new(),
            p: 0.0,
            chosen: None,
            evicted: None,
            pending: None,
        }
    }

    fn take(list: &mut Vec<(FrameId, u64)>, frame: FrameId) -> Option<(FrameId, u64)> {
        let i = list.iter().position(|e| e.0 == frame)?;
        Some(list.remove(i))
    }

    /// Cases II and III: `p` moves for a miss on `page` if it is a ghost.
    fn adapt(&mut self, page: u64) {
        let (b1, b2) = (self.b1.len() as f64, self.b2.len() as f64);
        if self.b1.contains(&page) {
            self.p = (self.p + if b1 >= b2 { 1.0 } else { b2 / b1 }).min(self.c as f64);
        } else if self.b2.contains(&page) {
            self.p = (self.p - if b2 >= b1 { 1.0 } else { b1 / b2 }).max(0.0);
        }
    }

    /// The victim's page goes to the ghost list after the list it left (unless `drop`).
    fn settle(&mut self, drop: bool) {
        match self.evicted.take() {
            Some((page, true)) if !drop => self.b1.push(page),
            Some((page, false)) if !drop => self.b2.push(page),
            _ => {}
        }
    }
}

impl Policy for NaiveArc {
    fn name(&self) -> &'static str {
        "naive-arc"
    }
    fn frames_count(&self) -> usize {
        self.c
    }
    fn prepare_miss(&mut self, pid: PageId, _access: Access) {
        self.adapt(pid.0);
        self.pending = Some((pid.0, self.b2.contains(&pid.0)));
    }
    fn on_insert(&mut self, frame: FrameId, pid: PageId, _access: Access) {
        self.chosen = None;
        if self.pending.take().map(|(p, _)| p) != Some(pid.0) {
            self.adapt(pid.0);
        }
        if let Some(i) = self.b1.iter().position(|&g| g == pid.0) {
            self.settle(false);
            self.b1.remove(i);
            self.t2.push((frame, pid.0));
        } else if let Some(i) = self.b2.iter().position(|&g| g == pid.0) {
            self.settle(false);
            self.b2.remove(i);
            self.t2.push((frame, pid.0));
        } else {
            // Sizes as they were before the victim left.
            let (mut t1, mut t2) = (self.t1.len(), self.t2.len());
            match self.evicted {
                Some((_, true)) => t1 += 1,
                Some((_, false)) => t2 += 1,
                None => {}
            }
            let mut drop = false;
            if t1 + self.b1.len() >= self.c {
                if t1 < self.c {
                    self.b1.remove(0);
                } else {
                    drop = true;
                }
            } else if t1 + t2 + self.b1.len() + self.b2.len() >= 2 * self.c {
                self.b2.remove(0);
            }
            self.settle(drop);
            self.t1.push((frame, pid.0));
        }
    }
    fn on_hit(&mut self, frame: FrameId, _access: Access) {
        if let Some(e) = Self::take(&mut self.t1, frame).or_else(|| Self::take(&mut self.t2, frame))
        {
            self.t2.push(e);
        }
    }
    fn on_clean(&mut self, _frame: FrameId) {}
    fn on_remove(&mut self, frame: FrameId) {
        let from_t1 = self.t1.iter().any(|e| e.0 == frame);
        let Some((_, page)) =
            Self::take(&mut self.t1, frame).or_else(|| Self::take(&mut self.t2, frame))
        else {
            return;
        };
        if self.chosen == Some(frame) {
            self.chosen = None;
            self.evicted = Some((page, from_t1));
        }
    }
    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let t1 = self.t1.len();
        let x_in_b2 = matches!(self.pending, Some((_, true)));
        let from_t1 =
            t1 >= 1 && (t1 >= self.c || t1 as f64 > self.p || (x_in_b2 && t1 as f64 == self.p));
        let first = |l: &Vec<(FrameId, u64)>| l.iter().map(|e| e.0).find(|&f| evictable(f));
        let f = if from_t1 {
            first(&self.t1).or_else(|| first(&self.t2))
        } else {
            first(&self.t2).or_else(|| first(&self.t1))
        }?;
        self.chosen = Some(f);
        Some(Victim::Evict(f))
    }
    fn bytes_per_frame(&self) -> usize {
        2 * std::mem::size_of::<(FrameId, u64)>()
    }
}
