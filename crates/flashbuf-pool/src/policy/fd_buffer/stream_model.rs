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
//! in a map; the detached one has no frames: it keeps every page's slots in a table
//! indexed by page number ([`TwoStack::access_tabled`]), grown as pages come up to
//! [`DENSE_PAGES_MAX`] (a replay's page numbers are dense: `lab::feed` maps them), and in
//! the estimator's own map beyond it (the unit test renames pages past the cap: same outputs). The same
//! stacks and counts as the map for every page ([`TwoStack::access`]), which it replaced:
//! no hashing on the reader thread, where the estimator is now the larger half of the
//! work.
//!
//! The model takes a batch at a time ([`StreamModel::observe`]), so it knows the pages
//! ahead: the table slot of the reference [`TABLE_PREFETCH_AHEAD`] positions on starts
//! moving towards the core before the current one is worked on (perf: 18 % of the model's
//! samples sat on the load of the slot). `flashbuf bench --data none --runs 5` (best of
//! 5) on the zstd CSV of TPC-C w8, interleaved, stop 38: 16.2-17.1 -> 17.1-18.5 M refs/s.
//! Tried and dropped: also fetching the slot's stack entries half-way (16.0-16.8, the
//! extra loads cost more than they hid); 16 references ahead instead of 8 (no better).
//!
//! Each batch is cut at the windows' ends, and each piece goes to the estimator as one run
//! ([`TwoStack::access_tabled_run`]): the table grows once for the piece (to its largest
//! page), the window's count is checked once, and the stacks' representation is
//! dispatched once, so the reference loop is one monomorphic function. Stop 43 (OLTP t8,
//! binary page trace, cachegrind, whole run): the estimator's functions 558.9 M → 500.8 M
//! instructions with `fd-buffer`, 859.5 M → 773.3 M with `cost=clustered`; its time on
//! the reader (`bench --runs 3`, 4 interleaved rounds) 55.0–63.0 → 53.5–57.5 ms and
//! 75.0–80.4 → 70.7–73.0 ms. The same counts.

#[cfg(doc)]
use super::two_stack::TABLE_PREFETCH_AHEAD;
use super::two_stack::{HitCounters, Slots, TwoStack, ABSENT};
use crate::policy::stream::{StreamModel, StreamOutput, StreamRef};
use std::collections::VecDeque;
use std::sync::mpsc::{channel, Receiver, Sender};

/// What the detached estimator sends the policy: at a window's end its counters, at the
/// stream's end none; and the estimator's stack work so far.
pub(super) struct EstimatorOutput {
    window: Option<HitCounters>,
    stack_work: u64,
}

/// Pages whose slots the detached estimator keeps in its table (8 bytes a page, grown up
/// to the largest page seen): 128 MiB at most; pages beyond are kept in a map.
pub(super) const DENSE_PAGES_MAX: u64 = 1 << 24;

/// The most memory the counters of the windows in flight may take for the estimator to
/// be detached (about 64 bytes per frame a window: with the lab's 327,680 references
/// ahead and windows of 5,000 references, 67 windows, 5.1 MiB at `M = 1,241` frames; from
/// about 7,800 frames the estimator stays inline).
pub(super) const STREAM_MEMORY_MAX: u64 = 32 << 20;

/// Bytes of window counters in flight when a model with windows of `window` references,
/// each window's counters `counter_bytes`, runs `refs_ahead` references ahead of the pool (the windows ahead, the
/// one filling and the one the advisor holds).
pub(super) fn in_flight_bytes(counter_bytes: u64, window: u64, refs_ahead: u64) -> u64 {
    let windows = refs_ahead / window.max(1) + 2;
    windows.saturating_mul(counter_bytes)
}

/// The detached estimator: the Two-Stack, fed by pages, cut into windows of `window` refs.
pub(super) struct EstimatorModel {
    est: TwoStack,
    /// Slots of pages `0..dense.len()`, `ABSENT` where a page has no entry.
    dense: Vec<Slots>,
    window: u64,
    refs: u64,
    /// Emptied counters coming back from the policy.
    spare: Receiver<HitCounters>,
}

impl EstimatorModel {
    /// Grows the table to hold every page of `refs` below the cap (a page the table did
    /// not hold had no entry yet: below the cap, every page is in the table from its first
    /// reference on).
    #[inline]
    fn grow_table(&mut self, refs: &[StreamRef]) {
        let top = refs.iter().map(|r| r.page.0).max().unwrap_or(0);
        let want = top.min(DENSE_PAGES_MAX - 1);
        if want >= self.dense.len() as u64 {
            let len = (want as usize + 1).next_power_of_two();
            self.dense.resize(len.min(DENSE_PAGES_MAX as usize), ABSENT);
        }
    }

    /// Sends the window's counters; the next window counts into emptied ones.
    fn end_window(&mut self, out: &mut Vec<StreamOutput>) {
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

impl StreamModel for EstimatorModel {
    /// Every reference in order, in runs cut at the windows' ends (see the module
    /// documentation).
    fn observe(&mut self, mut refs: &[StreamRef], out: &mut Vec<StreamOutput>) {
        while !refs.is_empty() {
            let left = (self.window - self.refs).min(refs.len() as u64) as usize;
            let (run, rest) = refs.split_at(left);
            // Pages past the cap keep their slots in the estimator's own map.
            self.grow_table(run);
            self.est.access_tabled_run(&mut self.dense, run);
            self.refs += left as u64;
            if self.refs == self.window {
                self.end_window(out);
            }
            refs = rest;
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
            dense: Vec::new(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_core::rng::SplitMix64;
    use flashbuf_core::PageId;

    /// Every output's counters and stack work.
    fn outputs(est: TwoStack, trace: &[(u64, bool)]) -> Vec<(Option<HitCounters>, u64)> {
        let (_, mut model) = Detached::new(est, 50);
        let mut out = Vec::new();
        let refs: Vec<StreamRef> = trace
            .iter()
            .map(|&(p, w)| StreamRef {
                page: PageId(p),
                write: w,
            })
            .collect();
        // Batches of uneven lengths, windows ending inside them.
        for chunk in refs.chunks(333) {
            model.observe(chunk, &mut out);
        }
        model.finish(&mut out);
        out.into_iter()
            .map(|o| {
                let o = o.downcast::<EstimatorOutput>().unwrap();
                (o.window, o.stack_work)
            })
            .collect()
    }

    /// The table (and the map beyond its cap) give the counters of the estimator keeping
    /// every page in its own map (`TwoStack::access`), window by window, whatever the page
    /// numbers: pages renamed past `DENSE_PAGES_MAX` give the same outputs.
    #[test]
    fn table_and_map_count_as_the_page_driven_estimator() {
        let mut rng = SplitMix64::new(38);
        let trace: Vec<(u64, bool)> = (0..4_000)
            .map(|_| (rng.below(300), rng.below(4) == 0))
            .collect();
        let new = || TwoStack::for_owner(64, 4, true);
        let mut reference = new();
        let mut want = Vec::new();
        for (i, &(p, w)) in trace.iter().enumerate() {
            reference.access(p, w);
            if (i + 1).is_multiple_of(50) {
                want.push((Some(reference.counters().clone()), reference.work()));
                reference.clear_counters();
            }
        }
        want.push((None, reference.work()));
        assert_eq!(outputs(new(), &trace), want);
        let far = |p: u64| {
            if p.is_multiple_of(3) {
                DENSE_PAGES_MAX + p * 977
            } else {
                p
            }
        };
        let renamed: Vec<(u64, bool)> = trace.iter().map(|&(p, w)| (far(p), w)).collect();
        assert_eq!(outputs(new(), &renamed), want);
    }
}
