//! Workload and asymmetry dynamics of the FD-Buffer paper (On et al., IEEE TC 2014,
//! §5.1): models WM1/WM2 change the write ratio per epoch, RM1/RM2 change the asymmetry
//! factor `R` per epoch. An epoch is 5,000 references by default (the paper: "around
//! 5,000 page references"; Fig. 12 also uses 1,250 and 2,500).
//!
//! # The models, exactly as printed (epoch `i` = the `(i+1)`-th epoch, from 0)
//! - WM1: `w_i = w_0 · (1 + i%)` = `w_0 · (1 + i/100)` — writes become dominant.
//! - WM2: `w_i = 0.95·w_0·(i mod 2) + w_0·((i+1) mod 2)` — `w_0` in even epochs,
//!   `0.95·w_0` in odd ones.
//! - RM1: `R_i = R_0 · (1 + 0.1·i)` — fragmentation raises the asymmetry.
//! - RM2: `R_i = 0.95·R_0·(i mod 2) + R_0·((i+1) mod 2)` — periodic cleaning (TRIM).
//!
//! `w_0` is the write ratio of the first epoch of the original trace; `R_0` the device's
//! initial `R`. Write ratios are capped at 1 (WM1 passes 1 after `100·(1/w_0 − 1)` epochs:
//! about 490 epochs, 2.4 M references, for a 17 % trace).
//!
//! # Applying a workload model to a trace (our reading)
//! The paper changes "reads to writes in the trace". We apply the model epoch by epoch:
//! with `n` references and `W` writes in the epoch, the target is `T = round(w_i · n)`
//! writes; if `T > W`, `T − W` of the epoch's reads, chosen uniformly at random, become
//! writes; if `T < W` (WM2's odd epochs), `W − T` writes become reads. Pages and order
//! are unchanged. The choice uses a seeded SplitMix64 generator and a partial
//! Fisher–Yates shuffle, so a seed reproduces the trace exactly.
//!
//! # Applying an asymmetry model
//! The lab stretches the device's latencies at each epoch boundary
//! ([`super::asymmetry::AsymmetryDevice`]) so that online-`R` policies see the change
//! through their I/O observations, and sends the epoch's costs
//! ([`super::asymmetry::epoch_costs`]) to the policy through the pool's cost update
//! (`BufferPool::update_costs`): FD-Buffer with a fixed `R` then runs with `R_i`.

/// Default epoch length in references.
pub const EPOCH_REFS: usize = 5_000;

/// A workload model (write ratio per epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadModel {
    /// `w_i = w_0 (1 + i/100)`.
    Wm1,
    /// `w_i = 0.95 w_0` in odd epochs, `w_0` in even ones.
    Wm2,
}

impl WorkloadModel {
    /// Write ratio of epoch `i` (capped at 1).
    pub fn write_ratio(self, w0: f64, i: u64) -> f64 {
        let w = match self {
            WorkloadModel::Wm1 => w0 * (1.0 + i as f64 / 100.0),
            WorkloadModel::Wm2 => 0.95 * w0 * (i % 2) as f64 + w0 * ((i + 1) % 2) as f64,
        };
        w.clamp(0.0, 1.0)
    }
}

/// An asymmetry model (`R` per epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsymmetryModel {
    /// `R_i = R_0 (1 + 0.1 i)`.
    Rm1,
    /// `R_i = 0.95 R_0` in odd epochs, `R_0` in even ones.
    Rm2,
}

impl AsymmetryModel {
    /// `R` of epoch `i`.
    pub fn r(self, r0: f64, i: u64) -> f64 {
        match self {
            AsymmetryModel::Rm1 => r0 * (1.0 + i as f64 * 0.1),
            AsymmetryModel::Rm2 => 0.95 * r0 * (i % 2) as f64 + r0 * ((i + 1) % 2) as f64,
        }
    }

    /// The epoch of reference `index` and that epoch's `R`.
    pub fn r_at(self, r0: f64, index: u64, epoch_refs: u64) -> (u64, f64) {
        let e = index / epoch_refs.max(1);
        (e, self.r(r0, e))
    }
}

pub use flashbuf_core::rng::SplitMix64;

/// What [`apply_workload_model`] did to one epoch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpochInfo {
    /// Epoch number.
    pub epoch: u64,
    /// References in the epoch.
    pub refs: usize,
    /// Writes before.
    pub writes_before: usize,
    /// Writes after (`round(target · refs)`).
    pub writes_after: usize,
    /// Target write ratio.
    pub target: f64,
}

/// Write ratio of a slice of references.
pub fn write_ratio(refs: &[(bool, u64)]) -> f64 {
    if refs.is_empty() {
        return 0.0;
    }
    refs.iter().filter(|r| r.0).count() as f64 / refs.len() as f64
}

/// Applies epoch `epoch`'s target to `chunk` (one epoch of references).
fn apply_epoch(
    chunk: &mut [(bool, u64)],
    epoch: u64,
    w0: f64,
    model: WorkloadModel,
    rng: &mut SplitMix64,
    idx: &mut Vec<usize>,
) -> EpochInfo {
    let target = model.write_ratio(w0, epoch);
    let n = chunk.len();
    let before = chunk.iter().filter(|r| r.0).count();
    let after = ((target * n as f64).round() as usize).min(n);
    // Flip `k` of the references whose kind is `from`.
    let (from, k) = if after > before {
        (false, after - before)
    } else {
        (true, before - after)
    };
    idx.clear();
    idx.extend((0..n).filter(|&i| chunk[i].0 == from));
    for j in 0..k {
        let r = j + rng.below((idx.len() - j) as u64) as usize;
        idx.swap(j, r);
        chunk[idx[j]].0 = !from;
    }
    EpochInfo {
        epoch,
        refs: n,
        writes_before: before,
        writes_after: after,
        target,
    }
}

/// Rewrites `trace` in place so that epoch `i` has write ratio `model.write_ratio(w_0,
/// i)` (see the module doc); `w_0` is the first epoch's ratio. Returns one record per
/// epoch.
pub fn apply_workload_model(
    trace: &mut [(bool, u64)],
    model: WorkloadModel,
    epoch_refs: usize,
    seed: u64,
) -> Vec<EpochInfo> {
    let epoch_refs = epoch_refs.max(1);
    let w0 = write_ratio(&trace[..trace.len().min(epoch_refs)]);
    let mut rng = SplitMix64::new(seed);
    let mut idx: Vec<usize> = Vec::with_capacity(epoch_refs);
    trace
        .chunks_mut(epoch_refs)
        .enumerate()
        .map(|(e, chunk)| apply_epoch(chunk, e as u64, w0, model, &mut rng, &mut idx))
        .collect()
}

/// The streaming form of [`apply_workload_model`]: wraps an iterator of references and
/// yields the same references, with the same seed, as the in-place function would
/// produce; it buffers one epoch at a time.
#[derive(Debug)]
pub struct WorkloadDynamics<I> {
    inner: I,
    model: WorkloadModel,
    epoch_refs: usize,
    rng: SplitMix64,
    w0: Option<f64>,
    epoch: u64,
    buf: Vec<(bool, u64)>,
    pos: usize,
    idx: Vec<usize>,
    infos: Vec<EpochInfo>,
}

impl<I: Iterator<Item = (bool, u64)>> WorkloadDynamics<I> {
    /// Applies `model` over epochs of `epoch_refs` references, choices seeded by `seed`.
    pub fn new(inner: I, model: WorkloadModel, epoch_refs: usize, seed: u64) -> Self {
        Self {
            inner,
            model,
            epoch_refs: epoch_refs.max(1),
            rng: SplitMix64::new(seed),
            w0: None,
            epoch: 0,
            buf: Vec::new(),
            pos: 0,
            idx: Vec::new(),
            infos: Vec::new(),
        }
    }

    /// Records of the epochs started so far.
    pub fn epochs(&self) -> &[EpochInfo] {
        &self.infos
    }

    fn refill(&mut self) -> bool {
        self.buf.clear();
        self.pos = 0;
        self.buf.extend(self.inner.by_ref().take(self.epoch_refs));
        if self.buf.is_empty() {
            return false;
        }
        let w0 = *self.w0.get_or_insert_with(|| write_ratio(&self.buf));
        let info = apply_epoch(
            &mut self.buf,
            self.epoch,
            w0,
            self.model,
            &mut self.rng,
            &mut self.idx,
        );
        self.infos.push(info);
        self.epoch += 1;
        true
    }
}

impl<I: Iterator<Item = (bool, u64)>> Iterator for WorkloadDynamics<I> {
    type Item = (bool, u64);

    fn next(&mut self) -> Option<(bool, u64)> {
        if self.pos == self.buf.len() && !self.refill() {
            return None;
        }
        let r = self.buf[self.pos];
        self.pos += 1;
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_as_printed() {
        assert_eq!(WorkloadModel::Wm1.write_ratio(0.2, 0), 0.2);
        assert!((WorkloadModel::Wm1.write_ratio(0.2, 50) - 0.3).abs() < 1e-12);
        assert_eq!(WorkloadModel::Wm1.write_ratio(0.5, 1000), 1.0);
        assert_eq!(WorkloadModel::Wm2.write_ratio(0.2, 0), 0.2);
        assert!((WorkloadModel::Wm2.write_ratio(0.2, 1) - 0.19).abs() < 1e-12);
        assert_eq!(WorkloadModel::Wm2.write_ratio(0.2, 2), 0.2);
        assert!((AsymmetryModel::Rm1.r(136.0, 10) - 272.0).abs() < 1e-9);
        assert!((AsymmetryModel::Rm2.r(100.0, 3) - 95.0).abs() < 1e-9);
        assert_eq!(AsymmetryModel::Rm2.r(100.0, 4), 100.0);
        assert_eq!(AsymmetryModel::Rm1.r_at(10.0, 12_000, 5_000), (2, 12.0));
    }

    #[test]
    fn applied_model_hits_every_epoch_target_and_is_reproducible() {
        let mut rng = SplitMix64::new(1);
        let trace: Vec<(bool, u64)> = (0..23_456)
            .map(|i| (rng.below(100) < 17, i as u64 % 977))
            .collect();
        for model in [WorkloadModel::Wm1, WorkloadModel::Wm2] {
            let mut a = trace.clone();
            let info = apply_workload_model(&mut a, model, 5_000, 42);
            let mut b = trace.clone();
            assert_eq!(apply_workload_model(&mut b, model, 5_000, 42), info);
            assert_eq!(a, b);
            let w0 = write_ratio(&trace[..5_000]);
            for (e, chunk) in a.chunks(5_000).enumerate() {
                let want = (model.write_ratio(w0, e as u64) * chunk.len() as f64).round() as usize;
                assert_eq!(
                    chunk.iter().filter(|r| r.0).count(),
                    want,
                    "{model:?} epoch {e}"
                );
                assert_eq!(info[e].writes_after, want);
            }
            // Pages and order unchanged.
            assert!(a.iter().zip(&trace).all(|(x, y)| x.1 == y.1));
            // The streaming adapter gives the same trace.
            let mut it = WorkloadDynamics::new(trace.iter().copied(), model, 5_000, 42);
            let streamed: Vec<(bool, u64)> = it.by_ref().collect();
            assert_eq!(streamed, a);
            assert_eq!(it.epochs(), &info[..]);
        }
    }
}
