//! What defines one run (design.md §7): the trace, the policy × store × device, the
//! buffer, and the run options (dynamics, offline bounds, the data set on the device).
//! One struct with `Default`, so callers name only what they change:
//!
//! ```
//! use flashbuf_lab::{BufferSize, RunConfig};
//! let cfg = RunConfig {
//!     trace: "testdata/traces/tpcc-sample.pagetrace.csv.zst".into(),
//!     policy: flashbuf_lab::spec::parse("cfdc:window=0.25").unwrap(),
//!     buffer: BufferSize::Pages(256),
//!     ..RunConfig::default()
//! };
//! cfg.validate().unwrap();
//! ```

use crate::dirty::DirtyBytes;
use crate::registry::{validate_devices, validate_policy, validate_store_data, DeviceFacts};
use crate::spec::Spec;
use crate::LabError;
use flashbuf_core::DataMode;
use flashbuf_pool::policy::offline::CostModel;
use flashbuf_trace::Format;
use flashbuf_workload::dynamics::Dynamics;
use std::fmt;
use std::path::PathBuf;

/// How big the buffer is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BufferSize {
    /// A number of frames.
    Pages(usize),
    /// A fraction of the trace's distinct pages (rounded down, at least one frame).
    Ratio(f64),
}

impl fmt::Display for BufferSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferSize::Pages(n) => write!(f, "{n}"),
            BufferSize::Ratio(r) => write!(f, "{}%", r * 100.0),
        }
    }
}

/// Everything that defines one run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Trace file.
    pub trace: PathBuf,
    /// Trace format (`None` = detect).
    pub format: Option<Format>,
    /// Replacement policy (`none` = pass-through).
    pub policy: Spec,
    /// Page store.
    pub store: Spec,
    /// Device.
    pub device: Spec,
    /// Buffer size.
    pub buffer: BufferSize,
    /// Page size in bytes.
    pub page_size: usize,
    /// Seed for everything random in the run.
    pub seed: u64,
    /// Check invariants periodically and verify every page at the end.
    pub paranoid: bool,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Replay at most this many references.
    pub limit_refs: Option<u64>,
    /// The device's facts, if already known (`compare` computes them once per device);
    /// otherwise the run computes them.
    pub facts: Option<DeviceFacts>,
    /// Workload transform, asymmetry model, epoch length ([`crate::dynamics`]).
    pub dynamics: Dynamics,
    /// Compute the offline cost bounds and the run's ratios to them ([`crate::bounds`]).
    pub bounds: Option<BoundsCost>,
    /// The data set exists on the device before the run: right after the store is
    /// formatted, the device is extended to hold every page the trace touches, so every
    /// miss reads the device (as in the papers, whose databases were on the flash device).
    /// Without it, the direct store answers reads beyond the device's current length
    /// without device I/O (pages never written). Meant for the direct store.
    pub presize: bool,
    /// References replayed before measuring (the papers' warm-up): the run's counts,
    /// device figures and ratios cover the references after them; the warm-up's misses
    /// and page writes are reported apart (`warmup_refs`, `cold_misses`,
    /// `cold_page_writes`). Through the pool only (pass-through runs have no buffer to
    /// warm).
    pub warmup: Warmup,
    /// Which bytes a replayed write changes ([`crate::dirty`]): `Auto` is the trace's own
    /// ranges for a range I/O CSV replayed pass-through, else the whole page.
    pub dirty_bytes: DirtyBytes,
    /// Whole pages (`--data bytes`, the default) or only their metadata (`--data none`:
    /// frames and pages of [`flashbuf_core::METADATA_PAGE_BYTES`], every decision and device
    /// request as with bytes; [`flashbuf_core::DataMode`]).
    pub data: DataMode,
}

impl Default for RunConfig {
    /// LRU over the direct store on the memory device, 3% of the trace's distinct pages,
    /// 4 KiB pages, seed 42; no trace (set `trace`).
    fn default() -> Self {
        let spec = |name: &str| Spec {
            name: name.to_string(),
            ..Spec::default()
        };
        Self {
            trace: PathBuf::new(),
            format: None,
            policy: spec("lru"),
            store: spec("direct"),
            device: spec("memory"),
            buffer: BufferSize::Ratio(0.03),
            page_size: 4096,
            seed: 42,
            paranoid: false,
            progress: false,
            limit_refs: None,
            facts: None,
            dynamics: Dynamics::default(),
            bounds: None,
            presize: false,
            warmup: Warmup::None,
            dirty_bytes: DirtyBytes::Auto,
            data: DataMode::Bytes,
        }
    }
}

/// When a run starts measuring ([`RunConfig::warmup`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Warmup {
    /// From the first reference.
    #[default]
    None,
    /// After this many references (at least 1).
    Refs(u64),
    /// After the reference that fills the buffer: the one whose page is the `frames`-th
    /// distinct page of the run (no page leaves the buffer before it is full). The
    /// FD-Buffer paper's definition (§5.1: "after the warm-up (i.e., after the buffer is
    /// filled)"). A run whose trace never fills the buffer is refused.
    Fill,
}

impl std::str::FromStr for Warmup {
    type Err = String;
    /// `0` (none), a number of references, or `fill`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "fill" => Ok(Warmup::Fill),
            "0" | "none" => Ok(Warmup::None),
            n => n
                .parse::<u64>()
                .map(Warmup::Refs)
                .map_err(|_| format!("--warmup {n}: a number of references, 0 or none, or fill")),
        }
    }
}

impl fmt::Display for Warmup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warmup::None => write!(f, "0"),
            Warmup::Refs(n) => write!(f, "{n}"),
            Warmup::Fill => write!(f, "fill"),
        }
    }
}

/// What a page size must be, everywhere in the lab and the CLI.
pub const PAGE_SIZE_RULE: &str = "a page size is a power of two from 512 to 65536 bytes";

impl RunConfig {
    /// Checks every name and option (policy, store, device), the page size and the buffer
    /// size without building or reading anything.
    pub fn validate(&self) -> Result<(), LabError> {
        if !flashbuf_core::page::is_valid_page_size(self.page_size) {
            return Err(LabError::Usage(format!(
                "page size {}: {}",
                self.page_size, PAGE_SIZE_RULE
            )));
        }
        match self.buffer {
            BufferSize::Pages(0) => {
                return Err(LabError::Usage("a buffer has at least 1 page".into()))
            }
            BufferSize::Ratio(r) if !(r > 0.0 && r <= 1.0) => {
                return Err(LabError::Usage(format!(
                    "buffer ratio {r} must be in (0, 1]"
                )))
            }
            _ => {}
        }
        if self.dynamics.epoch_refs == 0 {
            return Err(LabError::Usage("the epoch has at least 1 reference".into()));
        }
        if self.warmup != Warmup::None {
            if self.bounds.is_some() {
                return Err(LabError::Usage(
                    "--warmup with --bounds: the offline bounds cover the whole trace; run \
                     them without a warm-up"
                        .into(),
                ));
            }
            if self.policy.name == "none" {
                return Err(LabError::Usage(
                    "--warmup with --policy none: a pass-through run has no buffer to warm".into(),
                ));
            }
        }
        validate_policy(&self.policy)?;
        validate_store_data(&self.store, self.page_size, self.data)?;
        validate_devices([&self.device])
    }
}

/// Where the bounds' cost model comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BoundsCost {
    /// `C_r = read_us`, `C_w = write_us` of the device facts.
    Device,
    /// `C_r = 1`, `C_w = R`.
    R(f64),
    /// Given costs.
    Costs {
        /// Cost of a page read.
        read: f64,
        /// Cost of a page write.
        write: f64,
    },
}

impl BoundsCost {
    /// Parses `device`, `r=X`, or `read=X,write=Y`.
    pub fn parse(s: &str) -> Result<Self, LabError> {
        let s = s.trim();
        if s.is_empty() || s == "device" {
            return Ok(BoundsCost::Device);
        }
        let num = |k: &str, v: &str| -> Result<f64, LabError> {
            let x: f64 = v
                .trim()
                .parse()
                .map_err(|_| LabError::Usage(format!("--bounds {k}={v}: not a number")))?;
            if x.is_finite() && x >= 0.0 {
                Ok(x)
            } else {
                Err(LabError::Usage(format!("--bounds {k}={v}: must be ≥ 0")))
            }
        };
        let (mut r, mut read, mut write) = (None, None, None);
        for kv in s.split(',') {
            let Some((k, v)) = kv.split_once('=') else {
                return Err(LabError::Usage(format!(
                    "--bounds '{s}': use device, r=X or read=X,write=Y"
                )));
            };
            match k.trim() {
                "r" => r = Some(num(k, v)?),
                "read" => read = Some(num(k, v)?),
                "write" => write = Some(num(k, v)?),
                other => {
                    return Err(LabError::Usage(format!(
                        "--bounds: unknown key '{other}'; valid: r, read, write (or device)"
                    )))
                }
            }
        }
        match (r, read, write) {
            (Some(r), None, None) => Ok(BoundsCost::R(r)),
            (None, Some(read), Some(write)) => Ok(BoundsCost::Costs { read, write }),
            _ => Err(LabError::Usage(format!(
                "--bounds '{s}': use device, r=X or read=X,write=Y"
            ))),
        }
    }

    /// The cost model for a device with `facts`.
    pub fn model(self, facts: &DeviceFacts) -> CostModel {
        let (read, write) = match self {
            BoundsCost::Device => {
                if facts.read_us > 0.0 {
                    (facts.read_us, facts.write_us)
                } else {
                    (1.0, facts.r())
                }
            }
            BoundsCost::R(r) => (1.0, r),
            BoundsCost::Costs { read, write } => (read, write),
        };
        CostModel {
            read,
            write,
            final_flush: false,
        }
    }
}

impl fmt::Display for BoundsCost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundsCost::Device => f.write_str("device"),
            BoundsCost::R(r) => write!(f, "r={r}"),
            BoundsCost::Costs { read, write } => write!(f, "read={read},write={write}"),
        }
    }
}
