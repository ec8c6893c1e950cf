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

use crate::LabError;
use flashbuf_core::PageId;
use flashbuf_trace::{Format, PageRef, TraceError, TraceReader};
use hashbrown::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Page numbers per extent of the address map.
pub const EXTENT_PAGES: u64 = 256;
/// References per batch.
pub const BATCH_REFS: usize = 1 << 15;
/// Batches in flight between the threads.
const CHANNEL_BATCHES: usize = 8;

/// Maps trace page numbers to dense page ids, extent by extent in order of first touch.
#[derive(Debug, Default, Clone)]
pub struct AddressMap {
    extents: HashMap<u64, u64>,
    last: Option<(u64, u64)>,
}

impl AddressMap {
    /// The dense id of trace page `page`, assigning a new extent on first touch.
    ///
    /// ```
    /// use flashbuf_core::PageId;
    /// use flashbuf_lab::feed::AddressMap;
    /// let mut m = AddressMap::default();
    /// assert_eq!(m.map(PageId((5 << 24) + 3)), PageId(3));
    /// assert_eq!(m.map(PageId(7 << 24)), PageId(256));
    /// assert_eq!(m.map(PageId((5 << 24) + 300)), PageId(512 + 44));
    /// ```
    #[inline]
    pub fn map(&mut self, page: PageId) -> PageId {
        let ext = page.0 / EXTENT_PAGES;
        let off = page.0 % EXTENT_PAGES;
        let dense = match self.last {
            Some((e, d)) if e == ext => d,
            _ => {
                let n = self.extents.len() as u64;
                let d = *self.extents.entry(ext).or_insert(n);
                self.last = Some((ext, d));
                d
            }
        };
        PageId(dense * EXTENT_PAGES + off)
    }

    /// Number of dense page ids in use (extents × [`EXTENT_PAGES`]).
    pub fn pages_count(&self) -> u64 {
        self.extents.len() as u64 * EXTENT_PAGES
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
}

type Batch = Result<Vec<PageRef>, TraceError>;

/// A running trace reader thread.
pub struct Feed {
    rx: Receiver<Batch>,
    back: SyncSender<Vec<PageRef>>,
    handle: Option<JoinHandle<FeedSummary>>,
    done: bool,
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
        let reader = TraceReader::open(path, format, page_size)?;
        let (tx, rx) = sync_channel::<Batch>(CHANNEL_BATCHES);
        let (back, back_rx) = sync_channel::<Vec<PageRef>>(CHANNEL_BATCHES + 2);
        let path: PathBuf = path.to_path_buf();
        let handle = std::thread::Builder::new()
            .name("trace-reader".into())
            .spawn(move || run_reader(reader, tx, back_rx, limit, &path))
            .map_err(LabError::Output)?;
        Ok(Self {
            rx,
            back,
            handle: Some(handle),
            done: false,
        })
    }

    /// The next batch of mapped references, or `None` at the end of the trace.
    pub fn next_batch(&mut self) -> Result<Option<Vec<PageRef>>, LabError> {
        if self.done {
            return Ok(None);
        }
        match self.rx.recv() {
            Ok(Ok(b)) => Ok(Some(b)),
            Ok(Err(e)) => {
                self.done = true;
                Err(e.into())
            }
            Err(_) => {
                self.done = true;
                Ok(None)
            }
        }
    }

    /// Returns an emptied batch for reuse.
    pub fn recycle(&self, mut batch: Vec<PageRef>) {
        batch.clear();
        // The reader may have finished; then the batch is simply dropped.
        let _ = self.back.try_send(batch);
    }

    /// Waits for the reader thread and returns its summary (after the last batch).
    pub fn finish(mut self) -> Result<FeedSummary, LabError> {
        // Drain so the reader is not blocked on a full channel.
        while let Ok(b) = self.rx.recv() {
            b?;
        }
        let h = self
            .handle
            .take()
            .ok_or_else(|| LabError::Invariant("feed finished twice".into()))?;
        h.join()
            .map_err(|_| LabError::Invariant("trace reader thread panicked".into()))
    }
}

fn run_reader(
    mut reader: TraceReader,
    tx: SyncSender<Batch>,
    back: Receiver<Vec<PageRef>>,
    limit: Option<u64>,
    _path: &Path,
) -> FeedSummary {
    let mut map = AddressMap::default();
    let mut seen = PageSet::default();
    let mut delivered = 0u64;
    let limit = limit.unwrap_or(u64::MAX);
    loop {
        let mut batch = back
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH_REFS));
        let want = (limit - delivered).min(BATCH_REFS as u64) as usize;
        if want == 0 {
            break;
        }
        match reader.next_batch(&mut batch, want) {
            Ok(0) => break,
            Ok(_) => {
                for r in batch.iter_mut() {
                    r.page = map.map(r.page);
                    seen.insert(r.page.0);
                }
                delivered += batch.len() as u64;
                if tx.send(Ok(batch)).is_err() {
                    break;
                }
            }
            Err(e) => {
                let _ = tx.send(Err(e));
                break;
            }
        }
    }
    FeedSummary {
        format: reader.format(),
        references: delivered,
        skipped: reader.skipped(),
        distinct_pages: seen.len(),
        map,
    }
}

/// A bitmap of dense page ids.
#[derive(Debug, Default)]
struct PageSet {
    words: Vec<u64>,
    len: u64,
}

impl PageSet {
    #[inline]
    fn insert(&mut self, i: u64) {
        let (w, b) = ((i / 64) as usize, 1u64 << (i % 64));
        if w >= self.words.len() {
            self.words.resize((w + 1).next_power_of_two(), 0);
        }
        if self.words[w] & b == 0 {
            self.words[w] |= b;
            self.len += 1;
        }
    }

    fn len(&self) -> u64 {
        self.len
    }
}
