//! A frame's state in FD-Buffer: its page, pool tag and dirty bit.

/// A frame's page, pool tag and dirty bit: a hit reads them all, in one cache line
/// (16-byte aligned records, four to a line).
#[derive(Debug, Clone, Copy)]
#[repr(align(16))]
pub(in super::super) struct FrameState {
    pub(in super::super) page: u64,
    pub(in super::super) tag: u8,
    pub(in super::super) dirty: bool,
}

impl FrameState {
    /// A free frame.
    pub(in super::super) const FREE: FrameState = FrameState {
        page: 0,
        tag: FREE,
        dirty: false,
    };
}

/// Pool tag of a frame.
pub(in super::super) const FREE: u8 = 0;
pub(in super::super) const CLEAN: u8 = 1;
pub(in super::super) const DIRTY: u8 = 2;
