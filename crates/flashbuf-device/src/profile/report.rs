//! The device profile: what [`run_profile`](super::run_profile) measured, as JSON and as a
//! table.

use crate::{DeviceError, IoOp};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// One micro-benchmark's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    /// Benchmark name (`write-seq`, `write-focused-4MiB`, `granularity-write-random-32KiB`, ...).
    pub name: String,
    /// Bytes per I/O.
    pub io_bytes: u64,
    /// Bytes of the region the I/Os fall in.
    pub area_bytes: u64,
    /// Start-up I/Os ignored.
    pub warmup_ios: u64,
    /// Measured I/Os.
    pub ios: u64,
    /// Mean latency of a measured I/O, µs.
    pub mean_us: f64,
    /// Median latency, µs.
    pub p50_us: f64,
    /// Smallest latency, µs.
    pub min_us: f64,
    /// Largest latency, µs.
    pub max_us: f64,
}

/// A device profile. The first twelve fields are the `flashbuf profile --json` contract
/// (design.md §8); latencies are the mean of one I/O of `granularity_bytes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceProfile {
    /// Device name (`sim:mtron`, `file:/path`, ...).
    pub device: String,
    /// Database page size the profile is for.
    pub page_size: u64,
    /// Size of the I/Os of the headline latencies.
    pub granularity_bytes: u64,
    /// Sequential read, µs per I/O.
    pub read_seq_us: f64,
    /// Random read, µs per I/O.
    pub read_random_us: f64,
    /// Sequential write (T_seq), µs per I/O.
    pub write_seq_us: f64,
    /// Partitioned write (T_partitioned), µs per I/O.
    pub write_partitioned_us: f64,
    /// Focused write within `focused_area_bytes` (T_focused), µs per I/O.
    pub write_focused_us: f64,
    /// Random write over the test area (T_random), µs per I/O.
    pub write_random_us: f64,
    /// Smallest write size reaching 90% of the best sequential bandwidth (θ_min).
    pub theta_min_bytes: u64,
    /// Largest focused area whose writes stay fast (0 if none).
    pub focused_area_bytes: u64,
    /// Read/write asymmetry R = write_random_us / read_random_us.
    pub asymmetry_r: f64,
    /// `device` (the device's own clock: virtual or per-call) or `wall`.
    #[serde(default)]
    pub clock: String,
    /// Bytes of the test area.
    #[serde(default)]
    pub area_bytes: u64,
    /// Partitions of the partitioned benchmark.
    #[serde(default)]
    pub partitions: u32,
    /// Every micro-benchmark's result.
    #[serde(default)]
    pub benchmarks: Vec<BenchResult>,
}

impl DeviceProfile {
    /// The profile as pretty JSON.
    pub fn to_json(&self) -> String {
        match serde_json::to_string_pretty(self) {
            Ok(s) => s,
            Err(e) => panic!("a DeviceProfile always serializes: {e}"),
        }
    }

    /// Writes the profile as JSON to `path`.
    pub fn save(&self, path: &Path) -> Result<(), DeviceError> {
        std::fs::write(path, self.to_json() + "\n").map_err(|e| DeviceError::Io {
            op: IoOp::Write,
            offset: 0,
            device: path.display().to_string(),
            source: e,
        })
    }

    /// Reads a profile saved by [`DeviceProfile::save`] (or printed by
    /// `flashbuf profile --json`).
    pub fn load(path: &Path) -> Result<DeviceProfile, DeviceError> {
        let text = std::fs::read_to_string(path).map_err(|e| DeviceError::Io {
            op: IoOp::Read,
            offset: 0,
            device: path.display().to_string(),
            source: e,
        })?;
        serde_json::from_str(&text).map_err(|e| {
            DeviceError::Config(format!("{} is not a device profile: {e}", path.display()))
        })
    }

    /// A named benchmark's result.
    pub fn benchmark(&self, name: &str) -> Option<&BenchResult> {
        self.benchmarks.iter().find(|b| b.name == name)
    }

    /// The profile as a human-readable table: headline figures, then every benchmark.
    pub fn to_table(&self) -> String {
        let mut s = String::new();
        let seq = self.write_seq_us.max(f64::MIN_POSITIVE);
        let _ = writeln!(
            s,
            "device {}  (I/O {} B, page {} B, area {} MiB, clock {})",
            self.device,
            self.granularity_bytes,
            self.page_size,
            self.area_bytes >> 20,
            self.clock
        );
        let _ = writeln!(s, "{:<22} {:>12} {:>10}", "figure", "µs / I/O", "× T_seq");
        for (name, v) in [
            ("read sequential", self.read_seq_us),
            ("read random", self.read_random_us),
            ("write sequential", self.write_seq_us),
            ("write partitioned", self.write_partitioned_us),
            ("write focused", self.write_focused_us),
            ("write random", self.write_random_us),
        ] {
            let _ = writeln!(s, "{name:<22} {v:>12.1} {:>10.2}", v / seq);
        }
        let _ = writeln!(s, "theta_min        {} B", self.theta_min_bytes);
        let _ = writeln!(s, "focused area     {} B", self.focused_area_bytes);
        let _ = writeln!(s, "asymmetry R      {:.1}", self.asymmetry_r);
        let _ = writeln!(
            s,
            "\n{:<36} {:>9} {:>10} {:>6} {:>11} {:>11} {:>11}",
            "benchmark", "I/O B", "area KiB", "ios", "mean µs", "p50 µs", "max µs"
        );
        for b in &self.benchmarks {
            let _ = writeln!(
                s,
                "{:<36} {:>9} {:>10} {:>6} {:>11.1} {:>11.1} {:>11.1}",
                b.name,
                b.io_bytes,
                b.area_bytes >> 10,
                b.ios,
                b.mean_us,
                b.p50_us,
                b.max_us
            );
        }
        s
    }
}
