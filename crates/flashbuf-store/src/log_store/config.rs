//! Configuration of a [`LogStore`](super::LogStore): the format (page size, segment size,
//! space, page ids, data mode) and the cleaner (victim rule, the NIPU paper's knobs, the
//! time base).

use super::background::CleanerQueue;
use super::layout::{Layout, MIN_SEGMENTS, MIN_SEGMENT_BLOCKS};
use super::placement::{self, Placement};
use super::summary::summary_blocks;
use super::victim::{self, VictimRule};
use crate::{StoreError, Superblock};
use flashbuf_core::page::is_valid_page_size;
use flashbuf_core::DataMode;

pub use super::clock::TimeBase;

/// Which segments the cleaner takes (and, for the modern scheme, where blocks are placed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CleanerKind {
    /// Fewest live blocks, one log ([`victim::greedy`]).
    Greedy,
    /// Sprite LFS's (1−u)·age/(1+u), the cleaner's copies in a log of their own
    /// ([`victim::cost_benefit`], [`placement::TwoLogs`]).
    CostBenefit,
    /// Least recently modified first, NILFS2's `timestamp` policy, one log
    /// ([`victim::oldest`]).
    Oldest,
    /// SepBIT: six logs by inferred block invalidation time ([`placement::sepbit`]) and
    /// its artifact's selection ([`victim::sepbit`]).
    SepBit,
}

impl CleanerKind {
    /// Every kind, in the order the lab lists them.
    pub const ALL: [CleanerKind; 4] = [
        CleanerKind::Greedy,
        CleanerKind::CostBenefit,
        CleanerKind::Oldest,
        CleanerKind::SepBit,
    ];

    /// The option value.
    pub fn name(self) -> &'static str {
        match self {
            CleanerKind::Greedy => "greedy",
            CleanerKind::CostBenefit => "cost-benefit",
            CleanerKind::Oldest => "oldest",
            CleanerKind::SepBit => "sepbit",
        }
    }

    /// Parses an option value; the error lists the valid ones.
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                StoreError::Invalid(format!(
                    "unknown cleaner '{s}'; valid: greedy, cost-benefit, oldest, sepbit"
                ))
            })
    }

    /// The victim rule and the placement of this kind, for a store of `logical_pages`.
    pub fn build(self, logical_pages: u64) -> (Box<dyn VictimRule>, Box<dyn Placement>) {
        match self {
            CleanerKind::Greedy => (Box::new(victim::greedy::Greedy), placement::single()),
            CleanerKind::CostBenefit => (
                Box::new(victim::cost_benefit::CostBenefit),
                placement::two_logs(),
            ),
            CleanerKind::Oldest => (Box::new(victim::oldest::Oldest), placement::single()),
            CleanerKind::SepBit => (
                Box::new(victim::sepbit::SepBitSelection),
                Box::new(placement::sepbit::SepBit::new(logical_pages)),
            ),
        }
    }

    /// Whether the cleaner's copies keep their data's age in the segments they go to
    /// (cost-benefit, as Sprite LFS) rather than taking the time they are written.
    pub fn copies_keep_age(self) -> bool {
        self == CleanerKind::CostBenefit
    }

    /// Heads (open segments) the kind writes to.
    pub fn heads(self) -> u32 {
        match self {
            CleanerKind::SepBit => placement::sepbit::CLASSES as u32,
            CleanerKind::CostBenefit => 2,
            _ => 1,
        }
    }
}

/// Segments between periodic checkpoints unless a checkpoint costs more than 2% of them.
pub const DEFAULT_CHECKPOINT_SEGMENTS: u32 = 8;

/// Segments kept free for the cleaner ([`LogStoreConfig::reserve_segments`]).
pub const RESERVE_SEGMENTS: u32 = 2;

/// The cleaner's knobs (NIPU paper §4.6; NILFS2's `nilfs_cleanerd.conf`). Times are in
/// ticks of the store's [`TimeBase`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CleanerConfig {
    /// Victim rule and placement.
    pub kind: CleanerKind,
    /// CI: a background pass runs at most once per this many ticks.
    pub cleaning_interval_ticks: f64,
    /// NSPC: segments a background pass cleans.
    pub segments_per_clean: u32,
    /// PP: segments modified within this many ticks are not cleaned (foreground cleaning
    /// ignores it when nothing else can be reclaimed).
    pub protection_period_ticks: f64,
    /// Background cleaning starts when fewer free segments than this (beyond the reserve)
    /// remain; `None`: 10% of the segments (NILFS2's default).
    pub min_free_segments: Option<u32>,
    /// Background cleaning stops when more free segments than this (beyond the reserve)
    /// remain; `None`: 20% of the segments (NILFS2's default).
    pub max_free_segments: Option<u32>,
    /// Whether background cleaning runs at all (foreground cleaning always does).
    pub background: bool,
    /// Where background passes issue their requests.
    pub queue: CleanerQueue,
}

impl Default for CleanerConfig {
    /// Greedy, and the paper's Table 3 setting GC(PP 1 s, NSPC 2, CI 5 s) on the device's
    /// clock.
    fn default() -> Self {
        Self {
            kind: CleanerKind::Greedy,
            cleaning_interval_ticks: 5e6,
            segments_per_clean: 2,
            protection_period_ticks: 1e6,
            min_free_segments: None,
            max_free_segments: None,
            background: true,
            queue: CleanerQueue::default(),
        }
    }
}

/// Configuration of a [`LogStore`](super::LogStore).
///
/// The format fields (page size, segment size, space, page ids, data mode) are written in
/// the superblock: reopening with others is refused. The cleaner, the time base and the
/// checkpoint interval may change from one open to the next.
#[derive(Debug, Clone, PartialEq)]
pub struct LogStoreConfig {
    /// Page (block) size in bytes (a power of two, 512..=65536).
    pub page_size: usize,
    /// Bytes of a segment (a multiple of the page size; 8 MiB as in the paper's NILFS2).
    pub segment_bytes: u64,
    /// Bytes of the device the store occupies (superblock, checkpoints, segments). `None`:
    /// the device's current length when formatting, the superblock's when opening.
    pub capacity_bytes: Option<u64>,
    /// Page ids the store accepts, `0..logical_pages`. `None`: as many pages as the
    /// segments can hold with the cleaner's reserve left free (when formatting), the
    /// superblock's (when opening).
    pub logical_pages: Option<u64>,
    /// Segments start at a multiple of this (line them up with erase blocks).
    pub align_bytes: u64,
    /// The cleaner.
    pub cleaner: CleanerConfig,
    /// The clock of the cleaner's knobs and segment ages.
    pub time_base: TimeBase,
    /// A checkpoint is written after this many segments were filled since the last one
    /// (bounding the roll-forward at recovery); checkpoints are also written when the
    /// cleaner needs the segments it emptied. `None`: 8, or more if a checkpoint (which
    /// rewrites the whole map) would cost over 2% of the blocks written in between
    /// ([`LogStoreConfig::checkpoint_interval`]).
    pub checkpoint_segments: Option<u32>,
    /// Generation salt (tests pin it); `None` picks a fresh one when formatting.
    pub salt: Option<u64>,
    /// Whole pages, or only their metadata (a format field; [`super`], *Metadata only*).
    pub data: DataMode,
}

impl Default for LogStoreConfig {
    fn default() -> Self {
        Self {
            page_size: 4096,
            segment_bytes: 8 << 20,
            capacity_bytes: None,
            logical_pages: None,
            align_bytes: 4 << 20,
            cleaner: CleanerConfig::default(),
            time_base: TimeBase::Device,
            checkpoint_segments: None,
            salt: None,
            data: DataMode::Bytes,
        }
    }
}

impl LogStoreConfig {
    /// The defaults for `page_size`.
    pub fn with_page_size(page_size: usize) -> Self {
        Self {
            page_size,
            ..Self::default()
        }
    }

    /// Bytes of a data block's image in memory: a page as callers exchange it.
    pub fn block_bytes(&self) -> usize {
        self.data.buffer_bytes(self.page_size)
    }

    /// Blocks per segment.
    pub fn segment_blocks(&self) -> u32 {
        (self.segment_bytes / self.page_size as u64) as u32
    }

    /// Checks the values that do not depend on the device.
    pub fn validate(&self) -> Result<(), StoreError> {
        let bad = |m: String| Err(StoreError::Invalid(m));
        if !is_valid_page_size(self.page_size) {
            return bad(format!(
                "page size {} is not a power of two between 512 and 65536",
                self.page_size
            ));
        }
        let ps = self.page_size as u64;
        if !self.segment_bytes.is_multiple_of(ps)
            || self.segment_bytes / ps < u64::from(MIN_SEGMENT_BLOCKS)
            || self.segment_bytes / ps > 1 << 24
        {
            return bad(format!(
                "segment size {} bytes must be {MIN_SEGMENT_BLOCKS} to 2^24 whole pages of {ps} bytes",
                self.segment_bytes
            ));
        }
        if self.align_bytes == 0 || !self.align_bytes.is_multiple_of(ps) {
            return bad(format!(
                "alignment {} bytes must be a positive multiple of the page size {ps}",
                self.align_bytes
            ));
        }
        let c = &self.cleaner;
        let time_ok = |t: f64| t.is_finite() && t >= 0.0;
        if !time_ok(c.cleaning_interval_ticks) || !time_ok(c.protection_period_ticks) {
            return bad(format!(
                "cleaning interval {} and protection period {} must be finite and not negative",
                c.cleaning_interval_ticks, c.protection_period_ticks
            ));
        }
        if c.segments_per_clean == 0 || self.checkpoint_segments == Some(0) {
            return bad("segments per clean and checkpoint interval must be at least 1".into());
        }
        if let (Some(lo), Some(hi)) = (c.min_free_segments, c.max_free_segments) {
            if lo > hi {
                return bad(format!(
                    "min free segments {lo} exceeds max free segments {hi}"
                ));
            }
        }
        Ok(())
    }

    /// Data blocks of a segment (the rest holds its summary).
    pub fn data_blocks_per_segment(&self) -> u32 {
        data_blocks_per_segment(self.segment_blocks(), self.page_size)
    }

    /// Segments callers' writes leave to the cleaner's copies: two (a copy whose head finds
    /// no free segment goes to another open head, so two always suffice to clean one
    /// victim, whose live blocks fit in one segment).
    pub fn reserve_segments(&self) -> u32 {
        RESERVE_SEGMENTS
    }

    /// Segments filled between periodic checkpoints: `checkpoint_segments`, or by default
    /// 8 or enough that a checkpoint costs at most 2% of the blocks written in between.
    pub fn checkpoint_interval(&self, layout: &Layout) -> u32 {
        self.checkpoint_segments.unwrap_or_else(|| {
            let d = data_blocks_per_segment(layout.segment_blocks, self.page_size).max(1);
            DEFAULT_CHECKPOINT_SEGMENTS.max((50 * layout.slot_blocks).div_ceil(d))
        })
    }

    /// Segments that never hold live data in the worst case: the reserve and one open
    /// segment per head.
    pub fn kept_segments(&self) -> u64 {
        u64::from(self.reserve_segments()) + u64::from(self.cleaner.kind.heads())
    }

    /// The layout of a store of `capacity_bytes` with these settings.
    pub fn layout_for(&self, capacity_bytes: u64) -> Result<Layout, StoreError> {
        let reserved = Superblock::reserved_bytes(self.page_size);
        let bps = self.segment_blocks();
        let d = u64::from(self.data_blocks_per_segment());
        let build = |segments: u64, pages: u64| {
            let mut l = Layout::new(
                self.page_size,
                bps,
                segments as u32,
                pages,
                reserved,
                self.align_bytes,
            );
            while l.segments > 0 && l.total_bytes() > capacity_bytes {
                l = Layout::new(
                    self.page_size,
                    bps,
                    l.segments - 1,
                    pages,
                    reserved,
                    self.align_bytes,
                );
            }
            l
        };
        let most = capacity_bytes / self.segment_bytes;
        // The slots' size depends on the page count and the page count (by default) on the
        // segments left after the slots: settle it in a few rounds.
        let mut l = build(most, self.logical_pages.unwrap_or(0));
        for _ in 0..3 {
            let pages = self
                .logical_pages
                .unwrap_or(u64::from(l.segments).saturating_sub(self.kept_segments()) * d);
            l = build(most, pages);
        }
        let need = u64::from(MIN_SEGMENTS).max(self.kept_segments() + 1);
        if u64::from(l.segments) < need {
            return Err(StoreError::Full(format!(
                "{capacity_bytes} bytes hold only {} segments of {} bytes; the store needs at least {need}",
                l.segments, self.segment_bytes
            )));
        }
        if l.total_blocks() >= u64::from(u32::MAX) || l.logical_pages >= 1 << 40 {
            return Err(StoreError::Invalid(format!(
                "{} blocks or {} page ids exceed the 32-bit block address space",
                l.total_blocks(),
                l.logical_pages
            )));
        }
        Ok(l)
    }
}

/// Data blocks of a segment of `segment_blocks` blocks of `page_size` bytes: all but its
/// summary.
pub fn data_blocks_per_segment(segment_blocks: u32, page_size: usize) -> u32 {
    segment_blocks - summary_blocks(segment_blocks, page_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_fits_the_capacity_and_reserves_segments() {
        let cfg = LogStoreConfig {
            segment_bytes: 64 << 10,
            align_bytes: 4096,
            ..LogStoreConfig::with_page_size(4096)
        };
        let l = cfg.layout_for(10 << 20).unwrap();
        assert!(l.total_bytes() <= 10 << 20);
        assert!(l.segments >= 150, "{l:?}");
        let d = u64::from(cfg.data_blocks_per_segment());
        assert_eq!(d, 15);
        assert_eq!(cfg.kept_segments(), 3);
        assert_eq!(l.logical_pages, (u64::from(l.segments) - 3) * d);
        assert!(cfg.layout_for(100 << 10).is_err());
        assert_eq!(data_blocks_per_segment(2048, 4096), 2048 - 15);
        assert!(LogStoreConfig {
            segment_bytes: 5000,
            ..LogStoreConfig::default()
        }
        .validate()
        .is_err());
        assert_eq!(CleanerKind::parse("sepbit").unwrap(), CleanerKind::SepBit);
        assert!(CleanerKind::parse("lru")
            .unwrap_err()
            .to_string()
            .contains("greedy"));
    }
}
