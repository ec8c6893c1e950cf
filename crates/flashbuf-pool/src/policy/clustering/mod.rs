//! Write clustering: CFDC's prioritized page clusters ([`ClusterSet`]) and a decorator that
//! gives write clustering to any policy ([`Clustered`]).
//!
//! Sources: CFDC (Ou, Härder, Jin, DaMoN 2009, `cfdc.txt` §3.2–3.3, Formula 1, Fig. 3, and
//! the outlook in §5), and `design.md` §4 "Write clustering, two modes".
//!
//! # CFDC's metric, exactly
//! A *cluster* holds pages whose numbers share `page / cluster_size`, in the order they
//! entered it. Its priority is Formula 1:
//!
//! ```text
//! P(c) = Σ_{i=1}^{n-1} |p_i − p_{i−1}|  /  (n² · (globaltime − timestamp(c)))
//! ```
//!
//! with the dividend set to 1 for a single-page cluster. `globaltime` ticks each time a page
//! enters the set (for CFDC: each time a dirty page leaves the working region) and
//! `timestamp(c)` is the globaltime at the cluster's creation. The lowest priority is
//! evicted first.
//!
//! Priorities change with globaltime, and the order of two clusters can flip: writing
//! `x_c = dividend / n²`, `P(c) = x_c / (G − T_c)`, and `1/P(c) = (G − T_c) / x_c` is a line
//! in `G`. Two lines cross at most once, but no static key orders all clusters for all
//! future times, so a heap keyed by priorities computed at insertion time (or compared
//! with the current globaltime inside the heap's comparator, which silently breaks the
//! heap invariant) does not give the paper's victim. The victim cluster is therefore found
//! when it is needed, among all live clusters, by the **block scan** of `scan` (also
//! FD-Buffer's): the live clusters' `T_c` and `1/x_c` are kept as floats in dense blocks
//! of 32, a choice computes the largest `(G − T_c) / x_c` (only the blocks that changed
//! since the last choice, or whose bound from it can still reach the largest), and
//! compares exactly, in 128-bit integers, the few clusters within a relative `10⁻⁹` of
//! it (float error is far smaller). The choice is the exact minimum of Formula 1, with
//! the tie order below; a page entering or leaving a cluster only rewrites its float.
//! While a cluster drains (below) it is the choice and nothing is scanned.
//!
//! Until stop 42 a kinetic tournament (Basch, Guibas and Hershberger's kinetic data
//! structures: a tournament tree whose nodes hold the winner at the current globaltime
//! and the first globaltime at which that comparison flips) kept the minimum at its root,
//! O(log n) per cluster change plus a recomputation per failed certificate. It did that
//! work for every change and every tick, while a victim cluster is chosen far more
//! rarely: on OLTP t8 at 3 % (620 frames), 262 k cluster changes (132 k distinct between
//! two choices) and 120 k certificate failures for 14.9 k choices by priority; on TPC-C w8,
//! 216 k changes and 609 k failures for 62 k choices; on pgbench s50, 169 k and 598 k for
//! 61 k. The tournament's walks and refreshes took 20–22 % of CFDC's profile samples on
//! w8 and s50 (perf). With the scan, `flashbuf bench --data none --policy cfdc --runs 3`
//! from the binary page traces (interleaved, same host): OLTP t8 26.5 → 34.6 M refs/s,
//! TPC-C w8 18.7 → 22.1, pgbench s50 23.7 → 30.4; the same misses and page writes on
//! every trace, and every golden and differential test unchanged (`ClusterSet::scans`
//! counts the choices that scanned).
//!
//! # Readings of points the text leaves open
//! - **Ties** between equal priorities are broken by the older timestamp, then by the
//!   smaller cluster number: the order is `(P(c), timestamp(c), cluster number)`.
//! - **globaltime and timestamps.** A page entering the set stamps a cluster it creates
//!   with the current globaltime, and then globaltime increments. Priorities are only ever
//!   evaluated after the increment, so `globaltime − timestamp(c) ≥ 1` for every cluster and
//!   the case `globaltime == timestamp(c)` never arises (with the other order, increment
//!   first, a new cluster would have age 0: priority +∞, never the victim while another
//!   cluster exists).
//! - **Draining.** A cluster that gave a victim gets priority 0 (sticky): it stays at 0
//!   until it is empty, pages joining it join the drain, and draining clusters come before
//!   all others (among themselves by timestamp, then number). Its victims are taken in
//!   the cluster's order (the "first page" of §3.2).
//! - Removing a page from the middle of a cluster (a hit, a write-back) updates the
//!   dividend to the sum over the remaining pages in their entering order.
//! - Pinned pages are skipped: the victim is the first evictable page in cluster order
//!   (clusters by priority, pages by entering order).
//! - `cluster_size` is at most 32,768 pages, so that every comparison fits in 128-bit
//!   integers.
//!
//! # The [`Clustered`] decorator: two modes
//! Wraps any policy and tracks page ids and dirtiness from the events. When the inner
//! policy's victim is clean, it is evicted as is. When it is dirty:
//! - [`ClusterMode::Batch`] (CFDC's §5 outlook, `clustering=batch`): the victim is evicted
//!   and every dirty, evictable page of its cluster is written back with it in one store
//!   batch, sorted by page number (`Victim::Batch`); the others stay resident, clean.
//! - [`ClusterMode::Drain`] (the papers' behaviour, `clustering=drain`): the victim is
//!   evicted alone and its cluster starts draining: the following faults that the inner
//!   policy would serve with a dirty page take the draining cluster's pages first, one per
//!   fault, in the order they became dirty, until it is empty. Faults the inner policy
//!   serves with a clean page still get that clean page (clean first, as CFDC's clean
//!   queue comes before its clusters).
//!
//! **Which cluster** ([`ClusterChoice`]). Through the [`Policy`](crate::policy::Policy) trait an inner policy names
//! one frame, so by default ([`ClusterChoice::Victim`]) the cluster is the inner victim's.
//! A policy whose dirty victims are interchangeable, so that it decides only *that* a dirty
//! page goes and leaves *which* open (CASA choosing its dirty list, FD-Buffer's dirty pool),
//! takes [`ClusterChoice::Metric`]: the cluster is then the one with the lowest CFDC
//! priority among all resident dirty pages (globaltime ticks each time a page becomes
//! dirty; a cluster's pages are ordered by the time they became dirty), and its first
//! evictable page is the victim.
//!
//! # Files
//! - [`cluster_set`]: [`ClusterSet`], the clusters and their public operations;
//! - `lowest`: the lowest-priority cluster (the draining one, else the block scan's exact
//!   minimum) and the exact comparison of two clusters;
//! - `scan`: the block scan over the live clusters' priority inputs (shared with
//!   FD-Buffer's dirty-pool clusters);
//! - [`clustered`]: the [`Clustered`] decorator and its options;
//! - [`options`]: the write-clustering options every online policy of the registry takes
//!   (`clustering`, `cluster`, `choice`), declared once.

pub mod cluster_set;
pub mod clustered;
mod lowest;
pub mod options;
pub(crate) mod scan;

pub use cluster_set::{ClusterInfo, ClusterSet};
pub use clustered::{ClusterChoice, ClusterMode, Clustered, ClusteringConfig};
pub use options::{with_clustering, ClusteringSpec, CLUSTERING_OPTIONS};

use flashbuf_core::ConfigError;

/// CFDC's default `MAX_CLUSTER_SIZE` (§4.3).
pub const DEFAULT_CLUSTER_SIZE: u64 = 64;
/// The largest cluster size accepted (keeps the exact comparisons within 128 bits).
pub const MAX_CLUSTER_SIZE: u64 = 1 << 15;

/// Checks a cluster size.
pub fn check_cluster_size(cluster_size: u64) -> Result<(), ConfigError> {
    if cluster_size == 0 || cluster_size > MAX_CLUSTER_SIZE {
        return Err(ConfigError::invalid(
            "clustering",
            format!("cluster size {cluster_size} is not in 1..={MAX_CLUSTER_SIZE} pages"),
        ));
    }
    Ok(())
}
