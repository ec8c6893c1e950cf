//! Growing a store's device, shared by the stores: in steps of whole pages, one grower at
//! a time, never past a fixed capacity (the next promise sync records the new extent in
//! the state record, [`crate::state`]); and the check that refuses a page that can never
//! fit the device.

use crate::{Poison, StoreError};
use flashbuf_core::PageId;
use flashbuf_device::Device;
use parking_lot::Mutex;

/// How a store grows its device.
#[derive(Debug)]
pub(crate) struct Growth {
    lock: Mutex<()>,
    page_bytes: u64,
    step_bytes: u64,
}

impl Growth {
    /// Growth in steps of at least `step_bytes`, rounded up to whole pages of `page_size`.
    pub(crate) fn new(page_size: usize, step_bytes: u64) -> Self {
        Self {
            lock: Mutex::new(()),
            page_bytes: page_size as u64,
            step_bytes,
        }
    }

    /// Grows `dev` so that `end` bytes fit: by at least one step, but no further than a
    /// fixed-capacity device allows. A failing `set_len` poisons the store; callers refuse
    /// pages beyond the capacity first ([`check_fits`]), so that takes a device error.
    pub(crate) fn ensure<D: Device>(
        &self,
        dev: &D,
        poison: &Poison,
        end: u64,
    ) -> Result<(), StoreError> {
        if end <= dev.len() {
            return Ok(());
        }
        let _g = self.lock.lock();
        let len = dev.len();
        if end <= len {
            return Ok(());
        }
        let ps = self.page_bytes;
        let mut target = end.max(len.saturating_add(self.step_bytes)).div_ceil(ps) * ps;
        if let Some(max) = dev.max_len() {
            target = target.min(max / ps * ps).max(end);
        }
        poison.guard(dev.set_len(target))
    }
}

/// Refuses page `pid`, to be written at byte `offset`, if it lies beyond `dev`'s capacity:
/// a bad request (`Full`), refused before any I/O and without poisoning the store.
pub(crate) fn check_fits<D: Device + ?Sized>(
    dev: &D,
    pid: PageId,
    offset: u64,
    page_size: usize,
) -> Result<(), StoreError> {
    match dev.max_len() {
        Some(max) if offset.saturating_add(page_size as u64) > max => {
            Err(StoreError::Full(format!(
                "{pid} (byte {offset}) lies beyond the capacity of {} ({max} bytes)",
                dev.describe()
            )))
        }
        _ => Ok(()),
    }
}
