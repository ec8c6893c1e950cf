#![allow(clippy::unwrap_used)]
//! ICL merges (paper §2 *ICL merge*, Figure 4): a write whose diff reaches the threshold
//! goes home whole; a page whose logs together reach it is merged home (exactly at the
//! write where the record would reach the threshold, its ICL log in the log space
//! counted through the mapping table); repeated changes of the same bytes never merge; a
//! full log space is merged and starts a new generation, double-writing exactly the pages
//! that hold only synced data; a WOB larger than the log space is flushed in parts.

mod icl_support;

use flashbuf_core::PageId;
use flashbuf_device::MemDevice;
use flashbuf_store::icl::{IclConfig, IclStore};
use flashbuf_store::PageStore;
use icl_support::{config, Model};

fn store(cfg: IclConfig) -> (IclStore<MemDevice>, Model) {
    (
        IclStore::create(MemDevice::new(0), cfg).unwrap(),
        Model::new(cfg.page_size),
    )
}

/// A record of one range of `len` bytes (apart from the header): 24 header + 2 ranges ×
/// 4 + 32 page-header bytes + `len`.
fn one_range_record(len: usize) -> usize {
    24 + 8 + 32 + len
}

#[test]
fn a_write_whose_diff_reaches_the_threshold_goes_home_whole() {
    let cfg = config(4096, 4, 16, 2); // threshold 2048 bytes
    let (s, mut m) = store(cfg);
    let pid = PageId(1);
    let (p, d) = m.whole(pid, 1);
    s.write_page(pid, &p, &d).unwrap();
    assert_eq!(
        s.icl_stats().data_writes_whole,
        1,
        "a first (whole) write goes home"
    );
    let just_below = 2047 - one_range_record(0);
    let (p, d) = m.edit(pid, &[(100, just_below)], 2);
    s.write_page(pid, &p, &d).unwrap();
    let st = s.icl_stats();
    assert_eq!((st.data_writes_whole, st.wob_bytes), (1, 2047));
    let (p, d) = m.edit(pid, &[(100, just_below + 1)], 3);
    s.write_page(pid, &p, &d).unwrap();
    let st = s.icl_stats();
    assert_eq!((st.data_writes_whole, st.wob_bytes), (2, 0), "{st:?}");
    m.verify(&s, &[]);
}

/// Disjoint edits of 100 bytes, 150 apart, syncing every `sync_every` writes; returns the
/// write (1-based) at which the page was merged home.
fn merge_point(threshold: f64, sync_every: usize) -> usize {
    let cfg = IclConfig {
        merge_threshold: threshold,
        ..config(4096, 4, 64, 2)
    };
    let (s, mut m) = store(cfg);
    let pid = PageId(3);
    let (p, d) = m.whole(pid, 0);
    s.write_page(pid, &p, &d).unwrap();
    for k in 1..=26 {
        let (p, d) = m.edit(pid, &[(150 * k, 100)], k as u64);
        s.write_page(pid, &p, &d).unwrap();
        m.verify(&s, &[]);
        if s.icl_stats().data_writes_merge == 1 {
            // The page went home; its records are superseded by a tombstone.
            s.sync().unwrap();
            let st = s.icl_stats();
            // A tombstone supersedes the page's records, if it had any in the log space.
            let flushed = u64::from(k > sync_every);
            assert_eq!(
                (st.tombstones_written, st.merges_threshold),
                (flushed, 1),
                "{st:?}"
            );
            s.check_invariants().unwrap();
            return k;
        }
        if k % sync_every == 0 {
            s.sync().unwrap();
        }
    }
    panic!("never merged");
}

#[test]
fn logs_are_merged_home_when_together_they_reach_the_threshold() {
    // Cumulative record after k edits: 24 + 4 (k + 1) + 32 + 100 k = 60 + 104 k.
    let expect = |t: usize| (t - 60).div_ceil(104);
    for sync_every in [1, 3, 100] {
        assert_eq!(
            merge_point(0.5, sync_every),
            expect(2048),
            "sync every {sync_every}"
        );
        assert_eq!(
            merge_point(0.25, sync_every),
            expect(1024),
            "sync every {sync_every}"
        );
    }
}

#[test]
fn changing_the_same_bytes_again_never_merges() {
    let (s, mut m) = store(config(4096, 1, 256, 2));
    let pid = PageId(2);
    let (p, d) = m.whole(pid, 0);
    s.write_page(pid, &p, &d).unwrap();
    for k in 0..200u64 {
        let (p, d) = m.edit(pid, &[(1000, 200)], k);
        s.write_page(pid, &p, &d).unwrap();
        if k % 2 == 0 {
            s.sync().unwrap();
        }
    }
    let st = s.icl_stats();
    assert_eq!(
        (
            st.data_writes_merge,
            st.data_writes_whole,
            st.data_writes_bulk
        ),
        (0, 1, 0),
        "{st:?}"
    );
    assert!(st.copy_forwards >= 99 && st.log_writes >= 100, "{st:?}");
    m.verify(&s, &[]);
}

#[test]
fn a_full_log_space_is_merged_into_a_new_generation_double_writing_synced_pages() {
    let cfg = config(4096, 1, 4, 3);
    let (s, mut m) = store(cfg);
    // Ten pages with a log in the log space, synced, then left alone.
    for pid in 0..10u64 {
        let (p, d) = m.whole(PageId(pid), pid);
        s.write_page(PageId(pid), &p, &d).unwrap();
        let (p, d) = m.edit(PageId(pid), &[(200, 300)], pid);
        s.write_page(PageId(pid), &p, &d).unwrap();
    }
    s.sync().unwrap();
    let before = s.icl_stats();
    assert_eq!(before.merges_bulk, 0);
    // Other pages' logs fill the log space (no sync): a log-space merge.
    let mut k = 0u64;
    while s.icl_stats().merges_bulk == 0 {
        let pid = PageId(100 + k % 20);
        if !m.pages.contains_key(&pid) {
            let (p, d) = m.whole(pid, k);
            s.write_page(pid, &p, &d).unwrap();
        }
        let (p, d) = m.edit(pid, &[(k as usize * 37, 200)], k);
        s.write_page(pid, &p, &d).unwrap();
        k += 1;
    }
    let st = s.icl_stats();
    assert_eq!(st.generation, 2, "{st:?}");
    // The ten synced pages went through the double-write area (4 rounds of at most 3
    // slots, each with its directory); pages written since the sync did not.
    assert_eq!(st.dw_writes, 10 + 4, "{st:?}");
    assert!(st.data_writes_bulk >= 10, "{st:?}");
    m.verify(&s, &[]);
    // Merged pages read from their home page alone.
    let mut buf = vec![0u8; 4096];
    let a = s.icl_stats().log_reads;
    for pid in 0..10u64 {
        s.read_page(PageId(pid), &mut buf).unwrap();
    }
    assert_eq!(s.icl_stats().log_reads, a);
    s.check_invariants().unwrap();
    s.sync().unwrap();
    let dev = s.into_device();
    let s = IclStore::open(dev, cfg).unwrap();
    m.verify(&s, &[]);
}

#[test]
fn a_wob_larger_than_the_log_space_is_flushed_in_parts() {
    let cfg = config(512, 16, 2, 1);
    let (s, mut m) = store(cfg);
    for pid in 0..60u64 {
        let (p, d) = m.whole(PageId(pid), pid);
        s.write_page(PageId(pid), &p, &d).unwrap();
    }
    for round in 0..5u64 {
        for pid in 0..60u64 {
            let (p, d) = m.edit(
                PageId(pid),
                &[(pid as usize * 3 + round as usize, 20)],
                round,
            );
            s.write_page(PageId(pid), &p, &d).unwrap();
        }
        s.sync().unwrap();
        m.verify(&s, &[]);
    }
    let st = s.icl_stats();
    assert!(st.merges_bulk >= 5, "{st:?}");
    s.check_invariants().unwrap();
    let s = IclStore::open(s.into_device(), cfg).unwrap();
    m.verify(&s, &[]);
}
