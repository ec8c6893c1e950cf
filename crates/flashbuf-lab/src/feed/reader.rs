//! The reader thread's side of the feed: reading and mapping a batch, the transform and
//! the stream model over it (timed), and the loop that sends batches to the replay.

use super::times::Tally;
use super::{batch_refs, AddressMap, Batch, FeedSummary, FeedTimes, PageBits};
use flashbuf_pool::policy::{StreamModel, StreamOutput, StreamRef};
use flashbuf_trace::{PageRef, TraceError, TraceReader};
use flashbuf_workload::dynamics::EpochTransformer;
use std::sync::mpsc::{Receiver, SyncSender};

/// References read and mapped at a time: the mapping pass then finds them in cache, and
/// so does the stream model's (see [`Stages`]).
const MAP_CHUNK_REFS: usize = 4096;

/// Reads up to `want` references and maps them (see [`MAP_CHUNK_REFS`]), looping until
/// `want` or the end of the trace (a transform needs whole epochs per batch); hands each
/// chunk to `stages` once mapped ([`Stages::chunk`]). An error met after some references
/// were read is returned beside them, to be sent after the batch.
fn fill_batch(
    reader: &mut TraceReader,
    batch: &mut Vec<PageRef>,
    want: usize,
    map: &mut AddressMap,
    seen: &mut PageBits,
    stages: &mut Stages,
) -> (usize, Option<TraceError>) {
    let mut n = 0;
    while n < want {
        let start = batch.len();
        match reader.next_batch(batch, (want - n).min(MAP_CHUNK_REFS)) {
            Ok(0) => break,
            Ok(k) => {
                map.map_all(&mut batch[start..], seen);
                stages.chunk(&batch[start..]);
                n += k;
            }
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}

/// What the reader thread does to the references after reading and mapping them: the
/// transform, batch by batch, and the stream model. Without a transform the model
/// observes each chunk of [`MAP_CHUNK_REFS`] as soon as it is mapped, while its
/// references are in cache (a batch of 32,768 references is 512 KiB, half the core's
/// L2 cache, and the model's view of it as much again: observed after the whole batch,
/// they came back from further away); with one, the whole transformed batch. Measured,
/// FD-Buffer on the zstd CSVs (`bench --data none --runs 3`, 3 interleaved rounds a
/// trace, M refs/s, the batch then the chunks): OLTP t8 19.97–20.83 → 20.35–20.86,
/// pgbench s20 24.13–24.54 → 25.15–25.66, TPC-C w4 22.27–22.63 → 21.95–22.74; in the
/// host's slower mode, where the reader's decoding time grows, t8 15.0–16.8 → 18.0–19.4
/// (4 rounds: decoding 61–72 ms → 49–54 ms) and pgbench s50 16.3–18.9 → 18.2–20.7.
pub(super) struct Stages {
    pub(super) transform: Option<EpochTransformer>,
    pub(super) model: Option<Box<dyn StreamModel>>,
    /// The references as the model sees them (kept between calls).
    pub(super) refs: Vec<StreamRef>,
    /// The model's outputs for the batch being filled.
    pub(super) outs: Vec<StreamOutput>,
    /// The model's time, counted apart from the decoding that encloses it.
    pub(super) model_time: Tally,
}

impl Stages {
    /// A chunk of the batch was read and mapped: the model observes it now if there is
    /// no transform.
    fn chunk(&mut self, chunk: &[PageRef]) {
        if self.transform.is_none() {
            self.observe(chunk);
        }
    }

    /// The batch is full: transforms it (timed in `decode`) and, with a transform, lets
    /// the model observe it; returns the model's outputs for the batch.
    fn finish_batch(&mut self, batch: &mut [PageRef], decode: &mut Tally) -> Vec<StreamOutput> {
        if let Some(t) = self.transform.as_mut() {
            decode.time(|| t.apply(batch));
            self.observe(batch);
        }
        std::mem::take(&mut self.outs)
    }

    /// The model (if any) observes `batch`, timed in `model_time`.
    fn observe(&mut self, batch: &[PageRef]) {
        let Some(m) = self.model.as_mut() else {
            return;
        };
        let (refs, outs) = (&mut self.refs, &mut self.outs);
        self.model_time.time(|| {
            refs.clear();
            refs.extend(batch.iter().map(|r| StreamRef {
                page: r.page,
                write: r.op.is_write(),
            }));
            m.observe(refs, outs);
        });
    }
}

/// The reader thread: reads, maps and stages batches until the limit, the end of the
/// trace or an error, sends them (an error after the batch it cut short), then the
/// model's final outputs; returns the summary with the thread's times.
pub(super) fn run_reader(
    mut reader: TraceReader,
    tx: SyncSender<Batch>,
    back: Receiver<Vec<PageRef>>,
    limit: Option<u64>,
    stages: &mut Stages,
) -> FeedSummary {
    let mut map = AddressMap::default();
    let mut seen = PageBits::default();
    let mut delivered = 0u64;
    let limit = limit.unwrap_or(u64::MAX);
    // With a transform, batches hold whole epochs.
    let batch_refs = batch_refs(stages.transform.as_ref().map(|t| t.epoch_refs()));
    let (mut decode, mut waited) = (Tally::default(), Tally::default());
    loop {
        let mut batch = back
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(batch_refs));
        let want = (limit - delivered).min(batch_refs as u64) as usize;
        if want == 0 {
            break;
        }
        // The model's time within is counted apart (`Stages::model_time`).
        let model_before = stages.model_time;
        let filled =
            decode.time(|| fill_batch(&mut reader, &mut batch, want, &mut map, &mut seen, stages));
        decode.subtract(stages.model_time.since(model_before));
        let (got, late_error) = match filled {
            (0, Some(e)) => (Err(e), None),
            (n, e) => (Ok(n), e),
        };
        match got {
            Ok(0) => break,
            Ok(_) => {
                let outs = stages.finish_batch(&mut batch, &mut decode);
                delivered += batch.len() as u64;
                if waited.time(|| tx.send(Ok((batch, outs)))).is_err() {
                    break;
                }
                if let Some(e) = late_error {
                    let _ = tx.send(Err(e));
                    break;
                }
            }
            Err(e) => {
                let _ = tx.send(Err(e));
                break;
            }
        }
    }
    if let Some(m) = stages.model.as_mut() {
        let mut outs = Vec::new();
        stages.model_time.time(|| m.finish(&mut outs));
        let _ = waited.time(|| tx.send(Ok((Vec::new(), outs))));
    }
    FeedSummary {
        format: reader.format(),
        references: delivered,
        skipped: reader.skipped(),
        distinct_pages: seen.count(),
        map,
        times: Some(FeedTimes {
            decode_s: decode.secs(),
            model_s: stages.model_time.secs(),
            reader_wait_s: waited.secs(),
            replay_wait_s: 0.0,
        }),
    }
}
