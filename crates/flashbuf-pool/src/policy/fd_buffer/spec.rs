//! FD-Buffer's entry in the policy table (`crate::policy::registry::POLICIES`): its
//! options by name, parsed into [`FdBufferSpec`], built into an [`FdBuffer`] (or the naive
//! reference) with the run's context.
//!
//! FD-Buffer clusters in its own dirty pool (§4.5), so it is not wrapped in the generic
//! `Clustered` decorator: it takes `clustering=off|drain|batch` and `cluster` like the
//! others but `victim` instead of `choice`.
//!
//! Defaults are the paper's setup (issue 16): clustering on (`drain`, §4.5: "on the first
//! eviction request, we choose a victim cluster ... and then we flush one page from the
//! victim cluster. Each subsequent eviction request will flush the next page"; §5.2: "all
//! algorithms are with write clustering enabled"), cluster = erase block / page size
//! (§4.5's ⌊e/p⌋; 64 when the device has no erase block), `R` = the device's write/read
//! latency ratio. `clustering=off` is the bare two-pool algorithm of §4.1–4.4 (what
//! `FdBufferOptions::default()` builds in the library, and what this table's default was
//! before issue 16).
//!
//! The clustered-cost variant (`cost=clustered`, not the paper's, `super::clustered_cost`)
//! has its own defaults, each measured on five traces × three devices × three buffer
//! sizes there: `victim=order`, `count=io` (misses and
//! write-backs counted per access instead of Eq. (3)), `moves=cusum` (a move of `M_c`
//! charged its forced write-backs or dropped reads, paid out of the savings summed since
//! the last move, `super::moves`), `groups=256` (at most 256
//! Two-Stack groups, `ceil(frames / 256)` pages each, [`VARIANT_GROUPS`]) and
//! `span=recent` (`k` read off the recent writes back to as many distinct pages as the
//! buffer has frames, across windows); `calibrate=drained` ([`VARIANT_CALIBRATE`]: `k` scaled each
//! window to the clusters the pool drains; `calibrate=none` keeps `k` as read off the
//! writes; measured in `super::calibration`). Its windows are the paper's 5,000 references
//! (it used 20,000 until `span=recent` read `k` across windows; measured in
//! `super::clustered_cost`). An option given by hand wins over the variant's default; the
//! faithful `fd-buffer` keeps Eq. (3) and groups of 64.

use super::naive::NaiveFdBuffer;
use super::{Calibrate, ClusterVictim, Clustering, FdBuffer, FdBufferOptions, OrderKind};
use crate::policy::registry::{PolicyContext, PolicyFactory};
use crate::policy::Policy;
use flashbuf_core::config::Options;
use flashbuf_core::ConfigError;
use std::sync::Arc;

pub use super::option_table::OPTIONS;

/// The clustered-cost variant's Two-Stack groups when neither `group` nor `groups` is
/// given: at most 256 groups per stack, `ceil(frames / 256)` pages per group
/// ([`GroupSpec::PerStack`]; why and what it changes: `super::clustered_cost`).
pub const VARIANT_GROUPS: usize = 256;

/// The clustered-cost variant's calibration of `k` when `calibrate` is not given:
/// `drained` (one cell more of the 45 won, worst cell and geometric mean better, and
/// cheaper on the paper's Figs. 2–3 setup with the device's `R`; `super::calibration`).
pub const VARIANT_CALIBRATE: Calibrate = Calibrate::Drained;

/// The Two-Stack's group size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupSpec {
    /// A fixed number of pages per group (`group=`; the paper's 64).
    Pages(usize),
    /// At most this many groups per stack (`groups=`): `ceil(frames / n)` pages per group.
    PerStack(usize),
}

impl GroupSpec {
    /// Pages per group for a buffer of `frames` frames (at least 1).
    pub fn pages(self, frames: usize) -> usize {
        match self {
            GroupSpec::Pages(z) => z.max(1),
            GroupSpec::PerStack(n) => frames.div_ceil(n.max(1)).max(1),
        }
    }
}

/// How windows close.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WindowSpec {
    /// Every `n` references.
    Refs(u64),
    /// By the overhead bound `q` (§4.4), between 500 and 200,000 references.
    Overhead(f64),
}

/// Where `R` comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RSpec {
    /// Fixed: the number given, or (`None`) the device's `write_us / read_us`.
    Fixed(Option<f64>),
    /// Online over `m` observations of each kind, starting from the device's `R`.
    Online {
        /// Observations per moving average.
        m: usize,
    },
}

/// FD-Buffer's typed options; what depends on the device (`R`, the cluster size) is
/// resolved in [`FdBufferSpec::options`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FdBufferSpec {
    /// Window rule.
    pub window: WindowSpec,
    /// Two-Stack group size.
    pub group: GroupSpec,
    /// The advisor counts misses and write-backs per access (`count=io`) instead of
    /// Eq. (3).
    pub io_count: bool,
    /// The advisor charges moves of `M_c` (`moves=paid` or `cusum`).
    pub paid_moves: bool,
    /// Moves are paid out of the savings since the last move (`moves=cusum`).
    pub cusum_moves: bool,
    /// The clustered-cost model reads `k` off the recent writes across windows
    /// (`span=recent`) instead of the last window's.
    pub recent_span: bool,
    /// The clustered-cost model's calibration of `k` (`calibrate=`).
    pub calibrate: Calibrate,
    /// `R`.
    pub r: RSpec,
    /// Present conditions.
    pub present_conditions: bool,
    /// Inner policy of both pools.
    pub inner: OrderKind,
    /// `None`: off; else drain (`false`) or batch (`true`) with an optional cluster size.
    pub clustering: Option<(bool, Option<u64>)>,
    /// Victim cluster rule.
    pub victim: ClusterVictim,
    /// Initial `M_c / M`.
    pub init: f64,
    /// Table 5 records.
    pub track: bool,
    /// Wall-clock timing of the advisor.
    pub timed: bool,
    /// The clustered-cost variant, with `s` if given.
    pub clustered_cost: Option<Option<f64>>,
}

/// Parses FD-Buffer's options; contradictions (`window` with `q`, `m` without
/// `r=online`, `cluster`/`victim` without clustering) are refused here.
pub fn parse(o: &Options) -> Result<Box<dyn PolicyFactory>, ConfigError> {
    FdBufferSpec::parse(o).map(|s| Box::new(s) as Box<dyn PolicyFactory>)
}

impl FdBufferSpec {
    /// Reads validated options.
    pub fn parse(o: &Options) -> Result<Self, ConfigError> {
        let variant = o.word("cost") == Some("clustered");
        let window = match o.f64("q") {
            Some(_) if o.given("window") => {
                return Err(o.invalid("give either window or q, not both"))
            }
            Some(q) if q <= 0.0 => return Err(o.invalid(format!("q={q} must be positive"))),
            Some(q) => WindowSpec::Overhead(q),
            None => WindowSpec::Refs(o.u64("window").unwrap_or(5_000)),
        };
        let r = match o.word("r") {
            Some(_) => RSpec::Online {
                m: o.usize("m").unwrap_or(32_768),
            },
            None if o.given("m") => return Err(o.invalid("m needs r=online")),
            None => RSpec::Fixed(o.f64("r")),
        };
        let clustering = match o.word("clustering") {
            Some("drain") => Some(false),
            Some("batch") => Some(true),
            _ => None,
        };
        if clustering.is_none() && (o.given("cluster") || o.given("victim")) {
            return Err(o.invalid("cluster/victim need clustering=drain or clustering=batch"));
        }
        let clustered_cost = match o.word("cost") {
            Some("clustered") if clustering.is_none() => {
                return Err(o.invalid("cost=clustered needs clustering=drain or clustering=batch"))
            }
            Some("clustered") => Some(o.f64("seq")),
            _ if o.given("seq") => return Err(o.invalid("seq needs cost=clustered")),
            _ => None,
        };
        if let Some(Some(s)) = clustered_cost {
            if s <= 0.0 {
                return Err(o.invalid(format!("seq={s} must be positive")));
            }
        }
        let io_count = match o.word("count") {
            Some(w) => w == "io",
            None => variant,
        };
        let (paid_moves, cusum_moves) = match o.word("moves") {
            Some(w @ ("paid" | "cusum")) if !io_count => {
                return Err(o.invalid(format!("moves={w} needs count=io")))
            }
            Some(w) => (w != "free", w == "cusum"),
            None => (variant && io_count, variant && io_count),
        };
        let recent_span = match o.word("span") {
            Some(_) if clustered_cost.is_none() => {
                return Err(o.invalid("span needs cost=clustered"))
            }
            Some(w) => w == "recent",
            None => variant,
        };
        let calibrate = match o.word("calibrate") {
            Some(_) if clustered_cost.is_none() => {
                return Err(o.invalid("calibrate needs cost=clustered"))
            }
            Some(w) => Calibrate::from_word(w)
                .ok_or_else(|| o.invalid(format!("calibrate={w}: none or drained")))?,
            None if variant => VARIANT_CALIBRATE,
            None => Calibrate::None,
        };
        Ok(Self {
            window,
            recent_span,
            calibrate,
            group: match (o.given("group"), o.usize("groups")) {
                (true, Some(_)) => return Err(o.invalid("give either group or groups, not both")),
                (_, Some(n)) => GroupSpec::PerStack(n),
                (false, None) if variant => GroupSpec::PerStack(VARIANT_GROUPS),
                _ => GroupSpec::Pages(o.usize("group").unwrap_or(64)),
            },
            paid_moves,
            cusum_moves,
            io_count,
            r,
            present_conditions: o.bool("pr").unwrap_or(true),
            inner: match o.word("inner") {
                Some("fifo") => OrderKind::Fifo,
                _ => OrderKind::Lru,
            },
            clustering: clustering.map(|batch| (batch, o.u64("cluster"))),
            victim: match o.word("victim") {
                Some("order") => ClusterVictim::OrderVictim,
                Some(_) if variant && !o.given("victim") => ClusterVictim::OrderVictim,
                _ => ClusterVictim::Priority,
            },
            init: o.f64("init").unwrap_or(0.5),
            track: o.bool("track").unwrap_or(false),
            timed: o
                .bool("timed")
                .unwrap_or(matches!(window, WindowSpec::Refs(_))),
            clustered_cost,
        })
    }

    /// The options for `ctx`, without the advisor's clock.
    pub fn options(&self, ctx: &PolicyContext<'_>) -> FdBufferOptions {
        let facts_r = ctx.facts.r();
        let mut o = FdBufferOptions::default()
            .group_size(self.group.pages(ctx.frames))
            .io_count(self.io_count)
            .paid_moves(self.paid_moves)
            .cusum_moves(self.cusum_moves)
            .recent_span(self.recent_span)
            .calibrate(self.calibrate)
            .present_conditions(self.present_conditions)
            .track_accuracy(self.track)
            .initial_clean_ratio(self.init)
            .read_cost_us(ctx.facts.read_us)
            .inner(self.inner)
            .cluster_victim(self.victim);
        o = match self.window {
            WindowSpec::Refs(n) => o.window_refs(n),
            WindowSpec::Overhead(q) => o.overhead_bound(q, 500, 200_000),
        };
        o = match self.r {
            RSpec::Fixed(r) => o.fixed_r(r.unwrap_or(facts_r)),
            RSpec::Online { m } => o.online_r(m, facts_r),
        };
        if let Some(seq) = self.clustered_cost {
            let facts = ctx.facts;
            let device_seq = facts
                .seq_write_us
                .filter(|_| facts.write_us > 0.0)
                .map(|w| w / facts.write_us);
            o = o.clustered_cost(seq.or(device_seq).unwrap_or(1.0).min(1.0));
        }
        o.clustering(match self.clustering {
            None => Clustering::Off,
            Some((batch, pages)) => {
                let cluster_pages = pages.unwrap_or_else(|| ctx.facts.cluster_pages(ctx.page_size));
                if batch {
                    Clustering::Batch { cluster_pages }
                } else {
                    Clustering::Drain { cluster_pages }
                }
            }
        })
    }
}

impl PolicyFactory for FdBufferSpec {
    fn build(&self, ctx: &PolicyContext<'_>) -> Result<Box<dyn Policy>, ConfigError> {
        let mut o = self.options(ctx);
        if self.timed {
            let t0 = std::time::Instant::now();
            o = o.clock(Arc::new(move || t0.elapsed().as_nanos() as u64));
        }
        Ok(match o.inner {
            OrderKind::Lru => Box::new(FdBuffer::new(ctx.frames, o)?),
            _ => Box::new(FdBuffer::from_options(ctx.frames, o)?),
        })
    }

    /// The naive reference models fixed windows, a fixed `R` and LRU pools.
    fn build_reference(
        &self,
        ctx: &PolicyContext<'_>,
    ) -> Option<Result<Box<dyn Policy>, ConfigError>> {
        let o = self.options(ctx);
        NaiveFdBuffer::models(&o)
            .then(|| NaiveFdBuffer::new(ctx.frames, &o).map(|p| Box::new(p) as Box<dyn Policy>))
    }
}
