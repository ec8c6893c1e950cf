#![allow(clippy::unwrap_used)]
//! Regression (issue 11, bug C): an in-place staging update racing `sync()` lost the
//! promised version. Writer T2 picked `InPlace(A)` for page P (slot A fresh, holding v1
//! whose write had returned); while T2's device write was in flight, T1 called `sync()`,
//! whose start cleared `fresh` without waiting for busy in-place writers, promised v1 and
//! returned; T2 then overwrote slot A with v2; a power cut tore A, recovery fell back to
//! home, and v1 — promised — was gone (22 of 64 torn crash images read P as `Unwritten`).
//!
//! Now a promise sync raises a fence (no new in-place update starts) and waits for the
//! in-place writes in flight before it promises anything: `sync()` cannot return while
//! T2's write is held, and once it has returned every crash image holds v1 or v2.

use flashbuf_core::{DeviceStats, DirtyRanges, PageId};
use flashbuf_device::fault::{CrashMode, FaultDevice, Tear};
use flashbuf_device::{Device, DeviceError, WriteOp};
use flashbuf_store::stable_buffer::{
    FlushMode, PatternCosts, Recognition, StableBufferConfig, StableBufferStore,
};
use flashbuf_store::{PageStore, ReadOutcome};
use flashbuf_testkit::content::filled_page;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

const PS: usize = 4096;

fn cfg() -> StableBufferConfig {
    StableBufferConfig {
        page_size: PS,
        staging_bytes: 8 * PS as u64,
        recognition: Recognition::Incremental,
        flush: FlushMode::Passive,
        costs: PatternCosts::default(),
        align_bytes: PS as u64,
        grow_bytes: 8 * PS as u64,
        salt: Some(3),
        ..StableBufferConfig::with_page_size(PS)
    }
}

/// (armed byte range, a write is held, released)
type GateState = (Option<(u64, u64)>, bool, bool);

/// A fault device whose next write into `[from, to)` blocks, once armed, until released.
struct Gate {
    dev: Arc<FaultDevice>,
    state: Mutex<GateState>,
    cv: Condvar,
}

impl Gate {
    fn arm(&self, from: u64, to: u64) {
        *self.state.lock().unwrap() = (Some((from, to)), false, false);
    }
    fn wait_held(&self) {
        let mut g = self.state.lock().unwrap();
        while !g.1 {
            g = self.cv.wait(g).unwrap();
        }
    }
    fn release(&self) {
        self.state.lock().unwrap().2 = true;
        self.cv.notify_all();
    }
}

impl Device for Gate {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.dev.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        self.write_batch(&[WriteOp { offset, data: buf }])
    }
    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        let mut g = self.state.lock().unwrap();
        if let Some((from, to)) = g.0 {
            if ops.iter().any(|o| o.offset >= from && o.offset < to) {
                g.0 = None;
                g.1 = true;
                self.cv.notify_all();
                while !g.2 {
                    g = self.cv.wait(g).unwrap();
                }
            }
        }
        drop(g);
        self.dev.write_batch(ops)
    }
    fn sync(&self) -> Result<(), DeviceError> {
        self.dev.sync()
    }
    fn len(&self) -> u64 {
        self.dev.len()
    }
    fn set_len(&self, len: u64) -> Result<(), DeviceError> {
        self.dev.set_len(len)
    }
    fn stats(&self) -> DeviceStats {
        self.dev.stats()
    }
    fn describe(&self) -> String {
        "gate".into()
    }
}

#[test]
fn sync_waits_for_an_in_place_update_in_flight() {
    let full = DirtyRanges::full(PS);
    let mut torn_images = 0;
    for round in 0..4u64 {
        let dev = Arc::new(FaultDevice::new(0));
        let gate = Arc::new(Gate {
            dev: Arc::clone(&dev),
            state: Mutex::new((None, false, false)),
            cv: Condvar::new(),
        });
        let store = Arc::new(StableBufferStore::create(Arc::clone(&gate), cfg()).unwrap());
        let p = PageId(5);
        // v1 staged in a fresh slot; its write returned.
        store
            .write_page(p, &filled_page(PS, p, 1, round), &full)
            .unwrap();
        let l = store.layout();
        gate.arm(l.staging_offset, l.staging_offset + l.staging_bytes());
        // T2: v2 goes in place into v1's (fresh) slot, and its device write is held.
        let t2 = {
            let (s, page) = (Arc::clone(&store), filled_page(PS, p, 2, round));
            std::thread::spawn(move || s.write_page(p, &page, &DirtyRanges::full(PS)).unwrap())
        };
        gate.wait_held();
        // T1: sync. It must not promise anything while the in-place write is in flight.
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let t1 = {
            let s = Arc::clone(&store);
            std::thread::spawn(move || {
                s.sync().unwrap();
                done_tx.send(()).unwrap();
            })
        };
        let returned_early = done_rx.recv_timeout(Duration::from_millis(300)).is_ok();
        // If sync returned, v1 is promised: crash images now (T2's write not issued yet)
        // and after it lands torn must hold it.
        let mut images = Vec::new();
        if returned_early {
            images.push(dev.crash_image(CrashMode::LoseUnsynced));
        }
        gate.release();
        t2.join().unwrap();
        if !returned_early {
            done_rx.recv().unwrap();
        }
        t1.join().unwrap();
        // T2's in-place write is now pending (or, with the fence, synced); tear it.
        let pending = dev.pending_writes();
        for seed in 0..16u64 {
            for garbage in [false, true] {
                images.push(dev.crash_image(CrashMode::Prefix {
                    writes: pending.saturating_sub(1),
                    tear: Some(Tear {
                        sector_bytes: 512,
                        garbage,
                    }),
                }));
                images.push(dev.crash_image(CrashMode::Random {
                    seed,
                    tear: Some(Tear {
                        sector_bytes: 512,
                        garbage,
                    }),
                }));
            }
        }
        let mut buf = vec![0u8; PS];
        for (k, img) in images.into_iter().enumerate() {
            torn_images += 1;
            let s = StableBufferStore::open(FaultDevice::from_image(img), cfg()).unwrap();
            let r = s.read_page(p, &mut buf);
            let ok = matches!(r, Ok(ReadOutcome::Found))
                && (buf == filled_page(PS, p, 1, round) || buf == filled_page(PS, p, 2, round));
            assert!(
                ok,
                "round {round}, image {k}: sync returned {} T2's in-place write landed; page {p} read {r:?} after the crash (v1 was promised)",
                if returned_early { "before" } else { "after" }
            );
        }
        assert!(
            !returned_early,
            "round {round}: sync returned while an in-place write was in flight"
        );
    }
    assert!(torn_images >= 4 * 64);
}
