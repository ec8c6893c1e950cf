//! The offline policies' entries in the policy table (`crate::policy::registry`):
//! `belady` (no options) and `offline:rule=belady|clean-beyond|cost-aware|best` with
//! `k=N` (clean-beyond's reuse horizon, default: the frames) and `read=X`, `write=Y`
//! (cost-aware's and best's costs, default: the device's `read_us`, `write_us`). `best`
//! is the cheapest of the offline heuristics under those costs (the rule that gives the
//! upper cost bound, [`bounds`](mod@super::bounds)), found by simulating them when the policy is built.
//!
//! Memory: the policy keeps a dense copy of the trace (4-byte page id, 4-byte next use and
//! a write flag per reference, about 9 bytes per reference, plus 8 bytes per distinct
//! page); the lab also holds the trace itself while building it (16 bytes per reference
//! twice): about 0.2 GB for the 5.1 M references of the TPC-C trace.

use super::{bounds, CostModel, OfflinePolicy, OfflineRule};
use crate::policy::registry::{PolicyContext, PolicyFactory};
use crate::policy::Policy;
use flashbuf_core::config::{OptKind, OptionSpec, Options};
use flashbuf_core::ConfigError;

/// Costs accepted by the options.
const COST: OptKind = OptKind::Float {
    min: 0.0,
    max: 1e12,
};

/// `offline`'s options.
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "rule",
        kind: OptKind::Choice(&["belady", "clean-beyond", "cost-aware", "best"]),
        default: Some("belady"),
        help: "eviction rule: Belady's MIN, MIN preferring clean pages not reused within k, \
               the cost-aware MIN variant, or the cheapest of them under read/write",
    },
    OptionSpec {
        key: "k",
        kind: OptKind::UInt {
            min: 0,
            max: u32::MAX as u64,
        },
        default: None,
        help: "clean-beyond's reuse horizon in references (default: the frames)",
    },
    OptionSpec {
        key: "read",
        kind: COST,
        default: None,
        help: "cost of a read for cost-aware and best (default: the device's read_us)",
    },
    OptionSpec {
        key: "write",
        kind: COST,
        default: None,
        help: "cost of a write-back for cost-aware and best (default: the device's write_us)",
    },
];

/// The rule of an offline policy, with what depends on the run left open.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RuleSpec {
    /// Belady's MIN.
    Belady,
    /// Clean-beyond with horizon `k` (`None`: the frames).
    CleanBeyond(Option<u32>),
    /// Cost-aware MIN.
    CostAware,
    /// The cheapest heuristic under the costs.
    Best,
}

/// An offline policy's typed options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OfflineSpec {
    /// The rule.
    pub rule: RuleSpec,
    /// Read cost (`None`: the device's `read_us`).
    pub read: Option<f64>,
    /// Write cost (`None`: the device's `write_us`).
    pub write: Option<f64>,
}

/// Parses `belady` (no options).
pub fn parse_belady(_o: &Options) -> Result<Box<dyn PolicyFactory>, ConfigError> {
    Ok(Box::new(OfflineSpec {
        rule: RuleSpec::Belady,
        read: None,
        write: None,
    }))
}

/// Parses `offline`'s options.
pub fn parse_offline(o: &Options) -> Result<Box<dyn PolicyFactory>, ConfigError> {
    let rule = match o.word("rule") {
        Some("clean-beyond") => RuleSpec::CleanBeyond(o.u64("k").map(|k| k as u32)),
        Some("cost-aware") => RuleSpec::CostAware,
        Some("best") => RuleSpec::Best,
        _ => RuleSpec::Belady,
    };
    Ok(Box::new(OfflineSpec {
        rule,
        read: o.f64("read"),
        write: o.f64("write"),
    }))
}

impl PolicyFactory for OfflineSpec {
    fn build(&self, ctx: &PolicyContext<'_>) -> Result<Box<dyn Policy>, ConfigError> {
        let name = match self.rule {
            RuleSpec::Belady => "belady",
            _ => "offline",
        };
        let trace = ctx.require_trace(name)?;
        if trace.len() >= u32::MAX as usize {
            return Err(ConfigError::invalid(
                name,
                "offline policies take traces below 2^32 references; use --limit",
            ));
        }
        let read = self.read.unwrap_or(ctx.facts.read_us);
        let write = self.write.unwrap_or(ctx.facts.write_us);
        let rule = match self.rule {
            RuleSpec::Belady => OfflineRule::Belady,
            RuleSpec::CleanBeyond(k) => OfflineRule::CleanBeyond {
                k: k.unwrap_or(ctx.frames.min(u32::MAX as usize) as u32),
            },
            RuleSpec::CostAware => OfflineRule::CostAware { read, write },
            RuleSpec::Best => {
                let model = CostModel {
                    read,
                    write,
                    final_flush: false,
                };
                bounds(trace, ctx.frames, model).best_rule
            }
        };
        Ok(Box::new(OfflinePolicy::new(trace, ctx.frames, rule)))
    }
}
