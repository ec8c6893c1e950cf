//! The store's mutable state (behind one lock) and the context its operations run in.

use super::background::Stamps;
use super::clock::Clock;
use super::config::LogStoreConfig;
use super::layout::{Layout, SegmentId};
use super::map::L2pMap;
use super::placement::Placement;
use super::stats::{LogStoreStats, RecoveryReport};
use super::summary::Entry;
use super::usage::UsageTable;
use super::victim::VictimRule;
use crate::Poison;
use flashbuf_core::{AlignedBuf, DeviceStats};
use flashbuf_device::Device;

/// What the operations need besides the state: the device and the fixed facts.
pub(crate) struct Ctx<'a, D: Device + ?Sized> {
    /// The device.
    pub dev: &'a D,
    /// The layout.
    pub layout: &'a Layout,
    /// The configuration.
    pub cfg: &'a LogStoreConfig,
    /// The format's salt.
    pub salt: u64,
    /// Fail-stop.
    pub poison: &'a Poison,
    /// Which queue the requests go to (`background`).
    pub lane: Lane<'a>,
}

/// The queue an operation's requests go to (see `background`).
#[derive(Clone, Copy)]
pub(crate) enum Lane<'a> {
    /// The main handle; background passes go to this background handle, if any.
    Main(Option<&'a dyn Device>),
    /// The background handle (a background pass).
    Background,
}

impl<D: Device + ?Sized> Ctx<'_, D> {
    /// Data blocks of a segment (the rest is its summary).
    pub fn data_blocks(&self) -> u32 {
        self.cfg.data_blocks_per_segment()
    }

    /// Most pages the store holds: every segment but the cleaner's reserve and one per
    /// head (an open segment may be nearly empty) can be full of live blocks, so the
    /// cleaner always finds a segment with reclaimable blocks.
    pub fn max_live_pages(&self) -> u64 {
        u64::from(self.layout.segments).saturating_sub(self.cfg.kept_segments())
            * u64::from(self.data_blocks())
    }
}

/// An open segment: where the next block goes, and the summary entries of its data
/// blocks so far (written as the segment's summary when it is full).
#[derive(Debug)]
pub(crate) struct Head {
    /// The class (placement head index).
    pub class: u8,
    /// The open segment, if any.
    pub seg: Option<SegmentId>,
    /// One entry per data block written; the next block goes to `entries.len()`.
    pub entries: Vec<Entry>,
}

impl Head {
    /// An idle head of `class`.
    pub fn new(class: u8) -> Self {
        Self {
            class,
            seg: None,
            entries: Vec::new(),
        }
    }
}

/// Stamped blocks waiting to be written, in order, with one device request.
#[derive(Debug)]
pub(crate) struct WriteQueue {
    /// The blocks' images, one block image (a page as callers exchange it) each.
    pub buf: AlignedBuf,
    /// Byte offset of each queued block.
    pub offsets: Vec<u64>,
}

impl WriteQueue {
    /// Blocks queued at most before they are written.
    pub const BLOCKS: usize = 64;

    /// An empty queue for block images of `block_bytes`.
    pub fn new(block_bytes: usize) -> Self {
        Self {
            buf: AlignedBuf::zeroed(Self::BLOCKS * block_bytes, 4096),
            offsets: Vec::with_capacity(Self::BLOCKS),
        }
    }
}

/// Background cleaning's daemon state (NILFS2 `cleanerd`'s running/idle hysteresis).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Background {
    /// Cleaning (between the thresholds) rather than idle.
    pub running: bool,
    /// When the last pass ran (ticks).
    pub last_pass_ticks: f64,
}

/// Everything the lock guards.
#[derive(Debug)]
pub(crate) struct State {
    /// Page → block.
    pub map: L2pMap,
    /// Segments.
    pub usage: UsageTable,
    /// Open segments, one per placement class.
    pub heads: Vec<Head>,
    /// Blocks stamped but not written yet.
    pub queue: WriteQueue,
    /// Placement scheme.
    pub placement: Box<dyn Placement>,
    /// Victim rule.
    pub rule: Box<dyn VictimRule>,
    /// Sequence of the next block.
    pub next_seq: u64,
    /// No block may get a sequence at or above this before a newer checkpoint (which
    /// raises it) is durable ([`super::checkpoint::CheckpointHeader::seq_limit`]).
    pub seq_limit: u64,
    /// Epoch of the next segment filling.
    pub next_epoch: u64,
    /// Every block below this sequence is durable.
    pub durable_seq: u64,
    /// The device was written since its last sync.
    pub unsynced: bool,
    /// Generation of the newest checkpoint.
    pub generation: u64,
    /// Segments sealed since the last checkpoint.
    pub sealed_since_checkpoint: u32,
    /// Caller page writes so far (persisted: SepBIT's and the `writes` clock).
    pub user_writes: u64,
    /// Every block below this sequence needs no promise record: it is in the newest
    /// durable checkpoint's map, or it was there when the store was opened (sequences
    /// recovery skipped were never written).
    pub covered_seq: u64,
    /// The cleaner's clock.
    pub clock: Clock,
    /// Background cleaning.
    pub background: Background,
    /// What background passes on the background queue touched (`background`).
    pub bg: Stamps,
    /// Counters since creation, the last reopen or the last populate.
    pub stats: LogStoreStats,
    /// Device counters when `stats` started.
    pub device_base: DeviceStats,
    /// What the last recovery found.
    pub recovery: Option<RecoveryReport>,
    /// The cleaner's read buffer, kept between segments (grown to the longest run of
    /// live blocks read, up to [`CLEAN_BUF_KEPT_BYTES`]); `None` until the first clean.
    pub clean_buf: Option<AlignedBuf>,
}

/// The largest cleaner read buffer kept between segments; a longer run's buffer is
/// dropped after its segment.
pub(crate) const CLEAN_BUF_KEPT_BYTES: usize = 1 << 20;

impl State {
    /// Ticks now.
    pub fn now<D: Device + ?Sized>(&self, dev: &D) -> f64 {
        self.clock.now(dev, self.user_writes)
    }
}
