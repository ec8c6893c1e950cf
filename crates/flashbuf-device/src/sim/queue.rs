//! Queue depth above one on a [`SimDevice`]: submission streams, each with its own virtual
//! clock, sharing the device's channels.
//!
//! # Model
//! - A **stream** is a submission queue with a clock. A request submitted on a stream
//!   starts at that stream's clock, and the stream's clock moves to the request's
//!   completion (a stream waits for each of its requests: one thread doing synchronous
//!   I/O). Stream 0 ([`StreamId::MAIN`]) is the one the [`Device`](crate::Device) methods
//!   use; [`SimDevice::open_stream`] opens more, starting at the device's makespan.
//! - **Flash**: a request's flash operations queue on their channels as with one stream
//!   (each channel is busy until its last booked operation ends; a new operation starts at
//!   the later of its request's start and that time). So requests of different streams
//!   overlap where they use different channels and serialize where they share one; a
//!   request's operations take the earliest idle gap of their channel from its start, so
//!   work a stream booked for later does not delay a request submitted earlier in virtual
//!   time (with submissions in start order there are no such gaps). A sync ends when the
//!   operations of every request submitted by its start have. Command
//!   overhead and host transfer are per request and overlap across streams (a queued
//!   command interface; the host link is not a shared resource of the model), and the
//!   write buffer is shared.
//! - **Background** ([`SimDevice::background_stream`], the queue of
//!   [`Device::background`](crate::Device::background)'s handle): a stream whose request
//!   starts at the later of its own clock and the main stream's, so background work
//!   submitted between foreground requests runs beside them (never "in the past" of the
//!   foreground that issued it); [`Device::join_background`](crate::Device::join_background)
//!   moves the main clock up to the background clock.
//! - **Disk**: one actuator: a request starts at the later of its stream's clock and the
//!   previous request's completion (requests of different streams never overlap).
//! - **Order**: the FTL (and the disk) see the requests in submission order, whatever
//!   their streams' clocks: interleaving two streams interleaves their writes in the FTL's
//!   log blocks and changes its merges. Submission order is the caller's (deterministic;
//!   nothing reads the wall clock or depends on thread scheduling).
//! - **Time**: the device's elapsed time (`stats().device_time_us`, [`SimDevice::clock_us`])
//!   is the **makespan**, the latest stream clock; [`QueueInfo::latency_sum_us`] keeps the
//!   sum of the requests' latencies (a request's latency is its completion minus its
//!   stream's clock at submission, so waits on busy channels count). With one stream the
//!   two are equal and every number is the queue-depth-one model's.
//! - **`qd=N`** ([`SimDevice::with_queue_depth`], the device option `sim:PROFILE:qd=N`):
//!   [`Device::write_batch`](crate::Device::write_batch) serves its ops as N-deep
//!   independent requests: N slots start at the main stream's clock, each op goes, in
//!   order, to the slot whose clock is earliest (the lowest slot on ties), and the batch
//!   completes (the main stream's clock) when its last slot does. `qd=1` (the default) is
//!   one slot: the ops one after another, as the papers' synchronous setups issue them.

use super::device::{Backend, Inner, SimDevice};
use crate::{check_head, check_range, DeviceError, HeadWrite, IoOp, WriteOp};
use serde::{Deserialize, Serialize};

/// A submission stream of one [`SimDevice`] (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(usize);

impl StreamId {
    /// The stream the [`Device`](crate::Device) methods use.
    pub const MAIN: StreamId = StreamId(0);

    /// The stream's index on its device (0 = [`Self::MAIN`]).
    pub fn index(&self) -> usize {
        self.0
    }
}

/// Largest `qd` a device takes.
pub const MAX_QUEUE_DEPTH: u32 = 256;

/// The queue state of a [`SimDevice`] (for reports).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QueueInfo {
    /// Depth `write_batch` serves its ops at (`qd`, 1 = one after another).
    pub queue_depth: u32,
    /// Streams open (the main one included).
    pub streams: usize,
    /// Elapsed virtual time: the latest stream clock, µs (= `stats().device_time_us`).
    pub makespan_us: f64,
    /// Sum of the requests' latencies, µs (= the makespan with one stream and `qd=1`).
    pub latency_sum_us: f64,
    /// Requests served (reads, writes, syncs).
    pub requests: u64,
}

/// Stream clocks and the sums behind [`QueueInfo`].
#[derive(Debug, Clone)]
pub(super) struct Queues {
    depth: u32,
    /// Clock of each stream, ns; `[0]` is the main stream's.
    clocks: Vec<u64>,
    latency_ns: u64,
    requests: u64,
    /// The disk: completion of the last request (flash devices do not use it).
    disk_free_ns: u64,
    /// Slot clocks of the batch being served (kept to spare an allocation per batch).
    slots: Vec<u64>,
    /// The background stream ([`SimDevice::background_stream`]), once opened.
    background: Option<usize>,
}

impl Queues {
    pub(super) fn new() -> Self {
        Self {
            depth: 1,
            clocks: vec![0],
            latency_ns: 0,
            requests: 0,
            disk_free_ns: 0,
            slots: Vec::new(),
            background: None,
        }
    }

    /// The earliest time a request can still start: the earliest clock of a stream other
    /// than the background one (whose requests start at the main clock or later).
    fn floor_ns(&self) -> u64 {
        self.clocks
            .iter()
            .enumerate()
            .filter(|&(i, _)| Some(i) != self.background)
            .map(|(_, &c)| c)
            .min()
            .unwrap_or(0)
    }

    /// The latest stream clock, ns.
    pub(super) fn makespan_ns(&self) -> u64 {
        self.clocks.iter().copied().max().unwrap_or(0)
    }

    pub(super) fn depth(&self) -> u32 {
        self.depth
    }

    /// Every clock and sum back to zero (the streams stay open).
    pub(super) fn reset(&mut self) {
        self.clocks.iter_mut().for_each(|c| *c = 0);
        self.latency_ns = 0;
        self.requests = 0;
        self.disk_free_ns = 0;
    }

    /// Where the next request of stream `s` starts: its clock, and for the background
    /// stream no earlier than the main clock.
    fn clock(&self, s: StreamId) -> Result<u64, DeviceError> {
        let c = self.clocks.get(s.0).copied().ok_or_else(|| {
            DeviceError::Config(format!(
                "stream {} is not open on this device ({} open)",
                s.0,
                self.clocks.len()
            ))
        })?;
        Ok(if Some(s.0) == self.background {
            c.max(self.clocks[0])
        } else {
            c
        })
    }
}

/// What a request asks of the back end.
#[derive(Clone, Copy)]
enum Req {
    Read { offset: u64, len: u64 },
    Write { offset: u64, len: u64 },
    Sync,
}

impl Inner {
    /// Serves `req` starting at `*clock`, moves `*clock` to its completion and counts its
    /// latency. Bytes and counters are the caller's.
    fn serve(&mut self, clock: &mut u64, req: Req) {
        let start = *clock;
        let floor = self.q.floor_ns();
        let done = match &mut self.backend {
            Backend::Flash(f) => {
                f.prune(floor.min(start));
                match req {
                    Req::Read { offset, len } => f.read(offset, len, start),
                    Req::Write { offset, len } => f.write(offset, len, start, &mut self.seq),
                    Req::Sync => f.sync(start),
                }
            }
            Backend::Hdd(h) => {
                let at = start.max(self.q.disk_free_ns);
                let done = match req {
                    Req::Read { offset, len } => h.read(offset, len, at),
                    Req::Write { offset, len } => h.write(offset, len, at),
                    Req::Sync => h.sync(at),
                };
                self.q.disk_free_ns = done.max(at);
                done.max(at)
            }
        };
        debug_assert!(done >= start);
        *clock = done.max(start);
        self.q.latency_ns += *clock - start;
        self.q.requests += 1;
    }

    /// Writes a request of `len` bytes at `offset` (range checked by the caller) at
    /// `*clock`, keeping `head` (all of the request's bytes, or only their start in
    /// metadata-only requests) in the image.
    fn write_timed(&mut self, clock: &mut u64, offset: u64, len: usize, head: &[u8]) {
        if len == 0 {
            return;
        }
        if head.len() == len {
            self.write_image(offset, head);
        } else {
            self.write_image_head(offset, len, head);
        }
        let len = len as u64;
        self.serve(clock, Req::Write { offset, len });
        self.stats.writes += 1;
        self.stats.written_bytes += len;
    }

    pub(super) fn write_on(
        &mut self,
        s: StreamId,
        offset: u64,
        data: &[u8],
    ) -> Result<(), DeviceError> {
        self.write_head_on(s, offset, data.len(), data)
    }

    /// A request of `len` bytes at `offset` on stream `s` that keeps only `head`.
    pub(super) fn write_head_on(
        &mut self,
        s: StreamId,
        offset: u64,
        len: usize,
        head: &[u8],
    ) -> Result<(), DeviceError> {
        check_head(len, head.len())?;
        check_range(IoOp::Write, offset, len, self.len)?;
        let mut clock = self.q.clock(s)?;
        self.write_timed(&mut clock, offset, len, head);
        self.q.clocks[s.0] = clock;
        Ok(())
    }

    pub(super) fn read_on(
        &mut self,
        s: StreamId,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<(), DeviceError> {
        self.read_head_on(s, offset, buf.len(), buf)
    }

    /// A read request of `len` bytes at `offset` on stream `s` that fills only `head`.
    pub(super) fn read_head_on(
        &mut self,
        s: StreamId,
        offset: u64,
        len: usize,
        head: &mut [u8],
    ) -> Result<(), DeviceError> {
        check_head(len, head.len())?;
        check_range(IoOp::Read, offset, len, self.len)?;
        let mut clock = self.q.clock(s)?;
        if len == 0 {
            return Ok(());
        }
        self.read_image_head(offset, len, head);
        let len = len as u64;
        self.serve(&mut clock, Req::Read { offset, len });
        self.q.clocks[s.0] = clock;
        self.stats.reads += 1;
        self.stats.read_bytes += len;
        Ok(())
    }

    pub(super) fn sync_on(&mut self, s: StreamId) -> Result<(), DeviceError> {
        let mut clock = self.q.clock(s)?;
        self.serve(&mut clock, Req::Sync);
        self.q.clocks[s.0] = clock;
        self.stats.syncs += 1;
        Ok(())
    }

    /// The background stream, opened (at the makespan) on first use.
    pub(super) fn background_stream(&mut self) -> StreamId {
        if let Some(b) = self.q.background {
            return StreamId(b);
        }
        let at = self.q.makespan_ns();
        self.q.clocks.push(at);
        let b = self.q.clocks.len() - 1;
        self.q.background = Some(b);
        StreamId(b)
    }

    /// The main stream waits for the background stream (if open).
    pub(super) fn join_background(&mut self) {
        if let Some(b) = self.q.background {
            self.q.clocks[0] = self.q.clocks[0].max(self.q.clocks[b]);
        }
    }

    /// `write_batch` on the main stream at the device's queue depth (module docs).
    pub(super) fn write_batch_queued(&mut self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        self.queued(ops.len(), |i| {
            (ops[i].offset, ops[i].data.len(), ops[i].data)
        })
    }

    /// `write_heads` as [`Inner::write_batch_queued`] serves whole ranges.
    pub(super) fn write_heads_queued(&mut self, ops: &[HeadWrite<'_>]) -> Result<(), DeviceError> {
        for op in ops {
            check_head(op.len, op.head.len())?;
        }
        self.queued(ops.len(), |i| (ops[i].offset, ops[i].len, ops[i].head))
    }

    /// Serves `n` writes, op `i` being `(offset, len, kept bytes)`, each on the slot of
    /// the queue that frees first.
    fn queued<'a>(
        &mut self,
        n: usize,
        op: impl Fn(usize) -> (u64, usize, &'a [u8]),
    ) -> Result<(), DeviceError> {
        for i in 0..n {
            let (offset, len, _) = op(i);
            check_range(IoOp::Write, offset, len, self.len)?;
        }
        let base = self.q.clocks[0];
        let mut slots = std::mem::take(&mut self.q.slots);
        slots.clear();
        slots.resize(self.q.depth.max(1) as usize, base);
        for i in 0..n {
            let mut slot = 0;
            for (j, &c) in slots.iter().enumerate() {
                if c < slots[slot] {
                    slot = j;
                }
            }
            let (offset, len, head) = op(i);
            self.write_timed(&mut slots[slot], offset, len, head);
        }
        self.q.clocks[0] = slots.iter().copied().fold(base, u64::max);
        self.q.slots = slots;
        Ok(())
    }
}

impl SimDevice {
    /// This device with `write_batch` serving its ops `depth` deep (module docs); 1 is the
    /// default, one after another.
    pub fn with_queue_depth(self, depth: u32) -> Result<SimDevice, DeviceError> {
        if !(1..=MAX_QUEUE_DEPTH).contains(&depth) {
            return Err(DeviceError::Config(format!(
                "queue depth {depth}: must be 1..={MAX_QUEUE_DEPTH}"
            )));
        }
        self.inner.lock().q.depth = depth;
        Ok(self)
    }

    /// Opens a submission stream whose clock starts at the device's makespan.
    pub fn open_stream(&self) -> StreamId {
        let mut inner = self.inner.lock();
        let at = inner.q.makespan_ns();
        inner.q.clocks.push(at);
        StreamId(inner.q.clocks.len() - 1)
    }

    /// The background stream ([`Device::background`](crate::Device::background)'s queue),
    /// opened on first use: a stream whose requests start no earlier than the main
    /// stream's clock at their submission, so they overlap the main stream's instead of
    /// following them.
    pub fn background_stream(&self) -> StreamId {
        let mut inner = self.inner.lock();
        inner.background_stream()
    }

    /// Writes `data` at `offset` as one request on stream `s` (as [`Device::write_at`](crate::Device::write_at)).
    pub fn write_on(&self, s: StreamId, offset: u64, data: &[u8]) -> Result<(), DeviceError> {
        self.inner.lock().write_on(s, offset, data)
    }

    /// Reads at `offset` as one request on stream `s` (as [`Device::read_at`](crate::Device::read_at)).
    pub fn read_on(&self, s: StreamId, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.inner.lock().read_on(s, offset, buf)
    }

    /// A sync on stream `s` (as [`Device::sync`](crate::Device::sync)): on flash it ends
    /// when every booked flash operation has, on the disk when its cache is destaged.
    pub fn sync_on(&self, s: StreamId) -> Result<(), DeviceError> {
        self.inner.lock().sync_on(s)
    }

    /// Stream `s`'s clock, µs.
    pub fn stream_clock_us(&self, s: StreamId) -> Result<f64, DeviceError> {
        Ok(self.inner.lock().q.clock(s)? as f64 / 1000.0)
    }

    /// Queue depth, streams, makespan and summed latency.
    pub fn queue_info(&self) -> QueueInfo {
        let inner = self.inner.lock();
        QueueInfo {
            queue_depth: inner.q.depth,
            streams: inner.q.clocks.len(),
            makespan_us: inner.q.makespan_ns() as f64 / 1000.0,
            latency_sum_us: inner.q.latency_ns as f64 / 1000.0,
            requests: inner.q.requests,
        }
    }
}
