//! `flashbuf bench`: replay speed of one configuration, repeated.

use crate::common::{exit_for, print, replay_config, ReplayArgs};
use clap::Args;
use flashbuf_lab::{BufferSize, LabError};
use std::process::ExitCode;

#[derive(Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub replay: ReplayArgs,
    /// Repetitions.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
}

pub fn run(a: BenchArgs) -> Result<ExitCode, LabError> {
    let mut cfg = replay_config(&a.replay)?;
    cfg.progress = false;
    // A ratio needs the distinct-page count: scan once, outside the timed runs.
    let scan = match cfg.buffer {
        BufferSize::Ratio(_) => Some(flashbuf_lab::scan::scan_trace(
            &cfg.trace,
            cfg.format,
            cfg.page_size as u32,
            cfg.limit_refs,
        )?),
        BufferSize::Pages(_) => None,
    };
    let build = flashbuf_core::buildinfo::BuildInfo::now();
    if !a.replay.common.json {
        eprintln!("{}", build.line());
    }
    let mut runs = Vec::new();
    for i in 0..a.runs.max(1) {
        let r = flashbuf_lab::run(&cfg, scan.as_ref())?;
        if !a.replay.common.json {
            eprintln!(
                "run {}: {:.2} M refs/s ({:.3} s wall, {:.3} s CPU)",
                i + 1,
                r.refs_per_s / 1e6,
                r.wall_time_s,
                r.cpu_time_s
            );
        }
        runs.push(r);
    }
    let mut speeds: Vec<f64> = runs.iter().map(|r| r.refs_per_s).collect();
    speeds.sort_by(f64::total_cmp);
    let best = speeds[speeds.len() - 1];
    let median = speeds[speeds.len() / 2];
    let last = &runs[runs.len() - 1];
    // Where the best run's two threads spent it: which of them bounds the speed.
    let best_run = runs
        .iter()
        .max_by(|a, b| a.refs_per_s.total_cmp(&b.refs_per_s));
    let threads = best_run.and_then(|r| r.feed_times);
    // Peak memory of the runs, read before the byte measurements allocate their regions.
    let max_rss = flashbuf_lab::result::max_rss_bytes();
    // How far the run is from what copying and checksumming its pages alone would allow:
    // in a core's cache (the limit) and from a region the size of the run's pages into
    // one the size of its buffer (what the replay's misses really read from). Without
    // bytes (`--data none`) no page is copied or checksummed: neither applies, and the
    // time to measure them is not spent.
    let bytes = cfg.data == flashbuf_core::DataMode::Bytes;
    let cost = bytes.then(|| flashbuf_lab::byte_limit::PageCost::measure(cfg.page_size));
    let limit = cost.map(|c| c.limit_refs_per_s(last.references, last.misses, last.page_writes));
    let ws = bytes.then(|| {
        flashbuf_lab::byte_limit::WorkingSetCost::measure(
            cfg.page_size,
            last.distinct_pages as usize,
            last.buffer_pages,
            cfg.seed,
        )
    });
    let ws_refs = ws.map(|w| w.refs_per_s(last.references, last.misses, last.page_writes));
    if a.replay.common.json {
        let doc = serde_json::json!({
            "build": build,
            "config": {
                "policy": cfg.policy.to_string(), "store": cfg.store.to_string(),
                "device": cfg.device.to_string(), "buffer": cfg.buffer.to_string(),
                "page_size": cfg.page_size, "trace": cfg.trace, "format": cfg.format.map(|f| f.to_string()),
                "limit_refs": cfg.limit_refs, "seed": cfg.seed, "paranoid": cfg.paranoid,
                "presize": cfg.presize, "data": cfg.data.name(),
            },
            "bench": {
                "policy": last.policy, "store": last.store, "device": last.device,
                "buffer_pages": last.buffer_pages, "page_size": last.page_size,
                "trace": last.trace, "references": last.references, "runs": runs.len(),
                "best_refs_per_s": best, "median_refs_per_s": median,
                "max_rss_bytes": max_rss,
                "page_copy_ns": cost.map(|c| c.copy_ns), "page_crc_ns": cost.map(|c| c.crc_ns),
                "byte_limit_refs_per_s": limit, "fraction_of_byte_limit": limit.map(|l| best / l),
                "working_set_page_ns": ws.map(|w| w.page_ns),
                "working_set_source_bytes": ws.map(|w| w.source_bytes),
                "working_set_frames_bytes": ws.map(|w| w.frames_bytes),
                "working_set_refs_per_s": ws_refs,
                "fraction_of_working_set_refs_per_s": ws_refs.map(|l| best / l),
                "threads": threads.map(|t| {
                    let mut v = serde_json::json!(t);
                    v["bound"] = t.bound().into();
                    v
                }),
            },
            "runs": runs,
        });
        print(&format!("{doc:#}\n"))?;
    } else {
        let limit_line = match (cost, limit, ws, ws_refs) {
            (Some(cost), Some(limit), Some(ws), Some(ws_refs)) => format!(
                "byte limit: {:.2} M refs/s (page copy {:.0} ns + CRC32C {:.0} ns per miss and write-back, in cache); best run at {:.0}% of it\n\
                 from the run's pages: {:.2} M refs/s (copy + CRC32C of a random page of {} KiB into a {} KiB buffer: {:.0} ns); best run at {:.0}% of it",
                limit / 1e6,
                cost.copy_ns,
                cost.crc_ns,
                100.0 * best / limit,
                ws_refs / 1e6,
                ws.source_bytes.div_ceil(1 << 10),
                ws.frames_bytes.div_ceil(1 << 10),
                ws.page_ns,
                100.0 * best / ws_refs
            ),
            _ => "--data none: no page bytes copied or checksummed (the byte limit does not apply)"
                .to_string(),
        };
        let threads_line = match threads {
            Some(t) => format!(
                "threads (best run): the reader decoded for {:.3} s, ran the stream model for {:.3} s and waited {:.3} s for the replay; the replay waited {:.3} s for the reader: bound by {}\n",
                t.decode_s,
                t.model_s,
                t.reader_wait_s,
                t.replay_wait_s,
                t.bound_in_words()
            ),
            None => String::new(),
        };
        print(&format!(
            "{} {} {} buffer {} pages of {} B, {} refs: best {:.2} M refs/s, median {:.2} M refs/s, peak RSS {} MiB\n{limit_line}\n{threads_line}",
            last.policy,
            last.store,
            last.device,
            last.buffer_pages,
            last.page_size,
            last.references,
            best / 1e6,
            median / 1e6,
            max_rss >> 20,
        ))?;
    }
    Ok(exit_for(&runs))
}
