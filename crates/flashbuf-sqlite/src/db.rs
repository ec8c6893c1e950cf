//! [`FlashDb`]: SQLite's main database file as a flashbuf page store — the byte-level
//! operations the VFS maps SQLite's calls to (read, write, truncate, size, sync).
//!
//! # What SQLite sees
//! - A file of `db_pages × page_size` bytes. Reads past its end are short (the rest is
//!   zero), as SQLite expects of a file. Pages inside the file that were never written
//!   (a hole left by growing the file with `xTruncate`) read as zeros; they are written
//!   as zero pages at the next sync, so they read as zeros after a reopen too.
//! - Writes are whole pages at page offsets (SQLite writes its database file no other
//!   way); anything else is refused. A write of page 1 is refused unless SQLite's header
//!   declares the store's page size and 32 reserved bytes ([`crate::layout`]).
//! - `sync` makes every write before it durable: holes and the VFS record (file size)
//!   are written, then the backend syncs (the pool writes its dirty pages back first).
//!   Until then a crash may leave any page old or new (or, on stores that do not mask torn
//!   writes, refused as corrupt); SQLite's journal or WAL covers exactly those pages.
//!
//! # Versions
//! Pass-through writes are sealed with version `epoch << 32 | n` (n counts writes in this
//! opening; the epoch is bumped durably when the database is opened), so versions only
//! grow, across crashes and reopenings. The pool stamps its own versions (one more than
//! the page it loaded).

use crate::backend::{is_corrupt, Backend, Cache};
use crate::error::Error;
use crate::layout::{self, check_page1, page_id, sqlite_usable, RESERVED_BYTES};
use crate::meta::{Decoded, Meta};
use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::{AlignedBuf, DeviceStats, PageId};
use flashbuf_pool::PoolStats;
use flashbuf_store::{PageStore, StoreStats};
use parking_lot::Mutex;
use serde::Serialize;
use std::collections::BTreeSet;

/// Counters of the VFS calls on the main database file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct VfsCounters {
    /// `xRead` calls.
    pub reads: u64,
    /// `xWrite` calls (whole pages).
    pub writes: u64,
    /// `xSync` calls.
    pub syncs: u64,
    /// `xTruncate` calls.
    pub truncates: u64,
    /// Zero pages written for holes.
    pub hole_pages: u64,
    /// Writes of the VFS record.
    pub meta_writes: u64,
}

/// Everything counted below SQLite.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct FlashStats {
    /// SQLite's file size in pages.
    pub db_pages: u64,
    /// VFS calls.
    pub vfs: VfsCounters,
    /// The pool's counters (pool mode).
    pub pool: Option<PoolStats>,
    /// The store's page counters.
    pub store: StoreStats,
    /// The device's counters (all traffic).
    pub device: DeviceStats,
}

struct State {
    /// The last record written (or read at open).
    meta: Meta,
    /// SQLite's file size now, in pages.
    db_pages: u64,
    /// Pages inside the file that must read as zeros and are not written yet.
    holes: BTreeSet<u64>,
    /// Next version counter of this epoch.
    counter: u32,
    counters: VfsCounters,
    scratch: AlignedBuf,
    payload: Vec<u8>,
    page: Vec<u8>,
    last_error: Option<String>,
}

/// SQLite's main database file on a flashbuf store (see the module documentation).
pub struct FlashDb {
    backend: Backend,
    page_size: usize,
    state: Mutex<State>,
    /// Whether a VFS serves this database (one at a time).
    mounted: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for FlashDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlashDb")
            .field("store", &self.backend.store().name())
            .field("page_size", &self.page_size)
            .field("pool", &self.backend.pool().map(|p| p.policy_name()))
            .finish_non_exhaustive()
    }
}

impl FlashDb {
    /// Opens the database held by `store` (an empty store becomes an empty database), with
    /// SQLite's cache placed as `cache` says. Bumps the write epoch durably (one record
    /// write and a sync). Refuses a store holding anything else, or a database made with
    /// another page size.
    pub fn open(store: Box<dyn PageStore>, cache: Cache) -> Result<Self, Error> {
        // Any flashbuf page size works: 512-byte pages leave SQLite 480 usable bytes, its
        // minimum.
        let page_size = store.page_size();
        let backend = Backend::new(store, cache)?;
        let db = FlashDb {
            backend,
            page_size,
            state: Mutex::new(State {
                meta: Meta::default(),
                db_pages: 0,
                holes: BTreeSet::new(),
                counter: 1,
                counters: VfsCounters::default(),
                scratch: AlignedBuf::zeroed(page_size, 4096),
                payload: vec![0u8; page_size - HEADER_BYTES],
                page: vec![0u8; page_size],
                last_error: None,
            }),
            mounted: std::sync::atomic::AtomicBool::new(false),
        };
        {
            let mut st = db.state.lock();
            let meta = db.read_meta(&mut st)?;
            st.meta = meta;
            st.db_pages = meta.db_pages;
            let epoch = meta.epoch + 1;
            db.write_meta(&mut st, meta.db_pages, epoch)?;
            db.backend.sync()?;
        }
        Ok(db)
    }

    /// The newest valid copy of the record (a fresh one for an empty store).
    fn read_meta(&self, st: &mut State) -> Result<Meta, Error> {
        let mut found = [None, None];
        let mut torn = 0;
        for (slot, f) in found.iter_mut().enumerate() {
            let State {
                payload, scratch, ..
            } = st;
            match self
                .backend
                .read_payload(PageId(slot as u64), payload, scratch)
            {
                Ok(()) => match Meta::decode(self.page_size, payload).map_err(Error::Format)? {
                    Decoded::Record(m) if m.slot() == slot as u64 => *f = Some(m),
                    Decoded::Record(m) => {
                        return Err(Error::Format(format!(
                            "VFS record {} found in page {slot}, where it cannot be",
                            m.seq
                        )))
                    }
                    Decoded::Empty => {}
                },
                // A torn record write: the other copy is the durable one.
                Err(e) if is_corrupt(&e) => torn += 1,
                Err(e) => return Err(e),
            }
        }
        if torn == 2 {
            return Err(Error::Format(
                "both copies of the VFS record fail their checks".to_string(),
            ));
        }
        Ok(Meta::newest(found[0], found[1]).unwrap_or_default())
    }

    /// Writes record `seq + 1` with `db_pages` and `epoch` (not synced).
    fn write_meta(&self, st: &mut State, db_pages: u64, epoch: u64) -> Result<(), Error> {
        let m = Meta {
            seq: st.meta.seq + 1,
            db_pages,
            epoch,
        };
        // Every write of a page needs a larger version than the last (stores order copies
        // by it): the first write of a new epoch takes counter 0, others the next counter.
        let version = if epoch != st.meta.epoch {
            st.counter = 1;
            epoch << 32
        } else {
            self.next_version(st)?
        };
        let State {
            payload, scratch, ..
        } = st;
        m.encode(self.page_size, payload);
        self.backend
            .write_payload(PageId(m.slot()), payload, version, scratch)?;
        st.meta = m;
        st.counters.meta_writes += 1;
        Ok(())
    }

    /// The version for the next sealed write.
    fn next_version(&self, st: &mut State) -> Result<u64, Error> {
        if st.counter == u32::MAX {
            // 2^32 writes in one epoch: open a new one, durably, before using it.
            let (pages, epoch) = (st.meta.db_pages, st.meta.epoch + 1);
            self.write_meta(st, pages, epoch)?;
            self.backend.sync()?;
        }
        let v = st.meta.epoch << 32 | u64::from(st.counter);
        st.counter += 1;
        Ok(v)
    }

    /// Page size in bytes (SQLite's and the store's).
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// SQLite's file size in bytes.
    pub fn file_size(&self) -> u64 {
        self.state.lock().db_pages * self.page_size as u64
    }

    /// Reads `out.len()` bytes at `offset`. Returns `false` for a short read (past the end
    /// of the file; the missing bytes are zero).
    pub fn read(&self, offset: u64, out: &mut [u8]) -> Result<bool, Error> {
        let mut st = self.state.lock();
        st.counters.reads += 1;
        let ps = self.page_size as u64;
        let mut done = 0usize;
        let mut whole = true;
        while done < out.len() {
            let at = offset + done as u64;
            let (index, within) = (at / ps, (at % ps) as usize);
            let n = (self.page_size - within).min(out.len() - done);
            let dst = &mut out[done..done + n];
            if index >= st.db_pages {
                dst.fill(0);
                whole = false;
            } else if st.holes.contains(&index) {
                dst.fill(0);
            } else if within == 0 && n == self.page_size {
                let State { scratch, .. } = &mut *st;
                let usable = self.page_size - RESERVED_BYTES;
                let (head, tail) = dst.split_at_mut(usable);
                self.backend.read_payload(page_id(index), head, scratch)?;
                tail.fill(0);
            } else {
                let State {
                    scratch,
                    payload,
                    page,
                    ..
                } = &mut *st;
                self.backend
                    .read_payload(page_id(index), payload, scratch)?;
                layout::payload_to_sqlite(payload, page);
                dst.copy_from_slice(&page[within..within + n]);
            }
            done += n;
        }
        Ok(whole)
    }

    /// Writes one whole page at a page offset (see the module documentation).
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<(), Error> {
        let ps = self.page_size as u64;
        if data.len() != self.page_size || !offset.is_multiple_of(ps) {
            return Err(Error::Unsupported(format!(
                "a write of {} bytes at offset {offset}; the database file takes whole \
                 {}-byte pages at page offsets",
                data.len(),
                self.page_size
            )));
        }
        let index = offset / ps;
        if index == 0 {
            check_page1(data, self.page_size).map_err(Error::Unsupported)?;
        }
        let mut st = self.state.lock();
        st.counters.writes += 1;
        let version = self.next_version(&mut st)?;
        let State { scratch, .. } = &mut *st;
        self.backend
            .write_payload(page_id(index), sqlite_usable(data), version, scratch)?;
        st.holes.remove(&index);
        if index >= st.db_pages {
            let from = st.db_pages;
            st.holes.extend(from..index);
            st.db_pages = index + 1;
        }
        Ok(())
    }

    /// Sets the file size to `bytes` (a multiple of the page size): shrinking drops the
    /// pages beyond, growing adds pages that read as zeros.
    pub fn truncate(&self, bytes: u64) -> Result<(), Error> {
        let ps = self.page_size as u64;
        if !bytes.is_multiple_of(ps) {
            return Err(Error::Unsupported(format!(
                "truncation to {bytes} bytes, not a multiple of the {ps}-byte page"
            )));
        }
        let pages = bytes / ps;
        let mut st = self.state.lock();
        st.counters.truncates += 1;
        if pages < st.db_pages {
            st.holes.retain(|&p| p < pages);
        } else {
            let from = st.db_pages;
            st.holes.extend(from..pages);
        }
        st.db_pages = pages;
        Ok(())
    }

    /// Makes every write and size change before it durable.
    pub fn sync(&self) -> Result<(), Error> {
        let mut st = self.state.lock();
        st.counters.syncs += 1;
        let holes: Vec<u64> = std::mem::take(&mut st.holes).into_iter().collect();
        for index in holes {
            let version = self.next_version(&mut st)?;
            let State {
                scratch, payload, ..
            } = &mut *st;
            payload.fill(0);
            self.backend
                .write_payload(page_id(index), payload, version, scratch)?;
            st.counters.hole_pages += 1;
        }
        if st.db_pages != st.meta.db_pages {
            let (pages, epoch) = (st.db_pages, st.meta.epoch);
            self.write_meta(&mut st, pages, epoch)?;
        }
        self.backend.sync()
    }

    /// Marks the database as served by a VFS; `false` if one already serves it.
    pub(crate) fn mount(&self) -> bool {
        !self.mounted.swap(true, std::sync::atomic::Ordering::AcqRel)
    }

    /// Releases [`FlashDb::mount`].
    pub(crate) fn unmount(&self) {
        self.mounted
            .store(false, std::sync::atomic::Ordering::Release);
    }

    /// Records the message of the last error the VFS turned into a SQLite error code.
    pub(crate) fn set_last_error(&self, msg: String) {
        self.state.lock().last_error = Some(msg);
    }

    /// The message of the last error the VFS reported to SQLite (SQLite itself only sees
    /// an error code), if any.
    pub fn last_error(&self) -> Option<String> {
        self.state.lock().last_error.clone()
    }

    /// Counters: VFS calls, pool, store, device.
    pub fn stats(&self) -> FlashStats {
        let st = self.state.lock();
        FlashStats {
            db_pages: st.db_pages,
            vfs: st.counters,
            pool: self.backend.pool_stats(),
            store: self.backend.store_stats(),
            device: self.backend.device_stats(),
        }
    }

    /// The store under the database.
    pub fn store(&self) -> &dyn PageStore {
        self.backend.store()
    }

    /// The pool's policy name (pool mode).
    pub fn policy_name(&self) -> Option<&'static str> {
        self.backend.pool().map(|p| p.policy_name())
    }

    /// Checks the invariants of the pool (pool mode) and the store; call it while SQLite
    /// is idle.
    pub fn check_invariants(&self) -> Result<(), String> {
        let st = self.state.lock();
        if let Some(&h) = st.holes.iter().next_back() {
            if h >= st.db_pages {
                return Err(format!(
                    "hole at page {h} beyond the file's {} pages",
                    st.db_pages
                ));
            }
        }
        if st.meta.epoch == 0 {
            return Err("the write epoch was never persisted".to_string());
        }
        drop(st);
        self.backend.check_invariants()
    }
}
