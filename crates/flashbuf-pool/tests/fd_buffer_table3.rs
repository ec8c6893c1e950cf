#![allow(clippy::unwrap_used)]
//! FD-Buffer's Table 3 (On et al., "FD-Buffer", IEEE TC 2014, §3 and §4.2): a buffer of
//! two pages holding the clean pages X and Y, `M_c = M_d = 1`, LRU in both pools, and the
//! nine requests `W_A W_B R_C R_D R_C R_D R_C W_B R_A`. The paper's summary: 8 misses,
//! 1 hit, 8 reads, 1 write (Belady's: 6 misses, 3 hits, 6 reads, 2 writes). `M_c` stays at
//! 1 because the advisor's window (1,000 references) outlasts the sequence and the initial
//! clean ratio is 0.5. Also checks the pool's clean/dirty frame counts
//! (`BufferPool::resident_counts`, Figs. 4-5) along the way.

use flashbuf_core::PageId;
use flashbuf_device::MemDevice;
use flashbuf_pool::policy::fd_buffer::{FdBuffer, FdBufferOptions};
use flashbuf_pool::{BufferPool, ResidentCounts};
use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore};

const PAGE_BYTES: usize = 4096;
const A: u64 = 0;
const B: u64 = 1;
const C: u64 = 2;
const D: u64 = 3;
const X: u64 = 4;
const Y: u64 = 5;

fn pool() -> BufferPool<DirectStore<MemDevice>> {
    let store = DirectStore::create(
        MemDevice::new(0),
        DirectStoreConfig::with_page_size(PAGE_BYTES),
    )
    .unwrap();
    let opts = FdBufferOptions::default()
        .window_refs(1_000)
        .initial_clean_ratio(0.5)
        .fixed_r(10.0);
    let policy = FdBuffer::from_options(2, opts).unwrap();
    BufferPool::new(store, 2, Box::new(policy)).unwrap()
}

/// A request (write?, page), whether it hits, and the resident `(page, dirty)` after it.
type Step = (bool, u64, bool, [(u64, bool); 2]);

/// The resident pages and whether each is dirty, sorted by page.
fn state(pool: &BufferPool<DirectStore<MemDevice>>) -> Vec<(u64, bool)> {
    (0..6)
        .filter_map(|p| pool.page_dirty(PageId(p)).map(|d| (p, d)))
        .collect()
}

#[test]
fn table_3_fd_buffer_trace_and_summary() {
    let pool = pool();
    // Warm-up: Y then X read (Y is the clean pool's LRU page), both clean.
    for p in [Y, X] {
        drop(pool.read(PageId(p)).unwrap());
    }
    assert_eq!(
        pool.resident_counts(),
        ResidentCounts {
            clean_frames: 2,
            dirty_frames: 0
        }
    );
    let s0 = pool.stats();
    let w0 = pool.store().stats();
    // (write?, page, hit?, resident pages after it as (page, dirty)).
    let steps: [Step; 9] = [
        (true, A, false, [(A, true), (X, false)]),
        (true, B, false, [(B, true), (X, false)]),
        (false, C, false, [(B, true), (C, false)]),
        (false, D, false, [(B, true), (D, false)]),
        (false, C, false, [(B, true), (C, false)]),
        (false, D, false, [(B, true), (D, false)]),
        (false, C, false, [(B, true), (C, false)]),
        // The printed table shows [B, D] here; a hit on B cannot bring D back: C stays.
        (true, B, true, [(B, true), (C, false)]),
        (false, A, false, [(A, false), (B, true)]),
    ];
    for (i, (write, page, hit, after)) in steps.into_iter().enumerate() {
        let before = pool.stats();
        if write {
            pool.write(PageId(page)).unwrap().write(0, &[i as u8 + 1]);
        } else {
            drop(pool.read(PageId(page)).unwrap());
        }
        let d = pool.stats() - before;
        assert_eq!(d.hits == 1, hit, "request {} (page {page})", i + 1);
        let mut want = after.to_vec();
        want.sort_unstable();
        assert_eq!(state(&pool), want, "request {} (page {page})", i + 1);
        let c = pool.resident_counts();
        assert_eq!(c.resident_frames(), 2);
        assert_eq!(c.dirty_frames, 1, "one dirty page from W_A on");
    }
    let d = pool.stats() - s0;
    assert_eq!((d.misses, d.hits), (8, 1), "8 misses, 1 hit");
    assert_eq!((d.page_reads, d.page_writes), (8, 1), "8 reads, 1 write");
    assert_eq!(
        pool.store().stats().page_writes - w0.page_writes,
        1,
        "the write of A"
    );
    // Flushing cleans the dirty frame: the counts follow.
    assert_eq!(pool.flush_all().unwrap(), 1);
    let c = pool.resident_counts();
    assert_eq!((c.clean_frames, c.dirty_frames), (2, 0));
    assert_eq!(pool.page_dirty(PageId(B)), Some(false));
    assert_eq!(pool.page_dirty(PageId(X)), None);
}

#[test]
fn resident_counts_follow_writes_and_write_backs() {
    let pool = pool();
    assert_eq!(pool.resident_counts(), ResidentCounts::default());
    pool.write(PageId(A)).unwrap().write(0, b"a");
    let c = pool.resident_counts();
    assert_eq!((c.clean_frames, c.dirty_frames), (0, 1));
    drop(pool.read(PageId(B)).unwrap());
    let c = pool.resident_counts();
    assert_eq!((c.clean_frames, c.dirty_frames), (1, 1));
    assert_eq!(c.resident_frames(), 2);
    pool.sync().unwrap();
    let c = pool.resident_counts();
    assert_eq!((c.clean_frames, c.dirty_frames), (2, 0));
}
