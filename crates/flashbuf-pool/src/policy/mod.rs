//! Replacement policies: they decide, the pool acts.
//!
//! # Contract between the pool and a [`Policy`]
//! The pool owns frames `0..frames_count`; a policy keeps whatever per-frame state it
//! needs (lists, clusters, stacks) indexed by [`FrameId`] and never touches page bytes or
//! does I/O. The pool calls, always under its own lock and in this order for a frame's
//! life:
//! 1. [`Policy::on_insert`] when a page is loaded into a free frame after a miss (`access`
//!    tells whether the fix was for writing: the page is then dirty);
//! 2. any number of [`Policy::on_hit`] (a write hit makes the page dirty) and
//!    [`Policy::on_clean`] (the pool wrote the page back; it is clean now);
//! 3. [`Policy::on_remove`] when the page leaves the frame (after the policy chose it as a
//!    victim, or when the pool drops a frame after a failed load).
//!
//! [`Policy::choose_victim`] is asked on a miss when no frame is free. It returns a
//! [`Victim`]: a frame to evict (the pool writes it back first if dirty), or a batch: a
//! frame to evict plus dirty frames to write back together with it in one store batch
//! (write clustering). The policy must only name frames for which `evictable` returns
//! true (unpinned). It must not assume that a frame it named for write-back became clean:
//! the pool calls `on_clean` for each page it actually wrote. It may update its own state
//! when choosing (CFDC drops the victim's cluster priority to 0), but the victim stays a
//! member until `on_remove`.
//!
//! Two more calls carry what a driver changes or reads during a run, always through the
//! pool and under its lock (no side channels into a policy): [`Policy::update_costs`]
//! (the device's read and write costs changed, e.g. per epoch of an asymmetry model,
//! reached through `BufferPool::update_costs`) and [`Policy::report`] (named figures and,
//! for policies that estimate per window, the window records).
//!
//! Policies are `Send` (the pool moves them behind its lock) and are unit-tested without
//! any pool or device. Every policy is registered once in [`registry::POLICIES`] (name,
//! typed options, builder, naive reference, golden specs); see `ARCHITECTURE.md`,
//! "Adding a policy".

pub mod arc;
pub mod casa;
pub mod cfdc;
pub mod cflru;
pub mod clock;
pub mod clock_sweep;
pub mod clustering;
pub mod fd_buffer;
pub mod ghost;
pub mod heap;
pub mod list;
pub mod lru;
pub mod offline;
pub mod reference;
pub mod registry;
pub mod report;
pub mod s3_fifo;
pub mod stream;
pub mod two_q;

pub use arc::Arc;
pub use casa::{Casa, CasaConfig};
pub use cfdc::{Cfdc, CfdcConfig};
pub use cflru::{Cflru, CflruConfig};
pub use clock::Clock;
pub use clock_sweep::ClockSweep;
pub use clustering::{ClusterChoice, ClusterMode, Clustered, ClusteringConfig};
pub use fd_buffer::{FdBuffer, FdBufferOptions};
pub use lru::Lru;
pub use registry::{PolicyContext, PolicyEntry, PolicyFactory, POLICIES};
pub use report::PolicyReport;
pub use s3_fifo::{S3Fifo, S3FifoConfig};
pub use stream::{StreamModel, StreamOutput, StreamRef};
pub use two_q::TwoQ;

use flashbuf_core::{DeviceFacts, FrameId, PageId};

/// Whether a page was fixed for reading or for writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// Read access.
    Read,
    /// Write access: the page is (or becomes) dirty.
    Write,
}

impl Access {
    /// Whether this access dirties the page.
    #[inline]
    pub fn is_write(self) -> bool {
        matches!(self, Access::Write)
    }
}

/// A policy's answer to "which frame do I free?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Victim<'a> {
    /// Evict this frame (writing it back first if dirty).
    Evict(FrameId),
    /// Write back `write_back` (dirty frames, in the order given: sorted by page number for
    /// clustered writing) in one batch, then evict `evict` (which may be in the batch or be
    /// clean).
    Batch {
        /// Frame to evict.
        evict: FrameId,
        /// Dirty frames to write back together.
        write_back: &'a [FrameId],
    },
}

impl Victim<'_> {
    /// The frame that will be evicted.
    pub fn evicted(&self) -> FrameId {
        match *self {
            Victim::Evict(f) => f,
            Victim::Batch { evict, .. } => evict,
        }
    }
}

/// What kind of device I/O an observation is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoKind {
    /// A page read.
    Read,
    /// A page write.
    Write,
}

/// A replacement policy. See the module documentation for the calling contract.
pub trait Policy: Send {
    /// Short name (`lru`, `cflru`, ...).
    fn name(&self) -> &'static str;
    /// Number of frames this policy was built for.
    fn frames_count(&self) -> usize;
    /// Page `pid` was loaded into `frame`.
    fn on_insert(&mut self, frame: FrameId, pid: PageId, access: Access);
    /// The page in `frame` was referenced again.
    fn on_hit(&mut self, frame: FrameId, access: Access);
    /// The page in `frame` was written back and is clean.
    fn on_clean(&mut self, frame: FrameId);
    /// The page in `frame` left the pool; the frame is free.
    fn on_remove(&mut self, frame: FrameId);
    /// A miss of page `pid` for `access` is about to be served: called on every miss,
    /// before `choose_victim` (if a victim is needed) and `on_insert`. Policies whose
    /// victim depends on the incoming access (FD-Buffer's Algorithm 2) or on the missed
    /// page (ARC's `REPLACE(x, p)` after adapting `p` on a ghost hit) record it here.
    fn prepare_miss(&mut self, _pid: PageId, _access: Access) {}
    /// Chooses what to free. `None` means no member frame is evictable.
    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>>;
    /// Bytes of per-frame state this policy keeps (for the pool's memory report).
    fn bytes_per_frame(&self) -> usize;
    /// Whether the policy wants [`Policy::observe_io`] calls (they cost the pool two
    /// device-stat reads per I/O).
    fn wants_io_observations(&self) -> bool {
        false
    }
    /// The pool measured a device I/O: its latency in microseconds of device time (per
    /// page for batch writes). Cost-aware policies learn from it.
    fn observe_io(&mut self, _kind: IoKind, _latency_us: f64) {}
    /// The device's costs changed to `costs` (`read_us`, `write_us`; e.g. a new epoch of
    /// an asymmetry model). Policies whose costs are static inputs follow it: FD-Buffer
    /// with a fixed `R` takes `R = write_us / read_us`, CASA with static costs takes
    /// `C_r`, `C_w` from them. Policies that learn costs from [`Policy::observe_io`] (and
    /// those that use no costs) ignore it.
    fn update_costs(&mut self, _costs: &DeviceFacts) {}
    /// Checks internal invariants; `Err` describes the first violation.
    fn check_invariants(&self) -> Result<(), String> {
        Ok(())
    }
    /// What the policy reports: named figures (window sizes, estimates, ...) and, for
    /// policies that estimate per window, the window records.
    fn report(&self) -> PolicyReport {
        PolicyReport::default()
    }
    /// Hands out the policy's model of the reference stream, if it has one and can run
    /// it elsewhere from now on (see [`stream`] for the contract the caller takes on);
    /// the policy then expects its outputs through [`Policy::stream_output`]. The caller
    /// runs the model at most `refs_ahead` references ahead of the pool: outputs in
    /// flight cost memory, and a policy whose outputs would cost too much keeps its model.
    /// Called before the first reference; `None` (the default): nothing to detach, the
    /// policy does all its work itself.
    fn detach_stream_model(&mut self, _refs_ahead: u64) -> Option<Box<dyn StreamModel>> {
        None
    }
    /// An output of the model [`Policy::detach_stream_model`] handed out, in order.
    fn stream_output(&mut self, _output: StreamOutput) {}
}

impl<P: Policy + ?Sized> Policy for Box<P> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn frames_count(&self) -> usize {
        (**self).frames_count()
    }
    fn on_insert(&mut self, frame: FrameId, pid: PageId, access: Access) {
        (**self).on_insert(frame, pid, access)
    }
    fn on_hit(&mut self, frame: FrameId, access: Access) {
        (**self).on_hit(frame, access)
    }
    fn on_clean(&mut self, frame: FrameId) {
        (**self).on_clean(frame)
    }
    fn on_remove(&mut self, frame: FrameId) {
        (**self).on_remove(frame)
    }
    fn prepare_miss(&mut self, pid: PageId, access: Access) {
        (**self).prepare_miss(pid, access)
    }
    fn choose_victim(&mut self, evictable: &dyn Fn(FrameId) -> bool) -> Option<Victim<'_>> {
        (**self).choose_victim(evictable)
    }
    fn bytes_per_frame(&self) -> usize {
        (**self).bytes_per_frame()
    }
    fn wants_io_observations(&self) -> bool {
        (**self).wants_io_observations()
    }
    fn observe_io(&mut self, kind: IoKind, latency_us: f64) {
        (**self).observe_io(kind, latency_us)
    }
    fn update_costs(&mut self, costs: &DeviceFacts) {
        (**self).update_costs(costs)
    }
    fn check_invariants(&self) -> Result<(), String> {
        (**self).check_invariants()
    }
    fn report(&self) -> PolicyReport {
        (**self).report()
    }
    fn detach_stream_model(&mut self, refs_ahead: u64) -> Option<Box<dyn StreamModel>> {
        (**self).detach_stream_model(refs_ahead)
    }
    fn stream_output(&mut self, output: StreamOutput) {
        (**self).stream_output(output)
    }
}
