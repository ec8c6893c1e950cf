//! What the metadata-only suites (`metadata_only.rs`, `log_store_metadata.rs`) share: pages
//! stamped with their version, written one by one or as a batch.

use flashbuf_core::{page, DirtyRanges, PageId};
use flashbuf_store::{PageStore, PageWrite};

/// A sealed page of `len` bytes for `pid` at `version`, its payload stamped.
pub fn sealed(len: usize, pid: PageId, version: u64) -> Vec<u8> {
    let mut p = vec![0u8; len];
    p[page::HEADER_BYTES..page::HEADER_BYTES + 8].copy_from_slice(&version.to_le_bytes());
    page::seal(&mut p, pid, version);
    p
}

/// Writes page `pid` at `version` (the store's page size, every byte dirty).
pub fn write_one(store: &dyn PageStore, pid: u64, version: u64) {
    let len = store.page_size();
    let p = sealed(len, PageId(pid), version);
    store
        .write_page(PageId(pid), &p, &DirtyRanges::full(len))
        .expect("write");
}

/// Writes `pids` at `version` with one `write_pages` call.
pub fn write_batch(store: &dyn PageStore, pids: &[u64], version: u64) {
    let len = store.page_size();
    let pages: Vec<Vec<u8>> = pids
        .iter()
        .map(|&q| sealed(len, PageId(q), version))
        .collect();
    let batch: Vec<PageWrite<'_>> = pids
        .iter()
        .zip(&pages)
        .map(|(&q, p)| PageWrite {
            pid: PageId(q),
            page: p,
            dirty: DirtyRanges::full(len),
        })
        .collect();
    store.write_pages(&batch).expect("batch");
}
