//! Starting or resuming a real-process torture run in its directory (issue 11, bugs A and
//! F): under the directory lock, with every refusal named.
//!
//! Order of a new run: the journal is created first (atomically, header only), then the
//! store under a temporary name, formatted and synced, renamed into place, and reopened
//! under its final name (so that its errors name the file that exists). A directory can
//! therefore hold a journal without a store (a run stopped while starting: the next run
//! creates the store, `check` finds nothing acknowledged), but a store without a journal
//! was never made by `torture`: it is refused, never deleted.

use super::dirlock::DirLock;
use super::journal::{read_journal, sync_dir, Journal, JournalHeader, MAX_PAGES};
use super::real::{file_device, TortureConfig, JOURNAL_FILE, STORE_FILE};
use crate::LabError;
use flashbuf_store::PageStore;
use std::path::Path;

/// A run ready to go: the lock held, the store open, the journal appending.
pub(crate) struct Started {
    pub(crate) _lock: DirLock,
    pub(crate) store: Box<dyn PageStore>,
    pub(crate) journal: Journal,
    pub(crate) header: JournalHeader,
    /// Per page, the highest version a round intended (the next round writes above it).
    pub(crate) versions: Vec<u64>,
    pub(crate) first_round: u64,
    pub(crate) resumed: bool,
}

/// Page size and page count of a new run, checked.
fn new_geometry(cfg: &TortureConfig) -> Result<(usize, u64), LabError> {
    let pages = cfg.pages.unwrap_or(256);
    if pages == 0 || pages > MAX_PAGES {
        return Err(LabError::Usage(format!(
            "--pages {pages}: a torture run writes 1 to {MAX_PAGES} pages (the journal's limit)"
        )));
    }
    let page_size = cfg.page_size.unwrap_or(4096);
    if !flashbuf_core::page::is_valid_page_size(page_size) {
        return Err(LabError::Usage(format!(
            "--page-size {page_size} is not a power of two between 512 and 65536"
        )));
    }
    check_pool(cfg, page_size, pages)?;
    Ok((page_size, pages))
}

/// Frames the run's pool uses: `pool_frames` capped at the run's pages (it never touches
/// more), refused if the machine cannot hold them.
pub(crate) fn check_pool(
    cfg: &TortureConfig,
    page_size: usize,
    pages: u64,
) -> Result<usize, LabError> {
    let frames = cfg
        .pool_frames
        .min(usize::try_from(pages).unwrap_or(usize::MAX));
    if frames > 0 {
        crate::limits::check_pool_fits(
            frames,
            page_size,
            &format!("--pool-frames {}", cfg.pool_frames),
        )?;
    }
    Ok(frames)
}

/// Creates the directory, takes its lock, and starts a new run or resumes the one it holds.
/// `verify` checks a resumed store against its journal before anything is appended.
pub(crate) fn start(
    cfg: &TortureConfig,
    verify: &dyn Fn(&dyn PageStore, &super::journal::JournalState) -> Result<(), LabError>,
) -> Result<Started, LabError> {
    let dir = &cfg.dir;
    std::fs::create_dir_all(dir)
        .map_err(|e| LabError::io(format!("cannot create directory {}", dir.display()), e))?;
    let lock = DirLock::acquire(dir)?;
    let store_path = dir.join(STORE_FILE);
    let journal_path = dir.join(JOURNAL_FILE);
    if !journal_path.exists() {
        if store_path.exists() {
            return Err(LabError::Usage(format!(
                "{} holds a store ({STORE_FILE}) but no torture journal ({JOURNAL_FILE}); refusing to overwrite it: remove it or choose another --path",
                dir.display()
            )));
        }
        let (page_size, pages) = new_geometry(cfg)?;
        let header = JournalHeader {
            store: cfg.store.name.to_string(),
            page_size,
            pages,
            seed: cfg.seed,
        };
        let journal = Journal::create(&journal_path, &header)?;
        let store = create_store(cfg, page_size)?;
        return Ok(Started {
            _lock: lock,
            store,
            journal,
            versions: vec![0; pages as usize],
            header,
            first_round: 1,
            resumed: false,
        });
    }
    let st = read_journal(&journal_path)?;
    let h = &st.header;
    if h.store != cfg.store.name {
        return Err(LabError::Usage(format!(
            "{} holds a torture run of store '{}', not '{}'",
            dir.display(),
            h.store,
            cfg.store.name
        )));
    }
    if cfg.page_size.is_some_and(|p| p != h.page_size) {
        return Err(LabError::Usage(format!(
            "{} holds a run with page size {}; --page-size {} differs (omit it to resume)",
            dir.display(),
            h.page_size,
            cfg.page_size.unwrap_or(0)
        )));
    }
    if cfg.pages.is_some_and(|p| p != h.pages) {
        return Err(LabError::Usage(format!(
            "{} holds a run of {} pages; --pages {} differs (omit it to resume)",
            dir.display(),
            h.pages,
            cfg.pages.unwrap_or(0)
        )));
    }
    check_pool(cfg, h.page_size, h.pages)?;
    let store = if store_path.exists() {
        let dev = file_device(&store_path, cfg.direct_io, false)?;
        let store = cfg.store.open(Box::new(dev), h.page_size)?;
        verify(store.as_ref(), &st)?;
        store
    } else if st.records == 0 {
        // A run stopped after creating its journal and before its store was in place.
        create_store(cfg, h.page_size)?
    } else {
        return Err(LabError::Invariant(format!(
            "{}: the store file {STORE_FILE} is missing although the journal holds {} records",
            dir.display(),
            st.records
        )));
    };
    let journal = Journal::resume(&journal_path, &st)?;
    Ok(Started {
        _lock: lock,
        store,
        journal,
        header: st.header.clone(),
        versions: st.intended.clone(),
        first_round: st.last_round + 1,
        resumed: st.records > 0,
    })
}

/// Formats a store under a temporary name, syncs it, renames it into place and reopens it
/// under the final name. Runs under the directory lock, so the temporary file is ours.
fn create_store(cfg: &TortureConfig, page_size: usize) -> Result<Box<dyn PageStore>, LabError> {
    let dir: &Path = &cfg.dir;
    let store_path = dir.join(STORE_FILE);
    let tmp = dir.join(format!("{STORE_FILE}.tmp"));
    match std::fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(LabError::io(format!("cannot remove {}", tmp.display()), e)),
    }
    let dev = file_device(&tmp, cfg.direct_io, true)?;
    drop(cfg.store.create(Box::new(dev), page_size)?);
    std::fs::rename(&tmp, &store_path).map_err(|e| {
        LabError::io(
            format!(
                "cannot rename {} to {}",
                tmp.display(),
                store_path.display()
            ),
            e,
        )
    })?;
    sync_dir(dir)?;
    let dev = file_device(&store_path, cfg.direct_io, false)?;
    Ok(cfg.store.open(Box::new(dev), page_size)?)
}
