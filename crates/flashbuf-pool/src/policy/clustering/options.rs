//! The write-clustering options every online policy of the registry takes, declared once
//! ([`CLUSTERING_OPTIONS`]) and appended to a policy's own options by [`with_clustering`]:
//! `clustering=none|batch|drain`, `cluster=N` pages (default: the device's erase block /
//! page size, else 64), `choice=victim|metric`. [`ClusteringSpec`] is their typed value;
//! the cluster size derived from the device is resolved when the policy is built.

use super::{check_cluster_size, ClusterChoice, ClusterMode, Clustered, ClusteringConfig};
use crate::policy::reference::NaiveClustered;
use crate::policy::registry::PolicyContext;
use crate::policy::Policy;
use flashbuf_core::config::{OptKind, OptionSpec, Options};
use flashbuf_core::ConfigError;

/// The write-clustering options (design.md §4, "Write clustering, two modes").
pub const CLUSTERING_OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "clustering",
        kind: OptKind::Choice(&["none", "batch", "drain"]),
        default: Some("none"),
        help: "write clustering: batch writes the victim's dirty cluster with it, drain \
               evicts the cluster's pages on the next faults",
    },
    OptionSpec {
        key: "cluster",
        kind: OptKind::UInt {
            min: 1,
            max: super::MAX_CLUSTER_SIZE,
        },
        default: None,
        help: "pages per cluster (default: the device's erase block / page size, else 64)",
    },
    OptionSpec {
        key: "choice",
        kind: OptKind::Choice(&["victim", "metric"]),
        default: Some("victim"),
        help: "which cluster: the inner victim's, or the lowest CFDC priority of all dirty \
               pages",
    },
];

/// A placeholder for the slots [`with_clustering`] fills.
const UNSET: OptionSpec = OptionSpec {
    key: "",
    kind: OptKind::Bool,
    default: None,
    help: "",
};

/// `own` followed by [`CLUSTERING_OPTIONS`], as an array of `N = own.len() + 3` options
/// (checked at compile time when used in a `const`):
///
/// ```
/// use flashbuf_core::config::{OptKind, OptionSpec};
/// use flashbuf_pool::policy::clustering::{with_clustering, CLUSTERING_OPTIONS};
/// const OWN: &[OptionSpec] = &[OptionSpec {
///     key: "window",
///     kind: OptKind::Float { min: 0.0, max: 1.0 },
///     default: Some("0.5"),
///     help: "the window",
/// }];
/// const ALL: &[OptionSpec] = &with_clustering::<{ OWN.len() + CLUSTERING_OPTIONS.len() }>(OWN);
/// assert_eq!(ALL.iter().map(|o| o.key).collect::<Vec<_>>(), ["window", "clustering", "cluster", "choice"]);
/// ```
pub const fn with_clustering<const N: usize>(own: &[OptionSpec]) -> [OptionSpec; N] {
    assert!(
        own.len() + CLUSTERING_OPTIONS.len() == N,
        "N must be own.len() + CLUSTERING_OPTIONS.len()"
    );
    let mut out = [UNSET; N];
    let mut i = 0;
    while i < own.len() {
        out[i] = own[i];
        i += 1;
    }
    let mut j = 0;
    while j < CLUSTERING_OPTIONS.len() {
        out[i + j] = CLUSTERING_OPTIONS[j];
        j += 1;
    }
    out
}

/// The typed write-clustering options of one policy spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusteringSpec {
    /// `None`: no clustering (`clustering=none`).
    pub mode: Option<ClusterMode>,
    /// Pages per cluster; `None`: from the device when built.
    pub cluster: Option<u64>,
    /// How the cluster is chosen.
    pub choice: ClusterChoice,
}

impl ClusteringSpec {
    /// Reads the options of [`CLUSTERING_OPTIONS`] from `o` (validated against a schema
    /// that includes them). `cluster` or `choice` without a clustering mode is refused.
    pub fn parse(o: &Options) -> Result<Self, ConfigError> {
        let mode = match o.word("clustering") {
            Some("batch") => Some(ClusterMode::Batch),
            Some("drain") => Some(ClusterMode::Drain),
            _ => None,
        };
        if mode.is_none() && (o.given("cluster") || o.given("choice")) {
            return Err(o.invalid("cluster/choice need clustering=batch or clustering=drain"));
        }
        let choice = match o.word("choice") {
            Some("metric") => ClusterChoice::Metric,
            _ => ClusterChoice::Victim,
        };
        Ok(Self {
            mode,
            cluster: o.u64("cluster"),
            choice,
        })
    }

    /// The clustering configuration for `ctx` (`None`: no clustering).
    pub fn resolve(
        &self,
        ctx: &PolicyContext<'_>,
    ) -> Result<Option<ClusteringConfig>, ConfigError> {
        let Some(mode) = self.mode else {
            return Ok(None);
        };
        let cluster_size = self
            .cluster
            .unwrap_or_else(|| ctx.facts.cluster_pages(ctx.page_size));
        check_cluster_size(cluster_size)?;
        Ok(Some(ClusteringConfig {
            mode,
            cluster_size,
            choice: self.choice,
        }))
    }

    /// `policy` wrapped in [`Clustered`] if clustering is on.
    pub fn wrap<P: Policy + 'static>(
        &self,
        policy: P,
        ctx: &PolicyContext<'_>,
    ) -> Result<Box<dyn Policy>, ConfigError> {
        Ok(match self.resolve(ctx)? {
            None => Box::new(policy),
            Some(cfg) => Box::new(Clustered::new(policy, cfg)?),
        })
    }

    /// A naive reference wrapped in [`NaiveClustered`] if clustering is on.
    pub fn wrap_reference<P: Policy + 'static>(
        &self,
        naive: P,
        ctx: &PolicyContext<'_>,
    ) -> Result<Box<dyn Policy>, ConfigError> {
        Ok(match self.resolve(ctx)? {
            None => Box::new(naive),
            Some(cfg) => Box::new(NaiveClustered::new(naive, cfg)?),
        })
    }
}
