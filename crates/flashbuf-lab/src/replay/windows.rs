//! Per-window samples of a pool replay: resident clean and dirty frames, and the device's
//! read time against its whole time over the window (On et al., "FD-Buffer", IEEE TC
//! 2014, §5.3: Fig. 4 plots the clean pages during TPC-C and "the ratio of the total read
//! cost to the total I/O cost for each workload estimation window"; Fig. 5 their mean),
//! and the dirty pages per write cluster over the measured part (Fig. 6,
//! [`crate::cluster_runs`]).
//!
//! Samples start when the measurement does (after the warm-up) and are taken every
//! [`WINDOW_REFS`] references (FD-Buffer's default window), or every `frames` references
//! if the pool is larger, so that the O(frames) scan of
//! [`flashbuf_pool::BufferPool::resident_counts`] costs at most one frame per reference.

use crate::cluster_runs::{ClusterRunTally, ClusterRuns};
use crate::result::RunResult;
use flashbuf_device::IoCounts;
use flashbuf_pool::BufferPool;
use flashbuf_store::PageStore;
use std::sync::Arc;

/// References per sample window (FD-Buffer's workload-estimation window, §4.4).
pub const WINDOW_REFS: u64 = 5_000;

/// One window's sample.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WindowSample {
    /// Position (references replayed, warm-up included) at the window's end.
    pub end_ref: u64,
    /// Resident clean pages at the window's end.
    pub clean_pages: u64,
    /// Resident dirty pages at the window's end.
    pub dirty_pages: u64,
    /// Device read time during the window, µs.
    pub read_time_us: f64,
    /// Device time (reads and writes) during the window, µs.
    pub device_time_us: f64,
}

impl WindowSample {
    /// Read time / device time of the window (`None` if the device was idle).
    pub fn read_share(&self) -> Option<f64> {
        (self.device_time_us > 0.0).then(|| self.read_time_us / self.device_time_us)
    }
}

/// The sampler of one pool replay.
pub(super) struct Windows {
    window_refs: u64,
    /// Position of the next sample; `None` until the measurement starts.
    next: Option<u64>,
    last_io: Option<IoCounts>,
    samples: Vec<WindowSample>,
    tally: Arc<ClusterRunTally>,
    runs0: ClusterRuns,
    runs: Option<ClusterRuns>,
}

impl Windows {
    /// A sampler for a pool of `frames` whose writes `tally` counts.
    pub(super) fn new(frames: usize, tally: Arc<ClusterRunTally>) -> Self {
        Self {
            window_refs: WINDOW_REFS.max(frames as u64),
            next: None,
            last_io: None,
            samples: Vec::new(),
            tally,
            runs0: ClusterRuns::default(),
            runs: None,
        }
    }

    /// The measurement starts at position `pos` (the device's figures `io` then).
    pub(super) fn start(&mut self, pos: u64, io: Option<IoCounts>) {
        self.next = Some(pos + self.window_refs);
        self.last_io = io;
        self.runs0 = self.tally.snapshot();
    }

    /// References from `pos` to the next sample (`usize::MAX` before the start).
    pub(super) fn until_next(&self, pos: u64) -> usize {
        self.next
            .map_or(usize::MAX, |n| n.saturating_sub(pos).max(1) as usize)
    }

    /// Samples if `pos` reached the next sample's position.
    pub(super) fn at<S: PageStore>(
        &mut self,
        pos: u64,
        pool: &BufferPool<S>,
        io: Option<IoCounts>,
    ) {
        let Some(n) = self.next.filter(|&n| pos >= n) else {
            return;
        };
        let c = pool.resident_counts();
        let (read_us, total_us) = match (io, self.last_io) {
            (Some(now), Some(then)) => (
                now.read_time_us - then.read_time_us,
                (now.read_time_us + now.write_time_us) - (then.read_time_us + then.write_time_us),
            ),
            _ => (0.0, 0.0),
        };
        self.samples.push(WindowSample {
            end_ref: pos,
            clean_pages: c.clean_frames as u64,
            dirty_pages: c.dirty_frames as u64,
            read_time_us: read_us,
            device_time_us: total_us,
        });
        self.last_io = io;
        self.next = Some(n + self.window_refs);
    }

    /// The replay is over (before the final flush): the write runs are taken.
    pub(super) fn end(&mut self) {
        if self.next.is_some() {
            self.runs = Some(self.tally.snapshot() - self.runs0);
        }
    }

    /// Adds the figures to `r`.
    pub(super) fn annotate(self, r: &mut RunResult) {
        let n = self.samples.len();
        if n > 0 {
            let mean = |f: fn(&WindowSample) -> u64| {
                self.samples.iter().map(|s| f(s) as f64).sum::<f64>() / n as f64
            };
            r.mean_clean_pages = Some(mean(|s| s.clean_pages));
            r.mean_dirty_pages = Some(mean(|s| s.dirty_pages));
        }
        if let Some(runs) = self.runs {
            r.cluster_write_runs = Some(runs.runs);
            r.dirty_pages_per_cluster_write = runs.pages_per_run();
            r.write_cluster_pages = Some(self.tally.cluster_pages());
        }
        r.window_samples = self.samples;
    }
}
