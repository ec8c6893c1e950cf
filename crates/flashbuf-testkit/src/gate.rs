//! The gate of the schedule explorer ([`super::schedule`]): a device whose writes, syncs
//! and size changes wait until the scheduler lets them through, one at a time, and the
//! scheduler's shared state (who waits at a gate, who is allowed through, the history).

use super::history::Event;
use flashbuf_core::DeviceStats;
use flashbuf_device::fault::FaultDevice;
use flashbuf_device::{Device, DeviceError, WriteOp};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

#[derive(Debug, Default)]
pub(crate) struct SchedState {
    /// Threads waiting at a gate, by name, with what they wait to do.
    pub(crate) waiting: BTreeMap<String, String>,
    /// The thread allowed through next.
    pub(crate) granted: Option<String>,
    /// Workers not finished.
    pub(crate) live: BTreeSet<String>,
    /// The history of the run.
    pub(crate) history: Vec<Event>,
    /// Bumped on every change the scheduler may wait for.
    pub(crate) changes: u64,
    /// Gates open for everyone (after the run, or while setting up).
    pub(crate) open: bool,
}

/// The scheduler shared by the gated device and the workers.
#[derive(Debug, Default)]
pub struct Sched {
    m: Mutex<SchedState>,
    pub(crate) cv: Condvar,
}

pub(crate) fn lock(s: &Sched) -> MutexGuard<'_, SchedState> {
    s.m.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Sched {
    pub(crate) fn gate(&self, what: &str) {
        let name = std::thread::current()
            .name()
            .unwrap_or("unnamed")
            .to_string();
        let mut g = lock(self);
        if g.open {
            return;
        }
        g.waiting.insert(name.clone(), what.to_string());
        g.changes += 1;
        self.cv.notify_all();
        while g.granted.as_deref() != Some(name.as_str()) && !g.open {
            g = self
                .cv
                .wait(g)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        g.waiting.remove(&name);
        if g.granted.as_deref() == Some(name.as_str()) {
            g.granted = None;
        }
        g.changes += 1;
        self.cv.notify_all();
    }

    /// Records an event of the history.
    pub fn log(&self, e: Event) {
        let mut g = lock(self);
        g.history.push(e);
        g.changes += 1;
        self.cv.notify_all();
    }

    pub(crate) fn finish(&self, worker: &str) {
        let mut g = lock(self);
        g.live.remove(worker);
        g.changes += 1;
        self.cv.notify_all();
    }

    pub(crate) fn set_open(&self, open: bool) {
        let mut g = lock(self);
        g.open = open;
        g.changes += 1;
        self.cv.notify_all();
    }
}

/// A device whose writes, syncs and size changes wait at the scheduler's gate.
pub struct GatedDevice {
    pub(crate) dev: Arc<FaultDevice>,
    pub(crate) sched: Arc<Sched>,
}

impl Device for GatedDevice {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.dev.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        self.write_batch(&[WriteOp { offset, data: buf }])
    }
    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        let at = ops.first().map_or(0, |o| o.offset);
        self.sched
            .gate(&format!("write {} op(s) at {at}", ops.len()));
        self.dev.write_batch(ops)
    }
    fn sync(&self) -> Result<(), DeviceError> {
        self.sched.gate("sync");
        self.dev.sync()
    }
    fn len(&self) -> u64 {
        self.dev.len()
    }
    fn set_len(&self, len: u64) -> Result<(), DeviceError> {
        self.sched.gate(&format!("set_len {len}"));
        self.dev.set_len(len)
    }
    fn max_len(&self) -> Option<u64> {
        self.dev.max_len()
    }
    fn stats(&self) -> DeviceStats {
        self.dev.stats()
    }
    fn describe(&self) -> String {
        "gated(fault(memory))".to_string()
    }
}
