//! FD-Buffer's option schema ([`OPTIONS`]): every key `fd-buffer[:…]` takes, with its
//! type, range and help; `super::spec` turns validated values into a configuration.

use flashbuf_core::config::{OptKind, OptionSpec};

const MAX: u64 = u64::MAX;

/// FD-Buffer's options.
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "window",
        kind: OptKind::UInt { min: 1, max: MAX },
        default: Some("5000"),
        help: "references per workload-estimation window (§4.4)",
    },
    OptionSpec {
        key: "q",
        kind: OptKind::Float { min: 0.0, max: 1e6 },
        default: None,
        help: "instead of window: windows sized so that the advisor's time stays below q \
               of the window's I/O cost, 500 to 200,000 references (> 0)",
    },
    OptionSpec {
        key: "group",
        kind: OptKind::UInt { min: 1, max: MAX },
        default: Some("64"),
        help: "group size of the Two-Stack (1 = exact stacks); with cost=clustered the \
               default is groups=256 instead",
    },
    OptionSpec {
        key: "r",
        kind: OptKind::FloatOr {
            min: 0.0,
            max: 1e12,
            words: &["online"],
        },
        default: None,
        help: "asymmetry R: a fixed number, or online (moving averages of the measured \
               latencies); default fixed, the device's write_us / read_us",
    },
    OptionSpec {
        key: "m",
        kind: OptKind::UInt { min: 1, max: MAX },
        default: Some("32768"),
        help: "with r=online: observations of each kind in the moving averages",
    },
    OptionSpec {
        key: "pr",
        kind: OptKind::Bool,
        default: Some("true"),
        help: "present conditions in the Two-Stack",
    },
    OptionSpec {
        key: "inner",
        kind: OptKind::Choice(&["lru", "fifo"]),
        default: Some("lru"),
        help: "inner policy of both pools",
    },
    OptionSpec {
        key: "clustering",
        kind: OptKind::Choice(&["off", "drain", "batch", "none"]),
        default: Some("drain"),
        help: "write clustering in the dirty pool: drain (the paper's §4.5 and §5.2 setup: \
               one page of the victim cluster per eviction), batch, or off (none = off)",
    },
    OptionSpec {
        key: "cluster",
        kind: OptKind::UInt { min: 1, max: MAX },
        default: None,
        help: "pages per cluster (default: the device's erase block / page size, else 64)",
    },
    OptionSpec {
        key: "victim",
        kind: OptKind::Choice(&["priority", "order"]),
        default: Some("priority"),
        help: "new victim cluster: CFDC's priority (the paper's) or the dirty pool's LRU \
               page's cluster",
    },
    OptionSpec {
        key: "init",
        kind: OptKind::Float { min: 0.0, max: 1.0 },
        default: Some("0.5"),
        help: "the clean pool's target M_c / M before the first advisor run",
    },
    OptionSpec {
        key: "track",
        kind: OptKind::Bool,
        default: Some("false"),
        help: "keep per-window estimated vs measured miss rates (Table 5; err_* figures)",
    },
    OptionSpec {
        key: "cost",
        kind: OptKind::Choice(&["eq3", "clustered"]),
        default: Some("eq3"),
        help: "the advisor's cost model: Eq. (3) as printed, or clustered (a variant, not the \
               paper's: a dirty eviction costs R·(s + (1 − s)/k), k the pages per cluster a \
               dirty pool of that size holds; needs clustering; its defaults are \
               victim=order, count=io, moves=cusum, groups=256, span=recent and \
               calibrate=drained)",
    },
    OptionSpec {
        key: "count",
        kind: OptKind::Choice(&["eq3", "io"]),
        default: None,
        help: "the advisor's cost per access: eq3 (Eq. (3) as printed: P_c·P_d·(1 + P_d^w·R)) \
               or io (Eq. (2) counted: misses (P_c + P_d − 1) + write-backs (writes missing \
               the dirty pool) · R); default eq3, io with cost=clustered",
    },
    OptionSpec {
        key: "moves",
        kind: OptKind::Choice(&["free", "paid", "cusum"]),
        default: None,
        help: "with count=io: paid charges the advisor for moving M_c (Δ write-backs to \
               raise it, Δ reads to lower it), paid out of one window's saving; cusum: out \
               of the savings summed since the last move; default free, cusum with \
               cost=clustered",
    },
    OptionSpec {
        key: "span",
        kind: OptKind::Choice(&["window", "recent"]),
        default: None,
        help: "with cost=clustered: the writes k (pages per drained cluster) is read off — \
               window (the last window's) or recent (the most recent writes back to as many \
               distinct pages as the buffer has frames, across windows); default recent",
    },
    OptionSpec {
        key: "calibrate",
        kind: OptKind::Choice(&["none", "drained"]),
        default: None,
        help: "with cost=clustered: drained scales k(m) each window so that k at the dirty \
               pool's size is the mean size of the clusters it drained; none keeps k as read \
               off the writes; default drained",
    },
    OptionSpec {
        key: "groups",
        kind: OptKind::UInt { min: 1, max: MAX },
        default: None,
        help: "instead of group: at most this many groups per stack, group size = \
               ceil(frames / groups); the default with cost=clustered is 256",
    },
    OptionSpec {
        key: "seq",
        kind: OptKind::Float { min: 0.0, max: 1.0 },
        default: None,
        help: "with cost=clustered: s, the sequential / random page-write cost ratio (> 0; \
               default: the device's, else 1)",
    },
    OptionSpec {
        key: "timed",
        kind: OptKind::Bool,
        default: None,
        help: "time the advisor with the wall clock (advisor_ns); default true with fixed \
               windows, false with q (whose windows would depend on the machine)",
    },
];
