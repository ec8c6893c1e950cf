#![allow(clippy::unwrap_used)]
//! Fail-stop, every crash variant of every store in `flashbuf_store::STORES`: after an injected read,
//! write or sync fault (EIO or ENOSPC, once or sticky) the store is poisoned — every later
//! call returns `StoreError::Poisoned`, even once the device works again — and reopening
//! the device (as a crash would leave it, or as it is) returns every synced page exactly
//! and every unsynced page old or new (design.md §6; PostgreSQL's fsync rule).

use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::fault::{CrashMode, FaultDevice, FaultKind, FaultPlan};
use flashbuf_device::Device;
use flashbuf_store::{PageStore, PageWrite, StoreError};
use flashbuf_testkit::content::filled_page;
use flashbuf_testkit::model::Model;
use flashbuf_testkit::CrashStore;
use std::sync::Arc;

const PS: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Read,
    Write,
    Sync,
}

struct Harness {
    dev: Arc<FaultDevice>,
    store: Box<dyn PageStore>,
    model: Model,
    tag: u64,
}

impl Harness {
    fn new(f: &CrashStore) -> Self {
        let dev = Arc::new(FaultDevice::new(0));
        let store = f.create(Box::new(dev.clone()), PS).unwrap();
        Self {
            dev,
            store,
            model: Model::new(),
            tag: 0,
        }
    }

    /// Writes a fresh version of `pid`; the model records it whatever the outcome (a
    /// failed write may or may not have reached the device).
    fn write(&mut self, pid: u64) -> Result<(), StoreError> {
        self.tag += 1;
        let page = filled_page(PS, PageId(pid), self.tag, 7);
        self.model
            .write(PageId(pid), self.tag, page[HEADER_BYTES..].to_vec().into());
        self.store
            .write_page(PageId(pid), &page, &DirtyRanges::full(PS))
    }

    fn sync(&mut self) -> Result<(), StoreError> {
        self.store.sync()?;
        self.model.sync();
        Ok(())
    }
}

/// Drives the store until the injected fault surfaces; returns that first error.
fn provoke(h: &mut Harness, fault: Fault) -> StoreError {
    let mut buf = vec![0u8; PS];
    for i in 0..64u64 {
        let r = match fault {
            Fault::Read => h.store.read_page(PageId(i % 6), &mut buf).map(|_| ()),
            Fault::Write => match h.write(20 + i) {
                Ok(()) if i % 4 == 3 => h.sync(),
                r => r,
            },
            Fault::Sync => h.write(i % 9).and_then(|()| h.sync()),
        };
        if let Err(e) = r {
            return e;
        }
    }
    panic!(
        "store '{}': the injected {fault:?} fault never surfaced",
        h.store.name()
    );
}

fn assert_poisoned(what: &str, r: Result<(), StoreError>) {
    match r {
        Err(StoreError::Poisoned(reason)) => {
            assert!(
                reason.contains("injected"),
                "{what}: poison reason '{reason}'"
            )
        }
        other => panic!("{what}: expected Poisoned, got {other:?}"),
    }
}

fn check_fail_stop(f: &CrashStore, fault: Fault, kind: FaultKind, sticky: bool) {
    let ctx = format!(
        "store '{}', {fault:?} fault, {kind:?}, sticky={sticky}",
        f.name
    );
    let mut h = Harness::new(f);
    for pid in 0..6 {
        h.write(pid).unwrap();
    }
    h.sync().unwrap();
    for pid in 4..9 {
        h.write(pid).unwrap();
    }
    let plan = FaultPlan {
        fail_read: (fault == Fault::Read).then_some(1),
        fail_write: (fault == Fault::Write).then_some(1),
        fail_sync: (fault == Fault::Sync).then_some(1),
        kind,
        sticky,
    };
    h.dev.set_plan(plan);
    let first = provoke(&mut h, fault);
    let want = match kind {
        FaultKind::Eio => "EIO",
        FaultKind::Enospc => "ENOSPC",
    };
    assert!(
        matches!(first, StoreError::Device(_)) && first.to_string().contains(want),
        "{ctx}: first error {first:?}"
    );
    // The device works again; the store must still refuse everything.
    h.dev.set_plan(FaultPlan::default());
    let mut buf = vec![0u8; PS];
    assert_poisoned(&ctx, h.store.read_page(PageId(0), &mut buf).map(|_| ()));
    assert_poisoned(&ctx, h.store.read_page(PageId(999), &mut buf).map(|_| ()));
    let page = filled_page(PS, PageId(1), 1_000, 7);
    assert_poisoned(
        &ctx,
        h.store.write_page(PageId(1), &page, &DirtyRanges::full(PS)),
    );
    assert_poisoned(
        &ctx,
        h.store.write_pages(&[PageWrite {
            pid: PageId(1),
            page: &page,
            dirty: DirtyRanges::full(PS),
        }]),
    );
    assert_poisoned(&ctx, h.store.sync());
    assert_poisoned(&ctx, h.store.sync());
    drop(h.store);

    // Reopen: as a crash would leave the device (nothing or everything unsynced kept), and
    // as it is. Synced pages exact; the rest old, new or corrupt-if-written.
    let images = [
        ("lose-unsynced", h.dev.crash_image(CrashMode::LoseUnsynced)),
        ("keep-all", h.dev.crash_image(CrashMode::KeepAll)),
        ("live", h.dev.live_image()),
    ];
    for (name, img) in images {
        let store = f
            .open(Box::new(FaultDevice::from_image(img)), PS)
            .unwrap_or_else(|e| panic!("{ctx}: reopen ({name}) failed: {e}"));
        for pid in (0..30).map(PageId) {
            let r = store.read_page(pid, &mut buf);
            if let Err(v) =
                h.model
                    .check_recovered(pid, r.as_ref().map(|o| *o), &buf[HEADER_BYTES..])
            {
                panic!("{ctx}: after reopen ({name}): {v}");
            }
        }
        // And it works: write, sync, read back.
        let p = filled_page(PS, PageId(3), 5_000, 7);
        store
            .write_page(PageId(3), &p, &DirtyRanges::full(PS))
            .unwrap();
        store.sync().unwrap();
        store.read_page(PageId(3), &mut buf).unwrap();
        assert_eq!(buf, p, "{ctx}");
    }
}

#[test]
fn every_store_fails_stop_on_read_write_and_sync_faults() {
    let mut cases = 0;
    let stores = CrashStore::variants().unwrap();
    for f in &stores {
        for fault in [Fault::Read, Fault::Write, Fault::Sync] {
            for kind in [FaultKind::Eio, FaultKind::Enospc] {
                for sticky in [false, true] {
                    check_fail_stop(f, fault, kind, sticky);
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, stores.len() * 12);
}

/// The n-th operation fails rather than the first: poisoning does not depend on where in
/// a run the fault lands.
#[test]
fn faults_later_in_a_run_poison_too() {
    for f in &CrashStore::variants().unwrap() {
        for n in 1..12u64 {
            let mut h = Harness::new(f);
            h.dev.set_plan(FaultPlan {
                fail_write: Some(n),
                ..FaultPlan::default()
            });
            let mut failed = false;
            for i in 0..40u64 {
                let r = h
                    .write(i % 7)
                    .and_then(|()| if i % 3 == 2 { h.sync() } else { Ok(()) });
                if failed {
                    assert!(
                        matches!(r, Err(StoreError::Poisoned(_))),
                        "store '{}', write fault #{n}, op {i}: {r:?}",
                        f.name
                    );
                } else if r.is_err() {
                    failed = true;
                }
            }
            assert!(
                failed,
                "store '{}': write fault #{n} never surfaced",
                f.name
            );
            let store = f
                .open(Box::new(FaultDevice::from_image(h.dev.durable_image())), PS)
                .unwrap();
            let mut buf = vec![0u8; PS];
            for pid in (0..8).map(PageId) {
                let r = store.read_page(pid, &mut buf);
                h.model
                    .check_recovered(pid, r.as_ref().map(|o| *o), &buf[HEADER_BYTES..])
                    .unwrap();
            }
        }
    }
}

/// Sanity: the device itself really is healthy after `set_plan(default)`, so the refusals
/// above come from the store's poison, not from the device.
#[test]
fn the_fault_device_recovers_when_the_plan_is_cleared() {
    let d = FaultDevice::new(4096);
    d.set_plan(FaultPlan {
        fail_write: Some(1),
        sticky: true,
        ..FaultPlan::default()
    });
    assert!(d.write_at(0, b"x").is_err());
    assert!(d.write_at(0, b"x").is_err());
    d.set_plan(FaultPlan::default());
    d.write_at(0, b"y").unwrap();
    d.sync().unwrap();
}
