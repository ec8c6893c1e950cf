//! Devices by name: `memory`, `cost`, `file:PATH`, `sim:PROFILE`.

use super::{unknown, BuildContext, DeviceFacts};
use crate::spec::{Spec, SpecExt};
use crate::LabError;
use flashbuf_device::sim::{sim_profile_names, SimDevice, SimProfile};
use flashbuf_device::{
    run_profile, CostDevice, Device, DeviceProfile, FileDevice, FileDeviceOptions, LatencyModel,
    MemDevice, ProfileOptions,
};
use std::path::PathBuf;

/// Device names.
pub const DEVICE_NAMES: &[&str] = &["memory", "cost", "file:PATH", "sim:PROFILE"];

/// Logical bytes a simulated device gets beyond the trace's data (superblocks, staging
/// areas, logs; unused logical space costs a page-mapped or hybrid FTL nothing).
pub const SIM_SLACK_BYTES: u64 = 64 << 20;
/// A device built for a run, and a file to remove after it (for `file:` devices the lab
/// created).
pub struct BuiltDevice {
    /// The device.
    pub device: Box<dyn Device>,
    /// A file the lab created and removes when the run is over.
    pub cleanup: Option<PathBuf>,
    /// What the device is like.
    pub facts: DeviceFacts,
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
                facts: DeviceFacts::default(),
            });
        }
        "sim" => Box::new(build_sim(spec, ctx)?),
        other => return Err(unknown("device", other, DEVICE_NAMES)),
    };
    Ok(BuiltDevice {
        device,
        cleanup: None,
        facts: DeviceFacts::default(),
    })
}

/// What the device named by `spec` is like: for `cost`, its latencies; for `sim`, its
/// erase block and a quick uFLIP profile of a separate device of the same profile; 1:1
/// costs otherwise. Deterministic; `compare` computes it once per device.
pub fn device_facts(spec: &Spec, ctx: &BuildContext) -> Result<DeviceFacts, LabError> {
    match spec.name.as_str() {
        "cost" => Ok(DeviceFacts {
            erase_block_bytes: None,
            read_us: spec.get("read_us", 100.0)?,
            write_us: spec.get("write_us", 1000.0)?,
        }),
        "sim" => sim_facts(spec, ctx),
        _ => Ok(DeviceFacts::default()),
    }
}

/// Facts of a simulated device: its erase block from the geometry, and random page read
/// and write latencies from a quick uFLIP profile of a *separate* device of the same
/// profile and seed (the replay's device stays untouched).
fn sim_facts(spec: &Spec, ctx: &BuildContext) -> Result<DeviceFacts, LabError> {
    let area = (ctx.data_bytes() + SIM_SLACK_BYTES).clamp(16 << 20, 256 << 20);
    let probe_ctx = BuildContext {
        data_pages: area / ctx.page_size as u64,
        ..ctx.clone()
    };
    let probe = build_sim(spec, &probe_ctx)?;
    let erase_block_bytes = probe.info().geometry.map(|g| g.block_bytes());
    probe.set_len(area.min(probe.capacity()))?;
    let mut opts = ProfileOptions::quick();
    opts.page_size = ctx.page_size as u64;
    opts.area_bytes = Some(area.min(probe.capacity()));
    opts.seed = ctx.seed;
    opts.sweep = false;
    let p = run_profile(&probe, &opts)?;
    Ok(DeviceFacts {
        erase_block_bytes,
        read_us: p.read_random_us.max(f64::MIN_POSITIVE),
        write_us: p.write_random_us.max(f64::MIN_POSITIVE),
    })
}

/// Builds `sim:PROFILE[:opts]`: `seed`, `precondition` (write the whole device once
/// first, at no cost, as the papers' aged devices) and `fill` (the trace's data fills this
/// fraction of the device: capacity = data / fill instead of data + 64 MiB) are the lab's;
/// every other option goes to the profile (`SimProfile::set_option`, which lists its keys
/// on error).
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
    let fill: f64 = spec.get("fill", 0.0)?;
    if !(0.0..=1.0).contains(&fill) {
        return Err(LabError::Usage(format!("fill={fill} must be in (0, 1]")));
    }
    for (k, v) in &spec.opts {
        if !matches!(k.as_str(), "seed" | "precondition" | "fill") {
            profile.set_option(k, v).map_err(|e| {
                LabError::Usage(format!("{e} (the lab also takes seed, precondition, fill)"))
            })?;
        }
    }
    let wanted = if fill > 0.0 {
        ((ctx.data_bytes() as f64 / fill) as u64).max(ctx.data_bytes() + (1 << 20))
    } else {
        ctx.data_bytes() + SIM_SLACK_BYTES
    };
    let capacity = wanted.div_ceil(1 << 20) << 20;
    let dev = SimDevice::new(profile, capacity, seed)?;
    if precondition {
        dev.precondition();
    }
    Ok(dev)
}

/// Measures the uFLIP-style profile of the simulated device `sim_name` (`sim:PROFILE[:opts]`)
/// on a fresh 256 MiB device, for `page_size`: what `flashbuf profile --device` prints.
pub fn measure_sim_profile(
    sim_name: &str,
    page_size: usize,
    seed: u64,
) -> Result<DeviceProfile, LabError> {
    let area: u64 = 256 << 20;
    let spec = crate::spec::parse(sim_name)?;
    if spec.name != "sim" {
        return Err(LabError::Usage(format!(
            "'{sim_name}' is not a simulated device (sim:PROFILE)"
        )));
    }
    let ctx = BuildContext {
        page_size,
        data_pages: area / page_size as u64,
        seed,
        facts: DeviceFacts::default(),
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
