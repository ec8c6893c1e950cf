//! Regression: StableBuffer allocated (and zeroed) a page-sized buffer for every staged
//! write and one of all the pages for every flush. Its buffers now come from
//! `crate::scratch` and are reused: after a warm-up, staging and flushing thousands of
//! pages allocates less than one page's worth of bytes per write (before the fix: more
//! than one page per write — each write's slot image plus each flush's page buffer).
//!
//! Its own test binary: the global allocator here counts every byte allocated.

mod counting_alloc;

use counting_alloc::allocated;
use flashbuf_core::{page, DirtyRanges, PageId};
use flashbuf_device::MemDevice;
use flashbuf_store::stable_buffer::{
    FlushMode, Recognition, StableBufferConfig, StableBufferStore,
};
use flashbuf_store::{PageStore, ReadOutcome};

const PS: usize = 8192;
const PAGES: u64 = 512;

/// Writes every page of `0..PAGES` once more (version `v`), in a scattered order.
fn write_round(store: &StableBufferStore<MemDevice>, p: &mut [u8], v: u64) {
    for k in 0..PAGES {
        let pid = (k * 37) % PAGES;
        p[100] = (pid % 251) as u8;
        p[101] = (v % 251) as u8;
        page::seal(p, PageId(pid), v);
        store
            .write_page(PageId(pid), p, &DirtyRanges::full(PS))
            .expect("write");
    }
}

#[test]
fn staged_writes_and_flushes_reuse_their_buffers() {
    let cfg = StableBufferConfig {
        staging_bytes: 64 * PS as u64,
        recognition: Recognition::Incremental,
        flush: FlushMode::Passive,
        salt: Some(5),
        ..StableBufferConfig::with_page_size(PS)
    };
    let store = StableBufferStore::create(MemDevice::new(64 << 20), cfg).expect("create");
    let mut p = vec![0u8; PS];
    // Warm-up: the device's chunks, the store's tables and the buffers themselves.
    for v in 1..=2 {
        write_round(&store, &mut p, v);
    }
    let before_flushes = store.sb_stats().passive_flushes;
    let before = allocated();
    let rounds = 4;
    for v in 3..3 + rounds {
        write_round(&store, &mut p, v);
    }
    let allocated = allocated() - before;
    let writes = rounds * PAGES;
    assert!(
        store.sb_stats().passive_flushes > before_flushes + 8,
        "the staging area flushed"
    );
    assert!(
        allocated < writes * PS as u64 / 4,
        "{allocated} bytes allocated for {writes} writes of {PS}-byte pages"
    );
    // And the pages read back.
    for pid in 0..PAGES {
        let mut q = vec![0u8; PS];
        let found = store.read_page(PageId(pid), &mut q).expect("read");
        assert_eq!(found, ReadOutcome::Found);
        assert_eq!(
            (q[100], q[101]),
            ((pid % 251) as u8, ((2 + rounds) % 251) as u8)
        );
    }
    store.check_invariants().expect("invariants");
}
