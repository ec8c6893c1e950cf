//! Naive CASA: one recency vector and dirty flags; the lists are filtered out of it.

use crate::policy::casa::{check_costs, normalized_costs, CasaConfig};
use crate::policy::{Access, Policy, Victim};
use flashbuf_core::{ConfigError, DeviceFacts, FrameId, PageId};

/// CASA by scanning a recency vector (index 0 = least recent).
///
/// ```
/// use flashbuf_core::{FrameId, PageId};
/// use flashbuf_pool::policy::reference::NaiveCasa;
/// use flashbuf_pool::policy::{Access, CasaConfig, Policy, Victim};
/// let mut p = NaiveCasa::new(2, CasaConfig::default()).unwrap(); // τ = 1
/// p.on_insert(FrameId(0), PageId(1), Access::Write);
/// p.on_insert(FrameId(1), PageId(2), Access::Read);
/// assert_eq!(p.choose_victim(&|_| true), Some(Victim::Evict(FrameId(1))));
/// ```
#[derive(Debug, Clone)]
pub struct NaiveCasa {
    frames_count: usize,
    order: Vec<FrameId>,
    dirty: Vec<bool>,
    tau: f64,
    cr: f64,
    cw: f64,
}

impl NaiveCasa {
    /// A naive CASA with static costs (online learning is not modelled; cost updates
    /// are, as in [`crate::policy::Casa`]).
    pub fn new(frames_count: usize, cfg: CasaConfig) -> Result<Self, ConfigError> {
        check_costs(cfg.read_cost, cfg.write_cost)?;
        let (cr, cw) = normalized_costs(cfg.read_cost, cfg.write_cost);
        Ok(Self {
            frames_count,
            order: Vec::new(),
            dirty: vec![false; frames_count],
            tau: frames_count as f64 / 2.0,
            cr,
            cw,
        })
    }

    /// The target size of the clean list.
    pub fn target_clean(&self) -> f64 {
        self.tau
    }

    fn count(&self, dirty: bool) -> usize {
        self.order
            .iter()
            .filter(|f| self.dirty[f.index()] == dirty)
            .count()
    }

    fn first(&self, dirty: bool, evictable: &dyn Fn(FrameId) -> bool) -> Option<FrameId> {
        self.order
            .iter()
            .copied()
            .find(|&f| self.dirty[f.index()] == dirty && evictable(f))
    }
}

impl Policy for NaiveCasa {
    fn name(&self) -> &'static str {
        "naive-casa"
    }
    fn frames_count(&self) -> usize {
        self.frames_count
    }
    fn on_insert(&mut self, frame: FrameId, _pid: PageId, access: Access) {
        self.dirty[frame.index()] = access.is_write();
        self.order.push(frame);
    }
    fn on_hit(&mut self, frame: FrameId, access: Access) {
        let c = self.count(false) as f64;
        let d = self.count(true) as f64;
        let was_dirty = self.dirty[frame.index()];
        if !was_dirty && !access.is_write() {
            self.tau = (self.tau + self.cr * d / c).min(self.frames_count as f64);
        }
        if was_dirty && access.is_write() {
            self.tau = (self.tau - self.cw * c / d).max(0.0);
        }
        if access.is_write() {
            self.dirty[frame.index()] = true;
        }
        self.order.retain(|&x| x != frame);
        self.order.push(frame);
    }
    fn on_clean(&mut self, frame: FrameId) {
        self.dirty[frame.index()] = false;
    }
    fn on_remove(&mut self, frame: FrameId) {
        self.order.retain(|&x| x != frame);
        self.dirty[frame.index()] = false;
    }
    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        let c = self.count(false);
        let from_clean = c > 0 && c as f64 >= self.tau;
        let v = if from_clean {
            self.first(false, evictable)
                .or_else(|| self.first(true, evictable))
        } else {
            self.first(true, evictable)
                .or_else(|| self.first(false, evictable))
        };
        v.map(Victim::Evict)
    }
    fn update_costs(&mut self, costs: &DeviceFacts) {
        if check_costs(costs.read_us, costs.write_us).is_ok() {
            (self.cr, self.cw) = normalized_costs(costs.read_us, costs.write_us);
        }
    }

    fn bytes_per_frame(&self) -> usize {
        5
    }
}
