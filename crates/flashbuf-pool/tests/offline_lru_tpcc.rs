#![allow(clippy::unwrap_used)]
//! LRU through the real pool on the shared TPC-C trace: misses and write-backs (no final
//! flush) must equal the reference figures of `shared/tools/README.md` (libCacheSim and
//! `ref_lru_dirty.py`).

mod common;
mod fd_buffer_support;

use common::mem_store;
use flashbuf_core::PageId;
use flashbuf_pool::policy::Lru;
use flashbuf_pool::BufferPool;

#[test]
fn lru_on_tpcc_matches_reference_figures() {
    let Some(trace) = fd_buffer_support::tpcc_compact() else {
        return;
    };
    for (frames, misses, writes) in [
        (413, 1_004_077u64, 398_661u64),
        (1_241, 874_942, 371_529),
        (4_139, 586_339, 305_770),
    ] {
        let pool = BufferPool::new(mem_store(512), frames, Box::new(Lru::new(frames))).unwrap();
        for &(w, p) in trace {
            if w {
                drop(pool.write(PageId(p)).unwrap());
            } else {
                drop(pool.read(PageId(p)).unwrap());
            }
        }
        let s = pool.stats();
        assert_eq!(
            (s.misses, s.page_writes),
            (misses, writes),
            "LRU at {frames} frames"
        );
    }
}
