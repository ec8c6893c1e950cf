#![allow(clippy::unwrap_used)]
//! Regression (issue 11, bug B): a damaged StableBuffer staging slot silently returned
//! stale data. Recovery skipped a slot that failed its check as if it were free, fell back
//! to the older home copy and served it as `Found`; without the journal `check` reported
//! "0 violations", and recovery freed the slot, destroying the evidence (36 of 48
//! slot-damage cases: bit flips, a zeroed slot, random bytes, a slot copied from another).
//!
//! Now every promise sync leaves a durable record of the copies it promised (slot,
//! sequence, page, version) in the A/B state record: a damaged promised slot is reported
//! corrupt — on this open and every later one, the page carried as *lost* in the next
//! records — never served as the older home copy, and a write of the page repairs it; a
//! torn slot that no sync promised is still dropped silently.

use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::{Device, MemDevice};
use flashbuf_store::stable_buffer::{
    FlushMode, PatternCosts, Recognition, StableBufferConfig, StableBufferStore,
};
use flashbuf_store::{PageStore, ReadOutcome, StoreError};
use flashbuf_testkit::content::filled_page;
use std::sync::Arc;

const PS: usize = 512;
const PAGES: u64 = 8;

fn cfg(recognition: Recognition) -> StableBufferConfig {
    StableBufferConfig {
        page_size: PS,
        staging_bytes: 16 * PS as u64,
        recognition,
        flush: FlushMode::Passive,
        costs: PatternCosts::default(),
        align_bytes: PS as u64,
        grow_bytes: 8 * PS as u64,
        salt: Some(7),
        ..StableBufferConfig::with_page_size(PS)
    }
}

fn page(pid: u64, v: u64) -> Vec<u8> {
    filled_page(PS, PageId(pid), v, 5)
}

fn write(s: &dyn PageStore, pid: u64, v: u64) {
    s.write_page(PageId(pid), &page(pid, v), &DirtyRanges::full(PS))
        .unwrap();
}

/// Pages `0..PAGES` at version 1 home (flushed), version 2 staged and promised by a sync.
fn two_versions(c: &StableBufferConfig) -> Arc<MemDevice> {
    let dev = Arc::new(MemDevice::new(0));
    let s = StableBufferStore::create(Arc::clone(&dev), c.clone()).unwrap();
    for pid in 0..PAGES {
        write(&s, pid, 1);
    }
    s.flush_all().unwrap();
    for pid in 0..PAGES {
        write(&s, pid, 2);
    }
    s.sync().unwrap();
    assert_eq!(s.staged(), PAGES as usize);
    dev
}

/// The slot holding `pid`'s staged copy (found by its stamp).
fn slot_of(
    dev: &MemDevice,
    s_layout: flashbuf_store::stable_buffer::layout::Layout,
    pid: u64,
) -> u32 {
    let mut buf = vec![0u8; PS];
    (0..s_layout.slots)
        .rfind(|&i| {
            dev.read_at(s_layout.slot_offset(i), &mut buf).unwrap();
            flashbuf_core::page::read_header(&buf).page_id == PageId(pid)
                && flashbuf_core::page::version_of(&buf) == 2
        })
        .unwrap()
}

#[derive(Debug, Clone, Copy)]
enum Damage {
    BitFlip(usize),
    Zeroed,
    Random,
    CopiedFromAnother,
}

fn damage(
    dev: &MemDevice,
    layout: flashbuf_store::stable_buffer::layout::Layout,
    slot: u32,
    d: Damage,
) {
    let off = layout.slot_offset(slot);
    let mut buf = vec![0u8; PS];
    dev.read_at(off, &mut buf).unwrap();
    match d {
        Damage::BitFlip(at) => buf[at % PS] ^= 0x40,
        Damage::Zeroed => buf.fill(0),
        Damage::Random => {
            let mut r = flashbuf_core::rng::SplitMix64::new(u64::from(slot));
            buf.iter_mut().for_each(|b| *b = r.next_u64() as u8);
        }
        Damage::CopiedFromAnother => {
            let other = (slot + 1) % layout.slots;
            dev.read_at(layout.slot_offset(other), &mut buf).unwrap();
        }
    }
    dev.write_at(off, &buf).unwrap();
}

#[test]
fn a_damaged_promised_slot_is_reported_never_served_old() {
    let mut cases = 0;
    for recognition in [Recognition::OnDemand, Recognition::Incremental] {
        let c = cfg(recognition);
        for victim in 0..PAGES {
            for d in [
                Damage::BitFlip(100),
                Damage::BitFlip(3),
                Damage::BitFlip(20),
                Damage::BitFlip(PS - 1),
                Damage::Zeroed,
                Damage::Random,
                Damage::CopiedFromAnother,
            ] {
                cases += 1;
                let dev = two_versions(&c);
                let layout = StableBufferStore::open(Arc::clone(&dev), c.clone())
                    .unwrap()
                    .layout();
                let slot = slot_of(&dev, layout, victim);
                damage(&dev, layout, slot, d);
                let what = format!("{recognition:?}, page {victim} slot {slot}, {d:?}");
                let mut buf = vec![0u8; PS];
                // Twice: the second open must still see the evidence.
                for open in 0..2 {
                    let s = StableBufferStore::open(Arc::clone(&dev), c.clone()).unwrap();
                    s.check_invariants().unwrap();
                    for pid in 0..PAGES {
                        let r = s.read_page(PageId(pid), &mut buf);
                        if pid == victim {
                            match r {
                                Err(StoreError::Corrupt { pid: p, .. }) => {
                                    assert_eq!(p, PageId(pid))
                                }
                                Ok(o) => panic!(
                                    "{what}, open {open}: {o:?} version {} instead of corrupt",
                                    flashbuf_core::page::version_of(&buf)
                                ),
                                Err(e) => panic!("{what}, open {open}: {e}"),
                            }
                            assert!(buf.iter().all(|&b| b == 0), "{what}: bytes leaked");
                        } else {
                            assert_eq!(r.unwrap(), ReadOutcome::Found, "{what}: page {pid}");
                            assert_eq!(buf, page(pid, 2), "{what}: page {pid}");
                        }
                    }
                    assert_eq!(s.lost_pages(), vec![PageId(victim)], "{what}");
                    // Flushing everything else home keeps the page reported.
                    s.flush_all().unwrap();
                    assert!(
                        matches!(
                            s.read_page(PageId(victim), &mut buf),
                            Err(StoreError::Corrupt { .. })
                        ),
                        "{what}: after flush_all"
                    );
                }
                // A new write of the page repairs it, durably.
                let s = StableBufferStore::open(Arc::clone(&dev), c.clone()).unwrap();
                write(&s, victim, 3);
                s.sync().unwrap();
                drop(s);
                let s = StableBufferStore::open(Arc::clone(&dev), c.clone()).unwrap();
                assert_eq!(
                    s.read_page(PageId(victim), &mut buf).unwrap(),
                    ReadOutcome::Found
                );
                assert_eq!(buf, page(victim, 3), "{what}: after the repair");
                s.flush_all().unwrap();
                s.check_invariants().unwrap();
            }
        }
    }
    assert_eq!(cases, 2 * PAGES * 7);
}

#[test]
fn a_torn_slot_no_sync_promised_is_dropped_silently() {
    for recognition in [Recognition::OnDemand, Recognition::Incremental] {
        let c = cfg(recognition);
        for in_place in [false, true] {
            let dev = two_versions(&c);
            let s = StableBufferStore::open(Arc::clone(&dev), c.clone()).unwrap();
            // Version 3 of page 0 takes a new slot (version 2 is promised); version 4, if
            // written, updates that fresh slot in place. Neither is synced.
            write(&s, 0, 3);
            if in_place {
                write(&s, 0, 4);
            }
            let layout = s.layout();
            let want = if in_place { 4 } else { 3 };
            let mut buf = vec![0u8; PS];
            let slot = (0..layout.slots)
                .find(|&i| {
                    dev.read_at(layout.slot_offset(i), &mut buf).unwrap();
                    flashbuf_core::page::read_header(&buf).page_id == PageId(0)
                        && flashbuf_core::page::version_of(&buf) == want
                })
                .unwrap();
            drop(s);
            damage(&dev, layout, slot, Damage::BitFlip(200));
            let s = StableBufferStore::open(Arc::clone(&dev), c.clone()).unwrap();
            assert_eq!(
                s.read_page(PageId(0), &mut buf).unwrap(),
                ReadOutcome::Found
            );
            assert_eq!(
                buf,
                page(0, 2),
                "{recognition:?}, in place {in_place}: the promised version"
            );
            s.check_invariants().unwrap();
        }
    }
}
