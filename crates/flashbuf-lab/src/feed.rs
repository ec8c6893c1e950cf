//! Streams a trace into the replay on a second thread.
//!
//! A reader thread decompresses and parses the trace in batches, maps page numbers into a
//! dense device address space ([`AddressMap`]), and hands the batches to the replay thread
//! through a bounded channel; emptied batches come back for reuse, so the steady state
//! allocates nothing.
//!
//! # Address compaction
//! Trace page numbers are sparse (PostgreSQL traces give each relation a range of 2^24
//! pages; MSR offsets give each relation 4 GiB), but stores lay pages out at
//! `page_id × page_size` and simulated flash needs a dense logical space. The map assigns
//! each aligned *extent* of [`EXTENT_PAGES`] page numbers a dense extent in order of first
//! touch; the offset within the extent is kept. Hence page-number distance, order and
//! alignment within an extent are preserved exactly: clusters of any size dividing 256
//! (CFDC's 64, erase blocks of up to 256 pages) keep their members, and sequential runs
//! stay sequential. The mapping depends only on the trace, so every run of a trace sees the
//! same dense ids.
//!
//! # Workload transforms
//! With [`FeedOptions::transform`] the reader thread also rewrites reads and writes epoch
//! by epoch ([`flashbuf_workload::dynamics::EpochTransformer`]); batches then hold whole epochs (their
//! length is a multiple of the epoch length), so the replay can switch per-epoch device
//! settings at batch-internal boundaries.
//!
//! # Stream models
//! A policy may hand out the part of its work that depends on the reference stream alone
//! (`flashbuf_pool::policy::stream`: FD-Buffer's Two-Stack estimators).
//! [`Feed::start_with_model`] runs such a model on the reader thread, over every
//! reference it delivers (after the limit and the transform; each chunk as it is mapped,
//! while in cache, when there is no transform), and sends its outputs with
//! the batch whose references produced them: [`Feed::outputs`] holds them after
//! [`Feed::next_batch`] returns that batch, to be handed to the policy before the batch
//! is replayed (and once more after the last batch: the model's final outputs). The
//! reader thread, idle while a slow policy replays, takes that work off the replay
//! thread.
//!
//! # Which thread bounds a run
//! The feed times its two sides ([`FeedTimes`], in [`FeedSummary::times`]): the reader's
//! decoding and stream model, the reader's waits on a full channel and the consumer's
//! waits for a batch. `flashbuf bench` reports them for its best run.
//!
//! # Whole traces in memory
//! Offline policies and the cost bounds need the whole (mapped, transformed) trace:
//! [`Feed::collect_all`] drains a feed into one vector (16 bytes per reference) and
//! [`Feed::from_memory`] replays such a vector through the same interface.
//!
//! # One decode for many runs
//! A [`SharedTrace`] is a trace decoded once (mapped and transformed, 16 bytes per
//! reference) behind an `Arc`: the runs of a `compare` matrix replay it from memory instead
//! of each parsing the file again ([`SharedTrace::feed`]). It is made only when the trace
//! fits a memory budget ([`SharedTrace::decode`] gives up past it).

use crate::LabError;
use flashbuf_pool::policy::{StreamModel, StreamOutput};
use flashbuf_trace::{Format, PageRef, TraceError, TraceReader};
use flashbuf_workload::dynamics::{EpochTransformer, WorkloadTransform};
use std::cell::RefCell;
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

mod map;
mod reader;
mod shared;
mod times;

pub use map::AddressMap;
pub(crate) use map::PageBits;
use reader::{run_reader, Stages};
pub use shared::SharedTrace;
pub use times::FeedTimes;
use times::Tally;

/// Page numbers per extent of the address map.
pub const EXTENT_PAGES: u64 = 256;
/// References per batch.
pub const BATCH_REFS: usize = 1 << 15;
/// Batches in flight between the threads.
const CHANNEL_BATCHES: usize = 8;

/// References per batch with epochs of `epoch_refs` (whole epochs per batch), or without.
fn batch_refs(epoch_refs: Option<usize>) -> usize {
    match epoch_refs {
        Some(e) => e * (BATCH_REFS / e).max(1),
        None => BATCH_REFS,
    }
}

/// What the reader thread reports at the end.
#[derive(Debug, Clone)]
pub struct FeedSummary {
    /// The format read.
    pub format: Format,
    /// References delivered.
    pub references: u64,
    /// Records skipped by the reader (non-read/write commands).
    pub skipped: u64,
    /// Distinct pages referenced.
    pub distinct_pages: u64,
    /// The address map built.
    pub map: AddressMap,
    /// Where the reader thread and the replay spent the run (`None` for a trace replayed
    /// from memory, which has no reader thread).
    pub times: Option<FeedTimes>,
}

/// A batch, and the stream model's outputs its references produced.
type Batch = Result<(Vec<PageRef>, Vec<StreamOutput>), TraceError>;

/// What the reader thread does besides reading and mapping.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FeedOptions {
    /// Deliver at most this many references.
    pub limit: Option<u64>,
    /// Rewrite reads and writes per epoch: the transform, the epoch length and the seed.
    pub transform: Option<(WorkloadTransform, u64, u64)>,
}

/// A trace reader thread, or a trace held in memory.
pub struct Feed {
    src: Source,
    done: bool,
    /// The stream model's outputs received and not yet taken.
    outputs: Vec<StreamOutput>,
    /// The consumer's time waiting for batches.
    waited: Tally,
}

enum Source {
    Thread {
        rx: Receiver<Batch>,
        back: SyncSender<Vec<PageRef>>,
        handle: Option<JoinHandle<FeedSummary>>,
    },
    Memory {
        refs: Arc<[PageRef]>,
        pos: usize,
        batch: usize,
        spare: RefCell<Vec<Vec<PageRef>>>,
        summary: Option<FeedSummary>,
    },
}

impl Feed {
    /// Opens `path` (errors such as a missing file or an unknown format come back here)
    /// and starts the reader thread. At most `limit` references are delivered.
    pub fn start(
        path: &Path,
        format: Option<Format>,
        page_size: u32,
        limit: Option<u64>,
    ) -> Result<Self, LabError> {
        let opts = FeedOptions {
            limit,
            ..FeedOptions::default()
        };
        Self::start_with(path, format, page_size, &opts)
    }

    /// [`Feed::start`] with a workload transform.
    pub fn start_with(
        path: &Path,
        format: Option<Format>,
        page_size: u32,
        opts: &FeedOptions,
    ) -> Result<Self, LabError> {
        Self::start_with_model(path, format, page_size, opts, None)
    }

    /// [`Feed::start_with`], running `model` on the reader thread over every reference
    /// delivered (see the module documentation; its outputs in [`Feed::outputs`]).
    pub fn start_with_model(
        path: &Path,
        format: Option<Format>,
        page_size: u32,
        opts: &FeedOptions,
        model: Option<Box<dyn StreamModel>>,
    ) -> Result<Self, LabError> {
        let reader = TraceReader::open(path, format, page_size)?;
        let (tx, rx) = sync_channel::<Batch>(CHANNEL_BATCHES);
        let (back, back_rx) = sync_channel::<Vec<PageRef>>(CHANNEL_BATCHES + 2);
        let limit = opts.limit;
        let transform = opts
            .transform
            .map(|(t, epoch, seed)| EpochTransformer::new(t, epoch.max(1) as usize, seed));
        let handle = std::thread::Builder::new()
            .name("trace-reader".into())
            .spawn(move || {
                let mut stages = Stages {
                    transform,
                    model,
                    refs: Vec::new(),
                    outs: Vec::new(),
                    model_time: Tally::default(),
                };
                run_reader(reader, tx, back_rx, limit, &mut stages)
            })
            .map_err(LabError::Output)?;
        Ok(Self {
            src: Source::Thread {
                rx,
                back,
                handle: Some(handle),
            },
            done: false,
            outputs: Vec::new(),
            waited: Tally::default(),
        })
    }

    /// The most references a feed started with `opts` runs ahead of its consumer (the
    /// batches in flight, the one the reader fills and the one the consumer works on):
    /// how far ahead a stream model runs ([`Feed::start_with_model`]).
    pub fn refs_ahead(opts: &FeedOptions) -> u64 {
        let epoch = opts.transform.map(|(_, e, _)| e.max(1) as usize);
        ((CHANNEL_BATCHES + 2) * batch_refs(epoch)) as u64
    }

    /// A feed serving `refs` (already mapped and transformed) in batches, ending with
    /// `summary`.
    pub fn from_memory(refs: impl Into<Arc<[PageRef]>>, summary: FeedSummary) -> Self {
        Self {
            src: Source::Memory {
                refs: refs.into(),
                pos: 0,
                batch: BATCH_REFS,
                spare: RefCell::new(Vec::new()),
                summary: Some(FeedSummary {
                    times: None,
                    ..summary
                }),
            },
            done: false,
            outputs: Vec::new(),
            waited: Tally::default(),
        }
    }

    /// Reads the rest of the feed into memory: every reference and the summary.
    pub fn collect_all(mut self) -> Result<(Vec<PageRef>, FeedSummary), LabError> {
        let mut all = Vec::new();
        while let Some(b) = self.next_batch()? {
            all.extend_from_slice(&b);
            self.recycle(b);
        }
        Ok((all, self.finish()?))
    }

    /// [`Self::collect_all`], unless the feed holds more than `max_refs` references: then
    /// `None`, as soon as the budget is passed (dropping the feed ends the reader thread:
    /// its next send fails).
    pub fn collect_up_to(
        mut self,
        max_refs: u64,
    ) -> Result<Option<(Vec<PageRef>, FeedSummary)>, LabError> {
        let mut all = Vec::new();
        while let Some(b) = self.next_batch()? {
            if (all.len() + b.len()) as u64 > max_refs {
                return Ok(None);
            }
            all.extend_from_slice(&b);
            self.recycle(b);
        }
        Ok(Some((all, self.finish()?)))
    }

    /// The next batch of mapped references, or `None` at the end of the trace.
    pub fn next_batch(&mut self) -> Result<Option<Vec<PageRef>>, LabError> {
        if self.done {
            return Ok(None);
        }
        let rx = match &mut self.src {
            Source::Thread { rx, .. } => rx,
            Source::Memory {
                refs,
                pos,
                batch,
                spare,
                ..
            } => {
                if *pos >= refs.len() {
                    self.done = true;
                    return Ok(None);
                }
                let end = (*pos + *batch).min(refs.len());
                let mut b = spare.get_mut().pop().unwrap_or_default();
                b.extend_from_slice(&refs[*pos..end]);
                *pos = end;
                return Ok(Some(b));
            }
        };
        loop {
            match self.waited.time(|| rx.recv()) {
                Ok(Ok((b, outs))) => {
                    self.outputs.extend(outs);
                    // The model's final outputs come alone, after the last batch.
                    if !b.is_empty() {
                        return Ok(Some(b));
                    }
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e.into());
                }
                Err(_) => {
                    self.done = true;
                    return Ok(None);
                }
            }
        }
    }

    /// The stream model's outputs produced by the references of the batches returned so
    /// far (and, after the last batch, its final ones), oldest first, not yet taken.
    pub fn outputs(&mut self) -> &mut Vec<StreamOutput> {
        &mut self.outputs
    }

    /// Returns an emptied batch for reuse.
    pub fn recycle(&self, mut batch: Vec<PageRef>) {
        batch.clear();
        match &self.src {
            // The reader may have finished; then the batch is simply dropped.
            Source::Thread { back, .. } => {
                let _ = back.try_send(batch);
            }
            Source::Memory { spare, .. } => spare.borrow_mut().push(batch),
        }
    }

    /// Waits for the reader thread and returns its summary (after the last batch).
    pub fn finish(mut self) -> Result<FeedSummary, LabError> {
        match &mut self.src {
            Source::Thread { rx, handle, .. } => {
                // Drain so the reader is not blocked on a full channel.
                while let Ok(b) = rx.recv() {
                    b?;
                }
                let h = handle
                    .take()
                    .ok_or_else(|| LabError::Invariant("feed finished twice".into()))?;
                let mut summary = h
                    .join()
                    .map_err(|_| LabError::Invariant("trace reader thread panicked".into()))?;
                if let Some(t) = summary.times.as_mut() {
                    t.replay_wait_s = self.waited.secs();
                }
                Ok(summary)
            }
            Source::Memory { summary, .. } => summary
                .take()
                .ok_or_else(|| LabError::Invariant("feed finished twice".into())),
        }
    }
}
