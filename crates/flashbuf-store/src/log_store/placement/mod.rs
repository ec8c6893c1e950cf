//! Placement: which head (open segment) a block is appended to.
//!
//! - [`Single`]: one log for callers' pages and the cleaner's copies alike, as NILFS2
//!   writes (greedy, oldest-first).
//! - [`TwoLogs`]: callers' pages in one log, the cleaner's copies in another, as Sprite
//!   LFS's cleaner writes its output into segments of its own, grouping old data
//!   together (Rosenblum & Ousterhout, TOCS 1992, §3.6 "age sort"; cost-benefit).
//! - [`sepbit`]: six logs by expected invalidation time, so that segments die whole.
//!
//! Like victim rules, a placement only decides: it never does I/O and never sees page
//! bytes.

pub mod sepbit;

use super::victim::SegmentView;
use std::fmt::Debug;

/// A placement scheme.
///
/// # Contract
/// `place_user` is called once per caller page write, in order, with the number of caller
/// writes before it; `place_gc` once per block the cleaner copies, after `collected` told
/// it which segment the block comes from. Returned heads are `< heads()`.
pub trait Placement: Send + Sync + Debug {
    /// The scheme's name.
    fn name(&self) -> &'static str;
    /// Heads (open segments) it writes to.
    fn heads(&self) -> usize;
    /// The head for a caller's write of page `pid`, the `user_writes`-th caller write, with
    /// `live_blocks` valid blocks in the store.
    fn place_user(&mut self, pid: u64, user_writes: u64, live_blocks: u64) -> usize;
    /// The head for the cleaner's copy of page `pid` out of a segment of class
    /// `victim_class`.
    fn place_gc(&mut self, pid: u64, victim_class: u8, user_writes: u64) -> usize;
    /// The cleaner is about to collect `victim` (nothing by default).
    fn collected(&mut self, _victim: &SegmentView, _user_writes: u64) {}
    /// Bytes of the scheme's own state (none by default).
    fn memory_bytes(&self) -> usize {
        0
    }
    /// Figures for the store's report (name, value; none by default).
    fn report(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// One log for everything (NILFS2).
#[derive(Debug, Clone, Copy, Default)]
pub struct Single;

/// A boxed [`Single`].
pub fn single() -> Box<dyn Placement> {
    Box::new(Single)
}

impl Placement for Single {
    fn name(&self) -> &'static str {
        "single-log"
    }
    fn heads(&self) -> usize {
        1
    }
    fn place_user(&mut self, _pid: u64, _user_writes: u64, _live_blocks: u64) -> usize {
        0
    }
    fn place_gc(&mut self, _pid: u64, _victim_class: u8, _user_writes: u64) -> usize {
        0
    }
}

/// Callers' pages in head 0, the cleaner's copies in head 1 (Sprite LFS). Reading of the
/// age sort: the copies keep their source segment's age ([`crate::log_store::LogStore`]
/// dates a segment of copies by its youngest source), so old data forms old segments;
/// blocks are not sorted one by one, as ages are kept per segment, not per block.
#[derive(Debug, Clone, Copy, Default)]
pub struct TwoLogs;

/// A boxed [`TwoLogs`].
pub fn two_logs() -> Box<dyn Placement> {
    Box::new(TwoLogs)
}

impl Placement for TwoLogs {
    fn name(&self) -> &'static str {
        "user-and-cleaner-logs"
    }
    fn heads(&self) -> usize {
        2
    }
    fn place_user(&mut self, _pid: u64, _user_writes: u64, _live_blocks: u64) -> usize {
        0
    }
    fn place_gc(&mut self, _pid: u64, _victim_class: u8, _user_writes: u64) -> usize {
        1
    }
}
