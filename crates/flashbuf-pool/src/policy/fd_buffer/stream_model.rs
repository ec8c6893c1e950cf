//! FD-Buffer's Two-Stack estimators as a [`StreamModel`]: run where the references are
//! known first (a trace replay's reader thread), they send the policy advisor each
//! window's hit counters instead of being fed by the pool's thread.
//!
//! The estimators see `(page, read or write)` of every reference and nothing of the pool
//! (§4.3: CLRU and DLRU model every clean and dirty pool size at once), and with windows
//! of a fixed number of references (`window=N`, the default 5,000) the advisor reads them
//! at references known in advance: the `k`-th window's counters are a function of the
//! first `k·N` references alone. So [`FdBuffer::detach_stream_model`] hands the estimator
//! out when the window is `Window::Refs`; the model counts references, and at each
//! window's end sends the window's counters (and the stack work so far) as one output;
//! the advisor takes them, in order, when its window closes, and sends the emptied
//! counters back for reuse (no allocation per window in the steady state). Windows of a
//! cost bound (`window=cost`) close on the pool's own I/O: their estimator stays inline.
//! Decisions are the same either way (`tests/fd_buffer_stream_model.rs` compares every
//! figure and window record; the golden files run both ways).
//!
//! The frame-driven estimator keeps a resident page's slots beside its frame, a ghost's
//! in a map; the detached one has no frames, so every page's slots are in the map (the
//! estimator driven by pages alone, [`TwoStack::access`]): the same stacks and counts.

use super::two_stack::{HitCounters, TwoStack};
use crate::policy::stream::{StreamModel, StreamOutput};
use flashbuf_core::PageId;
use std::collections::VecDeque;
use std::sync::mpsc::{channel, Receiver, Sender};

/// What the detached estimator sends the policy: at a window's end its counters, at the
/// stream's end none; and the estimator's stack work so far.
pub(super) struct EstimatorOutput {
    window: Option<HitCounters>,
    stack_work: u64,
}

/// The detached estimator: the Two-Stack, fed by pages, cut into windows of `window` refs.
pub(super) struct EstimatorModel {
    est: TwoStack,
    window: u64,
    refs: u64,
    /// Emptied counters coming back from the policy.
    spare: Receiver<HitCounters>,
}

impl StreamModel for EstimatorModel {
    #[inline]
    fn observe(&mut self, page: PageId, write: bool, out: &mut Vec<StreamOutput>) {
        self.est.access(page.0, write);
        self.refs += 1;
        if self.refs == self.window {
            self.refs = 0;
            let m = self.est.counters().m();
            let mut next = self
                .spare
                .try_recv()
                .unwrap_or_else(|_| HitCounters::new(m));
            std::mem::swap(self.est.counters_mut(), &mut next);
            out.push(Box::new(EstimatorOutput {
                window: Some(next),
                stack_work: self.est.work(),
            }));
        }
    }

    fn finish(&mut self, out: &mut Vec<StreamOutput>) {
        out.push(Box::new(EstimatorOutput {
            window: None,
            stack_work: self.est.work(),
        }));
    }
}

/// The policy's side of a detached estimator.
#[derive(Debug)]
pub(super) struct Detached {
    /// Windows' counters received and not yet used, oldest first.
    pending: VecDeque<HitCounters>,
    /// Emptied counters go back to the model.
    recycle: Sender<HitCounters>,
    /// The estimator's stack work as last reported.
    pub(super) stack_work: u64,
    /// Windows that closed before their counters arrived (a broken contract; each keeps
    /// `M_c` as it was).
    pub(super) underruns: u64,
    /// The estimator's bytes per frame (it lives on, elsewhere).
    pub(super) bytes_per_frame: usize,
}

impl Detached {
    /// Detaches `est` (which no reference has reached yet) with windows of `window` refs.
    pub(super) fn new(est: TwoStack, window: u64) -> (Self, EstimatorModel) {
        let (recycle, spare) = channel();
        let bytes_per_frame = est.bytes_per_frame();
        let model = EstimatorModel {
            est,
            window: window.max(1),
            refs: 0,
            spare,
        };
        let me = Self {
            pending: VecDeque::new(),
            recycle,
            stack_work: 0,
            underruns: 0,
            bytes_per_frame,
        };
        (me, model)
    }

    /// Takes an output of the model; `Err` if it is not the estimator's.
    pub(super) fn accept(&mut self, output: StreamOutput) -> Result<(), StreamOutput> {
        match output.downcast::<EstimatorOutput>() {
            Ok(o) => {
                self.pending.extend(o.window);
                self.stack_work = o.stack_work;
                Ok(())
            }
            Err(other) => Err(other),
        }
    }

    /// The next window's counters, if they arrived.
    pub(super) fn next_window(&mut self) -> Option<HitCounters> {
        self.pending.pop_front()
    }

    /// Counters emptied by the advisor, back to the model (dropped if it is gone).
    pub(super) fn give_back(&self, c: HitCounters) {
        let _ = self.recycle.send(c);
    }
}
