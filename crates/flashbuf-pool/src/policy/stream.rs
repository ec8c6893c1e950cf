//! Stream models: the part of a policy's work that depends on the reference stream alone.
//!
//! Some policies compute, besides their decisions, a model of the reference stream that
//! no decision of the pool can change: FD-Buffer's Two-Stack estimators (§4.3 of On et
//! al.) see every reference, `(page, read or write)`, and nothing else, and the advisor
//! reads their counters once per window of a fixed number of references. When the
//! references are known before the pool sees them (a trace replay decodes them on a
//! thread of its own, ahead of the replay), that model can run there, beside the decoding,
//! instead of on the thread that runs the pool: the policy hands it out with
//! [`Policy::detach_stream_model`](super::Policy::detach_stream_model) and receives what
//! it produces through [`Policy::stream_output`](super::Policy::stream_output). A pool
//! used without a trace (an engine) never detaches anything: the policy runs its model
//! inline, as before. Decisions are the same either way (the policy's contract).
//!
//! # Contract
//! Whoever detaches a model must:
//! - call [`StreamModel::observe`] once for every reference the pool will be given, in the
//!   pool's order (after any limit or transform of the stream), and nothing else;
//! - hand every output, in the order produced, to the policy's `stream_output` *before*
//!   the pool is given the reference that follows the one whose observation produced it
//!   (delivering a batch's outputs before replaying the batch satisfies this);
//! - after the last reference, call [`StreamModel::finish`] and deliver its outputs too;
//! - run the model at most the `refs_ahead` references ahead of the pool it announced
//!   (what it produced and the pool has not used yet stays in memory meanwhile).
//!
//! A policy that receives no output where it needs one counts the shortfall in its report
//! (a broken contract, never a silent change of algorithm).

use flashbuf_core::PageId;
use std::any::Any;

/// One output of a [`StreamModel`], for the policy that detached it (which knows its type).
pub type StreamOutput = Box<dyn Any + Send>;

/// A reference as a stream model sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamRef {
    /// The page referenced.
    pub page: PageId,
    /// Whether the reference writes the page.
    pub write: bool,
}

/// A policy's model of the reference stream, run wherever the references are known first.
pub trait StreamModel: Send {
    /// The next references, in order. Outputs they produce go to `out`, in order. (A
    /// batch at a time: the model sees references ahead of the one it works on, and may
    /// start fetching their state.)
    fn observe(&mut self, refs: &[StreamRef], out: &mut Vec<StreamOutput>);
    /// The stream ended: last outputs to `out`.
    fn finish(&mut self, out: &mut Vec<StreamOutput>);
}
