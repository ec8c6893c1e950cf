//! `log-structured:segment=BYTES,cleaner=greedy|cost-benefit|oldest|sepbit,...`: the
//! log-structured store's options (kept apart from the store; one `build_store` arm).

use super::BuildContext;
use crate::spec::{Spec, SpecExt};
use crate::LabError;
use flashbuf_device::Device;
use flashbuf_store::log_store::{CleanerConfig, CleanerKind, LogStore, LogStoreConfig, TimeBase};
use flashbuf_store::{PageStore, StoreError};

/// Options of `log-structured`.
pub const LOG_STORE_OPTIONS: &[&str] = &[
    "segment",
    "cleaner",
    "ci",
    "nspc",
    "pp",
    "min_free",
    "max_free",
    "background",
    "clock",
    "size",
    "fill",
    "checkpoint",
    "prefill",
    "align",
];

/// The configuration `spec` names for a store on `device`:
/// - `segment` (8 MiB), `cleaner` (greedy), `nspc` (2), `background` (true),
///   `checkpoint` (segments between checkpoints; default 8, or more when the map is large),
///   `align` (4 MiB);
/// - `ci` and `pp` in seconds (5 and 1, the paper's Table 3 setting) — in caller page
///   writes with `clock=writes`;
/// - `min_free`/`max_free` in segments (default 10% / 20% of them);
/// - `clock`: `device` (default on `sim:` and `cost` devices), `wall` (default on files),
///   `writes` (default on `memory`, which has no clock);
/// - `size`: bytes the store occupies (default: the device's length if it has one, else
///   the trace's data divided by `fill`, default 0.8, plus room for checkpoints).
///
/// The store's page ids are the trace's dense pages.
pub fn log_store_config(
    spec: &Spec,
    device: &dyn Device,
    ctx: &BuildContext,
) -> Result<LogStoreConfig, LabError> {
    spec.allow(LOG_STORE_OPTIONS)?;
    let described = device.describe();
    let default_clock = if described.starts_with("sim:") || described.starts_with("cost") {
        "device"
    } else if described.starts_with("file:") {
        "wall"
    } else {
        "writes"
    };
    let time_base = TimeBase::parse(&spec.get("clock", default_clock.to_string())?)?;
    let tick = if time_base == TimeBase::Writes {
        1.0
    } else {
        1e6
    };
    let kind = CleanerKind::parse(&spec.get("cleaner", "greedy".to_string())?)?;
    let fill: f64 = spec.get("fill", 0.8)?;
    if !(fill > 0.0 && fill <= 1.0) {
        return Err(LabError::Usage(format!("fill={fill} must be in (0, 1]")));
    }
    let base = LogStoreConfig::with_page_size(ctx.page_size);
    let segment_bytes = spec.get_bytes("segment", base.segment_bytes)?;
    let capacity_bytes = match spec.opts.get("size") {
        Some(_) => Some(spec.get_bytes("size", 0)?),
        None if !device.is_empty() => None,
        None => Some(
            (ctx.data_bytes() as f64 / fill) as u64
                + 2 * ctx.data_pages * 4
                + 2 * segment_bytes
                + spec.get_bytes("align", base.align_bytes)?,
        ),
    };
    let opt_u32 = |k: &str| -> Result<Option<u32>, LabError> {
        spec.opts.get(k).map(|_| spec.get(k, 0u32)).transpose()
    };
    Ok(LogStoreConfig {
        segment_bytes,
        capacity_bytes,
        logical_pages: (ctx.data_pages > 0).then_some(ctx.data_pages),
        align_bytes: spec.get_bytes("align", base.align_bytes)?,
        cleaner: CleanerConfig {
            kind,
            cleaning_interval_ticks: spec.get("ci", 5.0)? * tick,
            segments_per_clean: spec.get("nspc", 2)?,
            protection_period_ticks: spec.get("pp", 1.0)? * tick,
            min_free_segments: opt_u32("min_free")?,
            max_free_segments: opt_u32("max_free")?,
            background: spec.get("background", true)?,
        },
        time_base,
        checkpoint_segments: spec
            .opts
            .get("checkpoint")
            .map(|_| spec.get("checkpoint", 0u32))
            .transpose()?,
        ..base
    })
}

/// Builds (formats) the store; with `prefill=true` every page of the trace exists on the
/// device before the run (as the papers' databases did), written once, sequentially.
pub fn build(
    spec: &Spec,
    device: Box<dyn Device>,
    ctx: &BuildContext,
) -> Result<Box<dyn PageStore>, LabError> {
    let cfg = log_store_config(spec, device.as_ref(), ctx)?;
    let prefill: bool = spec.get("prefill", false)?;
    let store = LogStore::create(device, cfg)?;
    if prefill {
        store.populate(ctx.data_pages).map_err(|e| match e {
            StoreError::Full(m) => LabError::Usage(format!(
                "log-structured prefill: {m} (give the store more room: size= or a larger device)"
            )),
            e => e.into(),
        })?;
    }
    Ok(Box::new(store))
}
