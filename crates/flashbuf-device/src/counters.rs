//! Lock-free request counters shared by the device implementations.

use flashbuf_core::DeviceStats;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Atomic counters for the fields every device fills.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    reads: AtomicU64,
    writes: AtomicU64,
    read_bytes: AtomicU64,
    written_bytes: AtomicU64,
    syncs: AtomicU64,
    time_ns: AtomicU64,
}

impl Counters {
    #[inline]
    pub(crate) fn read(&self, bytes: usize) {
        self.reads.fetch_add(1, Relaxed);
        self.read_bytes.fetch_add(bytes as u64, Relaxed);
    }
    #[inline]
    pub(crate) fn write(&self, bytes: usize) {
        self.writes.fetch_add(1, Relaxed);
        self.written_bytes.fetch_add(bytes as u64, Relaxed);
    }
    #[inline]
    pub(crate) fn sync(&self) {
        self.syncs.fetch_add(1, Relaxed);
    }
    #[inline]
    pub(crate) fn time_ns(&self, ns: u64) {
        self.time_ns.fetch_add(ns, Relaxed);
    }
    pub(crate) fn snapshot(&self) -> DeviceStats {
        DeviceStats {
            reads: self.reads.load(Relaxed),
            writes: self.writes.load(Relaxed),
            read_bytes: self.read_bytes.load(Relaxed),
            written_bytes: self.written_bytes.load(Relaxed),
            syncs: self.syncs.load(Relaxed),
            device_time_us: self.time_ns.load(Relaxed) as f64 / 1000.0,
            ..DeviceStats::default()
        }
    }
}
