//! A matrix of runs: every policy × store × device × buffer size on one trace.
//!
//! The trace is decoded once for the whole matrix (a [`SharedTrace`] in memory, when it
//! fits a quarter of the available memory; otherwise every run reads the file itself).
//!
//! With `jobs > 1` the runs of the matrix go to that many worker threads (each run is the
//! same single-threaded replay as in a sequential compare, with its own trace reader
//! thread); results come back in matrix order and every count is identical to a
//! sequential run's — only the timing fields (`refs_per_s`, `wall_s`, `cpu_s`, which is
//! the whole process's CPU time) differ. The first failing run stops the others from
//! starting; its error is returned.

use crate::config::{BufferSize, RunConfig};
use crate::feed::SharedTrace;
use crate::registry::{
    device_facts, device_needs_capacity, validate_devices, validate_policy, validate_store,
    BuildContext, DeviceFacts,
};
use crate::replay::{feed_options, run_shared};
use crate::result::RunResult;
use crate::scan::{scan_trace, TraceScan};
use crate::spec::Spec;
use crate::LabError;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// The axes of a comparison; every other setting comes from `base`.
#[derive(Debug, Clone)]
pub struct Matrix {
    /// Template for each run (its policy/store/device/buffer are replaced).
    pub base: RunConfig,
    /// Policies.
    pub policies: Vec<Spec>,
    /// Stores.
    pub stores: Vec<Spec>,
    /// Devices.
    pub devices: Vec<Spec>,
    /// Buffer sizes.
    pub buffers: Vec<BufferSize>,
}

impl Matrix {
    /// Number of runs (a pass-through policy, `none`, runs once per store and device: it
    /// has no buffer to size).
    pub fn len(&self) -> usize {
        let passthrough = self.policies.iter().filter(|p| is_passthrough(p)).count();
        let pooled = self.policies.len() - passthrough;
        let per_cell = if self.buffers.is_empty() {
            0
        } else {
            pooled * self.buffers.len() + passthrough
        };
        self.stores.len() * self.devices.len() * per_cell
    }

    /// Whether the matrix is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks every policy, store and device of the matrix (names, options, types, ranges,
    /// what the page size decides) without building or reading anything.
    pub fn validate(&self) -> Result<(), LabError> {
        for p in &self.policies {
            validate_policy(p)?;
        }
        for s in &self.stores {
            validate_store(s, self.base.page_size)?;
        }
        validate_devices(&self.devices)
    }

    /// The run configurations, devices outermost, then stores, buffers, policies.
    pub fn configs(&self) -> Vec<RunConfig> {
        let mut v = Vec::with_capacity(self.len());
        for d in &self.devices {
            for s in &self.stores {
                for (i, &b) in self.buffers.iter().enumerate() {
                    for p in &self.policies {
                        if i > 0 && is_passthrough(p) {
                            continue;
                        }
                        let mut c = self.base.clone();
                        c.device = d.clone();
                        c.store = s.clone();
                        c.buffer = b;
                        c.policy = p.clone();
                        v.push(c);
                    }
                }
            }
        }
        v
    }
}

/// Whether `p` is the pass-through policy (no buffer).
fn is_passthrough(p: &Spec) -> bool {
    p.name == crate::registry::PASS_THROUGH
}

/// Runs the matrix (every run with the base's options: dynamics, bounds, pre-sizing) on
/// `jobs` threads (at least 1; see the module docs). Every name and option is checked
/// first; the trace is scanned once if any run needs it; device facts are computed once
/// per device. `on_done` sees each result as it completes (for progress output), on the
/// calling thread.
pub fn compare(
    m: &Matrix,
    jobs: usize,
    mut on_done: impl FnMut(&RunResult),
) -> Result<Vec<RunResult>, LabError> {
    // Every name and option of the matrix is checked before anything runs.
    m.validate()?;
    let scan = matrix_scan(m)?;
    let mut configs = with_facts(m, scan.as_ref())?;
    let jobs = jobs.clamp(1, configs.len().max(1));
    let shared = if configs.len() > 1 {
        shared_trace(m, scan.as_ref())?
    } else {
        None
    };
    let (scan, shared) = (scan.as_ref(), shared.as_ref());
    if jobs > 1 {
        // One bar per run would garble the terminal: the caller shows the matrix's.
        configs.iter_mut().for_each(|c| c.progress = false);
    }
    if jobs == 1 {
        let mut out = Vec::with_capacity(configs.len());
        for c in &configs {
            let r = run_shared(c, scan, shared)?;
            on_done(&r);
            out.push(r);
        }
        return Ok(out);
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, Result<RunResult, LabError>)>();
    let mut slots: Vec<Option<RunResult>> = (0..configs.len()).map(|_| None).collect();
    let mut first_error: Option<(usize, LabError)> = None;
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let (next, stop, configs) = (&next, &stop, &configs);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(c) = configs.get(i) else { break };
                    if tx.send((i, run_shared(c, scan, shared))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (i, r) in rx {
            match r {
                Ok(r) => {
                    on_done(&r);
                    slots[i] = Some(r);
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    // The error of the earliest cell wins, as in a sequential run.
                    if first_error.as_ref().is_none_or(|(j, _)| i < *j) {
                        first_error = Some((i, e));
                    }
                }
            }
        }
    });
    if let Some((_, e)) = first_error {
        return Err(e);
    }
    slots
        .into_iter()
        .map(|r| r.ok_or_else(|| LabError::Usage("a run of the matrix did not finish".into())))
        .collect()
}

/// The matrix's trace decoded once, if it fits a quarter of the available memory.
fn shared_trace(m: &Matrix, scan: Option<&TraceScan>) -> Result<Option<SharedTrace>, LabError> {
    let b = &m.base;
    let ref_bytes = std::mem::size_of::<flashbuf_trace::PageRef>() as u64;
    let budget_bytes = crate::limits::available_memory_bytes().map_or(1 << 30, |a| a / 4);
    let (_, opts) = feed_options(b, scan);
    SharedTrace::decode(
        &b.trace,
        b.format,
        b.page_size as u32,
        &opts,
        budget_bytes / ref_bytes,
    )
}

/// The trace scan, if any run of the matrix needs one.
fn matrix_scan(m: &Matrix) -> Result<Option<TraceScan>, LabError> {
    let b = &m.base;
    let needed = m.buffers.iter().any(|b| matches!(b, BufferSize::Ratio(_)))
        || m.devices.iter().any(device_needs_capacity)
        || b.presize
        || b.dynamics.workload.is_some_and(|w| w.needs_trace_ratio());
    if !needed {
        return Ok(None);
    }
    Ok(Some(scan_trace(
        &b.trace,
        b.format,
        b.page_size as u32,
        b.limit_refs,
    )?))
}

/// The matrix's run configurations with each device's facts (computed once per device: a
/// quick profile for simulated devices).
fn with_facts(m: &Matrix, scan: Option<&TraceScan>) -> Result<Vec<RunConfig>, LabError> {
    let b = &m.base;
    let mut facts: Vec<(String, DeviceFacts)> = Vec::new();
    for d in &m.devices {
        let ctx = BuildContext {
            page_size: b.page_size,
            data: flashbuf_core::DataMode::Bytes,
            data_pages: scan.map_or(0, |s| s.dense_pages),
            seed: b.seed,
            facts: DeviceFacts::default(),
        };
        facts.push((d.to_string(), device_facts(d, &ctx)?));
    }
    let mut configs = m.configs();
    for c in &mut configs {
        let key = c.device.to_string();
        c.facts = facts.iter().find(|(k, _)| *k == key).map(|(_, f)| *f);
    }
    Ok(configs)
}
