//! Counters every device reports.

use serde::{Deserialize, Serialize};
use std::ops::{Add, Sub};

/// Counters of one device (or of a wrapper's view of it). Fields that do not apply to a
/// device stay zero (for instance `erases` on a file).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceStats {
    /// Read requests served.
    pub reads: u64,
    /// Write requests served (each request of a batch counts once).
    pub writes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub written_bytes: u64,
    /// Completed `sync` calls.
    pub syncs: u64,
    /// Time spent in I/O, microseconds: virtual time on simulated and cost devices,
    /// measured wall time on real files.
    pub device_time_us: f64,
    /// Flash block erases (simulated flash only).
    pub erases: u64,
    /// Flash page programs, host writes and garbage collection together (simulated flash).
    pub flash_programs: u64,
    /// Flash page reads, host reads and garbage collection together (simulated flash).
    pub flash_reads: u64,
    /// Flash pages programmed on behalf of the host (simulated flash).
    pub host_programs: u64,
}

impl DeviceStats {
    /// Flash pages programmed per page the host asked to write; 1.0 where not applicable.
    pub fn write_amplification(&self) -> f64 {
        if self.host_programs == 0 {
            1.0
        } else {
            self.flash_programs as f64 / self.host_programs as f64
        }
    }
}

impl Add for DeviceStats {
    type Output = DeviceStats;
    fn add(self, o: DeviceStats) -> DeviceStats {
        DeviceStats {
            reads: self.reads + o.reads,
            writes: self.writes + o.writes,
            read_bytes: self.read_bytes + o.read_bytes,
            written_bytes: self.written_bytes + o.written_bytes,
            syncs: self.syncs + o.syncs,
            device_time_us: self.device_time_us + o.device_time_us,
            erases: self.erases + o.erases,
            flash_programs: self.flash_programs + o.flash_programs,
            flash_reads: self.flash_reads + o.flash_reads,
            host_programs: self.host_programs + o.host_programs,
        }
    }
}

impl Sub for DeviceStats {
    type Output = DeviceStats;
    /// Counters accumulated between two snapshots (`later - earlier`).
    fn sub(self, o: DeviceStats) -> DeviceStats {
        DeviceStats {
            reads: self.reads.saturating_sub(o.reads),
            writes: self.writes.saturating_sub(o.writes),
            read_bytes: self.read_bytes.saturating_sub(o.read_bytes),
            written_bytes: self.written_bytes.saturating_sub(o.written_bytes),
            syncs: self.syncs.saturating_sub(o.syncs),
            device_time_us: self.device_time_us - o.device_time_us,
            erases: self.erases.saturating_sub(o.erases),
            flash_programs: self.flash_programs.saturating_sub(o.flash_programs),
            flash_reads: self.flash_reads.saturating_sub(o.flash_reads),
            host_programs: self.host_programs.saturating_sub(o.host_programs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_amplification_defaults_to_one() {
        let mut s = DeviceStats::default();
        assert_eq!(s.write_amplification(), 1.0);
        s.host_programs = 10;
        s.flash_programs = 25;
        assert_eq!(s.write_amplification(), 2.5);
        let d = s - DeviceStats::default();
        assert_eq!(d, s);
    }
}
