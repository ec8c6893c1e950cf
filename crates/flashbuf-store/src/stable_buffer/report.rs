//! StableBuffer's figures through [`crate::PageStore::report`]: its staging counters
//! ([`StableBufferStats`]) and memory ([`MemoryReport`]) as named values, and back, so a
//! caller holding only a `dyn PageStore` (the lab's replay) reads them typed.

use super::{MemoryReport, StableBufferStats};
use std::collections::BTreeMap;

/// Pattern names in the order of the per-pattern arrays.
const PATTERNS: [&str; 3] = ["seq", "par", "focus"];

/// The figures of one store.
pub(super) fn figures(
    st: &StableBufferStats,
    mem: &MemoryReport,
    staging_bytes: u64,
) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = vec![
        ("sb.staging_bytes".into(), staging_bytes as f64),
        ("sb.slots".into(), f64::from(st.slots)),
        ("sb.staged".into(), st.staged as f64),
        ("sb.max_staged".into(), st.max_staged as f64),
        ("sb.new_stagings".into(), st.new_stagings as f64),
        ("sb.in_place_updates".into(), st.in_place_updates as f64),
        (
            "sb.out_of_place_updates".into(),
            st.out_of_place_updates as f64,
        ),
        ("sb.slot_reads".into(), st.slot_reads as f64),
        ("sb.home_reads".into(), st.home_reads as f64),
        ("sb.passive_flushes".into(), st.passive_flushes as f64),
        ("sb.proactive_flushes".into(), st.proactive_flushes as f64),
        ("sb.device_syncs".into(), st.device_syncs as f64),
        ("sb.promise_records".into(), st.promise_records as f64),
        ("sb.lost".into(), st.lost as f64),
        ("mem.sbtt_bytes".into(), mem.sbtt_bytes as f64),
        ("mem.bitmap_bytes".into(), mem.bitmap_bytes as f64),
        ("mem.per_slot_bytes".into(), mem.per_slot_bytes),
        ("mem.recognizer_bytes".into(), mem.recognizer_bytes as f64),
        ("mem.promise_bytes".into(), mem.promise_bytes as f64),
        (
            "mem.io_buffer_memory_bytes".into(),
            mem.io_buffer_memory_bytes as f64,
        ),
    ];
    for (i, p) in PATTERNS.iter().enumerate() {
        v.push((format!("sb.flushes_{p}"), st.flushes[i] as f64));
        v.push((format!("sb.flushed_pages_{p}"), st.flushed_pages[i] as f64));
    }
    v
}

/// Staging counters and memory read back from `figures` (`None` if they are not a
/// StableBuffer's); counters not reported stay 0.
pub fn from_figures(figures: &BTreeMap<String, f64>) -> Option<(StableBufferStats, MemoryReport)> {
    let g = |k: &str| figures.get(k).copied();
    let n = |k: &str| g(k).unwrap_or(0.0) as u64;
    let slots = g("sb.slots")? as u32;
    let mut st = StableBufferStats {
        slots,
        staged: n("sb.staged"),
        max_staged: n("sb.max_staged"),
        new_stagings: n("sb.new_stagings"),
        in_place_updates: n("sb.in_place_updates"),
        out_of_place_updates: n("sb.out_of_place_updates"),
        slot_reads: n("sb.slot_reads"),
        home_reads: n("sb.home_reads"),
        passive_flushes: n("sb.passive_flushes"),
        proactive_flushes: n("sb.proactive_flushes"),
        device_syncs: n("sb.device_syncs"),
        promise_records: n("sb.promise_records"),
        lost: n("sb.lost"),
        ..StableBufferStats::default()
    };
    for (i, p) in PATTERNS.iter().enumerate() {
        st.flushes[i] = n(&format!("sb.flushes_{p}"));
        st.flushed_pages[i] = n(&format!("sb.flushed_pages_{p}"));
    }
    let mem = MemoryReport {
        slots,
        sbtt_bytes: n("mem.sbtt_bytes") as usize,
        bitmap_bytes: n("mem.bitmap_bytes") as usize,
        per_slot_bytes: g("mem.per_slot_bytes").unwrap_or(0.0),
        recognizer_bytes: n("mem.recognizer_bytes") as usize,
        promise_bytes: n("mem.promise_bytes") as usize,
        io_buffer_memory_bytes: n("mem.io_buffer_memory_bytes") as usize,
    };
    Some((st, mem))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_round_trip() {
        let st = StableBufferStats {
            slots: 64,
            staged: 3,
            max_staged: 60,
            new_stagings: 100,
            in_place_updates: 7,
            flushes: [1, 2, 3],
            flushed_pages: [10, 20, 30],
            device_syncs: 9,
            ..StableBufferStats::default()
        };
        let mem = MemoryReport {
            slots: 64,
            sbtt_bytes: 1024,
            bitmap_bytes: 48,
            per_slot_bytes: 16.75,
            recognizer_bytes: 500,
            promise_bytes: 1024,
            io_buffer_memory_bytes: 8192,
        };
        let m: BTreeMap<String, f64> = figures(&st, &mem, 1 << 20).into_iter().collect();
        assert_eq!(from_figures(&m), Some((st, mem)));
        assert_eq!(m["sb.staging_bytes"], (1u64 << 20) as f64);
        assert_eq!(from_figures(&BTreeMap::new()), None);
    }
}
