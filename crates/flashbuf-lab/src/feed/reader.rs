//! The reader thread's side of the feed: reading and mapping a batch, the transform and
//! the stream model over it (timed), and the loop that sends batches to the replay.

use super::times::Tally;
use super::{batch_refs, AddressMap, Batch, FeedSummary, FeedTimes, PageBits};
use flashbuf_pool::policy::{StreamModel, StreamOutput, StreamRef};
use flashbuf_trace::{PageRef, TraceError, TraceReader};
use flashbuf_workload::dynamics::EpochTransformer;
use std::sync::mpsc::{Receiver, SyncSender};

/// References read and mapped at a time: the mapping pass then finds them in cache.
const MAP_CHUNK_REFS: usize = 4096;

/// Reads up to `want` references and maps them (see [`MAP_CHUNK_REFS`]), looping until
/// `want` or the end of the trace (a transform needs whole epochs per batch). An error met
/// after some references were read is returned beside them, to be sent after the batch.
fn fill_batch(
    reader: &mut TraceReader,
    batch: &mut Vec<PageRef>,
    want: usize,
    map: &mut AddressMap,
    seen: &mut PageBits,
) -> (usize, Option<TraceError>) {
    let mut n = 0;
    while n < want {
        let start = batch.len();
        match reader.next_batch(batch, (want - n).min(MAP_CHUNK_REFS)) {
            Ok(0) => break,
            Ok(k) => {
                map.map_all(&mut batch[start..], seen);
                n += k;
            }
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}

/// What the reader thread does to each batch after reading and mapping it.
pub(super) struct Stages {
    pub(super) transform: Option<EpochTransformer>,
    pub(super) model: Option<Box<dyn StreamModel>>,
    /// The batch as the model sees it (kept between batches).
    pub(super) refs: Vec<StreamRef>,
}

impl Stages {
    /// Transforms `batch` (timed in `decode`), then lets the model observe it (timed in
    /// `model`); returns the model's outputs.
    fn apply(
        &mut self,
        batch: &mut [PageRef],
        decode: &mut Tally,
        model: &mut Tally,
    ) -> Vec<StreamOutput> {
        if let Some(t) = self.transform.as_mut() {
            decode.time(|| t.apply(batch));
        }
        let mut outs = Vec::new();
        if let Some(m) = self.model.as_mut() {
            let refs = &mut self.refs;
            model.time(|| {
                refs.clear();
                refs.extend(batch.iter().map(|r| StreamRef {
                    page: r.page,
                    write: r.op.is_write(),
                }));
                m.observe(refs, &mut outs);
            });
        }
        outs
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
    let (mut decode, mut model, mut waited) =
        (Tally::default(), Tally::default(), Tally::default());
    loop {
        let mut batch = back
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(batch_refs));
        let want = (limit - delivered).min(batch_refs as u64) as usize;
        if want == 0 {
            break;
        }
        let filled = decode.time(|| fill_batch(&mut reader, &mut batch, want, &mut map, &mut seen));
        let (got, late_error) = match filled {
            (0, Some(e)) => (Err(e), None),
            (n, e) => (Ok(n), e),
        };
        match got {
            Ok(0) => break,
            Ok(_) => {
                let outs = stages.apply(&mut batch, &mut decode, &mut model);
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
        model.time(|| m.finish(&mut outs));
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
            model_s: model.secs(),
            reader_wait_s: waited.secs(),
            replay_wait_s: 0.0,
        }),
    }
}
