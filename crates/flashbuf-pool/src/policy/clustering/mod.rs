//! Write clustering: CFDC's prioritized page clusters ([`ClusterSet`]) and a decorator that
//! gives write clustering to any policy ([`Clustered`]).
//!
//! Sources: CFDC (Ou, Härder, Jin, DaMoN 2009, `cfdc.txt` §3.2–3.3, Formula 1, Fig. 3, and
//! the outlook in §5), and `design.md` §4 "Write clustering, two modes".
//!
//! # CFDC's metric, exactly and in O(log n)
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
//! heap invariant) does not give the paper's victim. This module keeps the clusters in a
//! **kinetic tournament** (a binary tournament tree over cluster slots, as in Basch,
//! Guibas and Hershberger's kinetic data structures): each inner node holds the winner
//! (lower priority) of its two children *at the current globaltime* and the first future
//! globaltime at which that comparison flips, computed exactly in integers; each node also
//! holds the earliest flip in its subtree. When globaltime ticks, only the nodes whose
//! certificate expired are recomputed; a change to one cluster recomputes its leaf-to-root
//! path (stopping early where nothing changed). The root is therefore always the exact
//! minimum of Formula 1, with no floating point and no staleness: O(log n) per cluster
//! change, plus, when globaltime reaches a certificate, the recomputation of the failed
//! node and of its ancestors (at most O(log n) per failure, shared between failures).
//! Since `1/P` moves linearly with globaltime, two clusters swap at most once between
//! changes, and the work stays small: on the first 40,000 references of the TPC-C trace at
//! 96 frames, about 1.8 recomputed comparisons per globaltime tick
//! ([`ClusterSet::kinetic_events`] counts them).
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
//! - `kinetic`: the kinetic tournament that keeps the lowest-priority cluster at the root;
//! - [`clustered`]: the [`Clustered`] decorator and its options;
//! - [`options`]: the write-clustering options every online policy of the registry takes
//!   (`clustering`, `cluster`, `choice`), declared once.

pub mod cluster_set;
pub mod clustered;
mod kinetic;
pub mod options;

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
