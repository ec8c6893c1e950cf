//! One replay run: a trace through policy × store × device, with the integrity oracle.
//!
//! [`run`] plans the run (scan, pool size, dynamics: `setup`), builds the device chain
//! (the device, the asymmetry model, a counting wrapper, a caller's meter), the store and
//! the policy, replays the trace through the pool (`pool`) or straight into the store
//! (`passthrough`), and fills the [`RunResult`]. [`run_hooked`] is the same replay with a
//! [`ReplayHook`]: the reproductions meter a run with one instead of a loop of their own.
//!
//! Offline policies (`belady`, `offline:...`) load the whole mapped and transformed trace
//! into memory first (through the same feed, so they see exactly the references the pool
//! will see), build the policy from it, and replay it from memory; their `refs_per_s`
//! includes that loading. With `bounds`, the trace is read once more after the replay (or
//! reused, for offline policies) to compute the bounds; that time is not in `refs_per_s`.
//!
//! A pool above [`CAP_ABOVE_BYTES`] is capped at the trace's distinct pages (the run can
//! use no more; `buffer_pages` in the result is the size used), and a pool the machine
//! cannot hold is refused with its size named.

mod epoch;
mod hook;
mod latency;
mod passthrough;
mod passthrough_ranges;
mod pool;
mod setup;
mod util;
mod windows;

pub use hook::{NoHook, ReplayHook};
pub(crate) use setup::feed_options;
pub use setup::CAP_ABOVE_BYTES;
pub use util::process_cpu_s;
pub use windows::{WindowSample, WINDOW_REFS};

use crate::bounds;
use crate::cluster_runs::{ClusterRunStore, ClusterRunTally};
use crate::config::{RunConfig, Warmup};
use crate::dirty::{DirtyBytes, DirtyStats, RangeSource};
use crate::feed::{AddressMap, Feed, FeedSummary, SharedTrace};
use crate::oracle::Oracle;
use crate::registry::{build_store, parse_policy, PolicyPlan};
use crate::result::RunResult;
use crate::scan::TraceScan;
use crate::LabError;
use epoch::EpochHooks;
use flashbuf_core::DeviceStats;
use flashbuf_pool::BufferPool;
use flashbuf_store::PageStore;
use flashbuf_workload::dynamics::asymmetry_name;
use indicatif::ProgressBar;
use pool::PoolWrites;
use setup::{DeviceChain, Plan};
use std::sync::Arc;
use std::time::Instant;

/// Replays one configuration. `scan` may carry a pre-computed scan of the trace (it is
/// computed here when the run needs one and none is given).
pub fn run(cfg: &RunConfig, scan: Option<&TraceScan>) -> Result<RunResult, LabError> {
    run_inner(cfg, scan, None, &mut NoHook)
}

/// [`run`] replaying a trace decoded once for many runs (when it serves this run's feed;
/// otherwise the file is read as usual). The results are identical.
pub fn run_shared(
    cfg: &RunConfig,
    scan: Option<&TraceScan>,
    shared: Option<&SharedTrace>,
) -> Result<RunResult, LabError> {
    run_inner(cfg, scan, shared, &mut NoHook)
}

/// [`run`] with a hook (see [`ReplayHook`]).
pub fn run_hooked(
    cfg: &RunConfig,
    scan: Option<&TraceScan>,
    hook: &mut dyn ReplayHook,
) -> Result<RunResult, LabError> {
    run_inner(cfg, scan, None, hook)
}

fn run_inner(
    cfg: &RunConfig,
    scan: Option<&TraceScan>,
    shared: Option<&SharedTrace>,
    hook: &mut dyn ReplayHook,
) -> Result<RunResult, LabError> {
    // Names and options first: a bad spec fails before anything runs.
    cfg.validate()?;
    let policy = parse_policy(&cfg.policy)?;
    let is_pool = !matches!(policy, PolicyPlan::PassThrough);
    let mut plan = setup::plan(cfg, scan, is_pool)?;
    let dirty = setup::resolve_dirty(cfg, &plan)?;
    let shared = shared.filter(|t| t.serves(&plan.feed));
    let clock = Clock {
        start: Instant::now(),
        cpu_start: process_cpu_s(),
    };
    let (device, chain) = setup::device_chain(cfg, &mut plan, hook)?;
    let cleanup = chain.cleanup.clone();
    let ctx = RunCtx {
        cfg,
        plan: &plan,
        shared,
        dirty: &dirty,
    };
    let result = replay_on(&ctx, device, &chain, &policy, hook, &clock);
    if let Some(p) = cleanup {
        let _ = std::fs::remove_file(p);
    }
    match result {
        // A run of nothing measures nothing: say so rather than print a row of zeros.
        Ok(r) if r.references == 0 => Err(LabError::Usage(format!(
            "{}: the trace holds no page references (an empty file, a header only, or only records that reference no page)",
            cfg.trace.display()
        ))),
        other => other,
    }
}

/// What every part of one run reads: its configuration, plan, shared trace and model.
struct RunCtx<'a> {
    cfg: &'a RunConfig,
    plan: &'a Plan,
    shared: Option<&'a SharedTrace>,
    dirty: &'a DirtyBytes,
}

/// When the run started (wall clock and process CPU).
struct Clock {
    start: Instant,
    cpu_start: f64,
}

impl Clock {
    fn result(&self, cfg: &RunConfig, frames: usize, refs: u64, dev: DeviceStats) -> RunResult {
        let elapsed = self.start.elapsed().as_secs_f64();
        let cpu = process_cpu_s() - self.cpu_start;
        RunResult::new(cfg, frames, refs, elapsed, cpu, dev)
    }
}

/// Everything a replay loop needs besides the feed, the store and the policy.
struct Replay<'a> {
    cfg: &'a RunConfig,
    plan: &'a Plan,
    oracle: Oracle,
    progress: ProgressBar,
    epochs: EpochHooks,
    latency: latency::Latency,
    dev0: DeviceStats,
    /// The counting device's figures at the end of the warm-up, if there was one.
    warm_io: Option<flashbuf_device::IoCounts>,
}

fn replay_on(
    ctx: &RunCtx<'_>,
    device: Box<dyn flashbuf_device::Device>,
    chain: &DeviceChain,
    policy: &PolicyPlan,
    hook: &mut dyn ReplayHook,
    clock: &Clock,
) -> Result<RunResult, LabError> {
    let RunCtx {
        cfg, plan, shared, ..
    } = *ctx;
    let DeviceChain { asym, counting, .. } = chain;
    let store = build_store(&cfg.store, device, &plan.ctx)?;
    chain.presize(plan.ctx.data_bytes())?;
    // The read/write split counts the replay, not the store's formatting (a log-structured
    // store's prefill writes the whole data set).
    let io0 = counting.as_ref().map(|c| c.counts());
    hook.store_ready(&store)?;
    let (feed, kept_trace, built) = policy_and_feed(cfg, plan, shared, policy)?;
    let mut rp = Replay {
        cfg,
        plan,
        oracle: Oracle::with_capacity(plan.ctx.data_pages as usize),
        progress: util::progress_bar(cfg, plan.scan.as_ref()),
        epochs: EpochHooks {
            epoch_refs: plan.epoch_refs,
            clock: asym.as_ref().map(|a| a.clock()),
            costs: plan.dynamics.asymmetry.map(|m| (plan.ctx.facts, m)),
            writes: 0,
        },
        latency: latency::Latency::new(counting.clone()),
        dev0: store.device_stats(),
        warm_io: None,
    };
    let mut source = RangeSource::open(ctx.dirty, &cfg.trace, cfg.seed)?;
    let mut r = match built {
        Some(p) => {
            let mut writes = PoolWrites {
                source: source.as_mut(),
                ranges: Vec::new(),
                stats: DirtyStats::default(),
                error: None,
                map: AddressMap::default(),
                page_size: cfg.page_size,
            };
            let mut r = run_pool(&mut rp, feed, store, p, hook, clock, &mut writes)?;
            r.dirty_exact_bytes_per_write = writes.stats.exact_mean();
            r
        }
        None => run_passthrough(&mut rp, feed, store, source.as_mut(), hook, clock)?,
    };
    r.dirty_model = ctx.dirty.to_string();
    r.data = cfg.data.name();
    rp.progress.finish_and_clear();
    if let Some((mean, p99)) = rp.latency.summary_us() {
        r.response_time_mean_us = Some(mean);
        r.response_time_p99_us = Some(p99);
    }
    if let (Some(c), Some(io0)) = (counting, rp.warm_io.or(io0)) {
        let io = c.counts();
        r.device_read_time_us = io.read_time_us - io0.read_time_us;
        r.device_write_time_us = io.write_time_us - io0.write_time_us;
        if r.page_writes > 0 {
            r.write_time_per_page_us = r.device_write_time_us / r.page_writes as f64;
        }
    }
    let d = &plan.dynamics;
    if d.is_active() {
        r.workload = d.workload.map(|w| w.to_string());
        r.asymmetry = d.asymmetry.map(|m| asymmetry_name(m).to_string());
        r.epoch_refs = Some(plan.epoch_refs);
        r.trace_writes = Some(rp.epochs.writes);
        r.asymmetry_added_us = asym.as_ref().map(|a| a.extra_us());
    }
    r.derive_ratios();
    r.verify_errors = rp.oracle.errors();
    r.first_verify_error = rp.oracle.first_error().map(str::to_string);
    r.scan_time_s = plan.scan.as_ref().map_or(0.0, |s| s.scan_time_s);
    r.dense_pages = plan.ctx.data_pages;
    if let Some(cost) = cfg.bounds {
        let trace = match kept_trace {
            Some(t) => t,
            None => collect_trace(cfg, plan, shared)?.0,
        };
        let b = bounds::compute(&trace, plan.frames, cost.model(&plan.ctx.facts));
        bounds::annotate(&mut r, &b);
    }
    Ok(r)
}

/// A whole trace as `(is_write, page)` pairs (offline policies, bounds).
type Pairs = Vec<(bool, u64)>;

/// The whole mapped, transformed trace: as pairs, as references, and the feed summary.
fn collect_trace(
    cfg: &RunConfig,
    plan: &Plan,
    shared: Option<&SharedTrace>,
) -> Result<(Pairs, Vec<flashbuf_trace::PageRef>, FeedSummary), LabError> {
    let (refs, summary) = match shared {
        Some(t) => (t.refs().to_vec(), t.summary().clone()),
        None => Feed::start_with(&cfg.trace, cfg.format, cfg.page_size as u32, &plan.feed)?
            .collect_all()?,
    };
    let pairs = refs.iter().map(|r| (r.op.is_write(), r.page.0)).collect();
    Ok((pairs, refs, summary))
}

/// The built policy (`None`: pass-through).
type Built = Option<Box<dyn flashbuf_pool::policy::Policy>>;

/// The feed of the replay, the trace if it was loaded, and the policy (built with the
/// trace, for offline policies).
fn policy_and_feed(
    cfg: &RunConfig,
    plan: &Plan,
    shared: Option<&SharedTrace>,
    policy: &PolicyPlan,
) -> Result<(Feed, Option<Pairs>, Built), LabError> {
    if policy.needs_trace() {
        let (pairs, refs, summary) = collect_trace(cfg, plan, shared)?;
        let p = policy.build(plan.frames, &plan.ctx, Some(&pairs))?;
        Ok((Feed::from_memory(refs, summary), Some(pairs), p))
    } else {
        let mut p = policy.build(plan.frames, &plan.ctx, None)?;
        let feed = match shared {
            // Runs from a shared decode fill the cores with runs: the policy keeps its
            // stream model (no thread of the run's own to take it).
            Some(t) => t.feed(),
            None => {
                // The reader thread runs the policy's stream model, if it has one.
                let model = p
                    .as_mut()
                    .and_then(|p| p.detach_stream_model(Feed::refs_ahead(&plan.feed)));
                Feed::start_with_model(
                    &cfg.trace,
                    cfg.format,
                    cfg.page_size as u32,
                    &plan.feed,
                    model,
                )?
            }
        };
        Ok((feed, None, p))
    }
}

fn run_pool(
    rp: &mut Replay<'_>,
    feed: Feed,
    store: Box<dyn PageStore>,
    policy: Box<dyn flashbuf_pool::policy::Policy>,
    hook: &mut dyn ReplayHook,
    clock: &Clock,
    writes: &mut PoolWrites<'_>,
) -> Result<RunResult, LabError> {
    let (cfg, frames) = (rp.cfg, rp.plan.frames);
    // Write runs per cluster of the device's erase block (`crate::cluster_runs`).
    let tally = Arc::new(ClusterRunTally::new(
        rp.plan.ctx.facts.cluster_pages(cfg.page_size),
    ));
    let store = ClusterRunStore::new(store, tally.clone());
    let mut windows = windows::Windows::new(frames, tally);
    // The address map numbers the trace's pages densely (`0, 1, 2, …` as they come), so
    // the pool finds them by index: up to the scanned count if the run scanned the trace,
    // else as far as they go (the index grows with them, to at most 16 MiB).
    let pages_below = match rp.plan.ctx.data_pages {
        0 => u64::MAX,
        n => n,
    };
    let pool = BufferPool::with_page_index(store, frames, policy, pages_below)?;
    let (summary, warm) = pool::replay_pool(
        &pool,
        feed,
        &mut rp.oracle,
        &rp.progress,
        cfg.paranoid,
        &mut rp.epochs,
        &mut rp.latency,
        pool::WarmupEnd::new(cfg.warmup, frames),
        writes,
        &mut windows,
    )?;
    match cfg.warmup {
        Warmup::Refs(n) if n > 0 && warm.is_none() => {
            return Err(LabError::Usage(format!(
                "--warmup {n}: the trace ended after {} references, before the warm-up did",
                summary.references
            )))
        }
        Warmup::Fill if warm.is_none() => {
            return Err(LabError::Usage(format!(
                "--warmup fill: the buffer of {frames} frames never filled (the trace touches \
                 {} distinct pages in {} references)",
                summary.distinct_pages, summary.references
            )))
        }
        _ => {}
    }
    let mut ps = pool.stats();
    let mut dev = pool.store().device_stats() - rp.dev0;
    let mut references = summary.references;
    if let Some(w) = &warm {
        // Measured after the warm-up: subtract its figures.
        dev = pool.store().device_stats() - w.dev;
        references -= w.refs;
        ps = ps - w.pool;
        rp.warm_io = w.io;
    }
    let mut r = clock.result(cfg, frames, references, dev);
    if let Some(w) = &warm {
        r.warmup_refs = Some(w.refs);
        r.cold_misses = Some(w.pool.misses);
        r.cold_page_writes = Some(w.pool.page_writes);
    }
    windows.annotate(&mut r);
    r.hits = ps.hits;
    r.misses = ps.misses;
    r.page_reads = ps.page_reads;
    r.page_writes = ps.page_writes;
    r.distinct_pages = summary.distinct_pages;
    r.dirty_evictions = ps.dirty_evictions;
    r.write_batches = ps.write_batches;
    r.metadata_bytes_per_frame = pool.metadata_bytes_per_frame();
    r.page_index_bytes = pool.page_index_bytes() as u64;
    r.policy_report = pool
        .policy_report()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    // The advisor's share of the replay's wall time (FD-Buffer, timed).
    if let Some(&ns) = r.policy_report.get("advisor_ns") {
        if ns > 0.0 && r.wall_time_s > 0.0 {
            r.policy_report
                .insert("advisor_share_of_wall".into(), ns * 1e-9 / r.wall_time_s);
        }
    }
    r.format = summary.format.to_string();
    r.feed_times = summary.times;
    r.flush_writes = pool.flush_all()? as u64;
    pool.store().sync()?;
    r.store_report = pool.store().report().into_iter().collect();
    if cfg.paranoid {
        pool.check_invariants().map_err(LabError::Invariant)?;
        util::verify_all(pool.store(), &mut rp.oracle)?;
    }
    hook.finish(pool.store(), &mut r)?;
    Ok(r)
}

/// A pass-through replay: the plain one, or with dirty ranges from `source`.
fn run_passthrough(
    rp: &mut Replay<'_>,
    feed: Feed,
    store: Box<dyn PageStore>,
    source: Option<&mut RangeSource>,
    hook: &mut dyn ReplayHook,
    clock: &Clock,
) -> Result<RunResult, LabError> {
    let cfg = rp.cfg;
    let (o, pb, ep, lat) = (
        &mut rp.oracle,
        &rp.progress,
        &mut rp.epochs,
        &mut rp.latency,
    );
    let (p, ranges) = match source {
        None => {
            let ps = cfg.page_size;
            let p = passthrough::replay_passthrough(&store, ps, feed, o, pb, ep, lat, hook)?;
            (p, None)
        }
        Some(src) => {
            let d = passthrough_ranges::replay_passthrough_ranges(
                &store,
                cfg.page_size,
                feed,
                src,
                o,
                pb,
                ep,
                lat,
                hook,
            )?;
            (d.passed, Some((d.stats, d.content)))
        }
    };
    let dev = store.device_stats() - rp.dev0;
    let mut r = clock.result(cfg, 0, p.summary.references, dev);
    r.misses = p.summary.references;
    r.page_reads = p.reads;
    r.page_writes = p.writes;
    r.distinct_pages = p.summary.distinct_pages;
    r.format = p.summary.format.to_string();
    r.feed_times = p.summary.times;
    if let Some((stats, content)) = &ranges {
        r.dirty_exact_bytes_per_write = stats.exact_mean();
        r.dirty_bytes_per_write = stats.handed_mean();
        r.dirty_content_memory_bytes = Some(content.memory_bytes() as u64);
    }
    store.sync()?;
    r.store_report = store.report().into_iter().collect();
    if cfg.paranoid {
        store.check_invariants().map_err(LabError::Invariant)?;
        match &ranges {
            None => util::verify_all(&store, &mut rp.oracle)?,
            Some((_, c)) => passthrough_ranges::verify_all_ranges(&store, &mut rp.oracle, c)?,
        }
    }
    hook.finish(&store, &mut r)?;
    Ok(r)
}
