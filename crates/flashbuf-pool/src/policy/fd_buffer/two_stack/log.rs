//! The estimator's events: what an owner tells a [`TwoStack`] driven by frames (admit,
//! access, release), recorded in order and applied later in a batch
//! ([`TwoStack::apply`]).
//!
//! Nothing reads the estimator between windows but the advisor, at a window's close
//! (FD-Buffer §4.4: the counters). So an owner may log each reference's event and apply
//! the log before the window closes, on its own thread or another: the stacks, slots,
//! ghosts and counters are then exactly those of applying each event at once, in the same
//! order (`super::super::estimators`).

use super::TwoStack;
use flashbuf_core::FrameId;

/// What happened to a frame's page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum EventKind {
    /// The page was loaded into the frame ([`TwoStack::admit`]).
    Admit,
    /// The page was read ([`TwoStack::access_resident`], Algorithm 3).
    Read,
    /// The page was written ([`TwoStack::access_resident`], Algorithm 4).
    Write,
    /// The page left the frame ([`TwoStack::release`]).
    Release,
}

/// One event of the log: 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// The frame's page.
    pub page: u64,
    /// The frame.
    pub frame: FrameId,
    /// What happened.
    pub kind: EventKind,
}

impl TwoStack {
    /// Applies `events` in order, as the same calls one by one would: [`TwoStack::admit`],
    /// [`TwoStack::access_resident`] (read or write) and [`TwoStack::release`]. The
    /// estimator must be driven by frames ([`TwoStack::new`]).
    pub fn apply(&mut self, events: &[Event]) {
        for e in events {
            match e.kind {
                EventKind::Admit => self.admit(e.frame, e.page),
                EventKind::Read => self.access_resident(e.frame, e.page, false),
                EventKind::Write => self.access_resident(e.frame, e.page, true),
                EventKind::Release => self.release(e.frame, e.page),
            }
        }
    }
}
