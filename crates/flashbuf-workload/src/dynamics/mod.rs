//! Workload and asymmetry dynamics of the FD-Buffer paper (On et al., IEEE TC 2014, §5.1)
//! and CFDC's update-intensity sweep (§4.4), as run options of the lab.
//!
//! - [`models`]: the models as printed (WM1/WM2 write ratio per epoch, RM1/RM2 asymmetry
//!   per epoch) and [`models::apply_workload_model`], the reference transform of a whole
//!   trace in memory.
//! - [`transform`]: the same transform streamed epoch by epoch (the lab's trace feed runs
//!   it), `ratio=X`, and the run's [`transform::Dynamics`].
//! - [`asymmetry`]: [`asymmetry::AsymmetryDevice`], the device wrapper that stretches
//!   latencies per epoch so that `R` follows RM1/RM2, and [`asymmetry::epoch_costs`], the
//!   device's costs per epoch that the replay sends to the policy through the pool
//!   (`BufferPool::update_costs`).

pub mod asymmetry;
pub mod models;
pub mod transform;

pub use asymmetry::{asymmetry_name, epoch_costs, parse_asymmetry, AsymmetryDevice, EpochClock};
pub use models::{apply_workload_model, AsymmetryModel, WorkloadModel, EPOCH_REFS};
pub use transform::{parse_ratio, Dynamics, EpochTransformer, WorkloadTransform, W0};
