//! A frame's state in FD-Buffer: its page, Two-Stack slots, pool tag and dirty bit.

use super::super::two_stack::{Slots, ABSENT};

/// A frame's page, its Two-Stack slots, pool tag and dirty bit: a hit reads them all, in
/// one cache line (32-byte aligned records, two to a line; the slots in an array of the
/// estimator's own cost a second cache miss per reference).
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
pub(in super::super) struct FrameState {
    pub(in super::super) page: u64,
    pub(in super::super) slots: Slots,
    pub(in super::super) tag: u8,
    pub(in super::super) dirty: bool,
}

impl FrameState {
    /// A free frame.
    pub(in super::super) const FREE: FrameState = FrameState {
        page: 0,
        slots: ABSENT,
        tag: FREE,
        dirty: false,
    };
}

/// Pool tag of a frame.
pub(in super::super) const FREE: u8 = 0;
pub(in super::super) const CLEAN: u8 = 1;
pub(in super::super) const DIRTY: u8 = 2;
