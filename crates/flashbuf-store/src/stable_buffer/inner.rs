//! The store's shared state: what the mutex guards ([`State`]) and everything the store,
//! its writers, readers and flushers share ([`Inner`]).

use super::layout::Layout;
use super::sbtt::{Sbtt, SlotBits};
use super::{IncrementalRecognizer, PatternParams, StableBufferConfig, StableBufferStats};
use crate::counters::StoreCounters;
use crate::growth::Growth;
use crate::scratch::Scratch;
use crate::state::StateArea;
use crate::written_map::WrittenMap;
use crate::Poison;
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

/// What the promise record needs of a slot besides its destination.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct SlotMeta {
    /// Staging sequence number of the slot's current image.
    pub(super) seq: u64,
    /// Version of the page it holds.
    pub(super) version: u64,
}

/// A page whose promised version was lost (found by recovery; see [`promise`](super::promise)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Lost {
    /// The version a completed sync promised.
    pub(super) promised: u64,
    /// The version the home copy holds (0: none or unreadable).
    pub(super) found: u64,
}

/// What the mutex guards.
#[derive(Debug)]
pub(super) struct State {
    pub(super) sbtt: Sbtt,
    pub(super) bits: SlotBits,
    pub(super) recognizer: Option<IncrementalRecognizer>,
    pub(super) next_seq: u64,
    /// Bumped whenever a slot write starts (readers detect slot reuse).
    pub(super) slot_write_gen: u64,
    /// Bumped whenever a flush is about to write home pages.
    pub(super) home_write_gen: u64,
    pub(super) flushes_in_flight: u32,
    pub(super) syncs_in_flight: u32,
    /// In-place slot writes in flight (a promise sync waits for them).
    pub(super) in_place_in_flight: u32,
    /// Sequence numbers of the slot writes in flight (the promise's high-water mark
    /// stays below them: see [`promise`](super::promise)).
    pub(super) seqs_in_flight: std::collections::BTreeSet<u64>,
    /// A promise sync is waiting for in-place writes: none may start.
    pub(super) promise_fence: bool,
    /// Per slot: sequence and version of its image (meaningful while mapped).
    pub(super) meta: Vec<SlotMeta>,
    /// Pages whose promised version is lost.
    pub(super) lost: HashMap<u64, Lost>,
    pub(super) shutdown: bool,
    pub(super) stats: StableBufferStats,
    /// The slot-reuse rule of background flushes (`background.rs`).
    pub(super) joins: super::background::Joins,
}

#[derive(Debug)]
pub(super) struct Inner<D> {
    pub(super) dev: D,
    pub(super) cfg: StableBufferConfig,
    pub(super) layout: Layout,
    pub(super) salt: u64,
    pub(super) params: PatternParams,
    pub(super) state: Mutex<State>,
    /// Signalled on every state change writers or readers may wait for.
    pub(super) changed: Condvar,
    /// Wakes the background flusher.
    pub(super) flusher_wake: Condvar,
    pub(super) sync_lock: Mutex<()>,
    pub(super) grow: Growth,
    /// The A/B state record: data extent, promise record and written-page map.
    pub(super) state_area: StateArea,
    /// Pages ever written (`crate::written_map`): one whose home reads as zeros while
    /// nothing stages it lost its contents at rest.
    pub(super) written: WrittenMap,
    /// Test hook: promise syncs skip the in-place fence (simulates bug C).
    pub(super) unfenced_sync: AtomicBool,
    pub(super) poison: Poison,
    pub(super) counters: StoreCounters,
    /// The device's background queue, when proactive flushes run on it (`background.rs`).
    pub(super) background: Option<super::background::BackgroundQueue>,
    /// Buffers for a write's slot image and a flush's pages, reused
    /// ([`crate::scratch`]).
    pub(super) scratch: Scratch,
}
