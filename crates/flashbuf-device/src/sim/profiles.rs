//! Named simulated devices, each calibrated so that a uFLIP-style run
//! ([`run_profile`](crate::profile::run_profile)) on the simulator reproduces the figures
//! published for the real device (design.md §3).
//!
//! | profile | source | model |
//! |---|---|---|
//! | `mtron` | StableBuffer Table 1 / uFLIP (Mtron MSD-SATA3525, 2008) | BAST, 8 channels, 512 KB blocks |
//! | `sd-card` | FD-Buffer Table 1 (Kingston SDHC 8 GB, class 4) | BAST, 1 channel, 1 MB blocks |
//! | `usb-stick` | FD-Buffer Table 1 (Sandisk Cruzer 8 GB) | BAST, 1 channel, 2 MB blocks |
//! | `flash-25` | FD-Buffer §5 (Mtron MOBI3500, "Flash-25") | FAST, 4 channels |
//! | `nipu-ssd` | NIPU Table 1 (chip) and Table 2 (4 KB Iometer) | BAST, 4 channels, reference chip, write buffer |
//! | `nvme` | vendor data sheets (modern TLC NVMe) | page-mapped, greedy GC, 64 dies, write buffer |
//! | `hdd` | NIPU Table 2 / FD-Buffer §5 (7,200 rpm SATA) | seek + rotation, read-ahead, write cache |
//!
//! # Calibration (published vs measured)
//! Measured by `tests/sim_calibration.rs` with [`run_profile`](crate::profile::run_profile)
//! (default options, seed 1) on a device of the stated size; the test asserts each row
//! within 20%.
//!
//! | profile (capacity) | figure | published | measured | error |
//! |---|---|---|---|---|
//! | `mtron` (256 MB) | 32 KB sequential write | 0.4 ms | 0.41 ms | +3% |
//! | `mtron` | 32 KB random write | 9 ms | 8.4 ms | −7% |
//! | `mtron` | partitioned (4) / sequential | ≈ 1.5 | 1.46 | −3% |
//! | `mtron` | focused within 4 MB / sequential | ≈ 2, ≤ 2.5 | 2.38 | (≤ 2.5 asserted) |
//! | `mtron` | 32 KB random read | < 0.4 ms | 0.14 ms | (bound asserted) |
//! | `mtron` (64 MB) | θ_min | 32 KB | 32 KB | exact |
//! | `sd-card` (128 MB) | 8 KB random reads/s | 680.4 | 737.8 | +8% |
//! | `sd-card` | 8 KB random writes/s | 5.0 | 5.2 | +5% |
//! | `sd-card` | R | 136.2 | 140.7 | +3% |
//! | `usb-stick` (128 MB) | 8 KB random reads/s | 666.1 | 729.7 | +10% |
//! | `usb-stick` | 8 KB random writes/s | 1.4 | 1.5 | +7% |
//! | `usb-stick` | R | 475.7 | 485.3 | +2% |
//! | `flash-25` (128 MB) | R (8 KB random) | ≈ 25 | 22.9 | −8% (26.5 at 512 MB, 27.4 at 1 GB) |
//! | `nipu-ssd` (128 MB) | 4 KB sequential read | 94 µs | 93.6 µs | −0% |
//! | `nipu-ssd` | 4 KB sequential write | 75 µs | 83.4 µs | +11% |
//! | `nipu-ssd` | 4 KB random read | 106 µs | 93.6 µs | −12% |
//! | `nipu-ssd` | 4 KB random write | 8,143 µs | 7,796 µs | −4% |
//! | `nvme` (128 MB) | 4 KB random / sequential write | ≈ 3 | 3.1 | +2% |
//! | `hdd` (64 MB) | 4 KB random read | 13,146 µs | 12,505 µs | −5% |
//! | `hdd` | 4 KB random write | 6,738 µs | 6,887 µs | +2% |
//! | `hdd` | 4 KB sequential read | 127 µs | 127.3 µs | +0% |
//! | `hdd` | 4 KB sequential write | 183 µs | 183.1 µs | +0% |
//!
//! Options of the test: 256 measured I/Os after 64 start-up ones, no granularity sweep;
//! random writes measured after the area was written over once where the model has a
//! start-up phase (`flash-25`'s FAST log pool, `nvme`'s garbage collection; 4,096 measured
//! for `nvme`, 1,024 for `hdd`). Known limits: the hybrid FTL models give the same latency
//! to sequential and random reads (the NIPU SSD's random reads are 12% slower); FAST's and
//! the page-mapped FTL's random-write cost depends on the ratio of log pool (or spare
//! space) to capacity, so very small devices look faster than the real ones.
//!
//! Every parameter is a public field of [`SimProfile`]: the lab may override channels,
//! over-provisioning, the FTL and its log blocks, timings, ... through the typed options of
//! the profile's kind (`options.rs`: [`SimProfile::option_schema`],
//! [`SimProfile::apply_options`], [`SimProfile::set_option`]).

use super::ftl::{FtlConfig, FtlKind};
use super::nand::NandTiming;
use crate::DeviceError;
use flashbuf_core::config::{ConfigError, Options, Spec};
use serde::{Deserialize, Serialize};

/// The names [`SimProfile::by_name`] accepts.
pub fn sim_profile_names() -> &'static [&'static str] {
    &[
        "mtron",
        "sd-card",
        "usb-stick",
        "flash-25",
        "nipu-ssd",
        "nvme",
        "hdd",
    ]
}

/// A flash device: NAND array, FTL, controller and host interface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlashModel {
    /// The FTL and its options (an entry of [`FTLS`](super::ftl::FTLS)).
    pub ftl: FtlConfig,
    /// Flash page size in bytes (the mapping unit).
    pub page_bytes: u32,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// Channels (dies) working in parallel; a block's pages are interleaved over them.
    pub channels: u32,
    /// NAND latencies.
    pub timing: NandTiming,
    /// Spare blocks beyond what the FTL needs, as a fraction of the data blocks (the
    /// page-mapped FTL's over-provisioning; hybrid FTLs' log blocks come on top).
    pub over_provisioning: f64,
    /// Controller and command overhead per read request, µs.
    pub read_overhead_us: f64,
    /// Controller and command overhead per write request, µs.
    pub write_overhead_us: f64,
    /// Host interface transfer time, nanoseconds per byte.
    pub host_ns_per_byte: f64,
    /// Write-back buffer in pages (0 = write-through: a write returns when its flash
    /// operations are done; otherwise it returns once buffered, and waits only while the
    /// buffer holds this many pages not yet programmed).
    pub write_buffer_pages: u32,
}

/// A disk drive (see the `hdd` module docs for the model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HddModel {
    /// Spindle speed.
    pub rpm: f64,
    /// Track-to-track seek, ms.
    pub seek_min_ms: f64,
    /// Full-stroke seek, ms.
    pub seek_full_ms: f64,
    /// Media transfer, nanoseconds per byte.
    pub media_ns_per_byte: f64,
    /// Command overhead per read, µs.
    pub read_overhead_us: f64,
    /// Command overhead per write, µs.
    pub write_overhead_us: f64,
    /// Host interface transfer, nanoseconds per byte.
    pub host_ns_per_byte: f64,
    /// Read-ahead window after a media read, bytes.
    pub readahead_bytes: u64,
    /// Writes the write-back cache holds (0 = write-through).
    pub write_cache_entries: u32,
}

/// Flash or disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum DeviceModel {
    /// A flash device with an FTL.
    Flash(FlashModel),
    /// A disk drive.
    Hdd(HddModel),
}

/// A named, adjustable device model. Build a device with
/// [`SimDevice::new`](crate::sim::SimDevice::new).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimProfile {
    /// Profile name (`mtron`, ...).
    pub name: String,
    /// Where the calibration figures come from.
    pub source: String,
    /// The model and its parameters.
    pub model: DeviceModel,
}

impl SimProfile {
    /// The profile called `name` (one of [`sim_profile_names`]).
    ///
    /// ```
    /// use flashbuf_device::sim::SimProfile;
    /// assert!(SimProfile::by_name("mtron").is_ok());
    /// let e = SimProfile::by_name("floppy").unwrap_err().to_string();
    /// assert!(e.contains("sd-card"), "{e}");
    /// ```
    pub fn by_name(name: &str) -> Result<SimProfile, DeviceError> {
        let profile = match name {
            "mtron" => mtron(),
            "sd-card" => sd_card(),
            "usb-stick" => usb_stick(),
            "flash-25" => flash_25(),
            "nipu-ssd" => nipu_ssd(),
            "nvme" => nvme(),
            "hdd" => hdd(),
            _ => {
                return Err(DeviceError::Config(format!(
                    "unknown simulated device profile {name:?}; valid: {}",
                    sim_profile_names().join(", ")
                )))
            }
        };
        profile.map_err(|e| DeviceError::Config(format!("profile {name}: {e}")))
    }

    /// The flash page size (flash profiles) or 4 KB (disk): the profiler's default
    /// granularity.
    pub fn page_bytes(&self) -> u32 {
        match &self.model {
            DeviceModel::Flash(f) => f.page_bytes,
            DeviceModel::Hdd(_) => 4096,
        }
    }

    /// Overrides one parameter from a `key=value` option of a device name such as
    /// `sim:mtron:channels=4,op=0.1`, checked against [`SimProfile::option_schema`].
    /// Unknown keys are errors listing the valid ones.
    pub fn set_option(&mut self, key: &str, value: &str) -> Result<(), DeviceError> {
        let spec = Spec {
            name: format!("sim:{}", self.name),
            arg: None,
            opts: [(key.to_string(), value.to_string())].into(),
        };
        Options::validate(&spec, self.option_schema())
            .and_then(|o| self.apply_options(&o))
            .map_err(|e| DeviceError::Config(e.to_string()))
    }
}

/// Mtron MSD-SATA3525 (16 GB SATA SSD, 2008), from StableBuffer Table 1 and the uFLIP
/// figures it quotes: 32 KB writes sequential ≈ 0.4 ms, partitioned ≈ 1.5×, focused (random
/// within 4–16 MB) ≈ 2× sequential, random ≈ 9 ms; random reads < 0.4 ms; θ_min = 32 KB.
/// Model: BAST with 32 log blocks (a 16 MB focused area), 8 channels of SLC chips
/// (25/200 µs, 2 ms erase), 128-page (512 KB) blocks, write-through, a per-block context
/// switch cost that makes interleaved streams (partitioned writes) dearer than one stream.
fn mtron() -> Result<SimProfile, ConfigError> {
    Ok(SimProfile {
        name: "mtron".into(),
        source: "StableBuffer Table 1 / uFLIP (Mtron MSD-SATA3525)".into(),
        model: DeviceModel::Flash(FlashModel {
            ftl: FtlKind::Bast { log_blocks: 32 }.try_into()?,
            page_bytes: 4096,
            pages_per_block: 128,
            channels: 8,
            timing: NandTiming {
                read_us: 25.0,
                program_us: 200.0,
                erase_us: 2300.0,
                transfer_ns_per_byte: 2.5,
                block_switch_us: 200.0,
            },
            over_provisioning: 0.0,
            read_overhead_us: 30.0,
            write_overhead_us: 30.0,
            host_ns_per_byte: 3.33,
            write_buffer_pages: 0,
        }),
    })
}

/// Kingston SDHC 8 GB class 4, from FD-Buffer Table 1: 8 KB random reads 680.4/s, random
/// writes 5.0/s (R ≈ 136). Model: BAST with 4 log blocks, one channel, 256-page (1 MB)
/// blocks of MLC chips, SD bus at ≈ 12.5 MB/s: a random write costs a full merge.
fn sd_card() -> Result<SimProfile, ConfigError> {
    Ok(SimProfile {
        name: "sd-card".into(),
        source: "FD-Buffer Table 1 (Kingston SDHC 8 GB)".into(),
        model: DeviceModel::Flash(FlashModel {
            ftl: FtlKind::Bast { log_blocks: 4 }.try_into()?,
            page_bytes: 4096,
            pages_per_block: 256,
            channels: 1,
            timing: NandTiming {
                read_us: 50.0,
                program_us: 700.0,
                erase_us: 2000.0,
                transfer_ns_per_byte: 0.0,
                block_switch_us: 0.0,
            },
            over_provisioning: 0.0,
            read_overhead_us: 700.0,
            write_overhead_us: 700.0,
            host_ns_per_byte: 80.0,
            write_buffer_pages: 0,
        }),
    })
}

/// Sandisk Cruzer 8 GB USB stick, from FD-Buffer Table 1: 8 KB random reads 666.1/s,
/// random writes 1.4/s (R ≈ 475). Model: BAST with 4 log blocks, one channel,
/// 512-page (2 MB) blocks of MLC chips, USB 2.0 at ≈ 30 MB/s.
fn usb_stick() -> Result<SimProfile, ConfigError> {
    Ok(SimProfile {
        name: "usb-stick".into(),
        source: "FD-Buffer Table 1 (Sandisk Cruzer 8 GB)".into(),
        model: DeviceModel::Flash(FlashModel {
            ftl: FtlKind::Bast { log_blocks: 4 }.try_into()?,
            page_bytes: 4096,
            pages_per_block: 512,
            channels: 1,
            timing: NandTiming {
                read_us: 60.0,
                program_us: 1300.0,
                erase_us: 3000.0,
                transfer_ns_per_byte: 0.0,
                block_switch_us: 0.0,
            },
            over_provisioning: 0.0,
            read_overhead_us: 1100.0,
            write_overhead_us: 1100.0,
            host_ns_per_byte: 33.0,
            write_buffer_pages: 0,
        }),
    })
}

/// Mtron MOBI3500 16 GB SSD, called "Flash-25" in FD-Buffer §5 for its read/write
/// asymmetry R ≈ 25 (8 KB random). Model: FAST with a 4-block random log pool, 4
/// channels of the reference chip, 64-page blocks.
fn flash_25() -> Result<SimProfile, ConfigError> {
    Ok(SimProfile {
        name: "flash-25".into(),
        source: "FD-Buffer §5 (Mtron MOBI3500, Flash-25)".into(),
        model: DeviceModel::Flash(FlashModel {
            ftl: FtlKind::Fast {
                random_log_blocks: 4,
            }
            .try_into()?,
            page_bytes: 4096,
            pages_per_block: 64,
            channels: 4,
            timing: NandTiming::REFERENCE,
            over_provisioning: 0.0,
            read_overhead_us: 140.0,
            write_overhead_us: 100.0,
            host_ns_per_byte: 6.67,
            write_buffer_pages: 0,
        }),
    })
}

/// The flash SSD of the NIPU paper: Table 2 (4 KB Iometer, raw device) sequential read
/// 94 µs, sequential write 75 µs, random read 106 µs, random write 8,143 µs; its chips are
/// Table 1's reference chip (25 µs read, 200 µs program, 1.5 ms erase of 64 × 4 KB pages).
/// Model: BAST with 16 log blocks, 4 channels, 10 ns/byte chip bus, SATA at 300 MB/s, a
/// 16-page write buffer.
fn nipu_ssd() -> Result<SimProfile, ConfigError> {
    Ok(SimProfile {
        name: "nipu-ssd".into(),
        source: "NIPU Tables 1 and 2".into(),
        model: DeviceModel::Flash(FlashModel {
            ftl: FtlKind::Bast { log_blocks: 16 }.try_into()?,
            page_bytes: 4096,
            pages_per_block: 64,
            channels: 4,
            timing: NandTiming {
                transfer_ns_per_byte: 10.0,
                ..NandTiming::REFERENCE
            },
            over_provisioning: 0.0,
            read_overhead_us: 14.0,
            write_overhead_us: 60.0,
            host_ns_per_byte: 3.33,
            write_buffer_pages: 16,
        }),
    })
}

/// A modern NVMe SSD (vendor data sheets of TLC drives): page-mapped FTL with greedy GC
/// and over-provisioning, 64 dies, 60 µs read, 500 µs program, 3 ms erase, 4 GB/s link, a
/// large write buffer; random 4 KB writes cost ≈ 3× sequential ones per byte at steady
/// state (garbage collection).
fn nvme() -> Result<SimProfile, ConfigError> {
    Ok(SimProfile {
        name: "nvme".into(),
        source: "vendor data sheets (modern TLC NVMe SSD)".into(),
        model: DeviceModel::Flash(FlashModel {
            ftl: FtlKind::PageMapped.try_into()?,
            page_bytes: 4096,
            pages_per_block: 1024,
            channels: 32,
            timing: NandTiming {
                read_us: 60.0,
                program_us: 500.0,
                erase_us: 3000.0,
                transfer_ns_per_byte: 0.0,
                block_switch_us: 0.0,
            },
            over_provisioning: 0.35,
            read_overhead_us: 10.0,
            write_overhead_us: 8.0,
            host_ns_per_byte: 0.25,
            write_buffer_pages: 64,
        }),
    })
}

/// A 7,200 rpm SATA disk: NIPU Table 2 (4 KB Iometer) random read 13,146 µs, random write
/// 6,738 µs, sequential read 127 µs, sequential write 183 µs (FD-Buffer §5's disk: 109
/// random 8 KB reads/s, 100 writes/s).
fn hdd() -> Result<SimProfile, ConfigError> {
    Ok(SimProfile {
        name: "hdd".into(),
        source: "NIPU Table 2 / FD-Buffer §5 (7,200 rpm SATA disk)".into(),
        model: DeviceModel::Hdd(HddModel {
            rpm: 7200.0,
            seek_min_ms: 1.0,
            seek_full_ms: 15.4,
            media_ns_per_byte: 44.7,
            read_overhead_us: 100.0,
            write_overhead_us: 100.0,
            host_ns_per_byte: 6.67,
            readahead_bytes: 2 << 20,
            write_cache_entries: 14,
        }),
    })
}
