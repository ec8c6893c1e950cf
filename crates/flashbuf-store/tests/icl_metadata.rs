#![allow(clippy::unwrap_used)]
//! ICL with metadata-only pages (`--data none`, `DataMode::Metadata`): the same seeded
//! sequence of writes with dirty ranges of the logical page (single and batched), reads
//! and syncs, given to a store with bytes and to one with heads, over two identical
//! simulated devices, costs exactly the same and gives the same ICL counters — WOB logs,
//! flushes, copy-forwards, threshold and log-space merges, double writes — while each
//! reads back what a model says (the whole page, or its head); reopening both recovers
//! every synced page at the same cost; a store formatted in one mode is refused in the
//! other; a damaged home head reads corrupt and a damaged log page is reported, never an
//! older version.

use flashbuf_core::page;
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{DataMode, DeviceStats, DirtyRanges, PageId, METADATA_PAGE_BYTES};
use flashbuf_device::sim::{Precondition, SimDevice};
use flashbuf_device::{Device, MemDevice};
use flashbuf_store::icl::{IclConfig, IclStats, IclStore};
use flashbuf_store::registry::{self, StoreContext};
use flashbuf_store::{PageStore, PageWrite, ReadOutcome, StoreError};
use std::sync::Arc;

mod icl_support;
use icl_support::{config, Model};

const PS: usize = 4096;

fn cfg(data: DataMode) -> IclConfig {
    IclConfig {
        data,
        ..config(PS, 2, 40, 3)
    }
}

/// The head of a model page, sealed as the metadata-only page of the same version.
fn head_of(p: &[u8], pid: PageId) -> Vec<u8> {
    let mut h = p[..METADATA_PAGE_BYTES].to_vec();
    page::seal(&mut h, pid, page::version_of(p));
    h
}

/// What a caller hands over in `data` mode for the model page `p`.
fn as_handed(data: DataMode, p: &[u8], pid: PageId) -> Vec<u8> {
    match data {
        DataMode::Bytes => p.to_vec(),
        DataMode::Metadata => head_of(p, pid),
    }
}

fn sim() -> SimDevice {
    let d = SimDevice::by_name("sd-card", 8 << 20, 1).unwrap();
    d.precondition_as(Precondition::Sequential);
    d
}

/// ICL's counters without the memory figures (a WOB of heads holds less).
fn counters(s: &IclStats) -> Vec<(&'static str, u64)> {
    s.counters()
        .into_iter()
        .filter(|(k, _)| !k.ends_with("_memory_bytes"))
        .collect()
}

/// Checks that `store` (in `data` mode) reads every page of `model` as it says.
fn verify(store: &dyn PageStore, data: DataMode, model: &Model) {
    let mut buf = vec![0u8; store.page_size()];
    let mut pids: Vec<&PageId> = model.pages.keys().collect();
    pids.sort_unstable();
    for &pid in pids {
        let r = store.read_page(pid, &mut buf);
        assert_eq!(r.as_ref().ok(), Some(&ReadOutcome::Found), "{pid}: {r:?}");
        assert!(
            buf == as_handed(data, &model.pages[&pid], pid),
            "{data}: {pid} reads other bytes"
        );
    }
}

/// The same seeded mix on both stores: small edits (logged), large ones (home whole or
/// merged), batches, reads and syncs; both checked against the model all along.
fn mixed_run(stores: &[(DataMode, &dyn PageStore)], model: &mut Model, seed: u64, steps: u64) {
    let mut rng = SplitMix64::new(seed);
    let mut buf = vec![0u8; PS];
    for step in 1..=steps {
        let pid = PageId(rng.below(48));
        match rng.below(12) {
            0..=5 => {
                let n = 1 + rng.below(3) as usize;
                let edits: Vec<(usize, usize)> = (0..n)
                    .map(|_| (rng.below(PS as u64) as usize, 1 + rng.below(300) as usize))
                    .collect();
                let (p, d) = if model.pages.contains_key(&pid) && rng.below(8) != 0 {
                    model.edit(pid, &edits, step)
                } else {
                    model.whole(pid, step)
                };
                for &(data, s) in stores {
                    s.write_page(pid, &as_handed(data, &p, pid), &d).unwrap();
                }
            }
            6..=7 => {
                let pids: Vec<PageId> = (0..1 + rng.below(5))
                    .map(|k| PageId((pid.0 + k) % 48))
                    .collect();
                let written: Vec<(PageId, Vec<u8>, DirtyRanges)> = pids
                    .iter()
                    .map(|&q| {
                        let (p, d) = model.edit(q, &[(rng.below(PS as u64) as usize, 40)], step);
                        (q, p, d)
                    })
                    .collect();
                for &(data, s) in stores {
                    let pages: Vec<Vec<u8>> = written
                        .iter()
                        .map(|(q, p, _)| as_handed(data, p, *q))
                        .collect();
                    let batch: Vec<PageWrite<'_>> = written
                        .iter()
                        .zip(&pages)
                        .map(|((q, _, d), p)| PageWrite {
                            pid: *q,
                            page: p,
                            dirty: *d,
                        })
                        .collect();
                    s.write_pages(&batch).unwrap();
                }
            }
            8..=10 => {
                for &(data, s) in stores {
                    let b = &mut buf[..s.page_size()];
                    let got = s.read_page(pid, b).unwrap();
                    match model.pages.get(&pid) {
                        Some(p) => {
                            assert_eq!(got, ReadOutcome::Found, "{data} {pid}");
                            assert!(*b == as_handed(data, p, pid)[..], "{data} {pid} at {step}");
                        }
                        None => assert_eq!(got, ReadOutcome::Unwritten, "{data} {pid}"),
                    }
                }
            }
            _ => {
                for &(_, s) in stores {
                    s.sync().unwrap();
                }
            }
        }
    }
}

#[test]
fn heads_decide_and_cost_what_bytes_do_and_recover_alike() {
    let (db, dm) = (sim(), sim());
    let b = IclStore::create(db, cfg(DataMode::Bytes)).unwrap();
    let m = IclStore::create(dm, cfg(DataMode::Metadata)).unwrap();
    assert_eq!((b.page_size(), m.page_size()), (PS, METADATA_PAGE_BYTES));
    let mut model = Model::new(PS);
    let stores: [(DataMode, &dyn PageStore); 2] = [(DataMode::Bytes, &b), (DataMode::Metadata, &m)];
    mixed_run(&stores, &mut model, 17, 3_000);
    for s in [&b, &m] {
        s.sync().unwrap();
        s.check_invariants().unwrap();
    }
    let (sb, sm) = (b.icl_stats(), m.icl_stats());
    assert_eq!(counters(&sb), counters(&sm));
    assert_eq!(b.device_stats(), m.device_stats());
    assert_eq!(b.stats(), m.stats());
    // Every mechanism ran.
    assert!(
        sb.log_writes > 0
            && sb.copy_forwards > 0
            && sb.data_writes_merge > 0
            && sb.merges_bulk > 0
            && sb.dw_writes > 0,
        "{sb:?}"
    );
    assert!(sm.wob_peak_bytes > 0 && sm.wob_peak_bytes == sb.wob_peak_bytes);
    verify(&b, DataMode::Bytes, &model);
    verify(&m, DataMode::Metadata, &model);
    // Reopen both: recovery reads the same log pages, every synced page comes back.
    let (db, dm) = (b.into_device(), m.into_device());
    let (t0b, t0m) = (db.stats(), dm.stats());
    let b = IclStore::open(db, cfg(DataMode::Bytes)).unwrap();
    let m = IclStore::open(dm, cfg(DataMode::Metadata)).unwrap();
    assert_eq!(
        b.device_stats() - t0b,
        m.device_stats() - t0m,
        "recovery costs differ"
    );
    assert_eq!(counters(&b.icl_stats()), counters(&m.icl_stats()));
    verify(&b, DataMode::Bytes, &model);
    verify(&m, DataMode::Metadata, &model);
    // And they carry on alike after recovery.
    let stores: [(DataMode, &dyn PageStore); 2] = [(DataMode::Bytes, &b), (DataMode::Metadata, &m)];
    mixed_run(&stores, &mut model, 18, 800);
    assert_eq!(counters(&b.icl_stats()), counters(&m.icl_stats()));
    assert_eq!(b.device_stats(), m.device_stats());
}

#[test]
fn a_store_is_refused_in_the_other_mode() {
    for (made, asked) in [
        (DataMode::Metadata, DataMode::Bytes),
        (DataMode::Bytes, DataMode::Metadata),
    ] {
        let dev = Arc::new(MemDevice::new(0));
        let s = IclStore::create(dev.clone(), cfg(made)).unwrap();
        let mut model = Model::new(PS);
        let (p, d) = model.whole(PageId(1), 1);
        s.write_page(PageId(1), &as_handed(made, &p, PageId(1)), &d)
            .unwrap();
        s.sync().unwrap();
        drop(s);
        let e = IclStore::open(dev.clone(), cfg(asked)).expect_err("other mode");
        assert!(
            matches!(&e, StoreError::Format(m) if m.contains(&format!("--data {asked}"))),
            "{e}"
        );
        let parsed = registry::parse_text("icl:wob_pages=2,log_pages=40,dw_pages=3").unwrap();
        let ctx = StoreContext {
            data: asked,
            ..StoreContext::new(PS)
        };
        let e = parsed
            .open(Box::new(dev.clone()), &ctx)
            .err()
            .expect("refused");
        assert!(e.to_string().contains("--data"), "{e}");
        let s = IclStore::open(dev, cfg(made)).expect("same mode opens");
        verify(&s, made, &model);
    }
}

/// Flips byte `at` of the device.
fn flip(dev: &MemDevice, at: u64) {
    let mut b = [0u8; 1];
    dev.read_at(at, &mut b).unwrap();
    dev.write_at(at, &[b[0] ^ 0x5a]).unwrap();
}

/// A damaged home head reads corrupt; a damaged log page is reported (at run time and at
/// reopen), never an older version — in both modes alike.
fn damage_run(data: DataMode) -> (String, String, String, DeviceStats) {
    let dev = Arc::new(MemDevice::new(0));
    let s = IclStore::create(dev.clone(), cfg(data)).unwrap();
    let mut model = Model::new(PS);
    for q in [3, 4] {
        let (p, d) = model.whole(PageId(q), q);
        s.write_page(PageId(q), &as_handed(data, &p, PageId(q)), &d)
            .unwrap();
    }
    // Page 4 gets a small edit: a log, flushed into log page 0 by the sync.
    let (p, d) = model.edit(PageId(4), &[(100, 20)], 9);
    s.write_page(PageId(4), &as_handed(data, &p, PageId(4)), &d)
        .unwrap();
    s.sync().unwrap();
    assert_eq!(s.icl_stats().log_writes, 1);
    let l = s.layout();
    // The home head of page 3 (a byte of its header), and a byte of log page 0's record
    // of page 4 (its range list, stored in either mode).
    flip(&dev, l.home_offset(PageId(3)).unwrap() + 9);
    flip(&dev, l.log_slot_offset(0) + 48 + 25);
    let mut buf = vec![0u8; s.page_size()];
    let home = s.read_page(PageId(3), &mut buf).expect_err("corrupt");
    assert!(
        matches!(home, StoreError::Corrupt { pid: PageId(3), .. }),
        "{home}"
    );
    assert!(buf.iter().all(|&x| x == 0), "corrupt bytes handed out");
    let log = s.read_page(PageId(4), &mut buf).expect_err("damaged log");
    assert!(
        matches!(
            log,
            StoreError::DamagedLog {
                pid: PageId(4),
                slot: 0,
                ..
            }
        ),
        "{log}"
    );
    let stats = s.device_stats();
    drop(s);
    let reopened = IclStore::open(dev, cfg(data)).expect_err("a promised log page is damaged");
    (
        home.to_string(),
        log.to_string(),
        reopened.to_string(),
        stats,
    )
}

#[test]
fn damaged_heads_and_log_pages_are_reported_as_with_bytes() {
    let (hb, lb, rb, db) = damage_run(DataMode::Bytes);
    let (hm, lm, rm, dm) = damage_run(DataMode::Metadata);
    assert!(rm.contains("log page 0") && rm.contains("damaged"), "{rm}");
    assert_eq!((lb, rb), (lm, rm));
    assert!(hb.contains("corrupt") || hb.contains("checksum"), "{hb}");
    assert!(hm.contains("checksum"), "{hm}");
    // The memory device counts requests and bytes moved, and a head request moves the
    // whole page's length as with bytes.
    assert_eq!(db, dm);
}
