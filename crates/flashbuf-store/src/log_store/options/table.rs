//! The log-structured store's option table (the module docs of `super` say how they
//! are read).

use flashbuf_core::config::{OptKind, OptionSpec};

const SECONDS: OptKind = OptKind::Float { min: 0.0, max: 1e9 };
const COUNT: OptKind = OptKind::UInt {
    min: 1,
    max: u32::MAX as u64,
};
const SEGMENTS: OptKind = OptKind::UInt {
    min: 0,
    max: u32::MAX as u64,
};
const BYTES: OptKind = OptKind::Bytes {
    min: 1,
    max: 1 << 50,
};

/// The log-structured store's options (the order is the order error messages list them in).
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "segment",
        kind: BYTES,
        default: Some("8MiB"),
        help: "segment size (paper §4.1: NILFS2's 8 MB segments)",
    },
    OptionSpec {
        key: "cleaner",
        kind: OptKind::Choice(&["greedy", "cost-benefit", "oldest", "sepbit"]),
        default: Some("greedy"),
        help: "victim rule: fewest live blocks, Sprite LFS cost-benefit, NILFS2's oldest \
               first, or SepBIT (placement by inferred lifetime and its selection)",
    },
    OptionSpec {
        key: "ci",
        kind: SECONDS,
        default: Some("5"),
        help: "cleaning interval CI (paper §4.6): seconds between background passes \
               (caller writes with clock=writes)",
    },
    OptionSpec {
        key: "nspc",
        kind: COUNT,
        default: Some("2"),
        help: "segments per clean NSPC (paper §4.6): segments a background pass cleans",
    },
    OptionSpec {
        key: "pp",
        kind: SECONDS,
        default: Some("1"),
        help: "protection period PP (paper §4.6): segments modified more recently are not \
               cleaned (seconds; caller writes with clock=writes)",
    },
    OptionSpec {
        key: "min_free",
        kind: SEGMENTS,
        default: None,
        help: "background cleaning starts below this many free segments (default 10% of them)",
    },
    OptionSpec {
        key: "max_free",
        kind: SEGMENTS,
        default: None,
        help: "background cleaning stops above this many free segments (default 20% of them)",
    },
    OptionSpec {
        key: "background",
        kind: OptKind::Bool,
        default: Some("true"),
        help: "whether background cleaning runs (foreground cleaning always does)",
    },
    OptionSpec {
        key: "cleaner_queue",
        kind: OptKind::Choice(&["background", "main"]),
        default: Some("background"),
        help: "where background passes issue their requests: on the device's background \
               queue when it has one (sim: devices; their time overlaps the caller's, the \
               foreground waits only for passes it depends on), or on the main queue (their \
               time adds to the caller's); devices without a queue always use the main one",
    },
    OptionSpec {
        key: "clock",
        kind: OptKind::Choice(&["device", "wall", "writes"]),
        default: None,
        help: "time base of ci, pp and segment ages (default: device on sim: and cost \
               devices, wall on files, writes otherwise)",
    },
    OptionSpec {
        key: "size",
        kind: BYTES,
        default: None,
        help: "bytes the store occupies (default: the device's length — a simulated \
               device's capacity — else the data divided by fill)",
    },
    OptionSpec {
        key: "pages",
        kind: OptKind::UInt {
            min: 1,
            max: 1 << 40,
        },
        default: None,
        help: "page ids the store accepts, at least (default: the run's data, else what the \
               space holds)",
    },
    OptionSpec {
        key: "fill",
        kind: OptKind::Float {
            min: 0.01,
            max: 1.0,
        },
        default: Some("0.8"),
        help: "on an empty growable device without size: the data fills this fraction of \
               the space",
    },
    OptionSpec {
        key: "checkpoint",
        kind: COUNT,
        default: None,
        help: "segments filled between checkpoints (default 8, more if a checkpoint would \
               cost over 2% of the writes in between)",
    },
    OptionSpec {
        key: "prefill",
        kind: OptKind::Bool,
        default: Some("false"),
        help: "write every page of the run's data once before the run (the papers' loaded \
               databases)",
    },
    OptionSpec {
        key: "align",
        kind: BYTES,
        default: Some("4MiB"),
        help: "segments start at multiples of this (line them up with erase blocks)",
    },
    OptionSpec {
        key: "segment_pages",
        kind: OptKind::UInt {
            min: 1,
            max: 1 << 24,
        },
        default: None,
        help: "segment size in pages, scaling with the page size (instead of segment)",
    },
    OptionSpec {
        key: "segments",
        kind: OptKind::UInt {
            min: 1,
            max: u32::MAX as u64,
        },
        default: None,
        help: "the store's space in segments, at least (the run's data at fill may need \
               more; instead of size)",
    },
    OptionSpec {
        key: "align_pages",
        kind: OptKind::UInt {
            min: 1,
            max: 1 << 20,
        },
        default: None,
        help: "alignment in pages, scaling with the page size (instead of align)",
    },
];
