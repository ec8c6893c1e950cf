//! The read path: the data page, then its ICL log from one log page, then its logs still
//! in the WOB, applied in that order; the page's checksum is checked on the result.
//!
//! Paper (ICL paper, §2 *InCremental Logging*): "First, the write-optimized layer reads
//! the DBMS-page. If the DBMS-page has the corresponding ICL log, it reads the log-page
//! containing the ICL log. Then, it extracts the ICL logs belonging to the DBMS-page from
//! the log-page. Next, the logs inside the WOB are inspected. If the logs that belong to
//! the DBMS-page exist, they are extracted, too. The ICL logs from the log-page and the
//! logs from the WOB are reflected to the DBMS-page."
//!
//! # Picking a recovered page's record (not in the paper)
//! After a crash the mapping table lists every record of a page in the log space, newest
//! first. A record applies to the home page if applying it gives a page that passes its
//! check and carries the record's target version and checksum (a tombstone applies if the
//! home page *is* its target). The first read, flush or merge of the page tries them in
//! order and keeps the first that applies; if none does, the home page stands alone. Why
//! that is right:
//! - A record whose base home page is on the device applies. A synced record's base is
//!   durable, and a home page rewritten later (whole, or by a merge) makes every earlier
//!   record fail (its bytes are older than the home page's).
//! - So the newest record fails only if its base home write was lost (the record was
//!   unsynced) or the home page is newer; an older record that applies is then the
//!   durable state, and a home page that no record fits is newer than all of them.
//! - Reconstruction is only accepted through the page checksum, so a wrong combination is
//!   caught like a torn page (CRC32C).
//!
//! When the pick is not the newest record, the next flush writes the pick again (or a
//! tombstone), so that the stale records stop being candidates at the next recovery.
//! Outside recovery the mapping table is exact: a reconstruction that fails its check is
//! corruption, reported, never replaced by an older version.

use super::log::{Ident, Log};
use super::log_space::{LogCache, LogRead};
use super::mapping::{pack, Entry, LogRef};
use super::record::Record;
use super::wob::WobEntry;
use super::{IclStore, State};
use crate::page_requests;
use crate::{ReadOutcome, StoreError};
use flashbuf_core::page::{self, PageCheckError, PageState};
use flashbuf_core::PageId;
use flashbuf_device::Device;

/// Where the read path finds a page's ICL log.
enum Look {
    /// In this record.
    Log(LogRef),
    /// A recovered page: pick its record first.
    Resolve,
    /// Nowhere: the home page (and the WOB) hold the page.
    HomeOnly,
}

/// What picking a recovered page's record found.
#[derive(Debug)]
pub(super) struct Resolution {
    /// The record that applies (a tombstone included), if any.
    pub record: Option<(LogRef, Record)>,
    /// What the WOB should hold for the page so that the next flush supersedes the stale
    /// records (`None`: nothing to do).
    pub follow_up: Option<WobEntry>,
}

impl<D: Device> IclStore<D> {
    /// Reads `pid`'s home page (at `off`) into `buf` (the page, or its head in metadata
    /// mode); zeros if it lies beyond the device.
    pub(super) fn read_home(
        &self,
        st: &mut State,
        off: u64,
        buf: &mut [u8],
        merge: bool,
    ) -> Result<(), StoreError> {
        let ps = self.cfg.page_size;
        if off + ps as u64 > self.dev.len() {
            buf.fill(0);
            return Ok(());
        }
        self.poison.guard(page_requests::read_page(
            &self.dev,
            self.cfg.data,
            ps,
            off,
            buf,
        ))?;
        if merge {
            st.stats.data_reads_merge += 1;
        } else {
            st.stats.data_reads += 1;
        }
        Ok(())
    }

    /// The read path (see the module docs); `off` is the page's home offset.
    pub(super) fn read_locked(
        &self,
        st: &mut State,
        pid: PageId,
        off: u64,
        buf: &mut [u8],
    ) -> Result<ReadOutcome, StoreError> {
        self.read_home(st, off, buf, false)?;
        let mut follow_up = None;
        let look = match st.mapping.get(pid).map(|e| &e.state) {
            Some(Entry::Log { at, .. }) => Look::Log(*at),
            Some(Entry::Unresolved(_)) => Look::Resolve,
            Some(Entry::Home) | None => Look::HomeOnly,
        };
        match look {
            Look::Log(at) => {
                self.read_record(st, pid, &at, None, LogRead::Read, |r| r.apply(buf))?;
            }
            Look::Resolve => {
                let home = buf.to_vec();
                let r = self.resolve(st, pid, &home, None)?;
                if let Some((_, rec)) = r.record {
                    rec.log.apply(buf);
                }
                follow_up = r.follow_up;
            }
            Look::HomeOnly => {}
        }
        if let Some(WobEntry::Log { log, .. }) = st.wob.get(pid) {
            log.apply(buf);
        }
        let outcome = match page::check(buf, pid) {
            Ok(PageState::Sealed(_)) => ReadOutcome::Found,
            Ok(PageState::Unwritten) if self.written.contains(pid) => {
                return Err(StoreError::Corrupt {
                    pid,
                    reason: PageCheckError::Zeroed,
                })
            }
            Ok(PageState::Unwritten) => ReadOutcome::Unwritten,
            Err(reason) => {
                // Never hand out the bytes of a corrupt page.
                buf.fill(0);
                return Err(StoreError::Corrupt { pid, reason });
            }
        };
        if let Some(e) = follow_up {
            if st.wob.get(pid).is_none() {
                self.queue(st, pid, e)?;
            }
        }
        Ok(outcome)
    }

    /// Puts `e` into the WOB for `pid`, flushing first if it would not fit (no home write
    /// may be pending).
    pub(super) fn queue(&self, st: &mut State, pid: PageId, e: WobEntry) -> Result<(), StoreError> {
        if !st.wob.fits(pid, e.record_bytes()) {
            self.flush_wob(st)?;
        }
        st.wob.insert(pid, e);
        Ok(())
    }

    /// Picks the record of recovered page `pid` that applies to its home page `home` (see
    /// the module docs) and records the pick in the mapping table.
    pub(super) fn resolve(
        &self,
        st: &mut State,
        pid: PageId,
        home: &[u8],
        mut cache: Option<&mut LogCache>,
    ) -> Result<Resolution, StoreError> {
        let Some(e) = st.mapping.get(pid) else {
            return Ok(Resolution {
                record: None,
                follow_up: None,
            });
        };
        let epoch = e.epoch;
        let Entry::Unresolved(cands) = e.state.clone() else {
            return Ok(Resolution {
                record: None,
                follow_up: None,
            });
        };
        st.stats.resolutions += 1;
        let home_id = Ident::of(home);
        let home_ok = page::check(home, pid).is_ok();
        let mut scratch = home.to_vec();
        for (i, c) in cands.iter().enumerate() {
            let rec =
                self.read_record(st, pid, c, cache.as_deref_mut(), LogRead::Resolve, |v| {
                    v.into_record()
                })?;
            let applies = if rec.tombstone {
                rec.target == home_id
            } else {
                scratch.copy_from_slice(home);
                rec.log.apply(&mut scratch);
                matches!(page::check(&scratch, pid), Ok(PageState::Sealed(_)))
                    && Ident::of(&scratch) == rec.target
            };
            if !applies {
                continue;
            }
            let follow_up = if i == 0 {
                None
            } else if rec.tombstone {
                Some(WobEntry::Tombstone { target: home_id })
            } else {
                Some(WobEntry::Log {
                    log: Log::empty(),
                    target: rec.target,
                })
            };
            if i > 0 {
                st.stats.resolved_older += 1;
            }
            let state = if rec.tombstone {
                Entry::Home
            } else {
                Entry::Log {
                    at: *c,
                    spans: pack(rec.log.spans()),
                }
            };
            st.mapping.set(pid, state, epoch);
            return Ok(Resolution {
                record: Some((*c, rec)),
                follow_up,
            });
        }
        st.stats.resolved_home += 1;
        st.mapping.set(pid, Entry::Home, epoch);
        Ok(Resolution {
            record: None,
            follow_up: home_ok.then_some(WobEntry::Tombstone { target: home_id }),
        })
    }

    /// Resolves recovered page `pid` for a flush: reads its home page and picks its record,
    /// which the mapping table then names (its log page stays in `cache`).
    pub(super) fn resolve_reading_home(
        &self,
        st: &mut State,
        pid: PageId,
        cache: &mut LogCache,
    ) -> Result<(), StoreError> {
        let off = self.home_offset(pid)?;
        let (data, ps) = (self.cfg.data, self.cfg.page_size);
        let mut home = flashbuf_core::AlignedBuf::zeroed(self.cfg.image_bytes(), 4096);
        if off + ps as u64 <= self.dev.len() {
            let r = page_requests::read_page(&self.dev, data, ps, off, &mut home);
            self.poison.guard(r)?;
            st.stats.data_reads_resolve += 1;
        }
        self.resolve(st, pid, &home, Some(cache))?;
        Ok(())
    }
}
