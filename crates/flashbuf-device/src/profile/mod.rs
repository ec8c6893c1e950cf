//! A uFLIP-style device profiler (Bouganim, Jónsson and Bonnet, "uFLIP: Understanding Flash
//! IO Patterns", CIDR 2009) that measures any [`Device`]: a simulated one on its virtual
//! clock, or a real file (ideally opened with `O_DIRECT`) on the wall clock.
//!
//! [`run_profile`] runs the micro-benchmarks on a test area of the device, ignoring each
//! benchmark's start-up I/Os, and condenses them into a [`DeviceProfile`]: the mean latency
//! of one I/O of `granularity_bytes` for sequential, partitioned, focused and random
//! writes, sequential and random reads, θ_min, the largest focused area that stays fast,
//! and the read/write asymmetry R. StableBuffer and FD-Buffer load it
//! ([`DeviceProfile::load`]).
//!
//! Benchmarks, in the order they run (each followed by an unmeasured `sync`):
//! 1. *prefill* (if [`ProfileOptions::prefill`]): the area is written sequentially in
//!    1 MiB requests, so reads hit written data and the FTL starts from a known state;
//! 2. *read-seq*, *read-random*: reads of `granularity_bytes`;
//! 3. *write-seq*: consecutive writes;
//! 4. *write-partitioned*: `partitions` sequential runs in distinct, equal parts of the
//!    area, written round-robin (uFLIP's partitioning);
//! 5. *write-focused-SIZE*: random aligned writes within an area of each size of
//!    [`ProfileOptions::focused_areas`] (uFLIP's locality), after writing over the area
//!    twice, measuring at least one area's worth of I/Os;
//! 6. *write-random*: random aligned writes over the whole area, after a warm-up of
//!    [`ProfileOptions::random_warmup_bytes`] (the start-up phase of garbage collection),
//!    measuring at least [`ProfileOptions::random_write_ios`] I/Os;
//! 7. *granularity*: sequential and random writes of every size in
//!    [`ProfileOptions::granularities`];
//! 8. *alignment*: random writes shifted by half an I/O from the alignment grid (skipped
//!    when the device demands alignment);
//! 9. *order*: reverse sequential and strided (every other slot) writes;
//! 10. *mix*: random reads and random writes alternating.
//!
//! Derived figures:
//! - `focused_area_bytes`: the largest focused area whose mean write latency is at most
//!   [`ProfileOptions::focused_factor`] × `write_seq_us` (0 if none is), and
//!   `write_focused_us` the latency there (at the smallest area if none is fast);
//! - `theta_min_bytes`: the smallest write size at which sequential writing reaches 90% of
//!   the best bandwidth of the granularity sweep — the unit below which flushing wastes
//!   the device's parallelism (StableBuffer §3 reads θ_min off uFLIP's granularity curve);
//! - `asymmetry_r = write_random_us / read_random_us` (FD-Buffer's R: the ratio of random
//!   read to random write throughput).

mod bench;
mod report;

pub use report::{BenchResult, DeviceProfile};

use crate::{Device, DeviceError};
use serde::{Deserialize, Serialize};

/// What [`run_profile`] measures and how long.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileOptions {
    /// Name to report (default: the device's `describe()`).
    pub device_name: Option<String>,
    /// The database page size the profile is for.
    pub page_size: u64,
    /// Size of every I/O of the headline figures (default: `page_size`).
    pub granularity_bytes: Option<u64>,
    /// Bytes of the device to use, from offset 0 (default: all of it).
    pub area_bytes: Option<u64>,
    /// Measured I/Os per benchmark.
    pub io_count: u32,
    /// Start-up I/Os run and ignored before each benchmark's measured ones.
    pub warmup_ios: u32,
    /// Random writes (in bytes) run and ignored before the random-write benchmark
    /// (default: the area's size once over; 0 to skip).
    pub random_warmup_bytes: Option<u64>,
    /// Measured I/Os of the random-write benchmark if more than `io_count`: its window
    /// must span several garbage-collection cycles of page-mapped devices.
    pub random_write_ios: u32,
    /// Partitions of the partitioned-write benchmark.
    pub partitions: u32,
    /// Areas of the focused-write benchmark (those larger than the area are skipped).
    pub focused_areas: Vec<u64>,
    /// An area is "fast" while its focused writes cost at most this many sequential ones.
    pub focused_factor: f64,
    /// I/O sizes of the granularity sweep (θ_min).
    pub granularities: Vec<u64>,
    /// Write the area sequentially before measuring.
    pub prefill: bool,
    /// Run the secondary benchmarks too (granularity sweep, alignment, order, mix). Without
    /// them `theta_min_bytes` is the granularity.
    pub sweep: bool,
    /// Seed of the random offsets.
    pub seed: u64,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        Self {
            device_name: None,
            page_size: 4096,
            granularity_bytes: None,
            area_bytes: None,
            io_count: 1024,
            warmup_ios: 128,
            random_warmup_bytes: None,
            random_write_ios: 4096,
            partitions: 4,
            focused_areas: vec![1 << 20, 4 << 20, 16 << 20, 64 << 20],
            focused_factor: 2.5,
            granularities: vec![4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10],
            prefill: true,
            sweep: true,
            seed: 1,
        }
    }
}

impl ProfileOptions {
    /// Small and quick: for tests and first looks at real devices (16 MiB area, 32
    /// measured I/Os, no random warm-up).
    pub fn quick() -> Self {
        Self {
            area_bytes: Some(16 << 20),
            io_count: 32,
            warmup_ios: 8,
            random_warmup_bytes: Some(0),
            random_write_ios: 0,
            focused_areas: vec![1 << 20, 4 << 20],
            granularities: vec![4 << 10, 16 << 10, 64 << 10],
            ..Self::default()
        }
    }
}

/// Runs the micro-benchmarks of the [module docs](self) on `dev` and returns its profile.
/// It writes the test area: never run it on a device holding data you need.
///
/// Latencies come from the device's own clock (`stats().device_time_us` deltas: virtual
/// time on simulated devices, the measured time of each call on files) when it has one,
/// else from the wall clock.
///
/// ```
/// use flashbuf_device::{run_profile, ProfileOptions, SimDevice};
/// let dev = SimDevice::by_name("nipu-ssd", 32 << 20, 1)?;
/// let p = run_profile(&dev, &ProfileOptions::quick())?;
/// assert!(p.write_random_us > 10.0 * p.write_seq_us);
/// println!("{}", p.to_table());
/// # Ok::<(), flashbuf_device::DeviceError>(())
/// ```
pub fn run_profile(dev: &dyn Device, opts: &ProfileOptions) -> Result<DeviceProfile, DeviceError> {
    bench::run(dev, opts)
}
