//! Simulated storage devices on a deterministic virtual clock.
//!
//! - [`nand`]: the NAND array (geometry, latencies, stamps, wear).
//! - [`ftl`]: flash translation layers behind the [`Ftl`] trait: page-mapped with greedy
//!   GC, BAST, FAST.
//! - [`SimDevice`]: a [`Device`](crate::Device) over a NAND array and an FTL (or a disk
//!   model), keeping the bytes in a flat logical image and timing every request by the
//!   flash (or mechanical) operations it causes.
//! - [`profiles`]: the named devices of the papers (`mtron`, `sd-card`, `usb-stick`,
//!   `flash-25`, `nipu-ssd`, `nvme`, `hdd`), calibrated to their published figures.

pub mod ftl;
pub mod nand;
pub mod profiles;

mod device;
mod hdd;

pub use device::{SimDevice, SimInfo};
pub use ftl::{build_ftl, BastFtl, FastFtl, Ftl, FtlKind, FtlStats, PageMapFtl};
pub use nand::{Nand, NandCounters, NandGeometry, NandTiming, OpCost, Stamp, WearSummary};
pub use profiles::{sim_profile_names, DeviceModel, FlashModel, HddModel, SimProfile};

/// A tiny deterministic generator (SplitMix64, Steele et al. 2014) for seeded choices.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}
