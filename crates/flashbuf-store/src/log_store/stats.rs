//! Counters of the log-structured store, the last recovery's findings, and the report the
//! lab prints: write amplification of the store, of the FTL under it, and their product.

use flashbuf_core::DeviceStats;
use serde::Serialize;

/// Counters since the store was created or reopened (or since `populate`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LogStoreStats {
    /// Pages written by callers.
    pub caller_pages: u64,
    /// Callers' data blocks written to the device.
    pub data_blocks: u64,
    /// Summary blocks (the last blocks of every sealed segment).
    pub summary_blocks: u64,
    /// Blocks the cleaner wrote (copies of live blocks).
    pub cleaner_blocks_written: u64,
    /// Blocks the cleaner read (summaries and live blocks).
    pub cleaner_blocks_read: u64,
    /// Segments cleaned.
    pub segments_cleaned: u64,
    /// Foreground cleaning rounds.
    pub foreground_passes: u64,
    /// Segments cleaned in the foreground.
    pub foreground_segments: u64,
    /// Background cleaning passes.
    pub background_passes: u64,
    /// Segments cleaned in the background.
    pub background_segments: u64,
    /// Device time spent cleaning (reads and copies), µs.
    pub cleaning_time_us: f64,
    /// How far background passes on the device's background queue pushed the device's
    /// time (its makespan) ahead, µs; 0 on the main handle.
    pub background_queue_time_us: f64,
    /// Times the main queue waited for the background queue (a foreground request
    /// depended on a background pass's requests).
    pub background_joins: u64,
    /// Victims whose live blocks were found by a scan of the map (damaged summaries).
    pub map_scans: u64,
    /// Cleaner's copies appended to another head than the placement named (no segment was
    /// free for it).
    pub redirected_copies: u64,
    /// Blocks the cleaner copied although they failed their checksum.
    pub damaged_blocks_copied: u64,
    /// Checkpoints written.
    pub checkpoints: u64,
    /// Blocks of checkpoints written.
    pub checkpoint_blocks: u64,
    /// Device syncs.
    pub device_syncs: u64,
    /// Promise records committed to the state record (caller syncs that promised blocks
    /// no checkpoint covered).
    pub promises: u64,
    /// Blocks (of the page size) of state record copies written by promises.
    pub promise_blocks: u64,
}

impl LogStoreStats {
    /// Every block written to the device: data, summaries, copies, checkpoints, promises.
    pub fn device_blocks_written(&self) -> u64 {
        self.data_blocks
            + self.summary_blocks
            + self.cleaner_blocks_written
            + self.checkpoint_blocks
            + self.promise_blocks
    }

    /// The store's write amplification: device blocks written per caller page (0 before
    /// any caller write).
    pub fn write_amplification(&self) -> f64 {
        if self.caller_pages == 0 {
            0.0
        } else {
            self.device_blocks_written() as f64 / self.caller_pages as f64
        }
    }
}

/// What the last recovery did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RecoveryReport {
    /// Generation of the checkpoint recovery started from.
    pub checkpoint_generation: u64,
    /// The other slot was invalid (torn or damaged).
    pub other_slot_damaged: bool,
    /// Segments whose blocks were read (written or open after the checkpoint).
    pub segments_walked: u64,
    /// Blocks applied after the checkpoint.
    pub blocks_rolled_forward: u64,
    /// Blocks after the torn tail, dropped (never promised by a sync).
    pub blocks_cut: u64,
    /// Promised blocks that failed their checksum (mapped: reads report them corrupt).
    pub damaged_blocks: u64,
    /// Promised blocks missing after a fallback to the older checkpoint, skipped (their
    /// segments may have been reused since).
    pub skipped_blocks: u64,
    /// Summaries written for segments recovery closed.
    pub summaries_written: u64,
    /// Whether recovery ended with a checkpoint.
    pub wrote_checkpoint: bool,
    /// Device time of the recovery, µs.
    pub device_time_us: f64,
    /// Wall time of the recovery, µs.
    pub wall_time_us: f64,
}

/// Memory of the store's per-page structures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MemoryReport {
    /// Page ids.
    pub logical_pages: u64,
    /// Bytes of the logical-to-physical map.
    pub map_bytes: usize,
    /// Bytes of the placement scheme's per-page state (SepBIT: last write times).
    pub placement_bytes: usize,
    /// `map_bytes / logical_pages`.
    pub map_bytes_per_page: f64,
    /// `(map_bytes + placement_bytes) / logical_pages`.
    pub per_page_bytes: f64,
    /// Bytes of the usage table.
    pub usage_bytes: usize,
    /// Bytes of the write queue, the open segments' summary entries and the cleaner's
    /// kept read buffer.
    pub buffer_bytes: usize,
}

/// The figures of a report: `(name, value)` pairs, store and FTL write amplification
/// first.
pub fn report(
    s: &LogStoreStats,
    dev: &DeviceStats,
    page_size: usize,
    extra: &[(&'static str, f64)],
) -> Vec<(String, f64)> {
    let store_wa = s.write_amplification();
    // The FTL's: flash pages programmed per page the host asked for (1 off flash).
    let ftl_wa = dev.write_amplification();
    let mut r: Vec<(String, f64)> = vec![
        ("store_write_amplification".into(), store_wa),
        ("ftl_write_amplification".into(), ftl_wa),
        ("total_write_amplification".into(), store_wa * ftl_wa),
        ("caller_pages".into(), s.caller_pages as f64),
        (
            "device_pages_written".into(),
            s.device_blocks_written() as f64,
        ),
        (
            "cleaner_pages_written".into(),
            s.cleaner_blocks_written as f64,
        ),
        ("cleaner_pages_read".into(), s.cleaner_blocks_read as f64),
        (
            "cleaner_bytes_moved".into(),
            ((s.cleaner_blocks_written + s.cleaner_blocks_read) * page_size as u64) as f64,
        ),
        ("cleaning_device_time_us".into(), s.cleaning_time_us),
        (
            "background_queue_time_us".into(),
            s.background_queue_time_us,
        ),
        ("background_joins".into(), s.background_joins as f64),
        ("segments_cleaned".into(), s.segments_cleaned as f64),
        ("foreground_segments".into(), s.foreground_segments as f64),
        ("background_segments".into(), s.background_segments as f64),
        ("summary_pages".into(), s.summary_blocks as f64),
        ("checkpoint_pages".into(), s.checkpoint_blocks as f64),
        ("checkpoints".into(), s.checkpoints as f64),
        ("store_device_syncs".into(), s.device_syncs as f64),
        ("promises".into(), s.promises as f64),
        ("redirected_copies".into(), s.redirected_copies as f64),
    ];
    r.extend(extra.iter().map(|(k, v)| (k.to_string(), *v)));
    r
}
