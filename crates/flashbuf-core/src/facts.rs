//! What cost-aware policies, write clustering and stores need to know of a device.

use serde::Serialize;

/// A device's costs and geometry, as far as the layers above care: the latency of a
/// random page read and write (relative figures suffice) and the flash erase block.
/// The lab measures them once per device (a quick uFLIP profile for simulated flash) and
/// hands them to every component it builds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DeviceFacts {
    /// Flash erase-block size in bytes, if the device has one.
    pub erase_block_bytes: Option<u64>,
    /// Latency of a random page read, microseconds.
    pub read_us: f64,
    /// Latency of a random page write, microseconds.
    pub write_us: f64,
    /// Latency of a page write within a sequential run of page writes, microseconds, if
    /// measured (a uFLIP profile's sequential write). Cost models of clustered write-backs
    /// use it: `k` pages written together into one erase block cost about
    /// `write_us + (k − 1) · seq_write_us` on a device that merges blocks.
    pub seq_write_us: Option<f64>,
}

impl Default for DeviceFacts {
    /// Unknown device: no erase block, reads and writes equally dear.
    fn default() -> Self {
        Self {
            erase_block_bytes: None,
            read_us: 1.0,
            write_us: 1.0,
            seq_write_us: None,
        }
    }
}

impl DeviceFacts {
    /// Write clustering's default cluster size in pages: erase block / page size, else 64.
    pub fn cluster_pages(&self, page_size: usize) -> u64 {
        self.erase_block_bytes
            .map(|b| (b / page_size.max(1) as u64).max(1))
            .unwrap_or(64)
    }

    /// The read/write asymmetry `R = write_us / read_us` (1 if reads cost nothing).
    pub fn r(&self) -> f64 {
        if self.read_us > 0.0 {
            self.write_us / self.read_us
        } else {
            1.0
        }
    }
}
