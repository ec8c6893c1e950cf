//! `run --record FILE`: what an engine run asked of its store, as a range I/O CSV
//! (`op,page,ranges,new`, `../shared/traces/README.md`): `R,page,,` for every page read,
//! `W,page,ranges,new` for every page written, in the order the store saw them. The
//! ranges of a write are the dirty ranges the pool handed over — the bytes the engine's
//! write guards touched since the page was last written, merged (a superset of the bytes
//! that changed); a page's first write is `new = 1` with the whole page. `flashbuf replay
//! --trace FILE --format ranges --policy none` replays it below the buffer.

use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_store::{forward_store, PageStore, PageWrite, ReadOutcome, StoreError};
use hashbrown::HashSet;
use parking_lot::Mutex;
use std::fmt::Write as _;
use std::io::Write;

/// Where the lines go: a file, zstd-compressed if its name ends in `.zst`.
type Sink = Box<dyn Write + Send>;

struct Log {
    out: Sink,
    written: HashSet<u64>,
    line: String,
    error: Option<std::io::Error>,
}

/// A store wrapper that logs every read and write (see the module docs).
pub struct Recorder<S> {
    inner: S,
    log: Mutex<Log>,
}

impl<S: PageStore> Recorder<S> {
    /// Wraps `inner`, writing the header to `out` first.
    pub fn new(inner: S, mut out: Sink) -> std::io::Result<Self> {
        out.write_all(b"op,page,ranges,new\n")?;
        Ok(Self {
            inner,
            log: Mutex::new(Log {
                out,
                written: HashSet::new(),
                line: String::new(),
                error: None,
            }),
        })
    }

    /// Flushes the file; the first write error of the run, if any.
    pub fn finish(&self) -> std::io::Result<()> {
        let mut log = self.log.lock();
        if let Some(e) = log.error.take() {
            return Err(e);
        }
        log.out.flush()
    }

    fn note(&self, line: impl FnOnce(&mut String, &mut HashSet<u64>)) {
        let mut log = self.log.lock();
        let Log {
            out,
            written,
            line: buf,
            error,
        } = &mut *log;
        if error.is_some() {
            return;
        }
        buf.clear();
        line(buf, written);
        if let Err(e) = out.write_all(buf.as_bytes()) {
            *error = Some(e);
        }
    }

    fn note_write(&self, pid: PageId, dirty: &DirtyRanges) {
        let page_size = self.inner.page_size();
        self.note(|buf, written| {
            if written.insert(pid.0) {
                let _ = writeln!(buf, "W,{},0:{page_size},1", pid.0);
                return;
            }
            let _ = write!(buf, "W,{},", pid.0);
            let mut first = true;
            for r in dirty.iter() {
                if !first {
                    buf.push(';');
                }
                first = false;
                let _ = write!(buf, "{}:{}", r.start, r.end - r.start);
            }
            if first {
                // Nothing recorded as dirty: the whole page, so the line stays valid.
                let _ = write!(buf, "0:{page_size}");
            }
            buf.push_str(",0\n");
        });
    }
}

impl<S: PageStore> PageStore for Recorder<S> {
    fn read_page(&self, pid: PageId, buf: &mut [u8]) -> Result<ReadOutcome, StoreError> {
        self.note(|b, _| {
            let _ = writeln!(b, "R,{},,", pid.0);
        });
        self.inner.read_page(pid, buf)
    }
    fn write_page(&self, pid: PageId, page: &[u8], dirty: &DirtyRanges) -> Result<(), StoreError> {
        self.note_write(pid, dirty);
        self.inner.write_page(pid, page, dirty)
    }
    fn write_pages(&self, batch: &[PageWrite<'_>]) -> Result<(), StoreError> {
        for w in batch {
            self.note_write(w.pid, &w.dirty);
        }
        self.inner.write_pages(batch)
    }
    forward_store!(inner => name, page_size, prefetch_page, sync, stats, device_stats, check_invariants,
                   report);
}

/// Opens `path` for a recording (refusing to overwrite a file), zstd-compressed if its
/// name ends in `.zst`.
pub fn open_sink(path: &std::path::Path) -> std::io::Result<Sink> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    let w = std::io::BufWriter::new(f);
    if path.extension().is_some_and(|e| e == "zst") {
        Ok(Box::new(zstd::Encoder::new(w, 3)?.auto_finish()))
    } else {
        Ok(Box::new(w))
    }
}
