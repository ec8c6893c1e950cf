//! The meter of the StableBuffer reproduction: a device wrapper that attributes virtual
//! time to the parts of the write path, and the replay hook that measures each write's
//! response time — on the lab's shared replay (`crate::replay::run_hooked`), pass-through.
//!
//! - **Buckets**: device time of foreground reads (the trace's reads, on the replay
//!   thread), staging writes (below the data area), home writes (in it), reads by flushes
//!   (any other read: a flush triggered inside a write, or the background flusher), and
//!   syncs. Requests are serialized by the meter (the simulator serves one at a time
//!   anyway) so each one's virtual time is exact.
//! - **Response time of a write** = the virtual device time that passed during the store
//!   call (its staging write, any flush it triggered, and — proactive — what the background
//!   flush it triggered added to the makespan beside it) + the CPU time of the call on the replay thread,
//!   minus the CPU the simulator itself spent on that thread (the store's own CPU:
//!   recognition, tables, checksums, copies).
//! - **Background queue** (proactive flushing with `flusher=queue`, the default): the
//!   device's background handle is metered into the same buckets; a request's device time
//!   is the makespan it adds, so a flush that overlaps the foreground on distinct channels
//!   costs only what it adds beyond it, and the buckets still sum to the device time.
//! - **Utilisation**: the fraction of slots in use, sampled every 256 writes from the
//!   store's report.
//!
//! The replay thread is the thread that created the meter; no thread-local state.

use crate::result::RunResult;
use crate::LabError;
use crate::ReplayHook;
use flashbuf_core::DeviceStats;
use flashbuf_device::{Device, DeviceError, WriteOp};
use flashbuf_store::{PageStore, Superblock};
use flashbuf_trace::Op;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

/// CPU time of the calling thread, nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Device time by part of the path, µs, and request counts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Buckets {
    /// Trace reads (foreground).
    pub read_us: f64,
    /// Writes into the staging area (or any write, for direct).
    pub stage_write_us: f64,
    /// Writes of flushed pages home.
    pub home_write_us: f64,
    /// Reads of staged pages by flushes (and recovery).
    pub flush_read_us: f64,
    /// Syncs.
    pub sync_us: f64,
    /// Staging writes.
    pub stage_writes: u64,
    /// Home writes.
    pub home_writes: u64,
    /// Flush reads.
    pub flush_reads: u64,
}

impl Buckets {
    /// Device time of the write path, µs.
    pub fn write_path_us(&self) -> f64 {
        self.stage_write_us + self.home_write_us + self.flush_read_us + self.sync_us
    }

    fn since(&self, b0: &Buckets) -> Buckets {
        Buckets {
            read_us: self.read_us - b0.read_us,
            stage_write_us: self.stage_write_us - b0.stage_write_us,
            home_write_us: self.home_write_us - b0.home_write_us,
            flush_read_us: self.flush_read_us - b0.flush_read_us,
            sync_us: self.sync_us - b0.sync_us,
            stage_writes: self.stage_writes - b0.stage_writes,
            home_writes: self.home_writes - b0.home_writes,
            flush_reads: self.flush_reads - b0.flush_reads,
        }
    }
}

/// The metering device wrapper (of the device, or of its background queue: both share
/// one [`Shared`]).
struct Meter {
    inner: Box<dyn Device>,
    s: Arc<Shared>,
}

/// What the meters of a device and of its background queue share.
struct Shared {
    buckets: Mutex<Buckets>,
    /// Writes at or beyond this offset are home writes (`u64::MAX` until known).
    data_offset: AtomicU64,
    /// The replay thread.
    replay: ThreadId,
    /// Set while the replay thread serves a trace read.
    foreground_read: AtomicBool,
    /// CPU nanoseconds the replay thread spent inside the device.
    replay_device_cpu_ns: AtomicU64,
}

impl Meter {
    fn clock_us(&self) -> f64 {
        self.inner.stats().device_time_us
    }

    fn metered<T>(
        &self,
        f: impl FnOnce(&dyn Device) -> Result<T, DeviceError>,
        account: impl FnOnce(&mut Buckets, f64),
    ) -> Result<T, DeviceError> {
        let mut b = self.s.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let on_replay = std::thread::current().id() == self.s.replay;
        let t0 = self.clock_us();
        let c0 = if on_replay { thread_cpu_ns() } else { 0 };
        let r = f(self.inner.as_ref());
        if on_replay {
            self.s
                .replay_device_cpu_ns
                .fetch_add(thread_cpu_ns().saturating_sub(c0), Relaxed);
        }
        account(&mut b, self.clock_us() - t0);
        r
    }
}

impl Device for Meter {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        let fg =
            self.s.foreground_read.load(Relaxed) && std::thread::current().id() == self.s.replay;
        self.metered(
            |d| d.read_at(offset, buf),
            |b, us| {
                if fg {
                    b.read_us += us;
                } else {
                    b.flush_read_us += us;
                    b.flush_reads += 1;
                }
            },
        )
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        self.write_batch(&[WriteOp { offset, data: buf }])
    }

    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        let data = self.s.data_offset.load(Relaxed);
        for op in ops {
            self.metered(
                |d| d.write_at(op.offset, op.data),
                |b, us| {
                    if op.offset >= data {
                        b.home_write_us += us;
                        b.home_writes += 1;
                    } else {
                        b.stage_write_us += us;
                        b.stage_writes += 1;
                    }
                },
            )?;
        }
        Ok(())
    }

    fn sync(&self) -> Result<(), DeviceError> {
        self.metered(|d| d.sync(), |b, us| b.sync_us += us)
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn set_len(&self, len: u64) -> Result<(), DeviceError> {
        self.inner.set_len(len)
    }

    fn max_len(&self) -> Option<u64> {
        self.inner.max_len()
    }

    fn stats(&self) -> DeviceStats {
        self.inner.stats()
    }

    fn alignment(&self) -> usize {
        self.inner.alignment()
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    /// The device's background queue, metered into the same buckets (a proactive
    /// flush's reads, home writes and syncs).
    fn background(&self) -> Option<Box<dyn Device>> {
        Some(Box::new(Meter {
            inner: self.inner.background()?,
            s: Arc::clone(&self.s),
        }))
    }

    fn join_background(&self) -> Result<(), DeviceError> {
        self.inner.join_background()
    }
}

/// What the meter measured over one replay.
#[derive(Debug, Clone, Copy, Default)]
pub struct Metered {
    /// Device time by part (from the first reference on).
    pub buckets: Buckets,
    /// Sum over writes of the virtual time during the call, µs.
    pub resp_io_us: f64,
    /// Sum over writes of the store's own CPU time, µs.
    pub resp_cpu_us: f64,
    /// Mean fraction of the slots in use, sampled every 256 writes (StableBuffer only).
    pub mean_used: Option<f64>,
}

/// The replay hook that installs the meter and times every write.
pub struct MeterHook {
    meter: Option<Arc<Meter>>,
    b0: Buckets,
    /// Virtual time, thread CPU and device CPU at the start of the current write.
    start: (f64, u64, u64),
    writes: u64,
    used: (f64, u64),
    /// The result so far.
    pub metered: Metered,
}

impl MeterHook {
    /// A hook for a replay run on the calling thread.
    pub fn new() -> Self {
        Self {
            meter: None,
            b0: Buckets::default(),
            start: (0.0, 0, 0),
            writes: 0,
            used: (0.0, 0),
            metered: Metered::default(),
        }
    }

    fn buckets(&self) -> Buckets {
        self.meter.as_ref().map_or_else(Buckets::default, |m| {
            *m.s.buckets.lock().unwrap_or_else(|e| e.into_inner())
        })
    }
}

impl Default for MeterHook {
    fn default() -> Self {
        Self::new()
    }
}

impl ReplayHook for MeterHook {
    fn wrap_device(&mut self, device: Box<dyn Device>) -> Box<dyn Device> {
        let m = Arc::new(Meter {
            inner: device,
            s: Arc::new(Shared {
                buckets: Mutex::new(Buckets::default()),
                data_offset: AtomicU64::new(u64::MAX),
                replay: std::thread::current().id(),
                foreground_read: AtomicBool::new(false),
                replay_device_cpu_ns: AtomicU64::new(0),
            }),
        });
        self.meter = Some(m.clone());
        Box::new(m)
    }

    fn store_ready(&mut self, _store: &dyn PageStore) -> Result<(), LabError> {
        if let Some(m) = &self.meter {
            let sb = Superblock::read(m.as_ref())?;
            m.s.data_offset.store(sb.data_offset, Relaxed);
        }
        self.b0 = self.buckets();
        Ok(())
    }

    fn before_ref(&mut self, op: Op) {
        let Some(m) = &self.meter else { return };
        match op {
            Op::Read => m.s.foreground_read.store(true, Relaxed),
            Op::Write => {
                self.start = (
                    m.clock_us(),
                    thread_cpu_ns(),
                    m.s.replay_device_cpu_ns.load(Relaxed),
                )
            }
        }
    }

    fn after_ref(&mut self, op: Op, store: &dyn PageStore) {
        let Some(m) = &self.meter else { return };
        match op {
            Op::Read => m.s.foreground_read.store(false, Relaxed),
            Op::Write => {
                let (t0, c0, d0) = self.start;
                let d1 = m.s.replay_device_cpu_ns.load(Relaxed);
                let c1 = thread_cpu_ns();
                self.metered.resp_io_us += m.clock_us() - t0;
                self.metered.resp_cpu_us +=
                    c1.saturating_sub(c0).saturating_sub(d1 - d0) as f64 / 1e3;
                self.writes += 1;
                if self.writes.is_multiple_of(256) {
                    let r = store.report();
                    let get = |k: &str| r.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
                    if let (Some(staged), Some(slots)) = (get("sb.staged"), get("sb.slots")) {
                        self.used.0 += staged / slots.max(1.0);
                        self.used.1 += 1;
                    }
                }
            }
        }
    }

    fn finish(&mut self, store: &dyn PageStore, _result: &mut RunResult) -> Result<(), LabError> {
        store
            .check_invariants()
            .map_err(|e| LabError::Invariant(format!("{}: {e}", store.name())))?;
        self.metered.buckets = self.buckets().since(&self.b0);
        self.metered.mean_used = (self.used.1 > 0).then(|| self.used.0 / self.used.1 as f64);
        Ok(())
    }
}
