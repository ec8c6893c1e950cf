//! Builds devices, stores and policies from their names (design.md §7). Adding a component
//! means one arm here, plus its own file and a golden-test row.

use crate::spec::Spec;
use crate::LabError;
use flashbuf_device::sim::{sim_profile_names, SimDevice, SimProfile};
use flashbuf_device::{
    run_profile, CostDevice, Device, DeviceProfile, FileDevice, FileDeviceOptions, LatencyModel,
    MemDevice, ProfileOptions,
};
use flashbuf_pool::policy::{Lru, Policy};
use flashbuf_store::stable_buffer::{
    FlushMode, PatternCosts, Recognition, StableBufferConfig, StableBufferStore,
};
use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore};
use std::path::PathBuf;

/// Device names.
pub const DEVICE_NAMES: &[&str] = &["memory", "cost", "file:PATH", "sim:PROFILE"];

/// Logical bytes a simulated device gets beyond the trace's data (superblocks, staging
/// areas, logs; unused logical space costs a page-mapped or hybrid FTL nothing).
pub const SIM_SLACK_BYTES: u64 = 64 << 20;
/// Store names.
pub const STORE_NAMES: &[&str] = &["direct", "stable-buffer"];
/// Policy names.
pub const POLICY_NAMES: &[&str] = &["none", "lru"];

/// What the lab knows when it builds components for one run.
#[derive(Debug, Clone)]
pub struct BuildContext {
    /// Page size in bytes.
    pub page_size: usize,
    /// Dense pages the trace touches (capacity hint; 0 if unknown).
    pub data_pages: u64,
    /// Seed of the run.
    pub seed: u64,
}

impl BuildContext {
    /// Bytes the data of the trace needs on a device.
    pub fn data_bytes(&self) -> u64 {
        self.data_pages * self.page_size as u64
    }
}

fn unknown(kind: &str, name: &str, valid: &[&str]) -> LabError {
    LabError::Usage(format!(
        "unknown {kind} '{name}'; valid names: {}",
        valid.join(", ")
    ))
}

/// A device built for a run, and a file to remove after it (for `file:` devices the lab
/// created).
pub struct BuiltDevice {
    /// The device.
    pub device: Box<dyn Device>,
    /// A file the lab created and removes when the run is over.
    pub cleanup: Option<PathBuf>,
}

/// Builds the device named by `spec`.
pub fn build_device(spec: &Spec, ctx: &BuildContext) -> Result<BuiltDevice, LabError> {
    let device: Box<dyn Device> = match spec.name.as_str() {
        "memory" => {
            spec.allow(&[])?;
            Box::new(MemDevice::new(0))
        }
        "cost" => {
            spec.allow(&["read_us", "write_us", "sync_us"])?;
            let m = LatencyModel {
                latency_read_us: spec.get("read_us", 100.0)?,
                latency_write_us: spec.get("write_us", 1000.0)?,
                latency_sync_us: spec.get("sync_us", 0.0)?,
            };
            Box::new(CostDevice::new(MemDevice::new(0), m))
        }
        "file" => {
            spec.allow(&["direct", "overwrite"])?;
            let path = PathBuf::from(spec.arg.clone().unwrap_or_default());
            let overwrite: bool = spec.get("overwrite", false)?;
            let existed = path.exists();
            if existed
                && !overwrite
                && std::fs::metadata(&path)
                    .map(|m| m.len() > 0)
                    .unwrap_or(false)
            {
                return Err(LabError::Usage(format!(
                    "{} exists and is not empty; the run would overwrite it (add :overwrite=true)",
                    path.display()
                )));
            }
            let opts = FileDeviceOptions {
                direct: spec.get("direct", false)?,
                ..FileDeviceOptions::default()
            };
            let d = FileDevice::open(&path, opts)?;
            return Ok(BuiltDevice {
                device: Box::new(d),
                cleanup: (!existed).then_some(path),
            });
        }
        "sim" => Box::new(build_sim(spec, ctx)?),
        other => return Err(unknown("device", other, DEVICE_NAMES)),
    };
    Ok(BuiltDevice {
        device,
        cleanup: None,
    })
}

/// Builds `sim:PROFILE[:opts]`: `seed` and `precondition` (write the whole device once
/// first, at no cost, as the papers' aged devices) are the lab's; every other option goes to
/// the profile (`SimProfile::set_option`, which lists its keys on error).
pub fn build_sim(spec: &Spec, ctx: &BuildContext) -> Result<SimDevice, LabError> {
    let name = spec.arg.as_deref().unwrap_or_default();
    let mut profile = SimProfile::by_name(name).map_err(|e| {
        LabError::Usage(format!(
            "{e} (profiles: {})",
            sim_profile_names().join(", ")
        ))
    })?;
    let seed: u64 = spec.get("seed", ctx.seed)?;
    let precondition: bool = spec.get("precondition", false)?;
    for (k, v) in &spec.opts {
        if k != "seed" && k != "precondition" {
            profile.set_option(k, v).map_err(|e| {
                LabError::Usage(format!("{e} (the lab also takes seed, precondition)"))
            })?;
        }
    }
    let capacity = (ctx.data_bytes() + SIM_SLACK_BYTES).div_ceil(1 << 20) << 20;
    let dev = SimDevice::new(profile, capacity, seed)?;
    if precondition {
        dev.precondition();
    }
    Ok(dev)
}

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
        Some(_) => measure_sim_profile(&source, ctx.page_size, ctx.seed),
        None => DeviceProfile::load(std::path::Path::new(&source)).map_err(LabError::from),
    }
    .map_err(|e| LabError::Usage(format!("stable-buffer profile={source}: {e}")))?;
    Ok(PatternCosts::from_profile(&profile))
}

/// Measures the uFLIP-style profile of the simulated device `sim_name` (`sim:PROFILE[:opts]`)
/// on a fresh 256 MiB device, for `page_size`: what `flashbuf profile --device` prints.
pub fn measure_sim_profile(
    sim_name: &str,
    page_size: usize,
    seed: u64,
) -> Result<DeviceProfile, LabError> {
    let area: u64 = 256 << 20;
    let spec = Spec::parse(sim_name)?;
    if spec.name != "sim" {
        return Err(LabError::Usage(format!(
            "'{sim_name}' is not a simulated device (sim:PROFILE)"
        )));
    }
    let ctx = BuildContext {
        page_size,
        data_pages: area / page_size as u64,
        seed,
    };
    let dev = build_sim(&spec, &ctx)?;
    dev.set_len(area)?;
    let opts = ProfileOptions {
        page_size: page_size as u64,
        area_bytes: Some(area),
        device_name: Some(spec.to_string()),
        seed,
        ..ProfileOptions::default()
    };
    Ok(run_profile(&dev, &opts)?)
}

/// Builds the policy named by `spec` for `frames` frames; `None` for `none` (pass-through:
/// every reference goes straight to the store).
pub fn build_policy(
    spec: &Spec,
    frames: usize,
    _ctx: &BuildContext,
) -> Result<Option<Box<dyn Policy>>, LabError> {
    match spec.name.as_str() {
        "none" => {
            spec.allow(&[])?;
            Ok(None)
        }
        "lru" => {
            spec.allow(&[])?;
            Ok(Some(Box::new(Lru::new(frames))))
        }
        other => Err(unknown("policy", other, POLICY_NAMES)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> BuildContext {
        BuildContext {
            page_size: 4096,
            data_pages: 10,
            seed: 1,
        }
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let e = build_policy(&Spec::parse("lruu").unwrap(), 4, &ctx())
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("unknown policy 'lruu'; valid names: none, lru"),
            "{e}"
        );
        let e = build_device(&Spec::parse("ssd").unwrap(), &ctx())
            .err()
            .unwrap();
        assert!(e.to_string().contains("memory"), "{e}");
        let e = build_policy(&Spec::parse("lru:x=1").unwrap(), 4, &ctx())
            .err()
            .unwrap();
        assert!(e.to_string().contains("unknown option 'x'"), "{e}");
    }

    #[test]
    fn file_device_refuses_to_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"precious").unwrap();
        let spec = Spec::parse(&format!("file:{}", p.display())).unwrap();
        let e = build_device(&spec, &ctx()).err().unwrap();
        assert!(e.to_string().contains("overwrite=true"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"precious");
    }
}
