//! A naive reference FD-Buffer for differential tests: vectors in recency order, stack
//! distances found by linear search, clusters recomputed from scratch at every choice.
//! It must make exactly the decisions of [`super::FdBuffer`] (LRU in both pools, fixed
//! windows, fixed `R`); only the pure cost functions of [`super::cost`] are shared.

use super::cost::Curves;
use super::two_stack::HitCounters;
use super::{Asymmetry, ClusterVictim, Clustering, FdBufferOptions, OrderKind, Window};
use crate::policy::{Access, Policy, Victim};
use flashbuf_core::{ConfigError, DeviceFacts, FrameId, PageId};
use std::collections::HashMap;

/// The reference FD-Buffer. Supports fixed windows, a fixed `R` (and cost updates of it),
/// LRU pools, present conditions on/off, any group size and both clustering modes.
#[derive(Debug)]
pub struct NaiveFdBuffer {
    m: usize,
    window: u64,
    r: f64,
    clustering: Clustering,
    cluster_victim: ClusterVictim,
    /// Least recently used first.
    clean: Vec<FrameId>,
    dirty: Vec<FrameId>,
    page: Vec<Option<u64>>,
    dirty_bit: Vec<bool>,
    entered: Vec<u64>,
    cluster_ts: HashMap<u64, u64>,
    globaltime: u64,
    draining: Option<u64>,
    stacks: NaiveTwoStack,
    refs: u64,
    m_c: usize,
    batch: Vec<FrameId>,
    /// The access of the miss being served (`prepare_miss`), until the next reference.
    next_access: Option<Access>,
}

impl NaiveFdBuffer {
    /// A reference FD-Buffer; rejects options it does not model (online `R`, cost-bound
    /// windows, non-LRU pools).
    pub fn new(frames_count: usize, opts: &FdBufferOptions) -> Result<Self, ConfigError> {
        opts.validate(frames_count)?;
        let refuse = |what: &str| Err(ConfigError::invalid("naive fd-buffer", what));
        let Window::Refs(window) = opts.window else {
            return refuse("fixed windows only");
        };
        let Asymmetry::Fixed(r) = opts.asymmetry else {
            return refuse("fixed R only");
        };
        if opts.inner != OrderKind::Lru {
            return refuse("LRU pools only");
        }
        Ok(Self {
            m: frames_count,
            window,
            r,
            clustering: opts.clustering,
            cluster_victim: opts.cluster_victim,
            clean: Vec::new(),
            dirty: Vec::new(),
            page: vec![None; frames_count],
            dirty_bit: vec![false; frames_count],
            entered: vec![0; frames_count],
            cluster_ts: HashMap::new(),
            globaltime: 0,
            draining: None,
            stacks: NaiveTwoStack::new(frames_count, opts.group_size, opts.present_conditions),
            refs: 0,
            m_c: super::initial_m_c(frames_count, opts.initial_clean_ratio),
            batch: Vec::new(),
            next_access: None,
        })
    }

    /// Whether the reference models `opts` (fixed windows, fixed `R`, LRU pools, Eq. (3)).
    pub fn models(opts: &FdBufferOptions) -> bool {
        matches!(opts.window, Window::Refs(_))
            && matches!(opts.asymmetry, Asymmetry::Fixed(_))
            && opts.inner == OrderKind::Lru
            && opts.clustered_cost.is_none()
            && !opts.io_count
            && !opts.paid_moves
    }

    /// Current `M_c`.
    pub fn m_c(&self) -> usize {
        self.m_c
    }

    fn r(&self) -> f64 {
        self.r
    }

    fn cluster_of(&self, f: FrameId) -> u64 {
        let n = self.clustering.cluster_pages().unwrap_or(1);
        self.page[f.index()].unwrap_or(0) / n
    }

    fn join_dirty(&mut self, f: FrameId) {
        self.dirty.push(f);
        self.dirty_bit[f.index()] = true;
        if self.clustering.cluster_pages().is_some() {
            let no = self.cluster_of(f);
            let exists = self
                .dirty
                .iter()
                .any(|&g| g != f && self.cluster_of(g) == no);
            if !exists {
                self.cluster_ts.insert(no, self.globaltime);
            }
            self.entered[f.index()] = self.globaltime;
            self.globaltime += 1;
        }
    }

    fn reference(&mut self, p: u64, write: bool) {
        self.stacks.access(p, write);
        self.refs += 1;
        if self.refs >= self.window {
            let curves = Curves::new(&self.stacks.counters);
            self.m_c = curves.best_m_c(self.r()).0;
            self.stacks.counters.clear();
            self.refs = 0;
        }
    }

    fn cluster_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        let members = |no: u64, me: &Self| {
            let mut v: Vec<FrameId> = me
                .dirty
                .iter()
                .copied()
                .filter(|&f| me.cluster_of(f) == no)
                .collect();
            v.sort_by_key(|f| me.entered[f.index()]);
            v
        };
        if let Some(no) = self.draining {
            if let Some(f) = members(no, self).into_iter().find(|&f| evictable(f)) {
                return Some(f);
            }
        }
        if self.cluster_victim == ClusterVictim::OrderVictim {
            let v = self.dirty.iter().copied().find(|&f| evictable(f))?;
            self.draining = Some(self.cluster_of(v));
            return Some(v);
        }
        let mut nos: Vec<u64> = self.dirty.iter().map(|&f| self.cluster_of(f)).collect();
        nos.sort_unstable();
        nos.dedup();
        // (dividend, n, timestamp, no, first evictable)
        let mut best: Option<(u128, u128, u64, u64, FrameId)> = None;
        let g = self.globaltime;
        for no in nos {
            if Some(no) == self.draining {
                continue;
            }
            let mem = members(no, self);
            let Some(first) = mem.iter().copied().find(|&f| evictable(f)) else {
                continue;
            };
            let pages: Vec<u64> = mem
                .iter()
                .map(|f| self.page[f.index()].unwrap_or(0))
                .collect();
            let n = pages.len() as u128;
            let ipd: u64 = pages.windows(2).map(|w| w[0].abs_diff(w[1])).sum();
            let div = if n == 1 { 1 } else { ipd as u128 };
            let ts = self.cluster_ts.get(&no).copied().unwrap_or(0);
            let lower = match best {
                None => true,
                Some((bd, bn, bts, _, _)) => {
                    let lhs = div * bn * bn * (g - bts) as u128;
                    let rhs = bd * n * n * (g - ts) as u128;
                    lhs < rhs || (lhs == rhs && ts < bts)
                }
            };
            if lower {
                best = Some((div, n, ts, no, first));
            }
        }
        let (_, _, _, no, f) = best?;
        self.draining = Some(no);
        Some(f)
    }

    fn dirty_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<(FrameId, bool)> {
        if self.clustering.cluster_pages().is_none() {
            return self
                .dirty
                .iter()
                .copied()
                .find(|&f| evictable(f))
                .map(|f| (f, false));
        }
        let v = self.cluster_victim(evictable)?;
        if !matches!(self.clustering, Clustering::Batch { .. }) {
            return Some((v, false));
        }
        let no = self.cluster_of(v);
        let mut b: Vec<FrameId> = self
            .dirty
            .iter()
            .copied()
            .filter(|&f| {
                self.cluster_of(f) == no && self.dirty_bit[f.index()] && (f == v || evictable(f))
            })
            .collect();
        b.sort_by_key(|f| self.page[f.index()]);
        let single = b.is_empty() || (b.len() == 1 && b[0] == v);
        self.batch = b;
        Some((v, !single))
    }
}

impl Policy for NaiveFdBuffer {
    fn name(&self) -> &'static str {
        "naive-fd-buffer"
    }
    fn frames_count(&self) -> usize {
        self.m
    }
    fn on_insert(&mut self, frame: FrameId, pid: PageId, access: Access) {
        self.next_access = None;
        self.page[frame.index()] = Some(pid.0);
        if access.is_write() {
            self.join_dirty(frame);
        } else {
            self.clean.push(frame);
            self.dirty_bit[frame.index()] = false;
        }
        self.reference(pid.0, access.is_write());
    }
    fn on_hit(&mut self, frame: FrameId, access: Access) {
        self.next_access = None;
        if let Some(i) = self.clean.iter().position(|&f| f == frame) {
            self.clean.remove(i);
            if access.is_write() {
                self.join_dirty(frame);
            } else {
                self.clean.push(frame);
            }
        } else if let Some(i) = self.dirty.iter().position(|&f| f == frame) {
            self.dirty.remove(i);
            self.dirty.push(frame);
            if access.is_write() {
                self.dirty_bit[frame.index()] = true;
            }
        }
        let p = self.page[frame.index()].unwrap_or(0);
        self.reference(p, access.is_write());
    }
    fn on_clean(&mut self, frame: FrameId) {
        self.dirty_bit[frame.index()] = false;
    }
    fn on_remove(&mut self, frame: FrameId) {
        self.clean.retain(|&f| f != frame);
        if let Some(i) = self.dirty.iter().position(|&f| f == frame) {
            let no = self.cluster_of(frame);
            self.dirty.remove(i);
            if self.clustering.cluster_pages().is_some()
                && !self.dirty.iter().any(|&f| self.cluster_of(f) == no)
            {
                self.cluster_ts.remove(&no);
                if self.draining == Some(no) {
                    self.draining = None;
                }
            }
        }
        self.page[frame.index()] = None;
        self.dirty_bit[frame.index()] = false;
    }
    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let write = self.next_access == Some(Access::Write);
        let from_dirty = if write {
            self.clean.len() <= self.m_c
        } else {
            self.dirty.len() > self.m - self.m_c
        };
        let clean_victim = |me: &Self| me.clean.iter().copied().find(|&f| evictable(f));
        let pick = if from_dirty {
            match self.dirty_victim(evictable) {
                Some(p) => p,
                None => (clean_victim(self)?, false),
            }
        } else {
            match clean_victim(self) {
                Some(f) => (f, false),
                None => self.dirty_victim(evictable)?,
            }
        };
        Some(if pick.1 {
            Victim::Batch {
                evict: pick.0,
                write_back: &self.batch,
            }
        } else {
            Victim::Evict(pick.0)
        })
    }
    fn bytes_per_frame(&self) -> usize {
        64
    }
    fn prepare_miss(&mut self, _pid: PageId, access: Access) {
        self.next_access = Some(access);
    }
    fn update_costs(&mut self, costs: &DeviceFacts) {
        if let Some(r) = super::update_r(costs) {
            self.r = r;
        }
    }
}

/// A naive stack entry: `(page, θ)`.
pub type Entry = (u64, u32);

/// Two-Stack by linear search: `(page, θ)` vectors, top first, truncated at `M`.
#[derive(Debug, Clone)]
pub struct NaiveTwoStack {
    m: usize,
    z: usize,
    pr: bool,
    clru: Vec<(u64, u32)>,
    dlru: Vec<(u64, u32)>,
    counters: HitCounters,
}

impl NaiveTwoStack {
    /// Same parameters as [`super::two_stack::TwoStack::new`].
    pub fn new(m: usize, group_size: usize, present_conditions: bool) -> Self {
        Self {
            m,
            z: group_size,
            pr: present_conditions,
            clru: Vec::new(),
            dlru: Vec::new(),
            counters: HitCounters::new(m),
        }
    }

    /// The window's counters.
    pub fn counters(&self) -> &HitCounters {
        &self.counters
    }

    /// CLRU and DLRU entries, top first.
    pub fn stacks(&self) -> (&[Entry], &[Entry]) {
        (&self.clru, &self.dlru)
    }

    /// The group of 1-based position `pos` in a stack of `len` entries, as the range of
    /// positions `(lo, hi)` it covers.
    fn group_range(&self, pos: usize, len: usize) -> (u32, u32) {
        let k = (pos - 1) / self.z;
        ((k * self.z + 1) as u32, ((k + 1) * self.z).min(len) as u32)
    }

    /// `(index, lo, hi, θ)` of page `p`.
    fn find(&self, stack: &[Entry], p: u64) -> Option<(usize, u32, u32, u32)> {
        let i = stack.iter().position(|e| e.0 == p)?;
        let (lo, hi) = self.group_range(i + 1, stack.len());
        Some((i, lo, hi, stack[i].1))
    }

    fn to_top(stack: &mut Vec<(u64, u32)>, i: usize, theta: u32) {
        let e = stack.remove(i);
        stack.insert(0, (e.0, theta));
    }

    fn push(&mut self, c: bool, p: u64, theta: u32) {
        let m = self.m;
        let s = if c { &mut self.clru } else { &mut self.dlru };
        s.insert(0, (p, theta));
        s.truncate(m);
    }

    /// Records one access (Algorithms 3 and 4). The distance used in present conditions
    /// is the group's middle position.
    pub fn access(&mut self, p: u64, write: bool) {
        let m = self.m as u32;
        let ec = self.find(&self.clru, p);
        let ed = self.find(&self.dlru, p);
        let k = &mut self.counters;
        if write {
            match ec {
                Some((i, lo, hi, t)) => {
                    k.c_write.add(lo, hi, t);
                    self.clru.remove(i);
                }
                None => k.c_write.add_miss(),
            }
            match ed {
                Some((i, lo, hi, t)) => {
                    k.d_write.add(lo, hi, t);
                    Self::to_top(&mut self.dlru, i, 0);
                }
                None => {
                    k.d_write.add_miss();
                    self.push(false, p, 0);
                }
            }
            return;
        }
        match (ec, ed) {
            (None, None) => {
                k.c_read.add_miss();
                k.d_read.add_miss();
                self.push(true, p, 0);
            }
            (Some((i, lo, hi, t)), None) => {
                k.c_read.add(lo, hi, t);
                k.d_read.add_miss();
                Self::to_top(&mut self.clru, i, 0);
            }
            (None, Some((i, lo, hi, t))) => {
                k.d_read.add(lo, hi, t);
                k.c_read.add_miss();
                let d = lo + (hi - lo) / 2;
                let (td, tc) = if self.pr {
                    (t.max(d), m - d + 1)
                } else {
                    (0, 0)
                };
                Self::to_top(&mut self.dlru, i, td);
                self.push(true, p, tc);
            }
            (Some((ic, loc, hic, tc)), Some((id, lod, hid, td))) => {
                k.c_read.add(loc, hic, tc);
                k.d_read.add(lod, hid, td);
                let d = lod + (hid - lod) / 2;
                let (tc2, td2) = if self.pr {
                    (tc.min(m - d + 1), td.max(d))
                } else {
                    (tc, td)
                };
                Self::to_top(&mut self.clru, ic, tc2);
                Self::to_top(&mut self.dlru, id, td2);
            }
        }
    }
}
