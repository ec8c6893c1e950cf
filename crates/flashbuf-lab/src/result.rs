//! The result of one run (design.md §8) and its renderings: table, CSV, JSON.

use crate::config::RunConfig;
use flashbuf_core::DeviceStats;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One run's figures. The first fields are the contract of design.md §8; the rest are
/// additions.
#[derive(Debug, Clone, Serialize, Default)]
pub struct RunResult {
    /// Policy name with options.
    pub policy: String,
    /// Store name with options.
    pub store: String,
    /// Device name with options.
    pub device: String,
    /// Frames in the pool (0 in pass-through mode).
    pub buffer_pages: usize,
    /// Page size in bytes.
    pub page_size: usize,
    /// Trace path.
    pub trace: String,
    /// References replayed.
    pub references: u64,
    /// References that found their page in the pool.
    pub hits: u64,
    /// References that did not (every reference in pass-through mode).
    pub misses: u64,
    /// Pages the pool read from the store.
    pub page_reads: u64,
    /// Pages the pool wrote to the store during the replay (no final flush).
    pub page_writes: u64,
    /// Read I/Os that reached the device.
    pub device_reads: u64,
    /// Write I/Os that reached the device (staging, logging and GC traffic included).
    pub device_writes: u64,
    /// Device time in microseconds (virtual on simulated devices, measured on real ones).
    pub device_time_us: f64,
    /// `device_time_us / references`.
    pub io_cost: f64,
    /// CPU seconds of the run (all threads, trace reading included).
    pub cpu_time_s: f64,
    /// References per wall-clock second of the whole replay, trace reading and
    /// decompression included.
    pub refs_per_s: f64,
    /// Flash erases.
    pub erases: u64,
    /// Flash write amplification (1.0 where not applicable).
    pub write_amplification: f64,
    /// References whose page bytes were not what the last write left.
    pub verify_errors: u64,
    // ---- additions ----
    /// `misses / references` (1 in pass-through mode).
    pub miss_ratio: f64,
    /// `page_writes / references`: write-backs (pass-through: writes) per reference.
    pub write_back_ratio: f64,
    /// Mean device time per reference, microseconds, on the device's clock (see
    /// `replay::latency`; absent on the clockless memory device).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_time_mean_us: Option<f64>,
    /// 99th percentile of the device time per reference, microseconds (3 significant
    /// digits).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_time_p99_us: Option<f64>,
    /// Seed of the run.
    pub seed: u64,
    /// Trace format read.
    pub format: String,
    /// Distinct pages referenced.
    pub distinct_pages: u64,
    /// Dense page ids the trace's pages map into (what the device and a self-sizing store
    /// hold; 0 if the run did not scan the trace).
    pub dense_pages: u64,
    /// Evictions of dirty pages.
    pub dirty_evictions: u64,
    /// Batched (clustered) write-backs.
    pub write_batches: u64,
    /// Pages written by the final flush after the replay (not in `page_writes`).
    pub flush_writes: u64,
    /// Wall-clock seconds of the replay.
    pub wall_time_s: f64,
    /// Seconds of the preparatory trace scan, when one was needed (not in `refs_per_s`).
    pub scan_time_s: f64,
    /// Bytes read from the device.
    pub device_read_bytes: u64,
    /// Bytes written to the device.
    pub device_written_bytes: u64,
    /// Device syncs.
    pub device_syncs: u64,
    /// Device time spent in reads, microseconds (0 on the memory device).
    pub device_read_time_us: f64,
    /// Device time spent in writes, microseconds (staging, logs and write-backs).
    pub device_write_time_us: f64,
    /// Device write time per page the pool wrote (CFDC's "cost of flushing a page").
    pub write_time_per_page_us: f64,
    /// Pool metadata per frame besides the page bytes.
    pub metadata_bytes_per_frame: f64,
    /// Bytes of the pool's direct page index: 4 per dense page of the trace (under twice
    /// that when the run did not scan the trace; at most 16 MiB): memory by pages, not
    /// frames.
    pub page_index_bytes: u64,
    /// Peak resident memory of the process so far, bytes.
    pub max_rss_bytes: u64,
    /// Figures the policy reports.
    pub policy_report: BTreeMap<String, f64>,
    /// Store-specific figures (`PageStore::report`: write amplification of a log,
    /// staging counters, memory), after the final sync.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub store_report: BTreeMap<String, f64>,
    /// The first verify error, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_verify_error: Option<String>,
    // ---- offline bounds (with `--bounds`; see `crate::bounds`) ----
    /// The run's cost under the bounds' model: `page_reads · C_r + page_writes · C_w`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Lower bound on any policy's cost (same model, same trace and buffer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_lower_bound: Option<f64>,
    /// Upper bound on the offline optimum's cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_upper_bound: Option<f64>,
    /// The offline heuristic achieving the upper bound (`offline:rule=...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound_rule: Option<String>,
    /// `cost / cost_lower_bound`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_to_lower: Option<f64>,
    /// `cost / cost_upper_bound`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_to_upper: Option<f64>,
    /// `C_r` of the bounds' model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound_read_cost: Option<f64>,
    /// `C_w` of the bounds' model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound_write_cost: Option<f64>,
    /// Belady's misses for the trace and buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound_min_misses: Option<u64>,
    /// Write-backs no policy avoids.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound_min_write_backs: Option<u64>,
    // ---- dynamics (with `--workload`/`--asymmetry`; see `crate::dynamics`) ----
    /// Workload transform applied to the trace (`wm1`, `wm2`, `ratio=X`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// Asymmetry model applied to the device (`rm1`, `rm2`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asymmetry: Option<String>,
    /// References per epoch of the dynamics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epoch_refs: Option<u64>,
    /// Writes among the replayed references (after any transform).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_writes: Option<u64>,
    /// Device latency the asymmetry model added, microseconds (in `device_time_us`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asymmetry_added_us: Option<f64>,
    // ---- warm-up (`--warmup N`): the counts above cover the references after it ----
    /// References replayed before measuring.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_refs: Option<u64>,
    /// Misses during the warm-up (cold misses of the empty buffer among them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cold_misses: Option<u64>,
    /// Page writes during the warm-up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cold_page_writes: Option<u64>,
    /// What pages carried (`--data`): `bytes`, or `none` (metadata only; only serialized
    /// then, so results of byte runs stay as they were).
    #[serde(skip_serializing_if = "is_bytes")]
    pub data: &'static str,
    // ---- dirty bytes (`--dirty-bytes`; see `crate::dirty`) ----
    /// Which bytes a write changed: `whole`, `trace` (the trace's own ranges) or
    /// `empirical:FILE`.
    pub dirty_model: String,
    /// Mean bytes a write changed under the model (header included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty_exact_bytes_per_write: Option<f64>,
    /// Mean bytes of the dirty ranges handed to the store per write (a superset of the
    /// changed bytes: at most four runs per page).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty_bytes_per_write: Option<f64>,
    /// Memory of the page-content model of a pass-through replay with ranges, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty_content_memory_bytes: Option<u64>,
    // ---- device state ----
    /// How a simulated device started (`steady`, the default; `sequential`; `fresh`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_state: Option<String>,
    // ---- resident pages and write clusters (pool replays; `replay::windows`) ----
    /// Mean resident clean pages over the measured windows (FD-Buffer Fig. 5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_clean_pages: Option<f64>,
    /// Mean resident dirty pages over the measured windows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_dirty_pages: Option<f64>,
    /// Pages written per write run within one cluster (FD-Buffer Fig. 6;
    /// `crate::cluster_runs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty_pages_per_cluster_write: Option<f64>,
    /// Write runs counted (the denominator above).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_write_runs: Option<u64>,
    /// Cluster size of the write runs, pages (the device's erase block).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_cluster_pages: Option<u64>,
    /// The windows' samples (FD-Buffer Fig. 4); not in the CSV or JSON.
    #[serde(skip)]
    pub window_samples: Vec<crate::replay::WindowSample>,
    /// Where the trace's reader thread and the replay spent the run (`flashbuf bench`
    /// reports it); `None` for a trace replayed from memory. Not in the CSV or JSON (it
    /// measures the machine).
    #[serde(skip)]
    pub feed_times: Option<crate::feed::FeedTimes>,
}

impl RunResult {
    /// Fills the ratios derived from the counts ([`Self::miss_ratio`],
    /// [`Self::write_back_ratio`]).
    pub fn derive_ratios(&mut self) {
        let n = self.references.max(1) as f64;
        self.miss_ratio = self.misses as f64 / n;
        self.write_back_ratio = self.page_writes as f64 / n;
    }

    /// A result with the configuration and the timing and device fields filled.
    pub fn new(
        cfg: &RunConfig,
        frames: usize,
        references: u64,
        wall_s: f64,
        cpu_s: f64,
        dev: DeviceStats,
    ) -> Self {
        Self {
            policy: cfg.policy.to_string(),
            store: cfg.store.to_string(),
            device: cfg.device.to_string(),
            device_state: (cfg.device.name == "sim")
                .then(|| flashbuf_device::registry::parse_sim(&cfg.device).ok())
                .flatten()
                .map(|c| c.precondition.name().to_string()),
            buffer_pages: frames,
            page_size: cfg.page_size,
            trace: cfg.trace.display().to_string(),
            references,
            device_reads: dev.reads,
            device_writes: dev.writes,
            device_time_us: dev.device_time_us,
            io_cost: if references > 0 {
                dev.device_time_us / references as f64
            } else {
                0.0
            },
            cpu_time_s: cpu_s,
            refs_per_s: if wall_s > 0.0 {
                references as f64 / wall_s
            } else {
                0.0
            },
            erases: dev.erases,
            write_amplification: dev.write_amplification(),
            seed: cfg.seed,
            wall_time_s: wall_s,
            device_read_bytes: dev.read_bytes,
            device_written_bytes: dev.written_bytes,
            device_syncs: dev.syncs,
            max_rss_bytes: max_rss_bytes(),
            ..Self::default()
        }
    }
}

/// Peak resident set size of this process, in bytes (0 where unknown).
pub fn max_rss_bytes() -> u64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct we own.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
    if rc != 0 {
        return 0;
    }
    // SAFETY: initialised by the successful call.
    let ru = unsafe { ru.assume_init() };
    ru.ru_maxrss.max(0) as u64 * 1024
}

fn human(n: f64) -> String {
    if n >= 1e9 {
        format!("{:.2}G", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.2}M", n / 1e6)
    } else if n >= 1e4 {
        format!("{:.1}k", n / 1e3)
    } else if n == n.trunc() {
        format!("{n}")
    } else {
        format!("{n:.3}")
    }
}

/// A column of the table: its heading, what it means (`--explain`), and its cell.
struct Column {
    head: &'static str,
    meaning: &'static str,
    cell: fn(&RunResult) -> String,
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "-".to_string(), |v| format!("{v:.digits$}"))
}

/// The table's columns: always the first group; the response times when any run has
/// them; the bounds when any run was asked for them.
const BASE_COLUMNS: &[Column] = &[
    Column { head: "policy", meaning: "replacement policy with its options (none: pass-through, no buffer)", cell: |r| r.policy.clone() },
    Column { head: "store", meaning: "page store (write path) with its options", cell: |r| r.store.clone() },
    Column { head: "device", meaning: "device with its options", cell: |r| r.device.clone() },
    Column { head: "buffer", meaning: "frames in the buffer pool (0 in pass-through mode)", cell: |r| r.buffer_pages.to_string() },
    Column { head: "page", meaning: "page size in bytes", cell: |r| r.page_size.to_string() },
    Column { head: "refs", meaning: "page references replayed", cell: |r| human(r.references as f64) },
    Column { head: "miss_ratio", meaning: "misses / references (every reference misses in pass-through mode)", cell: |r| format!("{:.4}", r.miss_ratio) },
    Column { head: "misses", meaning: "references that did not find their page in the pool", cell: |r| r.misses.to_string() },
    Column { head: "reads", meaning: "pages the pool (or the pass-through replay) read from the store", cell: |r| r.page_reads.to_string() },
    Column { head: "writes", meaning: "pages the pool wrote back to the store during the replay (pass-through: pages written); the final flush is not counted", cell: |r| r.page_writes.to_string() },
    Column { head: "wb_ratio", meaning: "writes / references", cell: |r| format!("{:.4}", r.write_back_ratio) },
    Column { head: "dev_reads", meaning: "read requests that reached the device (the store's own reads included: staging, logs, cleaning)", cell: |r| r.device_reads.to_string() },
    Column { head: "dev_writes", meaning: "write requests that reached the device (staging, logs, cleaning and metadata included)", cell: |r| r.device_writes.to_string() },
    Column { head: "dev_time_s", meaning: "device time in seconds: virtual time on simulated devices, the cost model's on cost:, measured on files, 0 on memory", cell: |r| format!("{:.3}", r.device_time_us / 1e6) },
    Column { head: "io_cost_us", meaning: "device time per reference, microseconds", cell: |r| format!("{:.3}", r.io_cost) },
    Column { head: "erases", meaning: "flash block erases (simulated flash)", cell: |r| r.erases.to_string() },
    Column { head: "WA", meaning: "the flash translation layer's write amplification: flash pages programmed / pages the host wrote (1 where not applicable)", cell: |r| format!("{:.2}", r.write_amplification) },
    Column { head: "refs/s", meaning: "references per wall-clock second, trace decoding included", cell: |r| human(r.refs_per_s.round()) },
    Column { head: "verify", meaning: "references whose page bytes were not what the last write left (must be 0)", cell: |r| r.verify_errors.to_string() },
];

const RESPONSE_COLUMNS: &[Column] = &[
    Column { head: "resp_us", meaning: "mean device time per reference, microseconds (a miss's read and the write-backs its eviction caused)", cell: |r| opt(r.response_time_mean_us, 1) },
    Column { head: "p99_us", meaning: "99th percentile of the device time per reference, microseconds", cell: |r| opt(r.response_time_p99_us, 1) },
];

const BOUND_COLUMNS: &[Column] = &[
    Column { head: "cost", meaning: "the run's cost under the bounds' model: reads x C_r + writes x C_w", cell: |r| opt(r.cost, 0) },
    Column { head: "lower", meaning: "lower bound on any policy's cost for this trace and buffer (offline)", cell: |r| opt(r.cost_lower_bound, 0) },
    Column { head: "upper", meaning: "cost of the best offline heuristic (bound_rule): an upper bound on the offline optimum, not on this run; an online policy may cost more", cell: |r| opt(r.cost_upper_bound, 0) },
    Column { head: "x_lower", meaning: "cost / lower", cell: |r| opt(r.ratio_to_lower, 3) },
];

/// The columns the table shows for `runs`.
fn columns(runs: &[RunResult]) -> Vec<&'static Column> {
    let mut v: Vec<&Column> = BASE_COLUMNS.iter().collect();
    if runs.iter().any(|r| r.response_time_mean_us.is_some()) {
        v.extend(RESPONSE_COLUMNS);
    }
    if runs.iter().any(|r| r.cost.is_some()) {
        v.extend(BOUND_COLUMNS);
    }
    v
}

/// What each column of [`table`] means, one line per column (`--explain`).
pub fn legend(runs: &[RunResult]) -> String {
    let cols = columns(runs);
    let w = cols.iter().map(|c| c.head.len()).max().unwrap_or(0);
    let mut out = String::new();
    for c in cols {
        let _ = writeln!(out, "{:<w$}  {}", c.head, c.meaning);
    }
    out
}

/// A plain-text table of `runs`, columns aligned.
pub fn table(runs: &[RunResult]) -> String {
    let cols = columns(runs);
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| cols.iter().map(|c| (c.cell)(r)).collect())
        .collect();
    let mut widths: Vec<usize> = cols.iter().map(|c| c.head.len()).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &[String]| {
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            // Text columns left-aligned, numbers right-aligned.
            if i < 3 {
                let _ = write!(out, "{c:<w$}  ");
            } else {
                let _ = write!(out, "{c:>w$}  ");
            }
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
    };
    line(
        &mut out,
        &cols.iter().map(|c| c.head.to_string()).collect::<Vec<_>>(),
    );
    for r in &rows {
        line(&mut out, r);
    }
    out.push_str(&store_reports(runs));
    out
}

/// One line per run whose store reports figures (`PageStore::report`).
fn store_reports(runs: &[RunResult]) -> String {
    let mut out = String::new();
    for r in runs.iter().filter(|r| !r.store_report.is_empty()) {
        let _ = write!(out, "store {} on {}:", r.store, r.device);
        for (k, v) in &r.store_report {
            let _ = write!(out, " {k}={}", human(*v));
        }
        out.push('\n');
    }
    out
}

/// Every scalar field of a run as JSON has it, nested maps flattened to `map.key`.
fn flat(r: &RunResult) -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(r) {
        for (k, v) in m {
            match v {
                serde_json::Value::Object(inner) => {
                    out.extend(inner.into_iter().map(|(ik, iv)| (format!("{k}.{ik}"), iv)));
                }
                v => out.push((k, v)),
            }
        }
    }
    out
}

/// CSV of `runs` with the same fields as [`json`] (nested reports flattened to
/// `policy_report.KEY`, `store_report.KEY`): the union of every run's fields, in the
/// order they first appear; a field a run lacks is empty.
pub fn csv(runs: &[RunResult]) -> String {
    let rows: Vec<Vec<(String, serde_json::Value)>> = runs.iter().map(flat).collect();
    let mut header: Vec<String> = Vec::new();
    for row in &rows {
        for (k, _) in row {
            if !header.contains(k) {
                header.push(k.clone());
            }
        }
    }
    let q = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut out = header.iter().map(|h| q(h)).collect::<Vec<_>>().join(",");
    out.push('\n');
    for row in &rows {
        let cells: Vec<String> = header
            .iter()
            .map(|h| match row.iter().find(|(k, _)| k == h).map(|(_, v)| v) {
                None | Some(serde_json::Value::Null) => String::new(),
                Some(serde_json::Value::String(s)) => q(s),
                Some(v) => q(&v.to_string()),
            })
            .collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// `{"runs": [...]}` as pretty JSON.
pub fn json(runs: &[RunResult]) -> String {
    #[derive(Serialize)]
    struct Doc<'a> {
        runs: &'a [RunResult],
    }
    serde_json::to_string_pretty(&Doc { runs })
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// Whether a run's data mode is the default (`bytes`, or unset).
fn is_bytes(data: &&'static str) -> bool {
    data.is_empty() || *data == "bytes"
}
