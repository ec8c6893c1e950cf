//! Policies by name: `none`, `lru`, `cflru`, `cfdc`, `casa`, `fd-buffer`, `belady`,
//! `offline`, and the clustering options every online policy takes.

use super::{unknown, BuildContext, DeviceFacts};
use crate::spec::{Spec, SpecExt};
use crate::LabError;
use flashbuf_pool::policy::fd_buffer::{ClusterVictim, Clustering, OrderKind};
use flashbuf_pool::policy::offline::{bounds, CostModel, OfflinePolicy, OfflineRule};
use flashbuf_pool::policy::{
    Casa, CasaConfig, Cfdc, CfdcConfig, Cflru, CflruConfig, ClusterChoice, ClusterMode, Clustered,
    ClusteringConfig, FdBuffer, FdBufferHandle, FdBufferOptions, Lru, Policy,
};

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
    facts.r()
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
