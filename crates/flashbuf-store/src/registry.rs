//! The store registration table (issue 10, design.md §12): one [`StoreEntry`] per store,
//! in [`STORES`]. Everything that builds a store by name iterates it — the lab's replay
//! and compare, `flashbuf check`/`torture`, and every crash suite of the test kit
//! (`flashbuf-testkit`): a store listed here is built, replayed, golden-tested and
//! crash-tested with no other change.
//!
//! Two phases, as for every kind:
//! 1. [`parse`]: a spec (`stable-buffer:recognition=ondemand,size=2MiB`) is looked up,
//!    its options checked against the entry's typed schema ([`Options::validate`]) and
//!    turned into a typed configuration (a [`StoreFactory`]) — cheaply, without I/O, so a
//!    whole matrix is checked before anything runs ([`StoreFactory::check`] adds what the
//!    page size decides).
//! 2. [`StoreFactory::create`] formats a device, [`StoreFactory::open`] recovers one, with
//!    the run's [`StoreContext`]. What a store needs from the crates above (StableBuffer's
//!    pattern costs come from a device profile the lab measures) comes in through the
//!    context, never through a dependency.

use crate::icl::options as icl_options;
use crate::log_store::options as log_store_options;
use crate::stable_buffer::options as stable_buffer_options;
use crate::{direct, PageStore, StoreError};
use flashbuf_core::config::{self, ConfigError, OptKind, OptionSpec, Options, Spec};
use flashbuf_core::DataMode;
use flashbuf_device::{Device, DeviceProfile};
use std::fmt;

/// Measures the uFLIP-style profile of a simulated device named `sim:PROFILE[:opts]`
/// (for the run's page size and seed); the error says why it could not.
pub type ProfileMeasurer<'a> = &'a (dyn Fn(&str) -> Result<DeviceProfile, String> + 'a);

/// What a store is built with, beyond its own options.
#[derive(Clone, Copy)]
pub struct StoreContext<'a> {
    /// Page size in bytes.
    pub page_size: usize,
    /// Seed of the run.
    pub seed: u64,
    /// Whole pages or metadata only ([`StoreEntry::metadata_only`] says which stores take
    /// the second; [`ParsedStore::create`] refuses the others).
    pub data: DataMode,
    /// Dense pages the run's data spans (a capacity hint; 0 if unknown). Stores that size
    /// themselves by the data ([`StoreFactory::wants_data_pages`]) read it.
    pub data_pages: u64,
    /// Measures a simulated device's profile (the lab passes its profiler); `None` refuses
    /// a configuration that needs one, saying so.
    pub measure_profile: Option<ProfileMeasurer<'a>>,
}

impl<'a> StoreContext<'a> {
    /// A context for `page_size` with seed 0 and no profiler (the crash suites, `check`).
    pub fn new(page_size: usize) -> Self {
        Self {
            page_size,
            seed: 0,
            data: DataMode::Bytes,
            data_pages: 0,
            measure_profile: None,
        }
    }
}

impl fmt::Debug for StoreContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreContext")
            .field("page_size", &self.page_size)
            .field("seed", &self.seed)
            .field("data", &self.data)
            .field("data_pages", &self.data_pages)
            .field("measure_profile", &self.measure_profile.is_some())
            .finish()
    }
}

/// A store's typed configuration, parsed from its options: builds the store on a device.
pub trait StoreFactory: fmt::Debug + Send + Sync {
    /// Formats `device` as a fresh, empty store (whatever it held is lost).
    fn create(
        &self,
        device: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError>;
    /// Opens and recovers the store on `device`; refuses another kind, page size or format.
    fn open(
        &self,
        device: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError>;
    /// Checks what the page size decides (slot counts, alignment), without a device and
    /// without I/O; values derived from the device are checked at `create`.
    fn check(&self, page_size: usize) -> Result<(), ConfigError>;
    /// Whether `create` sizes the store by the run's data ([`StoreContext::data_pages`]):
    /// the lab then scans the trace before building it. `false` by default.
    fn wants_data_pages(&self) -> bool {
        false
    }
}

/// A small configuration of a store for the crash suites, as options over the entry's
/// defaults (sizes in pages or slots, so that they scale with the page size and crash
/// images stay small).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrashVariant {
    /// The name the suites report it under (`stable-buffer-incremental`).
    pub label: &'static str,
    /// Its options (`recognition=incremental,slots=16,grow_pages=8`).
    pub options: &'static str,
}

/// One store of the table.
#[derive(Debug, Clone, Copy)]
pub struct StoreEntry {
    /// Its name (`direct`, `stable-buffer`), also the kind in its superblock.
    pub name: &'static str,
    /// One line: what it is (for `--help` and listings).
    pub help: &'static str,
    /// Its options, typed, with defaults and help.
    pub options: &'static [OptionSpec],
    /// Validated options to a typed configuration; no I/O.
    pub parse: fn(&Options) -> Result<Box<dyn StoreFactory>, ConfigError>,
    /// Whether the store hides torn writes entirely: after any crash a page is old or new,
    /// never reported corrupt (StableBuffer: a torn staged copy fails its slot checksum and
    /// recovery falls back to the previous valid copy). The crash suites then assert that
    /// no page ever comes back corrupt; for other stores they assert that torn unsynced
    /// writes are seen (and reported as corrupt, never returned).
    pub masks_torn_writes: bool,
    /// The configurations every crash suite runs (at least one).
    pub crash_variants: &'static [CrashVariant],
    /// Whether the store runs with metadata-only pages (`--data none`).
    pub metadata_only: MetadataOnly,
}

/// Whether a store runs in [`DataMode::Metadata`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataOnly {
    /// It does, deciding exactly as with whole pages.
    Supported,
    /// It does not; the text says why (what of a page's bytes its decisions or its format
    /// need).
    Unsupported(&'static str),
}

impl StoreEntry {
    /// The spec text of `variant` (`stable-buffer:recognition=incremental,...`).
    pub fn variant_spec(&self, variant: &CrashVariant) -> String {
        if variant.options.is_empty() {
            self.name.to_string()
        } else {
            format!("{}:{}", self.name, variant.options)
        }
    }
}

/// Every store. Add a store here (one entry) and it joins the lab and every suite.
pub const STORES: &[StoreEntry] = &[
    StoreEntry {
        name: direct::KIND,
        help: "in-place writes at data offset + page id × page size (the papers' baseline)",
        options: direct::OPTIONS,
        parse: direct::parse_options,
        masks_torn_writes: false,
        crash_variants: &[CrashVariant {
            label: "direct",
            options: "grow_pages=8",
        }],
        metadata_only: MetadataOnly::Supported,
    },
    StoreEntry {
        name: crate::stable_buffer::KIND,
        help: "StableBuffer (CIKM 2010): pages staged in a small area, flushed home in \
               efficient write patterns",
        options: stable_buffer_options::OPTIONS,
        parse: stable_buffer_options::parse_options,
        masks_torn_writes: true,
        // 16 slots, so that crash points fall into flushes often; passive flushing (the
        // background flusher has its own crash suite in `tests/stable_buffer_crash.rs`).
        crash_variants: &[
            CrashVariant {
                label: "stable-buffer",
                options: "recognition=ondemand,slots=16,grow_pages=8,align_pages=1",
            },
            CrashVariant {
                label: "stable-buffer-incremental",
                options: "recognition=incremental,slots=16,grow_pages=8,align_pages=1",
            },
        ],
        metadata_only: MetadataOnly::Supported,
    },
    StoreEntry {
        name: crate::icl::KIND,
        help: "ICL (write-optimized layer): only the changed bytes of a page, as logs in a \
               write buffer and a log space, copied forward so a read needs one log page; \
               merged home at half a page",
        options: icl_options::OPTIONS,
        parse: icl_options::parse_options,
        masks_torn_writes: false,
        // A one-page WOB and a few log pages, so that crash points fall into flushes,
        // copy-forwards, merges at the threshold and log-space merges (with rounds of
        // two double-write slots) often.
        crash_variants: &[CrashVariant {
            label: "icl",
            options: "wob_pages=1,log_pages=6,dw_pages=2,grow_pages=8",
        }],
        metadata_only: MetadataOnly::Supported,
    },
    StoreEntry {
        name: crate::log_store::KIND,
        help: "log-structured (NIPU, DEXA 2009): pages appended to segments out of place, a \
               cleaner (greedy, cost-benefit, oldest, SepBIT), checkpoints and roll-forward",
        options: log_store_options::OPTIONS,
        parse: log_store_options::parse_options,
        masks_torn_writes: true,
        // Segments of 8 blocks in a space of 40, on the writes clock with eager background
        // cleaning and a checkpoint every two segments, so that crash points fall into log
        // writes, cleaning and checkpoints often; one log (greedy) and SepBIT's six.
        crash_variants: &[
            CrashVariant {
                label: "log-structured",
                options: "segment_pages=8,segments=40,pages=256,align_pages=1,clock=writes,\
                          ci=4,pp=2,min_free=28,max_free=32,checkpoint=2",
            },
            CrashVariant {
                label: "log-structured-sepbit",
                options: "cleaner=sepbit,segment_pages=8,segments=40,pages=256,align_pages=1,\
                          clock=writes,ci=4,pp=2,min_free=28,max_free=32,checkpoint=2",
            },
        ],
        metadata_only: MetadataOnly::Supported,
    },
];

/// A spec checked against the table: its entry and its typed configuration.
#[derive(Debug)]
pub struct ParsedStore {
    /// The table entry.
    pub entry: &'static StoreEntry,
    /// The typed configuration.
    pub factory: Box<dyn StoreFactory>,
}

/// The entry named `name`; the error lists the valid names.
pub fn lookup(name: &str) -> Result<&'static StoreEntry, ConfigError> {
    config::lookup("store", STORES, name, |e| e.name)
}

impl ParsedStore {
    /// Refuses [`DataMode::Metadata`] for a store that does not take it, saying why.
    pub fn check_data(&self, data: DataMode) -> Result<(), ConfigError> {
        match (data, self.entry.metadata_only) {
            (DataMode::Metadata, MetadataOnly::Unsupported(why)) => Err(ConfigError::Invalid {
                component: self.entry.name.to_string(),
                detail: format!("--data none is not supported: {why}"),
            }),
            _ => Ok(()),
        }
    }

    /// [`StoreFactory::create`] after [`ParsedStore::check_data`].
    pub fn create(
        &self,
        device: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        self.check_data(ctx.data)?;
        self.factory.create(device, ctx)
    }

    /// [`StoreFactory::open`] after [`ParsedStore::check_data`].
    pub fn open(
        &self,
        device: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        self.check_data(ctx.data)?;
        self.factory.open(device, ctx)
    }
}

/// Looks `spec` up, validates its options and parses them (no I/O). Stores take no
/// positional argument.
pub fn parse(spec: &Spec) -> Result<ParsedStore, ConfigError> {
    let entry = lookup(&spec.name)?;
    if let Some(arg) = &spec.arg {
        return Err(ConfigError::Argument {
            component: spec.name.clone(),
            detail: format!("a store takes no argument (got '{arg}'); options go as key=value"),
        });
    }
    let opts = Options::validate(spec, entry.options)?;
    let factory = (entry.parse)(&opts)?;
    Ok(ParsedStore { entry, factory })
}

/// [`parse`] of spec text (`direct`, `stable-buffer:recognition=ondemand`).
pub fn parse_text(text: &str) -> Result<ParsedStore, ConfigError> {
    parse(&Spec::parse(text, |_| false)?)
}

/// The names of the stores, in table order.
pub fn names() -> Vec<&'static str> {
    STORES.iter().map(|e| e.name).collect()
}

/// A growth step: bytes, or whole pages (scales with the page size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrowStep {
    /// At least this many bytes (rounded up to whole pages by the store).
    Bytes(u64),
    /// This many pages.
    Pages(u64),
}

impl GrowStep {
    /// The step in bytes for `page_size`.
    pub fn bytes(self, page_size: usize) -> u64 {
        match self {
            GrowStep::Bytes(b) => b,
            GrowStep::Pages(p) => p.saturating_mul(page_size as u64),
        }
    }

    /// The step from the options [`GROW`] and [`GROW_PAGES`] (giving both is an error).
    pub fn from_options(o: &Options) -> Result<Self, ConfigError> {
        match (o.given("grow"), o.u64("grow_pages")) {
            (true, Some(_)) => Err(o.invalid("give grow (bytes) or grow_pages, not both")),
            (_, Some(p)) => Ok(GrowStep::Pages(p)),
            (_, None) => Ok(GrowStep::Bytes(o.bytes("grow").unwrap_or(64 << 20))),
        }
    }
}

/// The growth step option in bytes, shared by the stores that grow their device.
pub const GROW: OptionSpec = OptionSpec {
    key: "grow",
    kind: OptKind::Bytes {
        min: 1,
        max: 1 << 40,
    },
    default: Some("64MiB"),
    help: "how much the data area grows at a time",
};

/// The growth step option in pages (instead of [`GROW`]).
pub const GROW_PAGES: OptionSpec = OptionSpec {
    key: "grow_pages",
    kind: OptKind::UInt {
        min: 1,
        max: 1 << 28,
    },
    default: None,
    help: "growth step in pages, scaling with the page size (instead of grow)",
};

/// Where a store's areas start: multiples of bytes, or of pages (scales with the page
/// size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Bytes.
    Bytes(u64),
    /// Pages.
    Pages(u64),
}

impl Align {
    /// Bytes for `page_size`.
    pub fn bytes(self, page_size: usize) -> u64 {
        match self {
            Align::Bytes(b) => b,
            Align::Pages(n) => n.saturating_mul(page_size as u64),
        }
    }

    /// The alignment from the options `align` (bytes, default 4 MiB) and `align_pages`
    /// (giving both is an error).
    pub fn from_options(o: &Options) -> Result<Self, ConfigError> {
        match (o.given("align"), o.u64("align_pages")) {
            (true, Some(_)) => Err(o.invalid("give align (bytes) or align_pages, not both")),
            (_, Some(n)) => Ok(Align::Pages(n)),
            (_, None) => Ok(Align::Bytes(o.bytes("align").unwrap_or(4 << 20))),
        }
    }
}

/// A [`StoreError::Invalid`] (a configuration the store refuses) as a [`ConfigError`]
/// about `component`.
pub(crate) fn invalid(component: &str, e: StoreError) -> ConfigError {
    match e {
        StoreError::Invalid(m) => ConfigError::invalid(component, m),
        other => ConfigError::invalid(component, other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_has_a_valid_schema_help_and_crash_variants() {
        let mut labels = Vec::new();
        for e in STORES {
            Options::check_schema(e.options).unwrap_or_else(|m| panic!("{}: {m}", e.name));
            assert!(!e.help.is_empty(), "{}", e.name);
            assert!(
                !e.crash_variants.is_empty(),
                "{} has no crash variant",
                e.name
            );
            for v in e.crash_variants {
                let p = parse_text(&e.variant_spec(v)).unwrap();
                assert_eq!(p.entry.name, e.name);
                for ps in [512, 4096, 8192] {
                    p.factory.check(ps).unwrap();
                }
                labels.push(v.label);
            }
            // Defaults parse too.
            parse_text(e.name).unwrap().factory.check(4096).unwrap();
        }
        let n = labels.len();
        labels.sort_unstable();
        labels.dedup();
        assert_eq!(labels.len(), n, "crash variant labels must be unique");
    }

    #[test]
    fn unknown_names_options_and_values_are_refused_naming_the_valid_ones() {
        let e = parse_text("stable-bufer").unwrap_err().to_string();
        assert!(e.contains("valid names: direct, stable-buffer"), "{e}");
        let e = parse_text("direct:grw=1").unwrap_err().to_string();
        assert!(
            e.contains("unknown option 'grw'") && e.contains("grow"),
            "{e}"
        );
        let e = parse_text("direct:grow=8KiB,grow_pages=2")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not both"), "{e}");
        let e = parse_text("stable-buffer:flush=eager")
            .unwrap_err()
            .to_string();
        assert!(e.contains("one of passive, proactive"), "{e}");
        let e = parse(&Spec::parse("direct:x", |_| true).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("takes no argument"), "{e}");
    }

    #[test]
    fn grow_steps_scale_with_the_page_size() {
        assert_eq!(GrowStep::Pages(8).bytes(512), 4096);
        assert_eq!(GrowStep::Bytes(100).bytes(512), 100);
    }
}
