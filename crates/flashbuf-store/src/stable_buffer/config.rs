//! Configuration of a [`StableBufferStore`](super::StableBufferStore): staging size,
//! recognition and flushing methods, and the device figures the flush manager works from.

use super::order::{MinRun, WriteOrder};
use crate::StoreError;
use flashbuf_core::page::is_valid_page_size;
use flashbuf_core::DataMode;
use flashbuf_device::DeviceProfile;

/// How write patterns are recognised (paper §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recognition {
    /// A sorted scan of the SBTT when a flush is requested, O(n log n).
    OnDemand,
    /// Candidates maintained on every insert and delete, O(log n) each.
    Incremental,
}

impl Recognition {
    /// The option value (`ondemand`, `incremental`).
    pub fn name(self) -> &'static str {
        match self {
            Recognition::OnDemand => "ondemand",
            Recognition::Incremental => "incremental",
        }
    }

    /// Parses an option value; the error lists the valid ones.
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "ondemand" | "on-demand" => Ok(Recognition::OnDemand),
            "incremental" => Ok(Recognition::Incremental),
            _ => Err(StoreError::Invalid(format!(
                "unknown recognition '{s}'; valid: ondemand, incremental"
            ))),
        }
    }
}

/// When pages are flushed (paper §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushMode {
    /// The writer flushes the best instance when no slot is free.
    Passive,
    /// A background thread flushes instances as soon as they reach their thresholds θ_x;
    /// writers still flush passively if the area fills up anyway.
    Proactive,
}

impl FlushMode {
    /// The option value (`passive`, `proactive`).
    pub fn name(self) -> &'static str {
        match self {
            FlushMode::Passive => "passive",
            FlushMode::Proactive => "proactive",
        }
    }

    /// Parses an option value; the error lists the valid ones.
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "passive" => Ok(FlushMode::Passive),
            "proactive" => Ok(FlushMode::Proactive),
            _ => Err(StoreError::Invalid(format!(
                "unknown flush strategy '{s}'; valid: passive, proactive"
            ))),
        }
    }
}

/// Where proactive flushes run (only with [`FlushMode::Proactive`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flusher {
    /// On the device's background queue
    /// ([`Device::background`](flashbuf_device::Device::background)) when it has one:
    /// each write that makes an instance qualify flushes it inline, deterministically,
    /// on that queue, so that on a device with a clock the flush overlaps the foreground
    /// I/O in virtual time (the paper's parallel mode, its Fig. 5). Devices without a
    /// background queue get [`Flusher::Thread`].
    #[default]
    Queue,
    /// On a background thread through the device itself (the requests interleave with
    /// the writers' in whatever order the threads run).
    Thread,
}

impl Flusher {
    /// The option's word.
    pub fn name(&self) -> &'static str {
        match self {
            Flusher::Queue => "queue",
            Flusher::Thread => "thread",
        }
    }
}

/// The device figures the flush manager needs: time per page of each write pattern
/// (T_seq, T_par, T_focus), θ_min, the focused-area size and the number of partitions of
/// the partitioned pattern. Usually taken from a uFLIP-style [`DeviceProfile`].
#[derive(Debug, Clone, PartialEq)]
pub struct PatternCosts {
    /// Where the figures come from (`sim:mtron`, a file name, `paper`).
    pub source: String,
    /// T_seq: time to write one page in a sequential pattern, µs.
    pub t_seq_us: f64,
    /// T_par: time per page in a partitioned pattern, µs.
    pub t_par_us: f64,
    /// T_focus: time per page of random writes within the focused area, µs.
    pub t_focus_us: f64,
    /// θ_min: the write size from which random writes of that size perform stably, bytes.
    pub theta_min_bytes: u64,
    /// The largest area random writes within which stay fast, bytes.
    pub focused_area_bytes: u64,
    /// Concurrent sequential runs of the partitioned pattern.
    pub partitions: u32,
}

impl Default for PatternCosts {
    /// The paper's Mtron figures (Table 1 and §3.2): 32 KB sequential writes 0.4 ms,
    /// partitioned 1.5×, focused 2×, θ_min = 32 KB, a 4 MB focused area, 4 partitions.
    fn default() -> Self {
        Self {
            source: "paper (Mtron, Table 1)".to_string(),
            t_seq_us: 400.0,
            t_par_us: 600.0,
            t_focus_us: 800.0,
            theta_min_bytes: 32 << 10,
            focused_area_bytes: 4 << 20,
            partitions: 4,
        }
    }
}

impl PatternCosts {
    /// The figures of a measured profile. A profile that found no fast focused area
    /// (`focused_area_bytes == 0`) keeps the paper's 4 MiB; zero partitions become 4.
    pub fn from_profile(p: &DeviceProfile) -> Self {
        Self {
            source: p.device.clone(),
            t_seq_us: p.write_seq_us,
            t_par_us: p.write_partitioned_us,
            t_focus_us: p.write_focused_us,
            theta_min_bytes: p.theta_min_bytes,
            focused_area_bytes: if p.focused_area_bytes == 0 {
                4 << 20
            } else {
                p.focused_area_bytes
            },
            partitions: if p.partitions == 0 { 4 } else { p.partitions },
        }
    }

    fn validate(&self) -> Result<(), StoreError> {
        let ok = |x: f64| x.is_finite() && x > 0.0;
        if !(ok(self.t_seq_us) && ok(self.t_par_us) && ok(self.t_focus_us)) {
            return Err(StoreError::Invalid(format!(
                "pattern times must be positive (T_seq {}, T_par {}, T_focus {} µs)",
                self.t_seq_us, self.t_par_us, self.t_focus_us
            )));
        }
        if self.partitions == 0 || self.focused_area_bytes == 0 {
            return Err(StoreError::Invalid(
                "partitions and focused area must be positive".to_string(),
            ));
        }
        Ok(())
    }
}

/// Configuration of a [`StableBufferStore`](super::StableBufferStore).
///
/// Only `page_size` and the slot count (`staging_bytes / page_size`) are part of the
/// on-device format: reopening with others is refused. Recognition, flushing, the write
/// order, the partition rule and the pattern costs may change from one open to the next.
#[derive(Debug, Clone, PartialEq)]
pub struct StableBufferConfig {
    /// Page size in bytes (a power of two, 512..=65536).
    pub page_size: usize,
    /// Bytes of the staging area (rounded down to whole pages; at least one slot).
    pub staging_bytes: u64,
    /// Pattern recognition method.
    pub recognition: Recognition,
    /// Flushing strategy.
    pub flush: FlushMode,
    /// Where proactive flushes run.
    pub flusher: Flusher,
    /// Device figures for the selection score and the thresholds.
    pub costs: PatternCosts,
    /// The order a flush writes an instance home (default: each pattern's own order).
    pub order: WriteOrder,
    /// The shortest run that makes a partition (default: 2 pages).
    pub min_run: MinRun,
    /// Where the staging area and the data area start: multiples of this (so that they
    /// line up with erase blocks); a multiple of the page size. Used when formatting.
    pub align_bytes: u64,
    /// How much the data area grows at a time.
    pub grow_bytes: u64,
    /// Whole pages, or only their metadata (`--data none`; see the store's docs). Part of
    /// the on-device format: a store is refused in the other mode.
    pub data: DataMode,
    /// Generation salt to format with. `None` derives a fresh one from the previous
    /// superblock's salt (if the device held one), the clock and the process id: the salt
    /// only has to differ from every earlier format of the device, and it never changes
    /// what the store does, only which slots are valid.
    pub salt: Option<u64>,
}

impl Default for StableBufferConfig {
    fn default() -> Self {
        Self {
            page_size: 4096,
            staging_bytes: 4 << 20,
            recognition: Recognition::Incremental,
            flush: FlushMode::Passive,
            flusher: Flusher::Queue,
            costs: PatternCosts::default(),
            order: WriteOrder::Pattern,
            min_run: MinRun::Pair,
            align_bytes: 4 << 20,
            grow_bytes: 64 << 20,
            data: DataMode::Bytes,
            salt: None,
        }
    }
}

impl StableBufferConfig {
    /// The default configuration for `page_size`.
    pub fn with_page_size(page_size: usize) -> Self {
        Self {
            page_size,
            ..Self::default()
        }
    }

    /// Slots of the staging area.
    pub fn slots(&self) -> u64 {
        self.staging_bytes / self.page_size as u64
    }

    /// Checks the combination; errors say what is wrong.
    pub fn validate(&self) -> Result<(), StoreError> {
        if !is_valid_page_size(self.page_size) {
            return Err(StoreError::Invalid(format!(
                "page size {} is not a power of two between 512 and 65536",
                self.page_size
            )));
        }
        let slots = self.slots();
        if slots == 0 || slots > u64::from(u32::MAX - 1) {
            return Err(StoreError::Invalid(format!(
                "staging area of {} bytes holds {slots} pages of {} bytes; it needs 1..{} slots",
                self.staging_bytes,
                self.page_size,
                u32::MAX - 1
            )));
        }
        if self.align_bytes == 0 || !self.align_bytes.is_multiple_of(self.page_size as u64) {
            return Err(StoreError::Invalid(format!(
                "alignment {} is not a positive multiple of the page size {}",
                self.align_bytes, self.page_size
            )));
        }
        if self.flush == FlushMode::Proactive && self.recognition == Recognition::OnDemand {
            return Err(StoreError::Invalid(
                "flush=proactive needs recognition=incremental: the background flusher reacts to \
                 each change of a maintained instance (paper §3.2)"
                    .to_string(),
            ));
        }
        self.costs.validate()
    }
}
