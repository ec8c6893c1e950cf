//! The log-structured store in the store registry ([`crate::registry::STORES`]): its
//! options, their typed form ([`LogStoreOptions`]) and the factory that resolves them into
//! a [`LogStoreConfig`] for a device and a run.
//!
//! `log-structured:segment=BYTES|segment_pages=N,cleaner=greedy|cost-benefit|oldest|sepbit,
//! ci=,nspc=,pp=,min_free=,max_free=,background=,cleaner_queue=background|main,
//! clock=device|wall|writes,size=BYTES|segments=N,
//! pages=N,fill=F,checkpoint=N,prefill=BOOL,align=BYTES|align_pages=N`.
//!
//! Readings (design.md §4):
//! - `ci` and `pp` are seconds on the `device` and `wall` clocks (the paper's units) and
//!   caller page writes on the `writes` clock. The default clock is the device's own on
//!   simulated and cost-model devices (`sim:`, `cost`), wall time on files, and caller
//!   writes otherwise (memory has no clock).
//! - The store's space: `size` or `segments` if given; else, on a device that has a
//!   length (a simulated device has its whole capacity from the start, as a partition
//!   has; an existing file), all of it — as a file system takes its partition, so the
//!   space and the FTL's logical space are equally full; size the device for the fill
//!   wanted (`sim:...:slack=`, `fill=`); else (memory, a new file) enough segments that
//!   the run's data fills `fill` (default 0.8) of the data blocks callers may fill, at
//!   most the device's limit.
//! - Page ids: `pages`, else the run's dense pages (the lab scans the trace for them),
//!   else as many as the segments hold beside the cleaner's reserve.
//! - `pages` and `segments` are lower bounds when the run's data is known: a run whose
//!   data spans more pages, or needs more segments at `fill` (at most the device), gets
//!   them (so the crash variants, sized for the crash suites, also replay a whole trace in
//!   the golden test).
//! - The data mode is the run's (`--data`, [`StoreContext::data`]): a format field.

use super::background::CleanerQueue;
use super::config::{CleanerConfig, CleanerKind, LogStoreConfig, TimeBase};
use super::layout::Layout;
use super::{LogStore, KIND};
use crate::registry::{self, Align, StoreContext, StoreFactory};
use crate::{PageStore, StoreError, Superblock};
use flashbuf_core::config::{ConfigError, Options};
use flashbuf_device::Device;

pub use table::OPTIONS;

mod table;

/// A segment's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentSize {
    /// Bytes.
    Bytes(u64),
    /// Pages.
    Pages(u64),
}

/// The store's space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// Bytes of the device.
    Bytes(u64),
    /// Segments (plus the superblock and the checkpoint slots).
    Segments(u32),
    /// From the device and the run (see the module docs).
    Auto,
}

/// The log-structured store's options, typed; [`LogStoreOptions::config`] resolves them
/// for a device and a run.
#[derive(Debug, Clone, PartialEq)]
pub struct LogStoreOptions {
    /// Segment size.
    pub segment: SegmentSize,
    /// Victim rule and placement.
    pub cleaner: CleanerKind,
    /// CI, in seconds (caller writes on the `writes` clock).
    pub ci: f64,
    /// NSPC.
    pub nspc: u32,
    /// PP, in seconds (caller writes on the `writes` clock).
    pub pp: f64,
    /// Background cleaning thresholds in free segments.
    pub min_free: Option<u32>,
    /// See `min_free`.
    pub max_free: Option<u32>,
    /// Whether background cleaning runs.
    pub background: bool,
    /// Where background passes issue their requests.
    pub cleaner_queue: CleanerQueue,
    /// The time base; `None`: chosen by the device.
    pub clock: Option<TimeBase>,
    /// The space.
    pub space: Space,
    /// Page ids; `None`: the run's data, else what the space holds.
    pub pages: Option<u64>,
    /// Fraction of the space the data fills when the store sizes itself.
    pub fill: f64,
    /// Segments between checkpoints.
    pub checkpoint: Option<u32>,
    /// Write every page of the run's data once after formatting.
    pub prefill: bool,
    /// Alignment of the segments.
    pub align: Align,
}

fn u32_opt(o: &Options, key: &str) -> Option<u32> {
    o.u64(key).map(|v| u32::try_from(v).unwrap_or(u32::MAX))
}

impl LogStoreOptions {
    /// The typed form of options validated against [`OPTIONS`]; contradictions
    /// (`segment` and `segment_pages`, `size` and `segments`, `align` and `align_pages`)
    /// are errors.
    pub fn from_options(o: &Options) -> Result<Self, ConfigError> {
        let segment = match (o.given("segment"), o.u64("segment_pages")) {
            (true, Some(_)) => {
                return Err(o.invalid("give segment (bytes) or segment_pages, not both"))
            }
            (_, Some(n)) => SegmentSize::Pages(n),
            (_, None) => SegmentSize::Bytes(o.bytes("segment").unwrap_or(8 << 20)),
        };
        let space = match (o.bytes("size"), u32_opt(o, "segments")) {
            (Some(_), Some(_)) => return Err(o.invalid("give size (bytes) or segments, not both")),
            (Some(b), None) => Space::Bytes(b),
            (None, Some(n)) => Space::Segments(n),
            (None, None) => Space::Auto,
        };
        let cleaner = CleanerKind::parse(o.word("cleaner").unwrap_or("greedy"))
            .map_err(|e| registry::invalid(KIND, e))?;
        let clock = match o.word("clock") {
            Some(w) => Some(TimeBase::parse(w).map_err(|e| registry::invalid(KIND, e))?),
            None => None,
        };
        Ok(Self {
            segment,
            cleaner,
            ci: o.f64("ci").unwrap_or(5.0),
            nspc: u32_opt(o, "nspc").unwrap_or(2),
            pp: o.f64("pp").unwrap_or(1.0),
            min_free: u32_opt(o, "min_free"),
            max_free: u32_opt(o, "max_free"),
            background: o.bool("background").unwrap_or(true),
            cleaner_queue: CleanerQueue::parse(o.word("cleaner_queue").unwrap_or("background"))
                .map_err(|e| registry::invalid(KIND, e))?,
            clock,
            space,
            pages: o.u64("pages"),
            fill: o.f64("fill").unwrap_or(0.8),
            checkpoint: u32_opt(o, "checkpoint"),
            prefill: o.bool("prefill").unwrap_or(false),
            align: Align::from_options(o)?,
        })
    }

    /// The clock a store on `device` runs on.
    pub fn time_base(&self, device: &dyn Device) -> TimeBase {
        self.clock.unwrap_or_else(|| {
            let d = device.describe();
            if d.starts_with("sim:") || d.starts_with("cost") {
                TimeBase::Device
            } else if d.starts_with("file:") {
                TimeBase::Wall
            } else {
                TimeBase::Writes
            }
        })
    }

    /// Everything but the space, for `page_size` on `time_base`.
    fn base(&self, page_size: usize, time_base: TimeBase) -> LogStoreConfig {
        let tick = if time_base == TimeBase::Writes {
            1.0
        } else {
            1e6
        };
        let segment_bytes = match self.segment {
            SegmentSize::Bytes(b) => b,
            SegmentSize::Pages(n) => n.saturating_mul(page_size as u64),
        };
        LogStoreConfig {
            segment_bytes,
            capacity_bytes: None,
            logical_pages: self.pages,
            align_bytes: self.align.bytes(page_size),
            cleaner: CleanerConfig {
                kind: self.cleaner,
                cleaning_interval_ticks: self.ci * tick,
                segments_per_clean: self.nspc,
                protection_period_ticks: self.pp * tick,
                min_free_segments: self.min_free,
                max_free_segments: self.max_free,
                background: self.background,
                queue: self.cleaner_queue,
            },
            time_base,
            checkpoint_segments: self.checkpoint,
            ..LogStoreConfig::with_page_size(page_size)
        }
    }

    /// The configuration for a store on `device` in a run of `ctx` (see the module docs
    /// for the space and page ids).
    pub fn config(
        &self,
        device: &dyn Device,
        ctx: &StoreContext<'_>,
    ) -> Result<LogStoreConfig, StoreError> {
        let mut cfg = self.base(ctx.page_size, self.time_base(device));
        cfg.data = ctx.data;
        cfg.validate()?;
        // The run's data raises the page ids and the segments given (lower bounds), so
        // that a small configuration (a crash variant) also runs a whole trace.
        if ctx.data_pages > 0 {
            cfg.logical_pages = Some(cfg.logical_pages.unwrap_or(0).max(ctx.data_pages));
        }
        let needed = |cfg: &LogStoreConfig, pages: u64| {
            let d = u64::from(cfg.data_blocks_per_segment()).max(1);
            let data_segments = (pages as f64 / self.fill / d as f64).ceil() as u64;
            u32::try_from(data_segments.saturating_add(cfg.kept_segments())).unwrap_or(u32::MAX)
        };
        cfg.capacity_bytes = match self.space {
            Space::Bytes(b) => Some(b),
            Space::Segments(n) if ctx.data_pages > 0 => {
                let more = needed(&cfg, ctx.data_pages);
                let want = capacity_for_segments(&mut cfg, n.max(more));
                let room = device.max_len().map_or(want, |max| want.min(max));
                Some(if n >= more { want } else { room })
            }
            Space::Segments(n) => Some(capacity_for_segments(&mut cfg, n)),
            Space::Auto if !device.is_empty() => None,
            Space::Auto => {
                let Some(pages) = cfg.logical_pages else {
                    return Err(StoreError::Invalid(format!(
                        "{} is empty and the run's data is unknown: give the log-structured store's size= or segments=",
                        device.describe()
                    )));
                };
                let n = needed(&cfg, pages);
                let want = capacity_for_segments(&mut cfg, n);
                Some(device.max_len().map_or(want, |max| want.min(max)))
            }
        };
        Ok(cfg)
    }
}

/// Bytes a store of `cfg` with exactly `segments` segments occupies; fixes `cfg`'s page
/// ids (if not given: what the segments hold beside the cleaner's reserve) so that the
/// layout is the same when the store is opened.
fn capacity_for_segments(cfg: &mut LogStoreConfig, segments: u32) -> u64 {
    let d = u64::from(cfg.data_blocks_per_segment());
    let pages = cfg
        .logical_pages
        .unwrap_or_else(|| u64::from(segments).saturating_sub(cfg.kept_segments()) * d);
    cfg.logical_pages = Some(pages);
    Layout::new(
        cfg.page_size,
        cfg.segment_blocks(),
        segments,
        pages,
        Superblock::reserved_bytes(cfg.page_size),
        cfg.align_bytes,
    )
    .total_bytes()
}

impl StoreFactory for LogStoreOptions {
    fn create(
        &self,
        device: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        let cfg = self.config(device.as_ref(), ctx)?;
        let store = LogStore::create(device, cfg)?;
        if self.prefill {
            store.populate(ctx.data_pages).map_err(|e| match e {
                StoreError::Full(m) => StoreError::Full(format!(
                    "log-structured prefill: {m} (give the store more room: size=, segments= or a larger device)"
                )),
                e => e,
            })?;
        }
        Ok(Box::new(store))
    }

    fn open(
        &self,
        device: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        let cfg = self.config(device.as_ref(), ctx)?;
        Ok(Box::new(LogStore::open(device, cfg)?))
    }

    fn check(&self, page_size: usize) -> Result<(), ConfigError> {
        let mut cfg = self.base(page_size, self.clock.unwrap_or(TimeBase::Writes));
        cfg.validate().map_err(|e| registry::invalid(KIND, e))?;
        if let Space::Segments(n) = self.space {
            let c = capacity_for_segments(&mut cfg, n);
            cfg.layout_for(c).map_err(|e| registry::invalid(KIND, e))?;
        }
        Ok(())
    }

    fn wants_data_pages(&self) -> bool {
        true
    }
}

/// The registry's parse function: validated options to the factory.
pub(crate) fn parse_options(o: &Options) -> Result<Box<dyn StoreFactory>, ConfigError> {
    Ok(Box::new(LogStoreOptions::from_options(o)?))
}

#[cfg(test)]
mod tests;
