//! The write path: a written page either goes home whole, or its changed bytes become a
//! log in the WOB.
//!
//! Paper (ICL paper, §2): the WOB absorbs evicted pages "by collecting dirty regions of the
//! DBMS-pages, turning the dirty regions as logs"; "as long as the size of an ICL log is
//! less than that of a DBMS-page, the benefit is preserved"; once "an ICL log grows enough
//! to make no benefits any longer" the ICL merge reflects it into the DBMS page.
//!
//! # Readings (issue 15, design.md §4)
//! - The caller's [`DirtyRanges`](flashbuf_core::DirtyRanges) say which bytes changed
//!   since the store last saw the page; the log holds those bytes plus the page header.
//! - A write whose own log record reaches the merge threshold goes home whole (first
//!   writes, which the pool marks wholly dirty, among them).
//! - A write whose page's logs *together* — its ICL log in the log space, its WOB log and
//!   this write — would reach the threshold is the merge the paper describes: the page is
//!   written home. The caller hands over the page's newest bytes, which are exactly what
//!   applying the logs to the home page gives, so the merge needs no read of the home page
//!   nor of the log page (the paper's merge reads both). The mapping table keeps each ICL
//!   log's ranges so that the sum is exact (`mapping.rs`).
//! - A page that goes home while records of it are in the log space leaves a tombstone in
//!   the WOB (see `read.rs` for why).
//! - Metadata only: the ranges are the logical page's, so every count above is the one
//!   bytes give; the log keeps the bytes of its ranges in the head, and a home write is a
//!   metadata-only request of the whole page.

use super::log::{record_bytes_of, union_spans, write_spans, Ident, Log};
use super::mapping::{unpack, Entry};
use super::wob::WobEntry;
use super::{IclStore, State};
use crate::page_requests;
use crate::{PageWrite, StoreError};
use flashbuf_device::Device;

/// Why a page goes home.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Home {
    /// The write alone changed at least the threshold.
    Whole,
    /// The page's logs reached the threshold.
    Merge,
}

/// Home writes of a batch not yet issued: (offset, page); inline for a few (a single
/// write-back allocates nothing).
pub(super) type PendingHomes<'a> = smallvec::SmallVec<[(u64, &'a [u8]); 4]>;

impl<D: Device> IclStore<D> {
    /// Applies a batch of checked writes (`offsets[i]` is `batch[i]`'s home offset).
    pub(super) fn write_locked(
        &self,
        st: &mut State,
        batch: &[PageWrite<'_>],
        offsets: &[u64],
    ) -> Result<(), StoreError> {
        let mut homes = PendingHomes::new();
        for (w, &off) in batch.iter().zip(offsets) {
            self.write_one(st, w, off, &mut homes)?;
        }
        self.write_homes(&mut homes)
    }

    fn write_one<'a>(
        &self,
        st: &mut State,
        w: &PageWrite<'a>,
        off: u64,
        homes: &mut PendingHomes<'a>,
    ) -> Result<(), StoreError> {
        let threshold = self.cfg.threshold_bytes();
        let spans = write_spans(&w.dirty, self.cfg.page_size);
        if record_bytes_of(&spans) >= threshold {
            return self.go_home(st, w, off, Home::Whole, homes);
        }
        loop {
            let wob_spans = match st.wob.get(w.pid) {
                Some(WobEntry::Log { log, .. }) => union_spans(log.spans(), &spans),
                _ => spans.clone(),
            };
            let together = match st.mapping.get(w.pid) {
                Some(e) => match &e.state {
                    Entry::Log { spans: icl, .. } => {
                        record_bytes_of(&union_spans(&unpack(icl), &wob_spans))
                    }
                    // Unresolved: bounded by the largest candidate plus the WOB log.
                    Entry::Unresolved(_) => e.log_record_bound() + record_bytes_of(&wob_spans),
                    Entry::Home => record_bytes_of(&wob_spans),
                },
                None => record_bytes_of(&wob_spans),
            };
            if together >= threshold {
                return self.go_home(st, w, off, Home::Merge, homes);
            }
            let bytes = record_bytes_of(&wob_spans);
            if !st.wob.fits(w.pid, bytes) {
                // The WOB is full: flush it (home pages first: a flush may read them),
                // then place this write again.
                self.write_homes(homes)?;
                self.flush_wob(st)?;
                continue;
            }
            let e = WobEntry::Log {
                log: Log::from_page_in(w.page, wob_spans, st.wob.content_buffer()),
                target: Ident::of(w.page),
            };
            debug_assert_eq!(e.record_bytes(), bytes);
            let old = st.wob.get(w.pid).map_or(0, WobEntry::record_bytes);
            st.stats.wob_logged_bytes += bytes.saturating_sub(old) as u64;
            st.wob.insert(w.pid, e);
            st.mapping.touch(w.pid, st.epoch);
            return Ok(());
        }
    }

    fn go_home<'a>(
        &self,
        st: &mut State,
        w: &PageWrite<'a>,
        off: u64,
        why: Home,
        homes: &mut PendingHomes<'a>,
    ) -> Result<(), StoreError> {
        st.wob.remove(w.pid);
        let logged = st.mapping.get(w.pid).is_some();
        if logged {
            // Its records in the log space no longer apply; none is read or merged again.
            st.mapping.set(w.pid, Entry::Home, st.epoch);
        }
        homes.push((off, w.page));
        match why {
            Home::Whole => st.stats.data_writes_whole += 1,
            Home::Merge => {
                st.stats.data_writes_merge += 1;
                st.stats.merges_threshold += 1;
            }
        }
        if logged {
            let e = WobEntry::Tombstone {
                target: Ident::of(w.page),
            };
            if !st.wob.fits(w.pid, e.record_bytes()) {
                self.write_homes(homes)?;
                self.flush_wob(st)?;
            }
            st.wob.insert(w.pid, e);
        }
        Ok(())
    }

    /// Issues the pending home writes as one device batch (growing the data area first).
    pub(super) fn write_homes(&self, homes: &mut PendingHomes<'_>) -> Result<(), StoreError> {
        if homes.is_empty() {
            return Ok(());
        }
        let ps = self.cfg.page_size;
        let end = homes.iter().map(|&(o, _)| o + ps as u64).max().unwrap_or(0);
        self.grow.ensure(&self.dev, &self.poison, end)?;
        let r = page_requests::write_pages(&self.dev, self.cfg.data, ps, homes);
        self.poison.guard(r)?;
        homes.clear();
        Ok(())
    }
}
