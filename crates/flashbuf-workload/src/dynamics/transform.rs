//! Workload and asymmetry dynamics as run options (FD-Buffer paper §5.1; CFDC §4.4).
//!
//! - **Workload transforms** rewrite the kind (read/write) of replayed references epoch by
//!   epoch, in the trace reader thread (the lab's trace feed): the models `wm1`/`wm2` of
//!   [`super::models::WorkloadModel`], and `ratio=X`, a constant target write
//!   ratio `X` (CFDC's update-intensity sweep). Within each epoch of `n` references with
//!   `W` writes, the target is `T = round(w_i · n)`: if `T > W`, `T − W` reads chosen
//!   uniformly at random become writes, if `T < W`, `W − T` writes become reads; pages and
//!   order never change. The choice is exactly the one of
//!   [`super::models::apply_workload_model`] (same seeded SplitMix64, same
//!   partial Fisher–Yates), so a lab run with `--workload wm1 --seed S` replays the trace
//!   `apply_workload_model(trace, Wm1, epoch, S)` would give (tested). `w_0` is, as
//!   printed, the first epoch's write ratio of the *replayed* trace (after `--limit`);
//!   `wm1:w0=trace` takes the whole replayed trace's write ratio instead and `wm1:w0=X`
//!   a given one. (Our PostgreSQL traces start cold: the TPC-C trace's first epoch has
//!   0.8 % writes against 17 % overall, so "as printed" would turn WM1/WM2 into nearly
//!   read-only workloads; the paper's traces had a 30-minute warm-up cut off.)
//!
//! Asymmetry models are in [`super::asymmetry`].

use super::models::{AsymmetryModel, WorkloadModel, EPOCH_REFS};
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::ConfigError;
use flashbuf_trace::{Op, PageRef};
use std::fmt;

/// Where a workload model's `w_0` comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum W0 {
    /// The first epoch's write ratio (as printed in the paper).
    FirstEpoch,
    /// The whole replayed trace's write ratio (the lab resolves it from its scan).
    Trace,
    /// A given ratio.
    Fixed(f64),
}

/// A workload transform applied to the replayed trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WorkloadTransform {
    /// A model of the FD-Buffer paper (write ratio changing per epoch).
    Model {
        /// The model.
        model: WorkloadModel,
        /// Its `w_0`.
        w0: W0,
    },
    /// A constant write ratio in `0.0..=1.0` in every epoch.
    Ratio(f64),
}

impl WorkloadTransform {
    /// A model with `w_0` from the first epoch (as printed).
    pub fn model(model: WorkloadModel) -> Self {
        WorkloadTransform::Model {
            model,
            w0: W0::FirstEpoch,
        }
    }

    /// The target write ratio of epoch `i`, given `w0`.
    pub fn target(self, w0: f64, i: u64) -> f64 {
        match self {
            WorkloadTransform::Model { model, .. } => model.write_ratio(w0, i),
            WorkloadTransform::Ratio(x) => x.clamp(0.0, 1.0),
        }
    }

    /// Whether `w_0` must be resolved from the whole trace first.
    pub fn needs_trace_ratio(self) -> bool {
        matches!(self, WorkloadTransform::Model { w0: W0::Trace, .. })
    }

    /// Replaces `w0=trace` by the trace's write ratio `ratio`.
    pub fn resolve(self, ratio: f64) -> Self {
        match self {
            WorkloadTransform::Model {
                model,
                w0: W0::Trace,
            } => WorkloadTransform::Model {
                model,
                w0: W0::Fixed(ratio),
            },
            other => other,
        }
    }

    /// Parses `wm1`, `wm2` (optionally `:w0=trace` or `:w0=X`) or `ratio=X` (X a
    /// fraction, or a percentage with `%`).
    pub fn parse(s: &str) -> Result<Self, ConfigError> {
        let s = s.trim();
        let (name, opt) = match s.split_once(':') {
            Some((n, o)) => (n, Some(o)),
            None => (s, None),
        };
        let model = match name.to_ascii_lowercase().as_str() {
            "wm1" => Some(WorkloadModel::Wm1),
            "wm2" => Some(WorkloadModel::Wm2),
            _ => None,
        };
        if let Some(model) = model {
            let w0 = match opt.map(str::trim) {
                None => W0::FirstEpoch,
                Some("w0=trace") => W0::Trace,
                Some("w0=first") => W0::FirstEpoch,
                Some(o) => match o.strip_prefix("w0=") {
                    Some(v) => W0::Fixed(parse_ratio(v)?),
                    None => {
                        return Err(ConfigError::Syntax(format!(
                            "workload '{s}': the models take w0=first|trace|X"
                        )))
                    }
                },
            };
            return Ok(WorkloadTransform::Model { model, w0 });
        }
        let Some(v) = s.strip_prefix("ratio=") else {
            return Err(ConfigError::Syntax(format!(
                "unknown workload '{s}'; valid: wm1, wm2 (with :w0=first|trace|X), ratio=X (X in 0..1 or 0%..100%)"
            )));
        };
        parse_ratio(v).map(WorkloadTransform::Ratio)
    }
}

/// Parses a write ratio: `0.3` or `30%`, in `0..=1`.
pub fn parse_ratio(v: &str) -> Result<f64, ConfigError> {
    let v = v.trim();
    let (num, scale) = match v.strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (v, 1.0),
    };
    let x: f64 = num
        .trim()
        .parse()
        .map_err(|_| ConfigError::Syntax(format!("write ratio '{v}' is not a number")))?;
    let x = x * scale;
    if (0.0..=1.0).contains(&x) {
        Ok(x)
    } else {
        Err(ConfigError::Syntax(format!(
            "write ratio {v} must be in 0..1 (or 0%..100%)"
        )))
    }
}

impl fmt::Display for WorkloadTransform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkloadTransform::Model { model, w0 } => {
                f.write_str(match model {
                    WorkloadModel::Wm1 => "wm1",
                    WorkloadModel::Wm2 => "wm2",
                })?;
                match w0 {
                    W0::FirstEpoch => Ok(()),
                    W0::Trace => f.write_str(":w0=trace"),
                    W0::Fixed(x) => write!(f, ":w0={x}"),
                }
            }
            WorkloadTransform::Ratio(x) => write!(f, "ratio={x}"),
        }
    }
}

/// The dynamics of one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dynamics {
    /// Workload transform of the replayed trace.
    pub workload: Option<WorkloadTransform>,
    /// Asymmetry model of the device.
    pub asymmetry: Option<AsymmetryModel>,
    /// References per epoch (default 5,000).
    pub epoch_refs: u64,
}

impl Default for Dynamics {
    fn default() -> Self {
        Self {
            workload: None,
            asymmetry: None,
            epoch_refs: EPOCH_REFS as u64,
        }
    }
}

impl Dynamics {
    /// Whether anything changes per epoch.
    pub fn is_active(&self) -> bool {
        self.workload.is_some() || self.asymmetry.is_some()
    }
}

/// The streaming workload transform: fed whole epochs in order (only the trace's last
/// chunk may be shorter), it rewrites them as [`super::models::apply_workload_model`]
/// would rewrite the whole trace.
#[derive(Debug, Clone)]
pub struct EpochTransformer {
    kind: WorkloadTransform,
    epoch_refs: usize,
    rng: SplitMix64,
    w0: Option<f64>,
    epoch: u64,
    idx: Vec<usize>,
    writes_before: u64,
    writes_after: u64,
}

impl EpochTransformer {
    /// A transformer for epochs of `epoch_refs` references, choices seeded by `seed`.
    /// `w0=trace` must have been resolved ([`WorkloadTransform::resolve`]); unresolved it
    /// counts as the first epoch's ratio.
    pub fn new(kind: WorkloadTransform, epoch_refs: usize, seed: u64) -> Self {
        let w0 = match kind {
            WorkloadTransform::Model {
                w0: W0::Fixed(x), ..
            } => Some(x),
            _ => None,
        };
        Self {
            kind,
            epoch_refs: epoch_refs.max(1),
            rng: SplitMix64::new(seed),
            w0,
            epoch: 0,
            idx: Vec::new(),
            writes_before: 0,
            writes_after: 0,
        }
    }

    /// References per epoch.
    pub fn epoch_refs(&self) -> usize {
        self.epoch_refs
    }

    /// Writes before and after the transform so far.
    pub fn writes(&self) -> (u64, u64) {
        (self.writes_before, self.writes_after)
    }

    /// Rewrites `refs`, which must start at an epoch boundary; every epoch in it must be
    /// whole except a last, shorter one at the end of the trace.
    pub fn apply(&mut self, refs: &mut [PageRef]) {
        for chunk in refs.chunks_mut(self.epoch_refs) {
            self.apply_epoch(chunk);
        }
    }

    fn apply_epoch(&mut self, chunk: &mut [PageRef]) {
        let n = chunk.len();
        let before = chunk.iter().filter(|r| r.op.is_write()).count();
        let w0 = *self
            .w0
            .get_or_insert_with(|| before as f64 / n.max(1) as f64);
        let target = self.kind.target(w0, self.epoch);
        let after = ((target * n as f64).round() as usize).min(n);
        let (from, k) = if after > before {
            (false, after - before)
        } else {
            (true, before - after)
        };
        self.idx.clear();
        self.idx
            .extend((0..n).filter(|&i| chunk[i].op.is_write() == from));
        for j in 0..k {
            let r = j + self.rng.below((self.idx.len() - j) as u64) as usize;
            self.idx.swap(j, r);
            chunk[self.idx[j]].op = if from { Op::Read } else { Op::Write };
        }
        self.writes_before += before as u64;
        self.writes_after += after as u64;
        self.epoch += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert_eq!(
            WorkloadTransform::parse("wm1").ok(),
            Some(WorkloadTransform::model(WorkloadModel::Wm1))
        );
        let t = WorkloadTransform::parse("wm2:w0=trace").ok();
        assert_eq!(
            t,
            Some(WorkloadTransform::Model {
                model: WorkloadModel::Wm2,
                w0: W0::Trace
            })
        );
        assert_eq!(
            t.map(|t| t.resolve(0.17).to_string()).as_deref(),
            Some("wm2:w0=0.17")
        );
        assert!(WorkloadTransform::parse("wm1:x=1").is_err());
        assert_eq!(
            WorkloadTransform::parse("ratio=40%").ok(),
            Some(WorkloadTransform::Ratio(0.4))
        );
        assert_eq!(
            WorkloadTransform::parse("ratio=0.25").ok(),
            Some(WorkloadTransform::Ratio(0.25))
        );
        assert!(WorkloadTransform::parse("ratio=1.5").is_err());
        assert!(WorkloadTransform::parse("wm3").is_err());
    }
}
