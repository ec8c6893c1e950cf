//! The policy registration table ([`POLICIES`]): one entry per policy, with its name, its
//! typed options (defaults, ranges, one-line help), a parser into a typed configuration
//! and what the test suites need (naive reference, golden specs).
//!
//! Two phases (REGISTRY.md, design.md §12):
//! 1. **parse** ([`PolicyEntry::parse_spec`]): the spec's options are checked against the
//!    entry's schema ([`Options::validate`]) and turned into a typed configuration, a
//!    [`PolicyFactory`]; cheap, no I/O, nothing derived from the device yet. The lab runs
//!    it for every cell of a matrix before the first run, so a typo fails at once.
//! 2. **build** ([`PolicyFactory::build`]) with the run's [`PolicyContext`]: frames, page
//!    size, the device's facts (values derived from the device, such as FD-Buffer's `R`
//!    or the cluster size, are resolved here), seed, and for offline policies the trace.
//!
//! The write-clustering options every online policy takes (`clustering`, `cluster`,
//! `choice`) are declared once ([`CLUSTERING_OPTIONS`]) and appended to an entry's own
//! options with [`with_clustering`]. The pass-through `none` of the lab (no pool at all)
//! is not a policy and is not in this table.
//!
//! Suites iterate the table: the golden tests replay every entry's [`PolicyEntry::golden`]
//! specs, the differential test compares every entry that has a naive reference
//! ([`PolicyEntry::reference`], built by [`PolicyFactory::build_reference`]) with it, the
//! schema test checks every entry's options, and the benches time every entry.

use super::clustering::{with_clustering, CLUSTERING_OPTIONS};
use super::{
    arc, casa, cfdc, cflru, clock, clock_sweep, fd_buffer, lru, offline, s3_fifo, two_q, Policy,
};
use flashbuf_core::config::{self, OptionSpec, Options, Spec};
use flashbuf_core::{ConfigError, DeviceFacts};
use std::fmt;

/// What a policy is built with: the run's context.
#[derive(Debug, Clone, Copy)]
pub struct PolicyContext<'a> {
    /// Frames of the pool.
    pub frames: usize,
    /// Page size in bytes (cluster sizes derived from the erase block use it).
    pub page_size: usize,
    /// What the device is like (read and write latencies, erase block).
    pub facts: DeviceFacts,
    /// Seed of the run (for policies that draw random numbers; none does yet).
    pub seed: u64,
    /// The whole trace, `(is_write, page)` in order, for offline policies
    /// ([`PolicyEntry::needs_trace`]); `None` otherwise.
    pub trace: Option<&'a [(bool, u64)]>,
}

impl<'a> PolicyContext<'a> {
    /// A context of `frames` frames of `page_size` bytes on a device with `facts`, seed 0,
    /// no trace.
    pub fn new(frames: usize, page_size: usize, facts: DeviceFacts) -> Self {
        Self {
            frames,
            page_size,
            facts,
            seed: 0,
            trace: None,
        }
    }

    /// The same context with the trace an offline policy needs.
    pub fn with_trace(self, trace: &'a [(bool, u64)]) -> Self {
        Self {
            trace: Some(trace),
            ..self
        }
    }

    /// The same context with another seed.
    pub fn with_seed(self, seed: u64) -> Self {
        Self { seed, ..self }
    }

    /// The trace, or an error naming `policy` as an offline policy.
    pub fn require_trace(&self, policy: &str) -> Result<&'a [(bool, u64)], ConfigError> {
        self.trace.ok_or_else(|| {
            ConfigError::invalid(
                policy,
                "is an offline policy: it needs the whole trace in advance (the lab's replay \
                 loads it first)",
            )
        })
    }
}

/// A policy's typed configuration, parsed from its options: builds the policy (and its
/// naive reference) for a run.
pub trait PolicyFactory: fmt::Debug + Send + Sync {
    /// Builds the policy for `ctx`.
    fn build(&self, ctx: &PolicyContext<'_>) -> Result<Box<dyn Policy>, ConfigError>;

    /// Builds the naive O(n) reference that must make the same decisions, if the entry
    /// has one and it models this configuration (`None` otherwise).
    fn build_reference(
        &self,
        _ctx: &PolicyContext<'_>,
    ) -> Option<Result<Box<dyn Policy>, ConfigError>> {
        None
    }
}

/// One registered policy.
pub struct PolicyEntry {
    /// The name (`lru`, `fd-buffer`, ...).
    pub name: &'static str,
    /// One line: what the policy is (shown by `--help` and `list`).
    pub help: &'static str,
    /// Every option the policy takes, the common clustering options included where they
    /// apply.
    pub options: &'static [OptionSpec],
    /// Whether the policy needs the whole trace in advance ([`PolicyContext::trace`]).
    pub needs_trace: bool,
    /// The naive O(n) reference the differential tests compare it with (the type's
    /// path under `flashbuf_pool::policy`), built by [`PolicyFactory::build_reference`].
    pub reference: Option<&'static str>,
    /// Specs the golden suites replay, the bare name first: each needs a row in the
    /// golden file of every suite (`tests/golden/policies.txt` of the pool and the lab).
    pub golden: &'static [&'static str],
    /// Parses validated options into the typed configuration (no I/O).
    pub parse: fn(&Options) -> Result<Box<dyn PolicyFactory>, ConfigError>,
}

impl fmt::Debug for PolicyEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicyEntry")
            .field("name", &self.name)
            .field(
                "options",
                &self.options.iter().map(|o| o.key).collect::<Vec<_>>(),
            )
            .field("needs_trace", &self.needs_trace)
            .field("reference", &self.reference)
            .finish_non_exhaustive()
    }
}

impl PolicyEntry {
    /// Checks `spec` (whose name is this entry's) against the options and parses it.
    pub fn parse_spec(&self, spec: &Spec) -> Result<Box<dyn PolicyFactory>, ConfigError> {
        if let Some(arg) = &spec.arg {
            return Err(ConfigError::Argument {
                component: spec.name.clone(),
                detail: format!("takes no argument (got '{arg}')"),
            });
        }
        let o = Options::validate(spec, self.options)?;
        (self.parse)(&o)
    }

    /// Help lines: the entry, then one per option.
    pub fn help_lines(&self) -> Vec<String> {
        let mut v = vec![format!("{}: {}", self.name, self.help)];
        v.extend(self.options.iter().map(|o| format!("  {}", o.help_line())));
        v
    }
}

/// The policies (in the order `list` shows them).
pub const POLICIES: &[PolicyEntry] = &[
    PolicyEntry {
        name: "lru",
        help: "least recently used (the baseline of every paper)",
        options: CLUSTERING_OPTIONS,
        needs_trace: false,
        reference: Some("reference::NaiveLru"),
        golden: &["lru", "lru:clustering=batch", "lru:clustering=drain"],
        parse: lru::parse,
    },
    PolicyEntry {
        name: "cflru",
        help: "clean-first LRU (Park et al., CASES 2006)",
        options: &with_clustering::<{ cflru::OPTIONS.len() + CLUSTERING_OPTIONS.len() }>(
            cflru::OPTIONS,
        ),
        needs_trace: false,
        reference: Some("reference::NaiveCflru"),
        golden: &["cflru", "cflru:clustering=batch"],
        parse: cflru::parse,
    },
    PolicyEntry {
        name: "cfdc",
        help: "clean-first dirty-clustered (Ou, Härder, Jin, DaMoN 2009)",
        options: &with_clustering::<{ cfdc::OPTIONS.len() + CLUSTERING_OPTIONS.len() }>(
            cfdc::OPTIONS,
        ),
        needs_trace: false,
        reference: Some("reference::NaiveCfdc"),
        golden: &["cfdc"],
        parse: cfdc::parse,
    },
    PolicyEntry {
        name: "casa",
        help: "cost-aware self-adaptive (Ou, Härder, IDEAS 2010)",
        options: &with_clustering::<{ casa::OPTIONS.len() + CLUSTERING_OPTIONS.len() }>(
            casa::OPTIONS,
        ),
        needs_trace: false,
        reference: Some("reference::NaiveCasa"),
        golden: &["casa", "casa:clustering=batch,choice=metric"],
        parse: casa::parse,
    },
    PolicyEntry {
        name: "fd-buffer",
        help: "cost-based adaptive clean and dirty pools (On et al., IEEE TC 2014)",
        options: fd_buffer::spec::OPTIONS,
        needs_trace: false,
        reference: Some("fd_buffer::naive::NaiveFdBuffer"),
        golden: &[
            "fd-buffer",
            "fd-buffer:clustering=off",
            "fd-buffer:r=136",
            "fd-buffer:r=136,clustering=off",
            "fd-buffer:r=136,clustering=batch,victim=order",
            "fd-buffer:r=136,cost=clustered,seq=0.05",
        ],
        parse: fd_buffer::spec::parse,
    },
    PolicyEntry {
        name: "belady",
        help: "Belady's MIN, offline: evicts the page used farthest in the future",
        options: &[],
        needs_trace: true,
        reference: None,
        golden: &["belady"],
        parse: offline::spec::parse_belady,
    },
    PolicyEntry {
        name: "offline",
        help: "offline write-aware rules (Belady, clean-beyond, cost-aware, best of them)",
        options: offline::spec::OPTIONS,
        needs_trace: true,
        reference: None,
        golden: &["offline", "offline:rule=cost-aware,read=1,write=10"],
        parse: offline::spec::parse_offline,
    },
    PolicyEntry {
        name: "clock",
        help: "CLOCK, second chance: one reference bit per frame and a hand (Corbató 1968)",
        options: &with_clustering::<{ clock::OPTIONS.len() + CLUSTERING_OPTIONS.len() }>(
            clock::OPTIONS,
        ),
        needs_trace: false,
        reference: Some("reference::NaiveClock"),
        golden: &["clock", "clock:init_ref=true"],
        parse: clock::parse,
    },
    PolicyEntry {
        name: "clock-sweep",
        help: "PostgreSQL's clock sweep: usage counts 0..5 and a hand (freelist.c)",
        options: &with_clustering::<{ clock_sweep::OPTIONS.len() + CLUSTERING_OPTIONS.len() }>(
            clock_sweep::OPTIONS,
        ),
        needs_trace: false,
        reference: Some("reference::NaiveClockSweep"),
        golden: &["clock-sweep"],
        parse: clock_sweep::parse,
    },
    PolicyEntry {
        name: "arc",
        help: "adaptive replacement cache: T1, T2, ghosts B1, B2, adaptive p (Megiddo, Modha, FAST 2003)",
        options: CLUSTERING_OPTIONS,
        needs_trace: false,
        reference: Some("reference::NaiveArc"),
        golden: &["arc"],
        parse: arc::parse,
    },
    PolicyEntry {
        name: "2q",
        help: "2Q, full version: A1in FIFO, A1out ghosts, Am LRU (Johnson, Shasha, VLDB 1994)",
        options: &with_clustering::<{ two_q::OPTIONS.len() + CLUSTERING_OPTIONS.len() }>(
            two_q::OPTIONS,
        ),
        needs_trace: false,
        reference: Some("reference::NaiveTwoQ"),
        golden: &["2q"],
        parse: two_q::parse,
    },
    PolicyEntry {
        name: "s3-fifo",
        help: "S3-FIFO: small FIFO 10%, main FIFO with 2-bit CLOCK, ghost FIFO (Yang et al., SOSP 2023)",
        options: &with_clustering::<{ s3_fifo::OPTIONS.len() + CLUSTERING_OPTIONS.len() }>(
            s3_fifo::OPTIONS,
        ),
        needs_trace: false,
        reference: Some("reference::NaiveS3Fifo"),
        golden: &["s3-fifo", "s3-fifo:fill_main=false"],
        parse: s3_fifo::parse,
    },
];

/// The entry named `name`; the error lists the valid names.
pub fn lookup(name: &str) -> Result<&'static PolicyEntry, ConfigError> {
    config::lookup("policy", POLICIES, name, |e| e.name)
}

/// Looks `spec` up and parses it: the entry and the typed configuration (no I/O).
pub fn parse(spec: &Spec) -> Result<(&'static PolicyEntry, Box<dyn PolicyFactory>), ConfigError> {
    let entry = lookup(&spec.name)?;
    Ok((entry, entry.parse_spec(spec)?))
}

/// Parses `text` (`NAME[:key=value,...]`) and builds the policy for `ctx`.
///
/// ```
/// use flashbuf_core::DeviceFacts;
/// use flashbuf_pool::policy::registry::{build_named, PolicyContext};
/// let ctx = PolicyContext::new(64, 4096, DeviceFacts::default());
/// let p = build_named("cflru:window=0.25,clustering=drain", &ctx).unwrap();
/// assert_eq!((p.name(), p.frames_count()), ("clustered-drain", 64));
/// let e = build_named("cflru:windw=0.25", &ctx).err().unwrap();
/// assert!(e.to_string().contains("unknown option 'windw'"));
/// ```
pub fn build_named(text: &str, ctx: &PolicyContext<'_>) -> Result<Box<dyn Policy>, ConfigError> {
    let spec = Spec::parse(text, |_| false)?;
    parse(&spec)?.1.build(ctx)
}
