//! StableBuffer in the store registry ([`crate::registry::STORES`]): its options, their
//! typed form ([`StableBufferOptions`]) and the factory that resolves them into a
//! [`StableBufferConfig`] for a device.
//!
//! `stable-buffer:recognition=ondemand|incremental,flush=passive|proactive,size=BYTES|slots=N,
//! profile=sim:NAME|PATH,align=BYTES|align_pages=N,grow=BYTES|grow_pages=N,
//! order=pattern|sorted,min-run=2|theta,flusher=queue|thread`. Defaults: incremental,
//! passive (proactive flushes on the device's background queue when it has one), the profile's focused-area size (paper §2.1 and §4), the device's own profile
//! (a simulated device's is measured through the context; other devices get the paper's
//! Mtron figures), 4 MiB alignment, 64 MiB growth, and the paper's patterns as printed
//! (`order=pattern`, `min-run=2`: see [`super::order`] for the two extra rules).

use super::layout::Layout;
use super::{
    FlushMode, Flusher, MinRun, PatternCosts, Recognition, StableBufferConfig, StableBufferStore,
    WriteOrder, KIND,
};
use crate::registry::{self, GrowStep, StoreContext, StoreFactory, GROW, GROW_PAGES};
use crate::{PageStore, StoreError};
use flashbuf_core::config::{ConfigError, OptKind, OptionSpec, Options};
use flashbuf_device::{Device, DeviceProfile};

/// StableBuffer's options (the order is the order error messages list them in).
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "recognition",
        kind: OptKind::Choice(&["ondemand", "on-demand", "incremental"]),
        default: Some("incremental"),
        help: "pattern recognition (paper §3.1): a sorted scan per flush, or maintained per write",
    },
    OptionSpec {
        key: "flush",
        kind: OptKind::Choice(&["passive", "proactive"]),
        default: Some("passive"),
        help: "flushing (paper §3.2): when the area is full, or by a background thread \
               (needs recognition=incremental)",
    },
    OptionSpec {
        key: "size",
        kind: OptKind::Bytes {
            min: 1,
            max: 1 << 40,
        },
        default: None,
        help: "staging area in bytes (default: the profile's focused-area size)",
    },
    OptionSpec {
        key: "profile",
        kind: OptKind::Text,
        default: None,
        help: "device profile of the pattern costs: sim:NAME (measured) or a profile JSON \
               file (default: a simulated device's own, else the paper's Mtron figures)",
    },
    OptionSpec {
        key: "align",
        kind: OptKind::Bytes {
            min: 1,
            max: 1 << 40,
        },
        default: Some("4MiB"),
        help: "staging and data areas start at multiples of this (a multiple of the page size)",
    },
    GROW,
    OptionSpec {
        key: "slots",
        kind: OptKind::UInt {
            min: 1,
            max: u32::MAX as u64 - 1,
        },
        default: None,
        help: "staging area in slots (pages), scaling with the page size (instead of size)",
    },
    GROW_PAGES,
    OptionSpec {
        key: "align_pages",
        kind: OptKind::UInt {
            min: 1,
            max: 1 << 20,
        },
        default: None,
        help: "alignment of the areas in pages, scaling with the page size (instead of align)",
    },
    OptionSpec {
        key: "order",
        kind: OptKind::Choice(&["pattern", "sorted"]),
        default: Some("pattern"),
        help: "write order of a flush: each pattern's own (sequential ascending, partitioned \
               round-robin, focused as staged; uFLIP, as printed), or sorted by destination \
               for every pattern (an extra rule)",
    },
    OptionSpec {
        key: "min-run",
        kind: OptKind::Choice(&["2", "theta"]),
        default: Some("2"),
        help: "shortest run that makes a partition: 2 pages (any sequential run, as printed) \
               or ceil(theta_seq) pages (an extra rule)",
    },
    OptionSpec {
        key: "flusher",
        kind: OptKind::Choice(&["queue", "thread"]),
        default: Some("queue"),
        help: "where proactive flushes run: inline on the device's background queue, \
               overlapping foreground I/O on its clock (devices without one: a thread), or \
               on a background thread through the device's one queue",
    },
];

/// How big the staging area is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Staging {
    /// Bytes (rounded down to whole pages).
    Bytes(u64),
    /// Slots (pages).
    Slots(u64),
    /// The focused-area size of the device profile.
    FocusedArea,
}

pub use crate::registry::Align;

/// StableBuffer's options, typed; [`StableBufferOptions::config`] resolves them for a
/// device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StableBufferOptions {
    /// Pattern recognition.
    pub recognition: Recognition,
    /// Flushing.
    pub flush: FlushMode,
    /// Staging area size.
    pub staging: Staging,
    /// Profile source (`sim:NAME` or a file), if given.
    pub profile: Option<String>,
    /// Alignment of the areas: bytes, or pages.
    pub align: Align,
    /// Growth step of the data area.
    pub grow: GrowStep,
    /// Write order of a flush.
    pub order: WriteOrder,
    /// Shortest run that makes a partition.
    pub min_run: MinRun,
    /// Where proactive flushes run.
    pub flusher: Flusher,
}

impl StableBufferOptions {
    /// The typed form of options validated against [`OPTIONS`]; contradictions
    /// (`size` and `slots`, `grow` and `grow_pages`) are errors.
    pub fn from_options(o: &Options) -> Result<Self, ConfigError> {
        let recognition = match o.word("recognition") {
            Some("incremental") | None => Recognition::Incremental,
            Some(_) => Recognition::OnDemand,
        };
        let flush = match o.word("flush") {
            Some("proactive") => FlushMode::Proactive,
            _ => FlushMode::Passive,
        };
        let staging = match (o.bytes("size"), o.u64("slots")) {
            (Some(_), Some(_)) => return Err(o.invalid("give size (bytes) or slots, not both")),
            (Some(b), None) => Staging::Bytes(b),
            (None, Some(n)) => Staging::Slots(n),
            (None, None) => Staging::FocusedArea,
        };
        Ok(Self {
            recognition,
            flush,
            staging,
            profile: o.text("profile").map(str::to_string),
            align: Align::from_options(o)?,
            grow: GrowStep::from_options(o)?,
            order: match o.word("order") {
                Some("sorted") => WriteOrder::Sorted,
                _ => WriteOrder::Pattern,
            },
            min_run: match o.word("min-run") {
                Some("theta") => MinRun::Theta,
                _ => MinRun::Pair,
            },
            flusher: match o.word("flusher") {
                Some("thread") => Flusher::Thread,
                _ => Flusher::Queue,
            },
        })
    }

    /// The configuration for a store on `device`: the pattern costs come from the profile
    /// (see [`StableBufferOptions::costs`]), the staging size from the options or the
    /// profile's focused area. A staging area taken from the profile shrinks, if it must,
    /// to what a fixed-capacity device leaves beside the run's data
    /// ([`StoreContext::data_pages`]): the lab sizes a simulated device as the data plus
    /// 64 MiB, and a profile's focused area (sim:nvme's is 64 MiB) plus the superblock and
    /// the alignment would otherwise push the last data pages beyond the capacity.
    pub fn config(
        &self,
        device: &dyn Device,
        ctx: &StoreContext<'_>,
    ) -> Result<StableBufferConfig, StoreError> {
        let costs = self.costs(device, ctx)?;
        let mut cfg = self.with_costs(ctx.page_size, costs);
        cfg.data = ctx.data;
        if let (Staging::FocusedArea, Some(max), true) =
            (self.staging, device.max_len(), ctx.data_pages > 0)
        {
            let want = u32::try_from(cfg.slots()).unwrap_or(u32::MAX - 1);
            let slots =
                Layout::fitting_slots(cfg.page_size, want, cfg.align_bytes, ctx.data_pages, max);
            cfg.staging_bytes = u64::from(slots) * cfg.page_size as u64;
        }
        Ok(cfg)
    }

    fn with_costs(&self, page_size: usize, costs: PatternCosts) -> StableBufferConfig {
        let staging_bytes = match self.staging {
            Staging::Bytes(b) => b,
            Staging::Slots(n) => n.saturating_mul(page_size as u64),
            Staging::FocusedArea => costs.focused_area_bytes,
        };
        StableBufferConfig {
            page_size,
            staging_bytes,
            recognition: self.recognition,
            flush: self.flush,
            flusher: self.flusher,
            costs,
            order: self.order,
            min_run: self.min_run,
            align_bytes: self.align.bytes(page_size),
            grow_bytes: self.grow.bytes(page_size),
            data: flashbuf_core::DataMode::Bytes,
            salt: None,
        }
    }

    /// The pattern costs: `profile=sim:NAME` is measured through the context (as
    /// `flashbuf profile --device sim:NAME` does, for the run's page size and seed),
    /// another `profile=` is a profile JSON file; without the option, a simulated device's
    /// own profile is measured, and other devices get the paper's Mtron figures.
    pub fn costs(
        &self,
        device: &dyn Device,
        ctx: &StoreContext<'_>,
    ) -> Result<PatternCosts, StoreError> {
        let described = device.describe();
        let source = match &self.profile {
            Some(p) => p.clone(),
            None if described.starts_with("sim:") => described,
            None => return Ok(PatternCosts::default()),
        };
        let profile = if source.starts_with("sim:") {
            match ctx.measure_profile {
                Some(measure) => measure(&source),
                None => Err(
                    "no profiler in this context (measure it with `flashbuf profile \
                             --device` and pass the file)"
                        .to_string(),
                ),
            }
        } else {
            DeviceProfile::load(std::path::Path::new(&source)).map_err(|e| e.to_string())
        }
        .map_err(|e| ConfigError::invalid(KIND, format!("profile={source}: {e}")))?;
        Ok(PatternCosts::from_profile(&profile))
    }
}

impl StoreFactory for StableBufferOptions {
    fn create(
        &self,
        device: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        let cfg = self.config(device.as_ref(), ctx)?;
        Ok(Box::new(StableBufferStore::create(device, cfg)?))
    }

    fn open(
        &self,
        device: Box<dyn Device>,
        ctx: &StoreContext<'_>,
    ) -> Result<Box<dyn PageStore>, StoreError> {
        let cfg = self.config(device.as_ref(), ctx)?;
        Ok(Box::new(StableBufferStore::open(device, cfg)?))
    }

    /// Checks the configuration with the paper's figures standing in for the profile
    /// (a staging size taken from the profile is checked at `create`).
    fn check(&self, page_size: usize) -> Result<(), ConfigError> {
        self.with_costs(page_size, PatternCosts::default())
            .validate()
            .map_err(|e| registry::invalid(KIND, e))
    }
}

/// Parses StableBuffer's validated options (no I/O).
pub fn parse_options(o: &Options) -> Result<Box<dyn StoreFactory>, ConfigError> {
    Ok(Box::new(StableBufferOptions::from_options(o)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::parse_text;
    use flashbuf_core::config::Spec;
    use flashbuf_device::MemDevice;

    fn opts(text: &str) -> StableBufferOptions {
        let spec = Spec::parse(text, |_| false).unwrap();
        StableBufferOptions::from_options(&Options::validate(&spec, OPTIONS).unwrap()).unwrap()
    }

    #[test]
    fn defaults_and_sizes_in_bytes_or_slots() {
        let ctx = StoreContext::new(4096);
        let mem = MemDevice::new(0);
        let c = opts("stable-buffer").config(&mem, &ctx).unwrap();
        assert_eq!(
            (c.recognition, c.flush, c.staging_bytes, c.align_bytes),
            (
                Recognition::Incremental,
                FlushMode::Passive,
                4 << 20,
                4 << 20
            )
        );
        assert_eq!((c.grow_bytes, c.costs), (64 << 20, PatternCosts::default()));
        let c = opts("stable-buffer:recognition=on-demand,slots=16,grow_pages=8")
            .config(&mem, &StoreContext::new(512))
            .unwrap();
        assert_eq!(
            (c.recognition, c.staging_bytes, c.grow_bytes),
            (Recognition::OnDemand, 16 * 512, 8 * 512)
        );
        assert_eq!(
            c,
            StableBufferConfig {
                staging_bytes: 16 * 512,
                recognition: Recognition::OnDemand,
                grow_bytes: 8 * 512,
                ..StableBufferConfig::with_page_size(512)
            }
        );
    }

    #[test]
    fn contradictions_and_refused_combinations_fail_before_any_io() {
        let e = parse_text("stable-buffer:size=1MiB,slots=4")
            .unwrap_err()
            .to_string();
        assert!(e.contains("size (bytes) or slots, not both"), "{e}");
        let p = parse_text("stable-buffer:recognition=ondemand,flush=proactive").unwrap();
        let e = p.factory.check(4096).unwrap_err().to_string();
        assert!(e.contains("needs recognition=incremental"), "{e}");
        let p = parse_text("stable-buffer:align=1000").unwrap();
        assert!(p.factory.check(4096).is_err());
        let p = parse_text("stable-buffer:size=100").unwrap();
        assert!(p
            .factory
            .check(512)
            .unwrap_err()
            .to_string()
            .contains("slots"));
    }

    #[test]
    fn a_simulated_profile_needs_a_profiler_and_uses_what_it_measures() {
        let o = opts("stable-buffer:profile=sim:mtron");
        let mem = MemDevice::new(0);
        let e = o.config(&mem, &StoreContext::new(4096)).unwrap_err();
        assert!(
            e.to_string().contains("profile=sim:mtron: no profiler"),
            "{e}"
        );
        let measured = |name: &str| -> Result<DeviceProfile, String> {
            assert_eq!(name, "sim:mtron");
            Ok(DeviceProfile {
                device: name.to_string(),
                page_size: 4096,
                granularity_bytes: 4096,
                read_seq_us: 1.0,
                read_random_us: 2.0,
                write_seq_us: 10.0,
                write_partitioned_us: 15.0,
                write_focused_us: 20.0,
                write_random_us: 90.0,
                theta_min_bytes: 8192,
                focused_area_bytes: 1 << 20,
                asymmetry_r: 45.0,
                clock: "device".to_string(),
                area_bytes: 1 << 28,
                partitions: 2,
                benchmarks: Vec::new(),
            })
        };
        let ctx = StoreContext {
            measure_profile: Some(&measured),
            ..StoreContext::new(4096)
        };
        let c = o.config(&mem, &ctx).unwrap();
        assert_eq!((c.staging_bytes, c.costs.t_seq_us), (1 << 20, 10.0));
        let e = opts("stable-buffer:profile=/no/such.json")
            .config(&mem, &ctx)
            .unwrap_err();
        assert!(e.to_string().contains("profile=/no/such.json"), "{e}");
    }
}
