//! Fail-stop: the first device error poisons the store.

use crate::StoreError;
use flashbuf_device::DeviceError;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Records the first I/O failure of a store; every later call checks it and fails.
///
/// ```
/// use flashbuf_store::{Poison, StoreError};
/// use flashbuf_device::DeviceError;
/// let p = Poison::default();
/// assert!(p.check().is_ok());
/// let r: Result<(), StoreError> = p.guard(Err(DeviceError::NoSpace("x".into())));
/// assert!(matches!(r, Err(StoreError::Device(_))));
/// assert!(matches!(p.check(), Err(StoreError::Poisoned(_))));
/// ```
#[derive(Debug, Default)]
pub struct Poison {
    poisoned: AtomicBool,
    reason: Mutex<String>,
}

impl Poison {
    /// `Err(Poisoned)` once poisoned.
    #[inline]
    pub fn check(&self) -> Result<(), StoreError> {
        if self.poisoned.load(Ordering::Acquire) {
            return Err(StoreError::Poisoned(self.reason.lock().clone()));
        }
        Ok(())
    }

    /// Poisons with `reason` (the first reason is kept).
    pub fn poison(&self, reason: &str) {
        let mut r = self.reason.lock();
        if !self.poisoned.load(Ordering::Acquire) {
            *r = reason.to_string();
            self.poisoned.store(true, Ordering::Release);
        }
    }

    /// Whether the store is poisoned.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Acquire)
    }

    /// Passes `Ok` through; on a device error poisons and returns it as a store error.
    #[inline]
    pub fn guard<T>(&self, r: Result<T, DeviceError>) -> Result<T, StoreError> {
        r.map_err(|e| {
            self.poison(&e.to_string());
            StoreError::Device(e)
        })
    }
}
