//! What the replay does at epoch boundaries (dynamics, [`crate::dynamics`]).

use flashbuf_core::DeviceFacts;
use flashbuf_workload::dynamics::{epoch_costs, AsymmetryModel, EpochClock};

/// The epoch state of a replay, and the trace writes it counts.
pub(super) struct EpochHooks {
    pub(super) epoch_refs: u64,
    /// Tells the asymmetry device the epoch.
    pub(super) clock: Option<EpochClock>,
    /// The device's costs without the asymmetry model, and the model: each epoch's costs
    /// go to the policy through the pool (`BufferPool::update_costs`).
    pub(super) costs: Option<(DeviceFacts, AsymmetryModel)>,
    pub(super) writes: u64,
}

impl EpochHooks {
    pub(super) fn active(&self) -> bool {
        self.clock.is_some() || self.costs.is_some()
    }

    /// Enters `epoch`: the device's clock is set; returns the epoch's device costs for the
    /// policy, if an asymmetry model changes them.
    pub(super) fn enter(&self, epoch: u64) -> Option<DeviceFacts> {
        if let Some(c) = &self.clock {
            c.set(epoch);
        }
        self.costs.map(|(base, m)| epoch_costs(m, &base, epoch))
    }
}
