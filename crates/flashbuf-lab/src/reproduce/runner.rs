//! Running and formatting helpers shared by the `cfdc`, `fd-buffer` and `nipu` reproductions:
//! one trace scan per (trace, page size), one device-facts probe per (device, page size,
//! trace), memoized runs, progress on stderr.

use super::tally::Tally;
use super::ReproduceOptions;
use crate::compare::{compare, Matrix};
use crate::config::{BufferSize, RunConfig};
use crate::registry::{device_facts, BuildContext, DeviceFacts};
use crate::replay::run;
use crate::result::RunResult;
use crate::scan::{scan_trace, TraceScan};
use crate::LabError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Runs lab configurations for a reproduction.
pub(super) struct Runner<'a> {
    opts: &'a ReproduceOptions,
    paper: &'static str,
    scans: HashMap<(PathBuf, usize, Option<u64>), TraceScan>,
    facts: HashMap<(String, usize, PathBuf, Option<u64>), DeviceFacts>,
    runs: HashMap<String, RunResult>,
    tally: Tally,
}

impl<'a> Runner<'a> {
    /// A runner for `paper` with `opts`.
    pub(super) fn new(paper: &'static str, opts: &'a ReproduceOptions) -> Self {
        Self {
            opts,
            paper,
            scans: HashMap::new(),
            facts: HashMap::new(),
            runs: HashMap::new(),
            tally: Tally::new(paper, opts),
        }
    }

    /// The path of a shared trace; an error naming the directory if it is missing.
    pub(super) fn trace(&self, name: &str) -> Result<PathBuf, LabError> {
        let p = self.opts.traces_dir.join(name);
        if p.exists() {
            Ok(p)
        } else {
            Err(LabError::Usage(format!(
                "reproduce {}: trace {} not found (give the shared traces directory with --traces)",
                self.paper,
                p.display()
            )))
        }
    }

    /// The (memoized) scan of `trace` at `page_size` (a planning pass scans nothing: one
    /// page of one reference stands in).
    pub(super) fn scan(&mut self, trace: &Path, page_size: usize) -> Result<&TraceScan, LabError> {
        self.scan_upto(trace, page_size, self.opts.limit_refs)
    }

    /// [`Runner::scan`] of the first `limit_refs` references.
    fn scan_upto(
        &mut self,
        trace: &Path,
        page_size: usize,
        limit_refs: Option<u64>,
    ) -> Result<&TraceScan, LabError> {
        let key = (trace.to_path_buf(), page_size, limit_refs);
        if !self.scans.contains_key(&key) {
            let s = if self.tally.plan_only() {
                TraceScan::stand_in()
            } else {
                scan_trace(trace, None, page_size as u32, limit_refs)?
            };
            self.scans.insert(key.clone(), s);
        }
        self.scans
            .get(&key)
            .ok_or_else(|| LabError::Invariant("scan cache".into()))
    }

    /// The facts of `device` for `trace` at `page_size` (what the runs' policies see).
    pub(super) fn facts(
        &mut self,
        device: &str,
        trace: &Path,
        page_size: usize,
    ) -> Result<DeviceFacts, LabError> {
        self.facts_upto(device, trace, page_size, self.opts.limit_refs)
    }

    /// [`Runner::facts`] for the first `limit_refs` references' data set.
    fn facts_upto(
        &mut self,
        device: &str,
        trace: &Path,
        page_size: usize,
        limit_refs: Option<u64>,
    ) -> Result<DeviceFacts, LabError> {
        let key = (
            device.to_string(),
            page_size,
            trace.to_path_buf(),
            limit_refs,
        );
        if let Some(f) = self.facts.get(&key) {
            return Ok(*f);
        }
        if self.tally.plan_only() {
            return Ok(DeviceFacts::default());
        }
        let dense = self.scan_upto(trace, page_size, limit_refs)?.dense_pages;
        let ctx = BuildContext {
            page_size,
            data: flashbuf_core::DataMode::Bytes,
            data_pages: dense,
            seed: self.opts.seed,
            facts: DeviceFacts::default(),
        };
        let facts = device_facts(&crate::spec::parse(device)?, &ctx)?;
        self.facts.insert(key, facts);
        Ok(facts)
    }

    /// One run (memoized on all its settings): `trace` × `policy` × the direct store ×
    /// `device` at `buffer`, with the run options of `ropts` (dynamics, pre-sizing,
    /// bounds, warm-up, a limit of its own; its other fields are replaced), the
    /// reproduction's seed, and the smaller of the reproduction's limit and `ropts`'s.
    pub(super) fn run(
        &mut self,
        trace: &Path,
        page_size: usize,
        policy: &str,
        device: &str,
        buffer: BufferSize,
        ropts: &RunConfig,
    ) -> Result<RunResult, LabError> {
        self.run_store(trace, page_size, (policy, "direct", device), buffer, ropts)
    }

    /// [`Runner::run`] with any store: `(policy, store, device)` named by specs. The device
    /// facts are `ropts.facts` if given (pass-through runs need none), else probed once.
    pub(super) fn run_store(
        &mut self,
        trace: &Path,
        page_size: usize,
        (policy, store, device): (&str, &str, &str),
        buffer: BufferSize,
        ropts: &RunConfig,
    ) -> Result<RunResult, LabError> {
        let limit_refs = self.limit_with(ropts.limit_refs);
        let key = format!(
            "{}|{page_size}|{policy}|{store}|{device}|{buffer:?}|{:?}|{}|{:?}|{}|{limit_refs:?}",
            trace.display(),
            ropts.dynamics,
            ropts.presize,
            ropts.bounds,
            ropts.warmup
        );
        if let Some(r) = self.runs.get(&key) {
            return Ok(r.clone());
        }
        if self.tally.plan_only() {
            // Planning: count the run, make nothing.
            self.tally.tick("");
            self.runs.insert(key, RunResult::default());
            return Ok(RunResult::default());
        }
        let facts = match ropts.facts {
            Some(f) => f,
            None => self.facts_upto(device, trace, page_size, limit_refs)?,
        };
        let cfg = RunConfig {
            trace: trace.to_path_buf(),
            policy: crate::spec::parse(policy)?,
            store: crate::spec::parse(store)?,
            device: crate::spec::parse(device)?,
            buffer,
            page_size,
            seed: self.opts.seed,
            limit_refs,
            facts: Some(facts),
            dynamics: ropts.dynamics,
            bounds: ropts.bounds,
            presize: ropts.presize,
            warmup: ropts.warmup,
            ..RunConfig::default()
        };
        let scan = self
            .scans
            .get(&(trace.to_path_buf(), page_size, limit_refs));
        let t = Instant::now();
        let r = run(&cfg, scan)?;
        self.tally.tick(&format!(
            "{} {} {}{}{} {}{}: {:.1} s device, {} reads, {} writes ({:.1} s)",
            trace
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            policy,
            if store == "direct" { "" } else { store },
            if store == "direct" { "" } else { " " },
            device,
            r.buffer_pages,
            dyn_label(ropts),
            r.device_time_us / 1e6,
            r.page_reads,
            r.page_writes,
            t.elapsed().as_secs_f64()
        ));
        if r.verify_errors > 0 {
            return Err(LabError::Invariant(format!(
                "{policy} over {store} on {device}: {} verify errors ({})",
                r.verify_errors,
                r.first_verify_error.as_deref().unwrap_or("")
            )));
        }
        self.runs.insert(key, r.clone());
        Ok(r)
    }

    /// The references a run replays: the smaller of the reproduction's `--limit` and a
    /// run's `own` limit, whichever are given.
    pub(super) fn limit_with(&self, own: Option<u64>) -> Option<u64> {
        match (self.opts.limit_refs, own) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Every run of `m` (one trace decoded once, runs on as many threads as the machine
    /// has cores, results in the matrix's order: `crate::compare`), counted in the
    /// progress; the matrix's own limit, if any, else the reproduction's. Not memoized.
    pub(super) fn run_matrix(&mut self, m: &Matrix) -> Result<Vec<RunResult>, LabError> {
        if self.tally.plan_only() {
            (0..m.len()).for_each(|_| self.tally.tick(""));
            return Ok(vec![RunResult::default(); m.len()]);
        }
        let mut m = m.clone();
        m.base.seed = self.opts.seed;
        m.base.limit_refs = self.limit_with(m.base.limit_refs);
        let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
        let trace = m
            .base
            .trace
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let tally = &self.tally;
        let runs = compare(&m, jobs, |r| {
            tally.tick(&format!(
                "{trace} {} {} {}: {:.1} s device, {} reads, {} writes",
                r.policy,
                r.device,
                r.buffer_pages,
                r.device_time_us / 1e6,
                r.page_reads,
                r.page_writes
            ))
        })?;
        if let Some(r) = runs.iter().find(|r| r.verify_errors > 0) {
            return Err(LabError::Invariant(format!(
                "{} on {}: {} verify errors ({})",
                r.policy,
                r.device,
                r.verify_errors,
                r.first_verify_error.as_deref().unwrap_or("")
            )));
        }
        Ok(runs)
    }

    /// Runs so far (not counting memoized repeats; in a planning pass, the runs planned).
    pub(super) fn runs_done(&self) -> usize {
        self.tally.done()
    }

    /// Wall seconds since the runner started.
    pub(super) fn elapsed_s(&self) -> f64 {
        self.tally.elapsed_s()
    }
}

fn dyn_label(o: &RunConfig) -> String {
    let mut s = String::new();
    if let Some(w) = o.dynamics.workload {
        s.push_str(&format!(" {w}"));
    }
    if let Some(m) = o.dynamics.asymmetry {
        s.push_str(&format!(
            " {}",
            flashbuf_workload::dynamics::asymmetry_name(m)
        ));
    }
    if o.dynamics.is_active() && o.dynamics.epoch_refs != 5_000 {
        s.push_str(&format!(" epoch {}", o.dynamics.epoch_refs));
    }
    s
}

/// `lo..hi` of `xs` as text with `f`.
pub(super) fn span(xs: &[f64], f: impl Fn(f64) -> String) -> String {
    let lo = xs.iter().copied().fold(f64::MAX, f64::min);
    let hi = xs.iter().copied().fold(f64::MIN, f64::max);
    format!("{} .. {}", f(lo), f(hi))
}

/// `x` as a signed percentage with one decimal (`+14.2%`).
pub(super) fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:+.1}%", x * 100.0)
    } else {
        "-".into()
    }
}

/// `x` as an unsigned percentage with one decimal.
pub(super) fn upct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}%", x * 100.0)
    } else {
        "-".into()
    }
}

/// A count with thousands separators.
pub(super) fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Seconds with one decimal.
pub(super) fn secs(us: f64) -> String {
    format!("{:.1}", us / 1e6)
}

/// `1 − a/b`: how much less `a` is than `b` (the FD-Buffer paper's "improvement").
pub(super) fn improvement(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        1.0 - a / b
    } else {
        f64::NAN
    }
}

/// `b/a − 1`: throughput gain of `a` over `b` when throughput is inversely proportional
/// to the cost (the CFDC paper's "performance gain" in TPS).
pub(super) fn gain(a: f64, b: f64) -> f64 {
    if a > 0.0 {
        b / a - 1.0
    } else {
        f64::NAN
    }
}
