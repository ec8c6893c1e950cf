//! Builds devices, stores and policies from their names (design.md §7). Adding a component
//! means one arm here, plus its own file and a golden-test row.

use crate::spec::Spec;
use crate::LabError;
use flashbuf_device::profile::{run_profile, ProfileOptions};
use flashbuf_device::sim::{sim_profile_names, SimDevice, SimProfile};
use flashbuf_device::{CostDevice, Device, FileDevice, FileDeviceOptions, LatencyModel, MemDevice};
use flashbuf_pool::policy::{
    Casa, CasaConfig, Cfdc, CfdcConfig, Cflru, CflruConfig, ClusterChoice, ClusterMode, Clustered,
    ClusteringConfig, Lru, Policy,
};
use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore};
use std::path::PathBuf;

/// Device names.
pub const DEVICE_NAMES: &[&str] = &["memory", "cost", "file:PATH", "sim:PROFILE"];

/// Logical bytes a simulated device gets beyond the trace's data (superblocks, staging
/// areas, logs; unused logical space costs a page-mapped or hybrid FTL nothing).
pub const SIM_SLACK_BYTES: u64 = 64 << 20;
/// Store names.
pub const STORE_NAMES: &[&str] = &["direct"];
/// Policy names.
pub const POLICY_NAMES: &[&str] = &["none", "lru", "cflru", "cfdc", "casa"];

/// Options every policy takes (write clustering, design.md §4): `clustering=none|batch|drain`,
/// `cluster=N` pages (default: erase block / page size of the device, else 64),
/// `choice=victim|metric` (which cluster: the victim's, or the lowest CFDC priority).
pub const CLUSTERING_OPTIONS: &[&str] = &["clustering", "cluster", "choice"];

/// What the lab knows when it builds components for one run.
#[derive(Debug, Clone)]
pub struct BuildContext {
    /// Page size in bytes.
    pub page_size: usize,
    /// Dense pages the trace touches (capacity hint; 0 if unknown).
    pub data_pages: u64,
    /// Seed of the run.
    pub seed: u64,
    /// What the device is like (filled once the device is built).
    pub facts: DeviceFacts,
}

/// What cost-aware policies and write clustering need to know of the device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeviceFacts {
    /// Flash erase-block size, if the device has one.
    pub erase_block_bytes: Option<u64>,
    /// Latency of a random page read, microseconds (relative figures suffice).
    pub read_us: f64,
    /// Latency of a random page write, microseconds.
    pub write_us: f64,
}

impl Default for DeviceFacts {
    fn default() -> Self {
        Self {
            erase_block_bytes: None,
            read_us: 1.0,
            write_us: 1.0,
        }
    }
}

impl DeviceFacts {
    /// Write clustering's default cluster size in pages: erase block / page size, else 64.
    pub fn cluster_pages(&self, page_size: usize) -> u64 {
        self.erase_block_bytes
            .map(|b| (b / page_size as u64).max(1))
            .unwrap_or(64)
    }
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
        other => Err(unknown("store", other, STORE_NAMES)),
    }
}

/// Builds the policy named by `spec` for `frames` frames; `None` for `none` (pass-through:
/// every reference goes straight to the store). Every policy takes the clustering options
/// ([`CLUSTERING_OPTIONS`]).
pub fn build_policy(
    spec: &Spec,
    frames: usize,
    ctx: &BuildContext,
) -> Result<Option<Box<dyn Policy>>, LabError> {
    let own = |keys: &[&str]| -> Result<(), LabError> {
        let mut valid: Vec<&str> = keys.to_vec();
        valid.extend_from_slice(CLUSTERING_OPTIONS);
        spec.allow(&valid)
    };
    let pool_err = |e: flashbuf_pool::PoolError| LabError::Usage(format!("{spec}: {e}"));
    let policy: Box<dyn Policy> = match spec.name.as_str() {
        "none" => {
            spec.allow(&[])?;
            return Ok(None);
        }
        "lru" => {
            own(&[])?;
            Box::new(Lru::new(frames))
        }
        "cflru" => {
            own(&["window"])?;
            let cfg = CflruConfig {
                window: spec.get("window", 0.5)?,
            };
            Box::new(Cflru::with_config(frames, cfg).map_err(pool_err)?)
        }
        "cfdc" => {
            own(&["window", "cluster_size"])?;
            let cfg = CfdcConfig {
                window: spec.get("window", 0.5)?,
                cluster_size: spec.get("cluster_size", 64)?,
            };
            Box::new(Cfdc::with_config(frames, cfg).map_err(pool_err)?)
        }
        "casa" => {
            own(&["read_cost", "write_cost", "learn"])?;
            let cfg = CasaConfig {
                read_cost: spec.get("read_cost", ctx.facts.read_us)?,
                write_cost: spec.get("write_cost", ctx.facts.write_us)?,
                learn_costs: spec.get("learn", false)?,
                ..CasaConfig::default()
            };
            Box::new(Casa::with_config(frames, cfg).map_err(pool_err)?)
        }
        other => return Err(unknown("policy", other, POLICY_NAMES)),
    };
    wrap_clustering(policy, spec, ctx).map(Some)
}

/// Applies the clustering options of `spec` to `policy`.
fn wrap_clustering(
    policy: Box<dyn Policy>,
    spec: &Spec,
    ctx: &BuildContext,
) -> Result<Box<dyn Policy>, LabError> {
    let mode = match spec.opts.get("clustering").map(String::as_str) {
        None | Some("none") => {
            if spec.opts.contains_key("cluster") || spec.opts.contains_key("choice") {
                return Err(LabError::Usage(format!(
                    "{spec}: cluster/choice need clustering=batch or clustering=drain"
                )));
            }
            return Ok(policy);
        }
        Some("batch") => ClusterMode::Batch,
        Some("drain") => ClusterMode::Drain,
        Some(other) => {
            return Err(LabError::Usage(format!(
                "{spec}: clustering={other}; valid: none, batch, drain"
            )))
        }
    };
    let choice = match spec.opts.get("choice").map(String::as_str) {
        None | Some("victim") => ClusterChoice::Victim,
        Some("metric") => ClusterChoice::Metric,
        Some(other) => {
            return Err(LabError::Usage(format!(
                "{spec}: choice={other}; valid: victim, metric"
            )))
        }
    };
    let cfg = ClusteringConfig {
        mode,
        cluster_size: spec.get("cluster", ctx.facts.cluster_pages(ctx.page_size))?,
        choice,
    };
    Clustered::new(policy, cfg)
        .map(|c| Box::new(c) as Box<dyn Policy>)
        .map_err(|e| LabError::Usage(format!("{spec}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> BuildContext {
        BuildContext {
            page_size: 4096,
            data_pages: 10,
            seed: 1,
            facts: DeviceFacts::default(),
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
