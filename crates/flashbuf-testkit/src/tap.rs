//! A device that takes crash images before every device write and sync, so that crash
//! points fall *inside* a store's operations (its flushes, merges and syncs), not only
//! between them as in [`crate::sim`].
//!
//! A [`TapDevice`] forwards to a [`FaultDevice`]; before each write batch and sync (and
//! whenever the test calls [`TapDevice::tap`]) it takes two images a power cut could leave
//! — nothing unsynced, everything, a prefix of the pending writes (maybe torn into
//! 128-byte sectors with old bytes or garbage), or a seeded subset (maybe torn) — and
//! stores each with a copy of the test's model of what the pages may hold at that moment
//! ([`Recorder::model`], which the test keeps up to date as it writes and syncs).

use flashbuf_core::rng::SplitMix64;
use flashbuf_core::DeviceStats;
use flashbuf_device::fault::{CrashMode, FaultDevice, Tear};
use flashbuf_device::{Device, DeviceError, WriteOp};
use std::sync::{Arc, Mutex, PoisonError};

/// A crash image: its label (the crash mode), its bytes, the model when it was taken.
pub type TapImage<M> = (String, Vec<u8>, M);

/// What the taps record, shared between the test and its [`TapDevice`].
#[derive(Debug)]
pub struct Recorder<M> {
    /// What each page may hold after a crash now; the test updates it.
    pub model: M,
    /// The images taken so far.
    pub images: Vec<TapImage<M>>,
    /// Whether taps take images (off while a store is created, say).
    pub enabled: bool,
    rng: SplitMix64,
}

impl<M> Recorder<M> {
    /// A disabled recorder starting from `model`; `seed` draws the crash modes.
    pub fn new(model: M, seed: u64) -> Self {
        Self {
            model,
            images: Vec::new(),
            enabled: false,
            rng: SplitMix64::new(seed),
        }
    }
}

/// A random crash mode for `pending` unsynced writes (tears of 128-byte sectors, lost
/// sectors keeping old bytes or garbage).
fn random_mode(rng: &mut SplitMix64, pending: usize) -> CrashMode {
    let tear = |rng: &mut SplitMix64| Tear {
        sector_bytes: 128,
        garbage: rng.below(2) == 0,
    };
    let prefix = |rng: &mut SplitMix64| rng.below(pending as u64 + 1) as usize;
    match rng.below(6) {
        0 => CrashMode::LoseUnsynced,
        1 => CrashMode::KeepAll,
        2 => CrashMode::Prefix {
            writes: prefix(rng),
            tear: None,
        },
        3 => CrashMode::Prefix {
            writes: prefix(rng),
            tear: Some(tear(rng)),
        },
        4 => CrashMode::Random {
            seed: rng.next_u64(),
            tear: None,
        },
        _ => CrashMode::Random {
            seed: rng.next_u64(),
            tear: Some(tear(rng)),
        },
    }
}

/// A device that takes crash images before every write and sync (see the module docs).
#[derive(Debug)]
pub struct TapDevice<M> {
    dev: Arc<FaultDevice>,
    rec: Arc<Mutex<Recorder<M>>>,
}

impl<M: Clone> TapDevice<M> {
    /// Taps `dev`, recording into `rec`.
    pub fn new(dev: Arc<FaultDevice>, rec: Arc<Mutex<Recorder<M>>>) -> Self {
        Self { dev, rec }
    }

    /// Takes two crash images now (if the recorder is enabled).
    pub fn tap(&self) {
        let mut r = self.rec.lock().unwrap_or_else(PoisonError::into_inner);
        if !r.enabled {
            return;
        }
        let pending = self.dev.pending_writes();
        for _ in 0..2 {
            let mode = random_mode(&mut r.rng, pending);
            let img = self.dev.crash_image(mode);
            let model = r.model.clone();
            r.images
                .push((format!("{mode:?} of {pending}"), img, model));
        }
    }
}

impl<M: Clone + Send + 'static> Device for TapDevice<M> {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.dev.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        self.write_batch(&[WriteOp { offset, data: buf }])
    }
    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        self.tap();
        self.dev.write_batch(ops)
    }
    fn sync(&self) -> Result<(), DeviceError> {
        self.tap();
        self.dev.sync()
    }
    fn len(&self) -> u64 {
        self.dev.len()
    }
    fn set_len(&self, len: u64) -> Result<(), DeviceError> {
        self.dev.set_len(len)
    }
    fn stats(&self) -> DeviceStats {
        self.dev.stats()
    }
    fn describe(&self) -> String {
        "tap".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taps_take_two_images_per_write_and_sync_with_the_model() {
        let dev = Arc::new(FaultDevice::new(4096));
        let rec = Arc::new(Mutex::new(Recorder::new(0u32, 1)));
        let tap = TapDevice::new(dev, Arc::clone(&rec));
        tap.write_at(0, b"x").unwrap();
        assert!(rec.lock().unwrap().images.is_empty(), "disabled");
        rec.lock().unwrap().enabled = true;
        rec.lock().unwrap().model = 7;
        tap.write_at(0, b"y").unwrap();
        tap.sync().unwrap();
        let r = rec.lock().unwrap();
        assert_eq!(r.images.len(), 4);
        assert!(r
            .images
            .iter()
            .all(|(_, img, m)| *m == 7 && img.len() == 4096));
    }
}
