//! Builds devices, stores and policies from their names (design.md §7). Adding a component
//! means one arm here, plus its own file and a golden-test row.

use crate::spec::Spec;
use crate::LabError;
use flashbuf_device::sim::{sim_profile_names, SimDevice, SimProfile};
use flashbuf_device::{
    run_profile, CostDevice, Device, DeviceProfile, FileDevice, FileDeviceOptions, LatencyModel,
    MemDevice, ProfileOptions,
};
use flashbuf_pool::policy::fd_buffer::{ClusterVictim, Clustering, OrderKind};
use flashbuf_pool::policy::offline::{bounds, CostModel, OfflinePolicy, OfflineRule};
use flashbuf_pool::policy::{
    Casa, CasaConfig, Cfdc, CfdcConfig, Cflru, CflruConfig, ClusterChoice, ClusterMode, Clustered,
    ClusteringConfig, FdBuffer, FdBufferHandle, FdBufferOptions, Lru, Policy,
};
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
pub const POLICY_NAMES: &[&str] = &[
    "none",
    "lru",
    "cflru",
    "cfdc",
    "casa",
    "fd-buffer",
    "belady",
    "offline",
];

/// Options of `fd-buffer` (see [`build_fd_buffer`]).
pub const FD_BUFFER_OPTIONS: &[&str] = &[
    "window",
    "group",
    "r",
    "m",
    "pr",
    "inner",
    "clustering",
    "cluster",
    "victim",
    "q",
    "track",
    "timed",
    "init",
];

/// Options of `offline` (see [`build_offline_policy`]).
pub const OFFLINE_OPTIONS: &[&str] = &["rule", "k", "read", "write"];

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
        "fd-buffer" => return Ok(Some(build_fd_buffer(spec, frames, ctx)?.policy)),
        "belady" | "offline" => {
            return Err(LabError::Usage(format!(
                "{spec} is an offline policy: it needs the whole trace in advance (the lab's \
                 run() loads it; see build_offline_policy)"
            )))
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

/// A policy with the hooks the replay may use.
pub struct BuiltPolicy {
    /// The policy.
    pub policy: Box<dyn Policy>,
    /// FD-Buffer's handle (set `R`, window records).
    pub fd_handle: Option<FdBufferHandle>,
    /// The fixed `R` FD-Buffer runs with (`None`: online `R`, or not FD-Buffer).
    pub fixed_r: Option<f64>,
}

/// [`build_policy`] keeping FD-Buffer's handle (`None` for `none`).
pub fn build_policy_hooked(
    spec: &Spec,
    frames: usize,
    ctx: &BuildContext,
) -> Result<Option<BuiltPolicy>, LabError> {
    if spec.name == "fd-buffer" {
        return build_fd_buffer(spec, frames, ctx).map(Some);
    }
    Ok(build_policy(spec, frames, ctx)?.map(|policy| BuiltPolicy {
        policy,
        fd_handle: None,
        fixed_r: None,
    }))
}

/// The device's asymmetry `R = write_us / read_us` from its facts.
pub fn facts_r(facts: &DeviceFacts) -> f64 {
    if facts.read_us > 0.0 {
        facts.write_us / facts.read_us
    } else {
        1.0
    }
}

/// Builds `fd-buffer[:opts]` (On et al., IEEE TC 2014; `flashbuf_pool::policy::fd_buffer`).
/// Options:
/// - `window=N` references per workload-estimation window (default 5,000), or
///   `q=F`: windows sized so that the advisor's time stays below `F` of the window's I/O
///   cost (§4.4), between 500 and 200,000 references;
/// - `group=N` group size of the Two-Stack (default 64; 1 = exact stacks);
/// - `r=X` a fixed asymmetry `R`, or `r=online` (moving averages of the measured write
///   and read latencies over `m=N` observations each, default 32,768, starting from the
///   device facts' `R`); default: fixed, from the device facts (`write_us / read_us`);
/// - `pr=true|false` present conditions in the Two-Stack (default true);
/// - `inner=lru|fifo` inner policy of both pools (default lru);
/// - `clustering=off|drain|batch` write clustering in the dirty pool (default off),
///   `cluster=N` pages per cluster (default erase block / page size, else 64),
///   `victim=priority|order` how a new victim cluster is chosen (CFDC's priority, the
///   paper's; or the cluster of the dirty pool's LRU page);
/// - `init=F` the clean pool's target `M_c / M` before the first advisor run (default
///   0.5; with a window longer than the trace, a static split);
/// - `track=true` keeps per-window estimated vs measured miss rates (Table 5; the report
///   gets `err_*` figures; costs a second estimator);
/// - `timed=true|false` measures the advisor with the wall clock (`advisor_ns`; default
///   true with fixed windows, where it changes no decision; false with `q`, whose
///   windows would then depend on the machine's speed: work units stand in).
///
/// FD-Buffer does its own clustering, so it is not wrapped in [`Clustered`] and takes no
/// `choice`.
pub fn build_fd_buffer(
    spec: &Spec,
    frames: usize,
    ctx: &BuildContext,
) -> Result<BuiltPolicy, LabError> {
    spec.allow(FD_BUFFER_OPTIONS)?;
    let bad =
        |k: &str, v: &str, valid: &str| LabError::Usage(format!("{spec}: {k}={v}; valid: {valid}"));
    let facts_r = facts_r(&ctx.facts);
    let mut o = FdBufferOptions::default()
        .group_size(spec.get("group", 64usize)?)
        .present_conditions(spec.get("pr", true)?)
        .track_accuracy(spec.get("track", false)?)
        .initial_clean_ratio(spec.get("init", 0.5)?)
        .read_cost_us(ctx.facts.read_us);
    let q: Option<f64> = spec
        .opts
        .get("q")
        .map(|_| spec.get("q", 0.01))
        .transpose()?;
    o = match q {
        Some(q) => {
            if spec.opts.contains_key("window") {
                return Err(LabError::Usage(format!(
                    "{spec}: give either window or q, not both"
                )));
            }
            o.overhead_bound(q, 500, 200_000)
        }
        None => o.window_refs(spec.get("window", 5_000u64)?),
    };
    let fixed_r = match spec.opts.get("r").map(String::as_str) {
        Some("online") => {
            o = o.online_r(spec.get("m", 32_768usize)?, facts_r);
            None
        }
        _ => {
            if spec.opts.contains_key("m") {
                return Err(LabError::Usage(format!("{spec}: m needs r=online")));
            }
            let r = spec.get("r", facts_r)?;
            o = o.fixed_r(r);
            Some(r)
        }
    };
    o = o.inner(match spec.opts.get("inner").map(String::as_str) {
        None | Some("lru") => OrderKind::Lru,
        Some("fifo") => OrderKind::Fifo,
        Some(v) => return Err(bad("inner", v, "lru, fifo")),
    });
    let cluster = || spec.get("cluster", ctx.facts.cluster_pages(ctx.page_size));
    o = o.clustering(match spec.opts.get("clustering").map(String::as_str) {
        None | Some("off") | Some("none") => {
            if spec.opts.contains_key("cluster") || spec.opts.contains_key("victim") {
                return Err(LabError::Usage(format!(
                    "{spec}: cluster/victim need clustering=drain or clustering=batch"
                )));
            }
            Clustering::Off
        }
        Some("drain") => Clustering::Drain {
            cluster_pages: cluster()?,
        },
        Some("batch") => Clustering::Batch {
            cluster_pages: cluster()?,
        },
        Some(v) => return Err(bad("clustering", v, "off, drain, batch")),
    });
    o = o.cluster_victim(match spec.opts.get("victim").map(String::as_str) {
        None | Some("priority") => ClusterVictim::Priority,
        Some("order") => ClusterVictim::OrderVictim,
        Some(v) => return Err(bad("victim", v, "priority, order")),
    });
    if spec.get("timed", q.is_none())? {
        let t0 = std::time::Instant::now();
        o = o.clock(std::sync::Arc::new(move || t0.elapsed().as_nanos() as u64));
    }
    let pool_err = |e: flashbuf_pool::PoolError| LabError::Usage(format!("{spec}: {e}"));
    let (policy, fd_handle): (Box<dyn Policy>, _) = match o.inner {
        OrderKind::Lru => {
            let p = FdBuffer::new(frames, o).map_err(pool_err)?;
            let h = p.handle();
            (Box::new(p), h)
        }
        _ => {
            let p = FdBuffer::from_options(frames, o).map_err(pool_err)?;
            let h = p.handle();
            (Box::new(p), h)
        }
    };
    Ok(BuiltPolicy {
        policy,
        fd_handle: Some(fd_handle),
        fixed_r,
    })
}

/// Whether `spec` names an offline policy (it needs the whole trace in advance).
pub fn is_offline(spec: &Spec) -> bool {
    matches!(spec.name.as_str(), "belady" | "offline")
}

/// Builds an offline policy for `trace` (the mapped, transformed references the pool
/// will see, `(is_write, page)`, in order) with `frames` frames:
/// - `belady`: Belady's MIN (fewest misses);
/// - `offline:rule=belady|clean-beyond|cost-aware|best`: `clean-beyond` prefers the
///   farthest clean page if not reused within `k=N` references (default `frames`);
///   `cost-aware` evicts the page with the smallest cost per reference of distance with
///   read cost `read=X` and write cost `write=Y` (default: the device facts' `read_us`,
///   `write_us`); `best` is the cheapest of the offline heuristics under those costs
///   (the rule that gives the upper cost bound, `flashbuf_pool::policy::offline::bounds`).
///
/// Memory: the policy keeps a dense copy of the trace (4-byte page id, 4-byte next use and
/// a write flag per reference, about 9 bytes per reference, plus 8 bytes per distinct page);
/// the lab also holds the trace itself while building it (16 bytes per reference twice):
/// about 0.2 GB for the 5.1 M references of the TPC-C trace.
pub fn build_offline_policy(
    spec: &Spec,
    frames: usize,
    trace: &[(bool, u64)],
    ctx: &BuildContext,
) -> Result<Box<dyn Policy>, LabError> {
    let rule = match spec.name.as_str() {
        "belady" => {
            spec.allow(&[])?;
            OfflineRule::Belady
        }
        "offline" => {
            spec.allow(OFFLINE_OPTIONS)?;
            let read = spec.get("read", ctx.facts.read_us)?;
            let write = spec.get("write", ctx.facts.write_us)?;
            match spec.opts.get("rule").map(String::as_str) {
                None | Some("belady") => OfflineRule::Belady,
                Some("clean-beyond") => OfflineRule::CleanBeyond {
                    k: spec.get("k", frames.min(u32::MAX as usize) as u32)?,
                },
                Some("cost-aware") => OfflineRule::CostAware { read, write },
                Some("best") => {
                    let model = CostModel {
                        read,
                        write,
                        final_flush: false,
                    };
                    bounds(trace, frames, model).best_rule
                }
                Some(v) => {
                    return Err(LabError::Usage(format!(
                        "{spec}: rule={v}; valid: belady, clean-beyond, cost-aware, best"
                    )))
                }
            }
        }
        other => return Err(unknown("policy", other, POLICY_NAMES)),
    };
    if trace.len() >= u32::MAX as usize {
        return Err(LabError::Usage(format!(
            "{spec}: offline policies take traces below 2^32 references; use --limit"
        )));
    }
    Ok(Box::new(OfflinePolicy::new(trace, frames, rule)))
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
