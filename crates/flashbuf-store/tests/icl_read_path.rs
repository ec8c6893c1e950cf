#![allow(clippy::unwrap_used)]
//! ICL's read path (paper §2): the data page, at most one log page, then the WOB's logs.
//! Over seeded workloads of whole and partial writes, WOB flushes, copy-forwards, merges
//! and syncs (no crash), every read costs exactly one data-page read (none for a page
//! beyond the device), at most one log-page read and no other read, and returns exactly
//! the page last written.

mod icl_support;

use flashbuf_core::rng::SplitMix64;
use flashbuf_core::PageId;
use flashbuf_device::{Device, MemDevice};
use flashbuf_store::icl::{IclConfig, IclStats, IclStore};
use flashbuf_store::PageStore;
use icl_support::{config, Model};

/// Reads `pid` and returns the counters' deltas (data, log, other reads, device reads).
fn read_costs(store: &IclStore<MemDevice>, m: &Model, pid: PageId) -> (u64, u64, u64, u64) {
    let mut buf = vec![0u8; m.page_size];
    let (a, da) = (store.icl_stats(), store.device().stats().reads);
    store.read_page(pid, &mut buf).unwrap();
    let (b, db) = (store.icl_stats(), store.device().stats().reads);
    let want = m
        .pages
        .get(&pid)
        .cloned()
        .unwrap_or_else(|| vec![0u8; m.page_size]);
    assert!(buf == want, "{pid} reads other bytes");
    let other = |s: &IclStats| s.page_reads() - s.data_reads - s.log_reads;
    (
        b.data_reads - a.data_reads,
        b.log_reads - a.log_reads,
        other(&b) - other(&a),
        db - da,
    )
}

fn workload(cfg: IclConfig, seed: u64) -> IclStats {
    let store = IclStore::create(MemDevice::new(0), cfg).unwrap();
    let mut m = Model::new(cfg.page_size);
    let mut rng = SplitMix64::new(seed);
    let pages = 60u64;
    let mut logged_reads = 0u64;
    for _ in 0..3000 {
        let pid = PageId(if rng.below(3) == 0 {
            rng.below(6)
        } else {
            rng.below(pages)
        });
        match rng.below(10) {
            0..=3 => {
                let (data, log, other, dev) = read_costs(&store, &m, pid);
                assert!(
                    data <= 1 && log <= 1 && other == 0,
                    "{pid}: {data} data, {log} log, {other} other reads"
                );
                assert_eq!(dev, data + log, "{pid}: device reads");
                let home = store.layout().home_offset(pid).unwrap();
                if home + cfg.page_size as u64 <= store.device().len() {
                    assert_eq!(data, 1, "{pid}: the home page is read");
                }
                logged_reads += log;
            }
            4 => store.sync().unwrap(),
            5 => {
                let (p, d) = m.whole(pid, rng.next_u64());
                store.write_page(pid, &p, &d).unwrap();
            }
            _ => {
                let n = 1 + rng.below(3);
                let edits: Vec<(usize, usize)> = (0..n)
                    .map(|_| (rng.below(1 << 16) as usize, 1 + rng.below(150) as usize))
                    .collect();
                let (p, d) = m.edit(pid, &edits, rng.next_u64());
                store.write_page(pid, &p, &d).unwrap();
            }
        }
    }
    store.check_invariants().unwrap();
    let s = store.icl_stats();
    assert!(logged_reads > 0 && s.copy_forwards > 0, "{s:?}");
    s
}

#[test]
fn every_read_takes_the_data_page_at_most_one_log_page_and_the_wob() {
    let (mut merged_space, mut merged_pages) = (false, false);
    for (i, cfg) in [
        config(4096, 2, 64, 4),
        config(512, 1, 6, 2),
        IclConfig {
            merge_threshold: 0.2,
            ..config(8192, 1, 4, 1)
        },
    ]
    .into_iter()
    .enumerate()
    {
        let s = workload(cfg, 40 + i as u64);
        merged_space |= s.merges_bulk > 0;
        merged_pages |= s.merges_threshold > 0;
    }
    assert!(
        merged_space && merged_pages,
        "no log-space merge, or no merge at the threshold"
    );
}

#[test]
fn a_page_whose_changes_are_only_in_the_wob_reads_without_a_log_page() {
    let cfg = config(4096, 4, 16, 2);
    let store = IclStore::create(MemDevice::new(0), cfg).unwrap();
    let mut m = Model::new(4096);
    let pid = PageId(5);
    let (p, d) = m.whole(pid, 1);
    store.write_page(pid, &p, &d).unwrap();
    let (p, d) = m.edit(pid, &[(500, 10)], 2);
    store.write_page(pid, &p, &d).unwrap();
    assert_eq!(read_costs(&store, &m, pid), (1, 0, 0, 1));
    store.sync().unwrap();
    // Now in a log page; a new change in the WOB on top of it.
    assert_eq!(read_costs(&store, &m, pid), (1, 1, 0, 2));
    let (p, d) = m.edit(pid, &[(900, 10)], 3);
    store.write_page(pid, &p, &d).unwrap();
    assert_eq!(read_costs(&store, &m, pid), (1, 1, 0, 2));
    // A page never written: no read of its home page at all.
    assert_eq!(read_costs(&store, &m, PageId(1000)), (0, 0, 0, 0));
}
