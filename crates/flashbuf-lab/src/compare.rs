//! A matrix of runs: every policy × store × device × buffer size on one trace.

use crate::config::{BufferSize, RunConfig};
use crate::registry::{
    device_facts, device_needs_capacity, validate_devices, validate_policy, validate_store,
    BuildContext, DeviceFacts,
};
use crate::replay::run;
use crate::result::RunResult;
use crate::scan::{scan_trace, TraceScan};
use crate::spec::Spec;
use crate::LabError;

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
    /// Number of runs.
    pub fn len(&self) -> usize {
        self.policies.len() * self.stores.len() * self.devices.len() * self.buffers.len()
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
                for &b in &self.buffers {
                    for p in &self.policies {
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

/// Runs the matrix (every run with the base's options: dynamics, bounds, pre-sizing).
/// Every name and option is checked first; the trace is scanned once if any run needs
/// it; device facts are computed once per device. `on_done` sees each result as it
/// completes (for progress output).
pub fn compare(
    m: &Matrix,
    mut on_done: impl FnMut(&RunResult),
) -> Result<Vec<RunResult>, LabError> {
    let b = &m.base;
    // Every name and option of the matrix is checked before anything runs.
    m.validate()?;
    let scan: Option<TraceScan> = if m.buffers.iter().any(|b| matches!(b, BufferSize::Ratio(_)))
        || m.devices.iter().any(device_needs_capacity)
        || b.presize
        || b.dynamics.workload.is_some_and(|w| w.needs_trace_ratio())
    {
        Some(scan_trace(
            &b.trace,
            b.format,
            b.page_size as u32,
            b.limit_refs,
        )?)
    } else {
        None
    };
    // Device facts (a quick profile for simulated devices) once per device.
    let mut facts: Vec<(String, DeviceFacts)> = Vec::new();
    for d in &m.devices {
        let ctx = BuildContext {
            page_size: b.page_size,
            data_pages: scan.as_ref().map_or(0, |s| s.dense_pages),
            seed: b.seed,
            facts: DeviceFacts::default(),
        };
        facts.push((d.to_string(), device_facts(d, &ctx)?));
    }
    let mut out = Vec::with_capacity(m.len());
    for mut c in m.configs() {
        let key = c.device.to_string();
        c.facts = facts.iter().find(|(k, _)| *k == key).map(|(_, f)| *f);
        let r = run(&c, scan.as_ref())?;
        on_done(&r);
        out.push(r);
    }
    Ok(out)
}
