//! What a caller may add to a replay without a loop of its own (issue 10: the
//! reproductions run on the shared replay): a device wrapper (meters), observations
//! around each store call of a pass-through replay, and figures added to the result.

use crate::result::RunResult;
use crate::LabError;
use flashbuf_device::Device;
use flashbuf_store::PageStore;
use flashbuf_trace::Op;

/// Hooks into one replay. Every method has a default that does nothing.
///
/// Order: [`ReplayHook::wrap_device`] once (the device the store is built on),
/// [`ReplayHook::store_ready`] once (store formatted, before the first reference), then —
/// pass-through replays only — [`ReplayHook::before_ref`] / [`ReplayHook::after_ref`]
/// around each store call, and [`ReplayHook::finish`] once after the final sync. Pool
/// replays serve references in batches under the pool's lock and call no per-reference
/// hook.
pub trait ReplayHook {
    /// Wraps the run's device; the wrapper sits directly under the store (above the
    /// lab's own counting and asymmetry wrappers).
    fn wrap_device(&mut self, device: Box<dyn Device>) -> Box<dyn Device> {
        device
    }
    /// The store is built and formatted (its layout can be read now).
    fn store_ready(&mut self, _store: &dyn PageStore) -> Result<(), LabError> {
        Ok(())
    }
    /// Pass-through: a reference of kind `op` is about to go to the store (called right
    /// before the store call: a write's page is already stamped and sealed).
    fn before_ref(&mut self, _op: Op) {}
    /// Pass-through: the store call for the reference returned successfully.
    fn after_ref(&mut self, _op: Op, _store: &dyn PageStore) {}
    /// The replay is over and the store synced: add figures to `result`.
    fn finish(&mut self, _store: &dyn PageStore, _result: &mut RunResult) -> Result<(), LabError> {
        Ok(())
    }
}

/// No hook.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHook;

impl ReplayHook for NoHook {}
