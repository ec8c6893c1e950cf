//! FD-Buffer's Two-Stack estimators behind a log: each reference appends an event
//! ([`super::two_stack::Event`]); the events are applied in order, in batches, either on the
//! replay thread (`estimator=inline`) or on a thread of the estimators' own
//! (`estimator=thread`, the default), and the advisor reads the counters only after
//! every event of its window has been applied. Either way the stacks, ghosts and counters
//! are exactly those of applying each event at once: the same estimates, the same
//! decisions, the same counts (`tests/fd_buffer_estimator_thread.rs` compares the two
//! modes, every figure and window record; the golden rows, taken with the estimator
//! applied at each reference, are unchanged).
//!
//! Why: the estimator's per-reference work (moving a page's entries in CLRU and DLRU,
//! sliding the group tails, the hit counters) is about 30 % of FD-Buffer's replay time
//! (perf, TPC-C w4, first 2 M references at 1,034 frames: `access_resident`,
//! `apply`, `push_top` and `ListStack::remove` 28.6 % of all samples, the replay thread
//! ~95 % of them). Nothing needs it before the window closes (§4.4), so on a machine
//! with a spare core it runs beside the replay. The replay thread only appends 16 bytes
//! per event; at a window's close it hands over the last batch and waits for it.
//!
//! Measured (`flashbuf bench --trace tpcc.pagebin --data none --limit 2000000 --runs 5`,
//! TPC-C w4, 1,034 frames, best of 5, four interleaved rounds, 2026-11-29, 2 cores):
//! FD-Buffer 11.4-11.9 M refs/s before, 13.7-15.2 with the thread (LRU 26.1-27.3: 0.43x
//! -> 0.53x of LRU). Applied inline in batches it runs as before (11.0-11.7: batching
//! alone buys no locality), and prefetching the stack entries of the events a few ahead
//! in the batch made it slower (10.1-10.7). Waking a parked thread per batch cost the
//! replay thread a system call each (perf: 6 % of all samples in the kernel's wake-up),
//! so the worker and a reader waiting at the close poll for a while ([`SPINS`]) before
//! parking: the thread takes most of a core while a replay runs. Where runs already
//! fill the cores (`compare --jobs 2`), a thread per run costs more than it saves
//! (8 policies x 10 sizes on 2 M references: 24.8 s instead of 20.0 s), so `estimator=auto`
//! (the default) keeps the estimators inline there (`PolicyContext::helper_threads`).
//!
//! # The thread's protocol
//! Batches of at most `batch` events go through a bounded channel (at most
//! [`IN_FLIGHT`] waiting: a slow estimator holds the replay back instead of growing a
//! queue); the worker applies each under the estimators' mutex, gives the emptied
//! buffer back through a second channel (no allocation once running) and counts it
//! applied. A reader of the estimators (window close, checks, reports) first sends its
//! pending events, waits until the count reaches the batches sent, then locks. If the
//! worker has died (a panic while applying: a bug), the reader panics with its message
//! rather than read estimators that missed events.

use super::two_stack::{Event, EventKind, TwoStack};
use flashbuf_core::FrameId;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

/// Batches waiting for the worker, at most.
pub const IN_FLIGHT: usize = 4;

/// The estimator and its shadow without present conditions (`track_accuracy`).
#[derive(Debug, Clone)]
pub(super) struct Pair {
    pub(super) est: TwoStack,
    pub(super) shadow: Option<TwoStack>,
}

impl Pair {
    fn apply(&mut self, events: &[Event]) {
        self.est.apply(events);
        if let Some(s) = self.shadow.as_mut() {
            s.apply(events);
        }
    }
}

/// Where the estimators run.
pub(super) enum Mode {
    /// On the caller's thread, a batch at a time.
    Inline(Box<Pair>),
    /// On a thread of their own.
    Thread(Worker),
}

/// The estimators, their pending events and where they run.
pub(super) struct Estimators {
    log: Vec<Event>,
    batch: usize,
    mode: Mode,
}

impl Estimators {
    /// Estimators applying batches of `batch` events (at least 1), on their own thread
    /// when `thread`.
    pub(super) fn new(pair: Pair, batch: usize, thread: bool) -> std::io::Result<Self> {
        let batch = batch.max(1);
        let mode = if thread {
            Mode::Thread(Worker::spawn(pair)?)
        } else {
            Mode::Inline(Box::new(pair))
        };
        Ok(Self {
            log: Vec::with_capacity(batch),
            batch,
            mode,
        })
    }

    /// Whether the estimators run on a thread of their own.
    pub(super) fn threaded(&self) -> bool {
        matches!(self.mode, Mode::Thread(_))
    }

    /// Logs an event; hands the batch over when it is full.
    #[inline(always)]
    pub(super) fn push(&mut self, frame: FrameId, page: u64, kind: EventKind) {
        self.log.push(Event { page, frame, kind });
        if self.log.len() >= self.batch {
            self.flush();
        }
    }

    /// Hands the pending events over (applies them, inline).
    #[inline(never)]
    fn flush(&mut self) {
        if self.log.is_empty() {
            return;
        }
        match &mut self.mode {
            Mode::Inline(p) => {
                p.apply(&self.log);
                self.log.clear();
            }
            Mode::Thread(w) => {
                let spare = w.spare(self.batch);
                let full = std::mem::replace(&mut self.log, spare);
                w.send(full);
            }
        }
    }

    /// Runs `f` on the estimators with every event so far applied (the window's close).
    pub(super) fn settled_mut<R>(&mut self, f: impl FnOnce(&mut Pair) -> R) -> R {
        self.flush();
        match &mut self.mode {
            Mode::Inline(p) => f(p),
            Mode::Thread(w) => f(&mut w.settled()),
        }
    }

    /// A copy of the estimators with every event so far applied (checks, reports).
    pub(super) fn settled(&self) -> Pair {
        let mut p = match &self.mode {
            Mode::Inline(p) => Pair::clone(p),
            Mode::Thread(w) => w.settled().clone(),
        };
        p.apply(&self.log);
        p
    }

    /// Bytes of state per frame of `m`: the estimators' ([`TwoStack::bytes_per_frame`])
    /// and the event buffers' (the log, and with a thread the batches in flight and the
    /// spare ones).
    pub(super) fn bytes_per_frame(&self, m: usize) -> usize {
        let p = match &self.mode {
            Mode::Inline(p) => {
                p.est.bytes_per_frame() + p.shadow.as_ref().map_or(0, TwoStack::bytes_per_frame)
            }
            Mode::Thread(w) => {
                let p = lock(&w.pair);
                p.est.bytes_per_frame() + p.shadow.as_ref().map_or(0, TwoStack::bytes_per_frame)
            }
        };
        let buffers = if self.threaded() { IN_FLIGHT + 3 } else { 1 };
        p + (buffers * self.batch * std::mem::size_of::<Event>()).div_ceil(m.max(1))
    }
}

/// The estimators' thread and the two ends of its channels.
pub(super) struct Worker {
    pair: Arc<Mutex<Pair>>,
    /// What the worker has done, shared with it.
    shared: Arc<Shared>,
    tx: Option<SyncSender<Vec<Event>>>,
    spares: Receiver<Vec<Event>>,
    sent: u64,
    handle: Option<JoinHandle<()>>,
}

/// What the worker has done, and how a reader waits for it.
#[derive(Debug, Default)]
struct Shared {
    /// Batches applied so far.
    applied: AtomicU64,
    /// The worker stopped (its channel closed, or it panicked).
    stopped: AtomicBool,
    /// A reader is parked on `cv` (the worker then notifies it).
    waiting: AtomicBool,
    lock: Mutex<()>,
    cv: Condvar,
}

impl Shared {
    /// Wakes a parked reader, if any.
    fn wake(&self) {
        if self.waiting.load(SeqCst) {
            let _g = lock(&self.lock);
            self.cv.notify_all();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Worker {
    fn spawn(pair: Pair) -> std::io::Result<Self> {
        let pair = Arc::new(Mutex::new(pair));
        let shared = Arc::new(Shared::default());
        let (tx, rx) = mpsc::sync_channel::<Vec<Event>>(IN_FLIGHT);
        let (spare_tx, spares) = mpsc::sync_channel::<Vec<Event>>(IN_FLIGHT + 2);
        let (p, sh) = (Arc::clone(&pair), Arc::clone(&shared));
        let handle = std::thread::Builder::new()
            .name("fd-buffer-estimator".into())
            .spawn(move || {
                // Marks the worker stopped however it ends, a panic included.
                let _stop = StopGuard(Arc::clone(&sh));
                while let Some(mut events) = next_batch(&rx) {
                    lock(&p).apply(&events);
                    events.clear();
                    sh.applied.fetch_add(1, SeqCst);
                    sh.wake();
                    // The replay thread may hold enough spares already.
                    let _ = spare_tx.try_send(events);
                }
            })?;
        Ok(Self {
            pair,
            shared,
            tx: Some(tx),
            spares,
            sent: 0,
            handle: Some(handle),
        })
    }

    /// An empty buffer: one the worker gave back, else a new one.
    fn spare(&self, batch: usize) -> Vec<Event> {
        self.spares
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(batch))
    }

    fn send(&mut self, events: Vec<Event>) {
        let sent = self.tx.as_ref().map(|tx| tx.send(events));
        if !matches!(sent, Some(Ok(()))) {
            self.died();
        }
        self.sent += 1;
    }

    /// The estimators once every batch sent is applied: polled for a while (the last
    /// batch takes the worker microseconds), then waited for.
    fn settled(&self) -> MutexGuard<'_, Pair> {
        let sh = &*self.shared;
        let done = || sh.applied.load(SeqCst) >= self.sent;
        let mut spins = 0;
        while !done() && spins < SPINS {
            std::hint::spin_loop();
            spins += 1;
        }
        if !done() {
            let mut g = lock(&sh.lock);
            sh.waiting.store(true, SeqCst);
            while !done() {
                if sh.stopped.load(SeqCst) && !done() {
                    sh.waiting.store(false, SeqCst);
                    drop(g);
                    self.died();
                }
                g = sh.cv.wait(g).unwrap_or_else(PoisonError::into_inner);
            }
            sh.waiting.store(false, SeqCst);
        }
        lock(&self.pair)
    }

    /// The worker is gone with events it did not apply: a bug in the estimator.
    fn died(&self) -> ! {
        panic!("FD-Buffer's estimator thread stopped before applying every event")
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the channel ends the worker's loop.
        self.tx = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Polls of the channel (the worker) or of the applied count (a reader) before parking.
pub const SPINS: u32 = 1 << 14;

/// The next batch: polled for a while (the next one usually comes within tens of
/// microseconds, and parking and waking the thread costs the sender a system call per
/// batch), then waited for; `None` once the channel is closed.
fn next_batch(rx: &Receiver<Vec<Event>>) -> Option<Vec<Event>> {
    for _ in 0..SPINS {
        match rx.try_recv() {
            Ok(b) => return Some(b),
            Err(mpsc::TryRecvError::Disconnected) => return None,
            Err(mpsc::TryRecvError::Empty) => std::hint::spin_loop(),
        }
    }
    rx.recv().ok()
}

/// Sets `stopped` and wakes a reader when the worker's closure ends.
struct StopGuard(Arc<Shared>);

impl Drop for StopGuard {
    fn drop(&mut self) {
        self.0.stopped.store(true, SeqCst);
        self.0.wake();
    }
}
