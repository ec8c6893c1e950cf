//! Before a replay: the scan (when the run needs one), the pool size (with its limits),
//! the build context, the resolved dynamics; and the device chain (asymmetry, counting,
//! the caller's meter, a handle to pre-size the device).

use super::hook::ReplayHook;
use crate::config::{BufferSize, RunConfig};
use crate::dirty::DirtyBytes;
use crate::feed::FeedOptions;
use crate::registry::{
    build_device, device_facts, device_needs_capacity, store_needs_capacity, BuildContext,
};
use crate::scan::{scan_trace, TraceScan};
use crate::LabError;
use flashbuf_device::{CountingDevice, Device, MemDevice};
use flashbuf_workload::dynamics::{AsymmetryDevice, Dynamics};
use std::path::PathBuf;
use std::sync::Arc;

/// Pools above this many bytes are capped at the trace's distinct pages (the run can use
/// no more; issue 11, bug F: `--buffer-pages 100000000` aborted).
pub const CAP_ABOVE_BYTES: u64 = 256 << 20;

/// What a run needs to know before it builds anything.
pub(super) struct Plan {
    /// The trace's scan, if the run needs one.
    pub(super) scan: Option<TraceScan>,
    /// Frames of the pool (0 for pass-through is decided by the policy, not here).
    pub(super) frames: usize,
    /// Page size, dense pages, seed (the facts are filled with the device).
    pub(super) ctx: BuildContext,
    /// Dynamics with `w0=trace` resolved.
    pub(super) dynamics: Dynamics,
    /// References per epoch (at least 1).
    pub(super) epoch_refs: u64,
    /// What the trace reader does.
    pub(super) feed: FeedOptions,
}

/// Plans `cfg`: scans the trace if the buffer ratio, the device's or the store's capacity,
/// pre-sizing, the dynamics or a huge pool need it (unless `scan` is given), sizes the pool, and
/// refuses a pool the machine cannot hold.
pub(super) fn plan(
    cfg: &RunConfig,
    scan: Option<&TraceScan>,
    pool: bool,
) -> Result<Plan, LabError> {
    let frame_bytes = cfg.data.buffer_bytes(cfg.page_size) as u64;
    let huge_pool = matches!(cfg.buffer, BufferSize::Pages(n)
        if (n as u64).saturating_mul(frame_bytes) > CAP_ABOVE_BYTES);
    let needs_scan = huge_pool
        || matches!(cfg.buffer, BufferSize::Ratio(_))
        || device_needs_capacity(&cfg.device)
        || store_needs_capacity(&cfg.store)
        || cfg.presize
        || cfg.dynamics.workload.is_some_and(|w| w.needs_trace_ratio());
    let scan = match scan {
        Some(s) => Some(s.clone()),
        None if needs_scan => Some(scan_trace(
            &cfg.trace,
            cfg.format,
            cfg.page_size as u32,
            cfg.limit_refs,
        )?),
        None => None,
    };
    let frames = match cfg.buffer {
        BufferSize::Pages(n) if huge_pool => {
            let distinct = scan.as_ref().map_or(n as u64, |s| s.distinct_pages.max(1));
            n.min(usize::try_from(distinct).unwrap_or(usize::MAX))
        }
        BufferSize::Pages(n) => n,
        BufferSize::Ratio(r) => {
            let distinct = scan.as_ref().map_or(0, |s| s.distinct_pages);
            ((distinct as f64 * r).floor() as usize).max(1)
        }
    };
    if pool {
        crate::limits::check_pool_fits(
            frames,
            cfg.data.buffer_bytes(cfg.page_size),
            &format!("buffer of {}", cfg.buffer),
        )?;
    }
    let (dynamics, feed) = feed_options(cfg, scan.as_ref());
    let epoch_refs = dynamics.epoch_refs.max(1);
    Ok(Plan {
        ctx: BuildContext {
            page_size: cfg.page_size,
            data: cfg.data,
            data_pages: scan.as_ref().map_or(0, |s| s.dense_pages),
            seed: cfg.seed,
            facts: Default::default(),
        },
        scan,
        frames,
        dynamics,
        epoch_refs,
        feed,
    })
}

/// The run's dynamics (the workload model resolved against the trace's write ratio) and
/// the options of its feed: every run of a matrix with the same base gets the same.
pub(crate) fn feed_options(cfg: &RunConfig, scan: Option<&TraceScan>) -> (Dynamics, FeedOptions) {
    let mut dynamics = cfg.dynamics;
    if let (Some(w), Some(s)) = (dynamics.workload, scan) {
        dynamics.workload = Some(w.resolve(s.writes as f64 / s.references.max(1) as f64));
    }
    let epoch_refs = dynamics.epoch_refs.max(1);
    let feed = FeedOptions {
        limit: cfg.limit_refs,
        transform: dynamics.workload.map(|w| (w, epoch_refs, cfg.seed)),
    };
    (dynamics, feed)
}

/// The handles the replay keeps on the device of a run.
pub(super) struct DeviceChain {
    /// A file the lab created, removed after the run.
    pub(super) cleanup: Option<PathBuf>,
    /// The asymmetry wrapper (its clock and added latency).
    pub(super) asym: Option<Arc<AsymmetryDevice<Box<dyn Device>>>>,
    /// Splits device time into reads and writes (not on the clockless memory device).
    pub(super) counting: Option<Arc<CountingDevice<Box<dyn Device>>>>,
    /// Extends the device after formatting (`presize`).
    pub(super) presize: Option<Arc<Box<dyn Device>>>,
}

/// Builds the device of `cfg` (its facts go into `plan.ctx`), wrapped, bottom up, in the
/// asymmetry model, a counting wrapper, and the caller's meter; returns what the store is
/// built on and the handles the replay keeps.
pub(super) fn device_chain(
    cfg: &RunConfig,
    plan: &mut Plan,
    hook: &mut dyn ReplayHook,
) -> Result<(Box<dyn Device>, DeviceChain), LabError> {
    plan.ctx.facts = match cfg.facts {
        Some(f) => f,
        None => device_facts(&cfg.device, &plan.ctx)?,
    };
    let built = build_device(&cfg.device, &plan.ctx)?;
    let mut device = built.device;
    let asym = plan.dynamics.asymmetry.map(|m| {
        let inner = std::mem::replace(&mut device, Box::new(MemDevice::new(0)));
        let a = Arc::new(AsymmetryDevice::new(inner, m));
        device = Box::new(a.clone());
        a
    });
    let counting = if crate::registry::device_has_clock(&cfg.device) {
        let c = Arc::new(CountingDevice::new(device));
        device = Box::new(c.clone());
        Some(c)
    } else {
        None
    };
    let device = hook.wrap_device(device);
    let (device, presize): (Box<dyn Device>, _) = if cfg.presize {
        let a = Arc::new(device);
        (Box::new(a.clone()), Some(a))
    } else {
        (device, None)
    };
    Ok((
        device,
        DeviceChain {
            cleanup: built.cleanup,
            asym,
            counting,
            presize,
        },
    ))
}

impl DeviceChain {
    /// Extends the device to hold the data set after the store was formatted
    /// (`presize`), within its capacity.
    pub(super) fn presize(&self, data_bytes: u64) -> Result<(), LabError> {
        if let Some(d) = &self.presize {
            let want = d.len() + data_bytes;
            let want = d.max_len().map_or(want, |m| want.min(m));
            if want > d.len() {
                d.set_len(want)?;
            }
        }
        Ok(())
    }
}

/// The dirty-bytes model of the run ([`crate::dirty`]), resolved for the trace's format.
pub(super) fn resolve_dirty(cfg: &RunConfig, plan: &Plan) -> Result<DirtyBytes, LabError> {
    let format = match (&cfg.dirty_bytes, cfg.format) {
        (DirtyBytes::Whole | DirtyBytes::Empirical(_), _) => None,
        (_, Some(f)) => Some(f),
        (_, None) => Some(
            flashbuf_trace::TraceReader::open(&cfg.trace, None, cfg.page_size as u32)?.format(),
        ),
    };
    let model = match format {
        Some(f) => cfg.dirty_bytes.resolve(f)?,
        None => cfg.dirty_bytes.clone(),
    };
    if model != DirtyBytes::Whole && plan.feed.transform.is_some() {
        return Err(LabError::Usage(format!(
            "--dirty-bytes {model} with --workload: the transform changes which references write; use --dirty-bytes whole"
        )));
    }
    Ok(model)
}
