//! Stores by name: `direct`, `stable-buffer`, `log-structured`.

use super::{unknown, BuildContext};
use crate::spec::{Spec, SpecExt};
use crate::LabError;
use flashbuf_device::{Device, DeviceProfile};
use flashbuf_store::stable_buffer::{
    FlushMode, PatternCosts, Recognition, StableBufferConfig, StableBufferStore,
};
use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore};

pub use super::log_store::{log_store_config, LOG_STORE_OPTIONS};

/// Store names.
pub const STORE_NAMES: &[&str] = &["direct", "stable-buffer", "log-structured"];
/// Builds (formats) a fresh store named by `spec` on `device`.
pub fn build_store(
    spec: &Spec,
    device: Box<dyn Device>,
    ctx: &BuildContext,
) -> Result<Box<dyn PageStore>, LabError> {
    match spec.name.as_str() {
        "direct" => {
            spec.allow(&["grow"])?;
            let cfg = DirectStoreConfig {
                page_size: ctx.page_size,
                grow_bytes: spec.get_bytes("grow", 64 << 20)?,
            };
            Ok(Box::new(DirectStore::create(device, cfg)?))
        }
        "stable-buffer" => {
            let cfg = stable_buffer_config(spec, device.as_ref(), ctx)?;
            Ok(Box::new(StableBufferStore::create(device, cfg)?))
        }
        "log-structured" => super::log_store::build(spec, device, ctx),
        other => Err(unknown("store", other, STORE_NAMES)),
    }
}

/// Options of `stable-buffer`.
pub const STABLE_BUFFER_OPTIONS: &[&str] =
    &["recognition", "flush", "size", "profile", "align", "grow"];

/// The configuration `stable-buffer:recognition=ondemand|incremental,flush=passive|proactive,
/// size=BYTES,profile=sim:NAME|PATH,align=BYTES,grow=BYTES` names for a store on `device`.
/// Defaults: incremental, passive, the profile's focused-area size, the device's own
/// profile (see [`stable_buffer_costs`]), 4 MiB alignment, 64 MiB growth.
pub fn stable_buffer_config(
    spec: &Spec,
    device: &dyn Device,
    ctx: &BuildContext,
) -> Result<StableBufferConfig, LabError> {
    spec.allow(STABLE_BUFFER_OPTIONS)?;
    let costs = stable_buffer_costs(spec, device, ctx)?;
    Ok(StableBufferConfig {
        page_size: ctx.page_size,
        staging_bytes: spec.get_bytes("size", costs.focused_area_bytes)?,
        recognition: Recognition::parse(&spec.get("recognition", "incremental".to_string())?)?,
        flush: FlushMode::parse(&spec.get("flush", "passive".to_string())?)?,
        align_bytes: spec.get_bytes("align", 4 << 20)?,
        grow_bytes: spec.get_bytes("grow", 64 << 20)?,
        costs,
        salt: None,
    })
}

/// The pattern costs of `stable-buffer:profile=...`: `sim:NAME` measures that simulated
/// profile (as `flashbuf profile --device sim:NAME` does, for the run's page size and
/// seed), anything else is a profile JSON file; without the option, a simulated device's
/// own profile is measured, and other devices get the paper's Mtron figures.
pub fn stable_buffer_costs(
    spec: &Spec,
    device: &dyn Device,
    ctx: &BuildContext,
) -> Result<PatternCosts, LabError> {
    let described = device.describe();
    let source = match spec.opts.get("profile") {
        Some(p) => p.clone(),
        None if described.starts_with("sim:") => described,
        None => return Ok(PatternCosts::default()),
    };
    let profile = match source.strip_prefix("sim:") {
        Some(_) => super::measure_sim_profile(&source, ctx.page_size, ctx.seed),
        None => DeviceProfile::load(std::path::Path::new(&source)).map_err(LabError::from),
    }
    .map_err(|e| LabError::Usage(format!("stable-buffer profile={source}: {e}")))?;
    Ok(PatternCosts::from_profile(&profile))
}
