//! The slot-reuse rule of background flushes (`stable_buffer/background.rs`): a flush on
//! the background queue frees its slots when its requests are submitted, while on the
//! simulated clock they complete later. A probe around the device records, per slot, when
//! the background flush that read it completed (the end of its sync after its home
//! writes) and checks that every later foreground write into that slot starts no earlier,
//! and likewise every foreground read or write of a home copy a background flush wrote.

use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{page, DirtyRanges, PageId};
use flashbuf_device::sim::{SimDevice, StreamId};
use flashbuf_device::{Device, DeviceError, HeadWrite, WriteOp};
use flashbuf_store::stable_buffer::{
    FlushMode, Flusher, Recognition, StableBufferConfig, StableBufferStore,
};
use flashbuf_store::PageStore;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

const PS: usize = 4096;

/// What the probe saw.
#[derive(Default)]
struct Log {
    /// Staging area `[start, end)` and data offset, once the store is formatted.
    areas: Option<(u64, u64, u64)>,
    /// Slots (and homes) the current background flush touched; whether it wrote home.
    current: Vec<u64>,
    wrote: bool,
    /// Offset → completion (µs) of the background flush that freed or wrote it.
    done_at: HashMap<u64, f64>,
    /// Foreground requests checked against a completion, and those whose completion was
    /// still ahead of the main clock when the flush was submitted (overlap happened).
    checked: u64,
    ahead: u64,
}

struct Probe {
    inner: Box<dyn Device>,
    sim: Arc<SimDevice>,
    background: bool,
    log: Arc<Mutex<Log>>,
}

impl Probe {
    fn clock(&self, s: StreamId) -> f64 {
        self.sim.stream_clock_us(s).expect("clock")
    }

    /// A foreground request at `offset` is about to start.
    fn foreground(&self, offset: u64) {
        let now = self.clock(StreamId::MAIN);
        let mut log = self.log.lock().expect("log");
        if let Some(done) = log.done_at.remove(&offset) {
            assert!(
                now >= done,
                "a foreground request at {offset} starts at {now} µs, before the background \
                 flush that freed it completed at {done} µs"
            );
            log.checked += 1;
        }
    }

    fn background_request(&self, offset: Option<u64>, write: bool) {
        let mut log = self.log.lock().expect("log");
        let Some((start, end, data)) = log.areas else {
            return;
        };
        match offset {
            Some(o) if (start..end).contains(&o) && !write => log.current.push(o),
            Some(o) if o >= data && write => {
                log.current.push(o);
                log.wrote = true;
            }
            Some(_) => {}
            None if log.wrote => {
                // The flush's last sync: everything it touched completes now.
                let done = self.clock(self.sim.background_stream());
                let main = self.clock(StreamId::MAIN);
                let touched = std::mem::take(&mut log.current);
                log.ahead += u64::from(done > main);
                for o in touched {
                    log.done_at.insert(o, done);
                }
                log.wrote = false;
            }
            None => {}
        }
    }

    fn before(&self, offset: Option<u64>, write: bool) {
        if self.background {
            return;
        }
        if let Some(o) = offset {
            let areas = self.log.lock().expect("log").areas;
            if let Some((start, end, data)) = areas {
                let slot_write = write && (start..end).contains(&o);
                if slot_write || o >= data {
                    self.foreground(o);
                }
            }
        }
    }

    fn after(&self, offset: Option<u64>, write: bool) {
        if self.background {
            self.background_request(offset, write);
        }
    }
}

impl Device for Probe {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.before(Some(offset), false);
        self.inner.read_at(offset, buf)?;
        self.after(Some(offset), false);
        Ok(())
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        self.write_batch(&[WriteOp { offset, data: buf }])
    }
    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        for op in ops {
            self.before(Some(op.offset), true);
            self.inner.write_at(op.offset, op.data)?;
            self.after(Some(op.offset), true);
        }
        Ok(())
    }
    fn write_heads(&self, _ops: &[HeadWrite<'_>]) -> Result<(), DeviceError> {
        Err(DeviceError::Config(
            "the probe serves whole pages only".into(),
        ))
    }
    fn sync(&self) -> Result<(), DeviceError> {
        self.inner.sync()?;
        self.after(None, false);
        Ok(())
    }
    fn background(&self) -> Option<Box<dyn Device>> {
        Some(Box::new(Probe {
            inner: self.inner.background()?,
            sim: Arc::clone(&self.sim),
            background: true,
            log: Arc::clone(&self.log),
        }))
    }
    flashbuf_device::forward_device!(inner => len, set_len, max_len, stats, alignment,
        describe, join_background);
}

#[test]
fn no_foreground_request_overtakes_the_background_flush_it_depends_on() {
    let sim = Arc::new(SimDevice::by_name("mtron", 64 << 20, 3).expect("mtron"));
    sim.precondition();
    let log = Arc::new(Mutex::new(Log::default()));
    let probe = Probe {
        inner: Box::new(Arc::clone(&sim)),
        sim: Arc::clone(&sim),
        background: false,
        log: Arc::clone(&log),
    };
    let cfg = StableBufferConfig {
        staging_bytes: 128 * PS as u64,
        recognition: Recognition::Incremental,
        flush: FlushMode::Proactive,
        flusher: Flusher::Queue,
        salt: Some(5),
        ..StableBufferConfig::with_page_size(PS)
    };
    let store = StableBufferStore::create(probe, cfg).expect("create");
    let l = store.layout();
    log.lock().expect("log").areas =
        Some((l.slot_offset(0), l.slot_offset(l.slots), l.data_offset));
    let mut rng = SplitMix64::new(9);
    let mut p = vec![0u8; PS];
    let mut q = vec![0u8; PS];
    for i in 0..4000u64 {
        let pid = (i / 40 % 7) * 512 + rng.below(48);
        page::seal(&mut p, PageId(pid), i + 1);
        store
            .write_page(PageId(pid), &p, &DirtyRanges::full(PS))
            .expect("write");
        if i % 5 == 0 {
            let r = rng.below(7) * 512 + rng.below(48);
            store.read_page(PageId(r), &mut q).expect("read");
        }
    }
    store.sync().expect("sync");
    let log = log.lock().expect("log");
    assert!(
        store.sb_stats().proactive_flushes > 10,
        "{:?}",
        store.sb_stats()
    );
    assert!(
        log.ahead > 0,
        "background flushes completed ahead of the main clock"
    );
    assert!(
        log.checked > 50,
        "only {} dependent requests checked",
        log.checked
    );
    assert!(store.background_joins() > 0);
}
