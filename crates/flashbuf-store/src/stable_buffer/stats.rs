//! The staging area's counters and memory report (`StableBufferStore::sb_stats`,
//! `StableBufferStore::memory`).

use serde::Serialize;

/// Counters of the staging area (besides the [`StoreStats`](crate::StoreStats) every store keeps).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct StableBufferStats {
    /// Slots of the staging area.
    pub slots: u32,
    /// Pages staged now.
    pub staged: u64,
    /// Most pages staged at once.
    pub max_staged: u64,
    /// Writes of a page not staged before (took a free slot).
    pub new_stagings: u64,
    /// Updates of a staged page in its slot.
    pub in_place_updates: u64,
    /// Updates of a staged page into a new slot (its copy was promised by a sync, or being
    /// flushed).
    pub out_of_place_updates: u64,
    /// Reads served from a slot.
    pub slot_reads: u64,
    /// Reads served from the home location.
    pub home_reads: u64,
    /// Reads retried after racing with a concurrent write.
    pub read_retries: u64,
    /// Flushed instances per pattern (sequential, partitioned, focused).
    pub flushes: [u64; 3],
    /// Pages flushed per pattern.
    pub flushed_pages: [u64; 3],
    /// Flushes started by a writer that found no free slot.
    pub passive_flushes: u64,
    /// Flushes started by the background flusher.
    pub proactive_flushes: u64,
    /// Device syncs (flushes' and callers').
    pub device_syncs: u64,
    /// Pages found staged by the last recovery.
    pub recovered_staged: u64,
    /// Valid slots recovery freed (already home, or superseded).
    pub recovered_freed: u64,
    /// Pages the last recovery found lost: a completed sync promised a version whose
    /// copy is damaged or gone (reported corrupt until rewritten).
    pub recovered_lost: u64,
    /// Pages known lost now.
    pub lost: u64,
    /// Whether the last recovery found the newer state record copy damaged (it used the
    /// older one).
    pub state_copy_damaged: bool,
    /// Promise records committed (promise syncs that promised something new).
    pub promise_records: u64,
}

/// Memory of the in-memory structures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MemoryReport {
    /// Slots.
    pub slots: u32,
    /// Bytes of the SBTT (destination array and buckets).
    pub sbtt_bytes: usize,
    /// Bytes of the six slot bitmaps.
    pub bitmap_bytes: usize,
    /// `(sbtt_bytes + bitmap_bytes) / slots`.
    pub per_slot_bytes: f64,
    /// Approximate bytes of the incremental recognizer (0 for on-demand).
    pub recognizer_bytes: usize,
    /// Bytes of the per-slot sequence numbers and versions the promise record is built
    /// from (16 per slot; not in `per_slot_bytes`, like the recognizer).
    pub promise_bytes: usize,
    /// Bytes of the I/O buffers kept between writes and flushes for reuse
    /// (`crate::scratch`: up to four; a flush's is as large as its pages).
    pub io_buffer_memory_bytes: usize,
}
