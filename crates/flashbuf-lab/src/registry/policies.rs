//! Policies by name: a thin adapter over the policy table
//! (`flashbuf_pool::policy::registry::POLICIES`: names, typed options with defaults and
//! help, builders), plus the lab's pass-through `none` (no pool: every reference goes
//! straight to the store).
//!
//! Two steps, as for every kind: [`parse_policy`] looks the name up, checks the options
//! against the entry's schema and parses them into a typed configuration, without I/O and
//! without the device (run it for a whole matrix before the first run;
//! [`validate_policy`] does only that); [`PolicyPlan::build`] then builds the policy with
//! the run's context (frames, page size, device facts, seed, and the trace for offline
//! policies).

use super::{BuildContext, DeviceFacts};
use crate::spec::Spec;
use crate::LabError;
use flashbuf_core::ConfigError;
use flashbuf_pool::policy::registry::{self, PolicyContext, PolicyEntry, PolicyFactory};
use flashbuf_pool::policy::{Policy, POLICIES};

/// The pass-through: no buffer pool.
pub const PASS_THROUGH: &str = "none";

/// Every policy name the lab accepts: `none`, then the table's.
pub fn policy_names() -> Vec<&'static str> {
    std::iter::once(PASS_THROUGH)
        .chain(POLICIES.iter().map(|e| e.name))
        .collect()
}

/// Help lines for every policy and its options (`none` first).
pub fn policy_help() -> Vec<String> {
    let mut v = vec![format!(
        "{PASS_THROUGH}: no buffer pool, every reference goes to the store (I/O traces)"
    )];
    v.extend(POLICIES.iter().flat_map(PolicyEntry::help_lines));
    v
}

/// A policy spec, checked and parsed: what a run will build.
#[derive(Debug)]
pub enum PolicyPlan {
    /// `none`: the references go straight to the store.
    PassThrough,
    /// A policy of the table.
    Pool {
        /// Its entry.
        entry: &'static PolicyEntry,
        /// Its typed configuration.
        factory: Box<dyn PolicyFactory>,
    },
}

impl PolicyPlan {
    /// Whether the policy needs the whole trace in advance (offline policies).
    pub fn needs_trace(&self) -> bool {
        matches!(self, PolicyPlan::Pool { entry, .. } if entry.needs_trace)
    }

    /// Builds the policy for `frames` frames (`None` for the pass-through); `trace` is the
    /// mapped, transformed trace the pool will see, required by offline policies.
    pub fn build(
        &self,
        frames: usize,
        ctx: &BuildContext,
        trace: Option<&[(bool, u64)]>,
    ) -> Result<Option<Box<dyn Policy>>, LabError> {
        let PolicyPlan::Pool { factory, .. } = self else {
            return Ok(None);
        };
        let mut pctx = PolicyContext::new(frames, ctx.page_size, ctx.facts).with_seed(ctx.seed);
        pctx.trace = trace;
        Ok(Some(factory.build(&pctx)?))
    }
}

/// Looks `spec` up and parses its options (no I/O, nothing built): an unknown name or
/// option, a bad value or contradicting options fail here, naming what is valid.
pub fn parse_policy(spec: &Spec) -> Result<PolicyPlan, LabError> {
    if spec.name == PASS_THROUGH {
        if let Some(key) = spec.opts.keys().next() {
            return Err(ConfigError::UnknownOption {
                component: PASS_THROUGH.into(),
                key: key.clone(),
                valid: Vec::new(),
            }
            .into());
        }
        return Ok(PolicyPlan::PassThrough);
    }
    let entry = registry::lookup(&spec.name).map_err(|_| ConfigError::UnknownName {
        kind: "policy",
        name: spec.name.clone(),
        valid: policy_names().into_iter().map(str::to_string).collect(),
    })?;
    let factory = entry.parse_spec(spec)?;
    Ok(PolicyPlan::Pool { entry, factory })
}

/// Checks `spec` without building anything (for a whole matrix before any run).
pub fn validate_policy(spec: &Spec) -> Result<(), LabError> {
    parse_policy(spec).map(|_| ())
}

/// Parses and builds the policy named by `spec` for `frames` frames (`None` for `none`).
/// Offline policies need the trace: see [`PolicyPlan::build`].
pub fn build_policy(
    spec: &Spec,
    frames: usize,
    ctx: &BuildContext,
) -> Result<Option<Box<dyn Policy>>, LabError> {
    parse_policy(spec)?.build(frames, ctx, None)
}

/// The device's asymmetry `R = write_us / read_us` from its facts.
pub fn facts_r(facts: &DeviceFacts) -> f64 {
    facts.r()
}
