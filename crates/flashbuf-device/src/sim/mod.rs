//! Simulated storage devices on a deterministic virtual clock.
//!
//! - [`nand`]: the NAND array (geometry, latencies, stamps, wear).
//! - [`ftl`]: flash translation layers behind the [`Ftl`] trait: page-mapped with greedy
//!   GC, BAST, FAST.
//! - [`SimDevice`]: a [`Device`](crate::Device) over a NAND array and an FTL (or a disk
//!   model), keeping the bytes in a flat logical image and timing every request by the
//!   flash (or mechanical) operations it causes.
//! - [`queue`]: queue depth above one: submission streams with their own clocks sharing
//!   the channels, and `qd=N` batches.
//! - [`steady`]: how a device starts (fresh, sequentially filled, or at steady state, the
//!   default of `sim:` devices) and the cache of preconditioned states.
//! - [`options`]: the typed options of the profiles (flash and disk schemas).
//! - [`profiles`]: the named devices of the papers (`mtron`, `sd-card`, `usb-stick`,
//!   `flash-25`, `nipu-ssd`, `nvme`, `hdd`), calibrated to their published figures.

pub mod ftl;
pub mod nand;
pub mod options;
pub mod profiles;

mod background;
mod device;
mod flash;
mod hdd;
pub mod queue;
pub mod steady;

pub use device::{SimDevice, SimInfo};
pub use ftl::{
    build_ftl, ftl_names, BastFtl, FastFtl, Ftl, FtlConfig, FtlCore, FtlEntry, FtlKind, FtlStats,
    PageMapFtl, FTLS,
};
pub use nand::{Nand, NandCounters, NandGeometry, NandTiming, OpCost, Stamp, WearSummary};
pub use options::{FLASH_OPTIONS, HDD_OPTIONS};
pub use profiles::{sim_profile_names, DeviceModel, FlashModel, HddModel, SimProfile};
pub use queue::{QueueInfo, StreamId, MAX_QUEUE_DEPTH};
pub use steady::{Precondition, SteadyReport};

pub(crate) use flashbuf_core::rng::SplitMix64;
