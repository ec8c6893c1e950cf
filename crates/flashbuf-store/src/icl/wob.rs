//! The write-optimized buffer (WOB): logs of evicted dirty pages, in memory, until a
//! flush turns them into log pages.
//!
//! Paper (ICL paper, §2 *Write-optimized buffer*): the WOB "absorbs the frequent
//! DBMS-page writes by storing only the dirty regions and turning each of them into a
//! log"; "if the main memory space allocated for the WOB becomes full, a flush operation
//! to write the accumulated logs into log pages is performed".
//!
//! # Readings
//! - The capacity counts the bytes the entries' records take in a log page (header, ranges
//!   and content), so a full WOB is what one flush writes before copy-forward.
//! - One entry per page: a page evicted again before the flush has its logs united
//!   ([`super::log::Log`]), the newest bytes winning; the paper keeps one log per eviction,
//!   which applies to the same bytes.
//! - Besides logs the WOB holds *tombstones*: a page that went home whole while older
//!   records of it are in the log space gets a header-only record at the next flush, so
//!   recovery need not try those records (see `read.rs`). An empty log is a request to
//!   copy the page's current record forward unchanged (after recovery picked a record
//!   that is not the page's newest).

use super::log::{Ident, Log, LogBytes};
use super::record::RECORD_HEADER_BYTES;
use flashbuf_core::PageId;
use std::collections::BTreeMap;

/// What the WOB holds for one page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WobEntry {
    /// The page's changes since its last flush (its newest bytes in these ranges), and the
    /// identity of its newest version.
    Log {
        /// Ranges and bytes.
        log: Log,
        /// Version and checksum of the page they produce.
        target: Ident,
    },
    /// The page went home whole as version `target`; older records of it are in the log
    /// space.
    Tombstone {
        /// The home page's identity.
        target: Ident,
    },
}

impl WobEntry {
    /// Bytes its record takes in a log page.
    pub fn record_bytes(&self) -> usize {
        match self {
            WobEntry::Log { log, .. } => log.record_bytes(),
            WobEntry::Tombstone { .. } => RECORD_HEADER_BYTES,
        }
    }
}

/// The write-optimized buffer.
#[derive(Debug)]
pub struct Wob {
    entries: BTreeMap<PageId, WobEntry>,
    bytes: usize,
    capacity: usize,
    peak: usize,
    /// Heap content buffers of the logs it let go of (replaced or flushed), for the next
    /// logs ([`Wob::content_buffer`]): a write then allocates nothing once the WOB has
    /// cycled. At most `capacity` bytes of them.
    spare: Vec<LogBytes>,
    spare_bytes: usize,
}

impl Wob {
    /// An empty WOB of `capacity` record bytes.
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: BTreeMap::new(),
            bytes: 0,
            capacity,
            peak: 0,
            spare: Vec::new(),
            spare_bytes: 0,
        }
    }

    /// Record bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Most record bytes ever held.
    pub fn peak_bytes(&self) -> usize {
        self.peak
    }

    /// Capacity in record bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Pages with an entry.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no page has an entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry of `pid`.
    pub fn get(&self, pid: PageId) -> Option<&WobEntry> {
        self.entries.get(&pid)
    }

    /// Whether replacing `pid`'s entry by one of `record_bytes` stays within the capacity.
    pub fn fits(&self, pid: PageId, record_bytes: usize) -> bool {
        let old = self.get(pid).map_or(0, WobEntry::record_bytes);
        self.bytes - old + record_bytes <= self.capacity
    }

    /// Sets `pid`'s entry (replacing any).
    pub fn insert(&mut self, pid: PageId, e: WobEntry) {
        self.bytes += e.record_bytes();
        if let Some(old) = self.entries.insert(pid, e) {
            self.bytes -= old.record_bytes();
            self.recycle(old);
        }
        self.peak = self.peak.max(self.bytes);
    }

    /// Removes `pid`'s entry (its content buffer kept for the next logs).
    pub fn remove(&mut self, pid: PageId) {
        if let Some(e) = self.entries.remove(&pid) {
            self.bytes -= e.record_bytes();
            self.recycle(e);
        }
    }

    /// A content buffer for a new log: one the WOB let go of, or a new (inline) one.
    pub fn content_buffer(&mut self) -> LogBytes {
        match self.spare.pop() {
            Some(b) => {
                self.spare_bytes -= b.capacity();
                b
            }
            None => LogBytes::new(),
        }
    }

    /// Keeps `e`'s content buffer ([`Wob::give_back`]).
    fn recycle(&mut self, e: WobEntry) {
        if let WobEntry::Log { log, .. } = e {
            self.give_back(log.into_bytes());
        }
    }

    /// Keeps a content buffer for the next logs if it is on the heap and the spare ones
    /// stay within the capacity (a flush gives back those of the logs it wrote).
    pub fn give_back(&mut self, b: LogBytes) {
        if b.spilled() && self.spare_bytes + b.capacity() <= self.capacity {
            self.spare_bytes += b.capacity();
            self.spare.push(b);
        }
    }

    /// The pages with entries, in page order.
    pub fn pids(&self) -> Vec<PageId> {
        self.entries.keys().copied().collect()
    }

    /// Approximate bytes of memory: the entries (key, value, B-tree overhead of about a
    /// third), their logs' heap and the spare content buffers.
    pub fn memory_bytes(&self) -> usize {
        let per = std::mem::size_of::<PageId>() + std::mem::size_of::<WobEntry>();
        let heap: usize = self
            .entries
            .values()
            .map(|e| match e {
                WobEntry::Log { log, .. } => log.heap_bytes(),
                WobEntry::Tombstone { .. } => 0,
            })
            .sum();
        self.entries.len() * per * 4 / 3 + heap + self.spare_bytes
    }

    /// Checks the byte count, the capacity and each log's shape (logs of `kept`-byte page
    /// images: the page, or its head in metadata mode).
    pub fn check(&self, page_size: usize, kept: usize) -> Result<(), String> {
        let sum: usize = self.entries.values().map(WobEntry::record_bytes).sum();
        if sum != self.bytes {
            return Err(format!(
                "WOB counts {} bytes, its entries hold {sum}",
                self.bytes
            ));
        }
        if self.bytes > self.capacity {
            return Err(format!(
                "WOB holds {} bytes, above its capacity of {}",
                self.bytes, self.capacity
            ));
        }
        let spare: usize = self.spare.iter().map(|b| b.capacity()).sum();
        if spare != self.spare_bytes || spare > self.capacity {
            return Err(format!(
                "WOB counts {} bytes of spare content buffers, holds {spare} (capacity {})",
                self.spare_bytes, self.capacity
            ));
        }
        for (pid, e) in &self.entries {
            if let WobEntry::Log { log, .. } = e {
                log.check(page_size, kept)
                    .map_err(|m| format!("WOB log of {pid}: {m}"))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A replaced or removed entry's heap content goes to the next log (no allocation),
    /// up to the capacity, and is counted in the memory figure.
    #[test]
    fn let_go_content_buffers_are_reused_within_the_capacity() {
        let page = vec![7u8; 1024];
        let spans = || -> super::super::log::Spans { [(0, 32), (100, 400)].into_iter().collect() };
        let entry = |bytes: LogBytes| WobEntry::Log {
            log: Log::from_page_in(&page, spans(), bytes),
            target: Ident::default(),
        };
        let mut w = Wob::new(700);
        let first = entry(w.content_buffer());
        w.insert(PageId(1), first);
        let before = w.memory_bytes();
        // Replaced: the old content is kept, and the next log takes it.
        let second = entry(w.content_buffer());
        w.insert(PageId(1), second);
        assert_eq!(w.spare.len(), 1);
        assert!(w.memory_bytes() > before, "the spare buffer is counted");
        let reused = w.content_buffer();
        assert!(reused.spilled() && reused.capacity() >= 332);
        assert_eq!((w.spare.len(), w.spare_bytes), (0, 0));
        let ptr = reused.as_ptr();
        let log = Log::from_page_in(&page, spans(), reused);
        assert_eq!(log, Log::from_page(&page, spans()));
        assert_eq!(log.into_bytes().as_ptr(), ptr, "same heap buffer");
        // Removed: kept too, but never more than the capacity in all.
        w.remove(PageId(1));
        assert_eq!(w.spare.len(), 1);
        for p in 2..10 {
            w.insert(PageId(p), entry(LogBytes::new()));
            w.remove(PageId(p));
        }
        // Buffers of one size: as many as fit in the capacity.
        let each = w.spare[0].capacity();
        assert_eq!(w.spare.len(), w.capacity() / each);
        assert_eq!(w.spare_bytes, w.spare.len() * each);
    }

    #[test]
    fn counts_bytes_and_respects_capacity() {
        let mut w = Wob::new(200);
        let page = vec![1u8; 512];
        let log = Log::from_page(&page, [(0, 32), (100, 150)].into_iter().collect());
        let rb = log.record_bytes();
        assert!(w.fits(PageId(1), rb));
        w.insert(
            PageId(1),
            WobEntry::Log {
                log: log.clone(),
                target: Ident::default(),
            },
        );
        assert_eq!(w.bytes(), rb);
        // Replacing an entry counts only the difference.
        assert!(w.fits(PageId(1), 200));
        assert!(!w.fits(PageId(2), 200));
        w.insert(
            PageId(2),
            WobEntry::Tombstone {
                target: Ident::default(),
            },
        );
        assert_eq!(w.bytes(), rb + RECORD_HEADER_BYTES);
        w.check(512, 512).unwrap();
        assert_eq!(w.pids(), vec![PageId(1), PageId(2)]);
        w.remove(PageId(1));
        assert_eq!((w.bytes(), w.len(), w.peak_bytes()), (24, 1, rb + 24));
    }
}
