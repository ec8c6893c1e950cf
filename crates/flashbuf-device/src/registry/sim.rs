//! The `sim:PROFILE` entry: a simulated device of a named profile ([`SimProfile`]), with
//! the lab's options (`seed`, `precondition`, `slack` or `fill`, `qd`) followed by those of the profile's kind
//! ([`FLASH_OPTIONS`] or [`HDD_OPTIONS`]), typed and checked before anything is built.
//!
//! A `sim:` device starts at steady state unless told otherwise: `precondition=steady`
//! (the default; `true` is an alias), `sequential` or `fresh` (`false`); see
//! [`crate::sim::steady`].

use super::{BuiltDevice, DeviceContext, DeviceFactory, ParsedDevice};
use crate::sim::{
    sim_profile_names, DeviceModel, Precondition, SimDevice, SimProfile, FLASH_OPTIONS,
    HDD_OPTIONS, MAX_QUEUE_DEPTH,
};
use crate::{run_profile, Device, DeviceError, ProfileOptions};
use flashbuf_core::config::{ConfigError, OptKind, OptionSpec, Options, Spec};
use flashbuf_core::DeviceFacts;

/// Logical bytes a simulated device gets beyond the run's data (superblocks, staging
/// areas, logs; unused logical space costs a page-mapped or hybrid FTL nothing).
pub const SIM_SLACK_BYTES: u64 = 64 << 20;

/// The options every `sim` device takes, before its profile's own.
const COMMON: [OptionSpec; 5] = [
    OptionSpec {
        key: "seed",
        kind: OptKind::UInt {
            min: 0,
            max: u64::MAX,
        },
        default: None,
        help: "seed of the device (free-block order, spindle phase); default: the run's seed",
    },
    OptionSpec {
        key: "precondition",
        kind: OptKind::Choice(Precondition::WORDS),
        default: Some("steady"),
        help: "how the device starts, at no cost: steady (filled, then randomly overwritten \
               until the write amplification is steady, SNIA PTS-style), \
               sequential (every page written once, in order) or fresh (never written); \
               true = steady, false = fresh",
    },
    OptionSpec {
        key: "slack",
        kind: OptKind::Bytes {
            min: 0,
            max: 1 << 40,
        },
        default: Some("64MiB"),
        help: "logical bytes beyond the run's data (superblocks, staging areas, logs, free \
               segments); the capacity is data + slack, rounded up to a MiB",
    },
    OptionSpec {
        key: "fill",
        kind: OptKind::Float {
            min: 0.01,
            max: 1.0,
        },
        default: None,
        help: "instead of slack: the run's data fills this fraction of the capacity \
               (data / fill, rounded up to a MiB, at least data + 1 MiB; a log-structured \
               store takes the whole device, so its space is that full)",
    },
    OptionSpec {
        key: "qd",
        kind: OptKind::UInt {
            min: 1,
            max: MAX_QUEUE_DEPTH as u64,
        },
        default: Some("1"),
        help: "queue depth of write_batch: its writes are served as this many overlapping \
               independent requests (1 = one after another, as the papers' synchronous \
               setups)",
    },
];

/// `a` followed by `b` (schemas are static; this appends the common options at compile time).
const fn concat<const N: usize>(a: &[OptionSpec], b: &[OptionSpec]) -> [OptionSpec; N] {
    assert!(a.len() + b.len() == N, "concat: wrong length");
    let mut out = [a[0]; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    out
}

const SIM_FLASH: [OptionSpec; COMMON.len() + FLASH_OPTIONS.len()] = concat(&COMMON, FLASH_OPTIONS);
const SIM_HDD: [OptionSpec; COMMON.len() + HDD_OPTIONS.len()] = concat(&COMMON, HDD_OPTIONS);

/// The profile called `name`, or a configuration error listing the profiles.
fn profile(name: &str) -> Result<SimProfile, ConfigError> {
    if !sim_profile_names().contains(&name) {
        return Err(ConfigError::UnknownName {
            kind: "simulated device profile",
            name: name.to_string(),
            valid: sim_profile_names().iter().map(|s| s.to_string()).collect(),
        });
    }
    SimProfile::by_name(name)
        .map_err(|e| ConfigError::invalid(format!("sim:{name}"), e.to_string()))
}

/// The entry's schema: the common options, then the profile kind's.
pub(super) fn options(arg: Option<&str>) -> Result<&'static [OptionSpec], ConfigError> {
    let Some(name) = arg else {
        return Ok(&COMMON);
    };
    Ok(match profile(name)?.model {
        DeviceModel::Flash(_) => &SIM_FLASH,
        DeviceModel::Hdd(_) => &SIM_HDD,
    })
}

pub(super) fn parse(arg: Option<&str>, o: &Options) -> ParsedDevice {
    Ok(Box::new(config(arg, o)?))
}

fn config(arg: Option<&str>, o: &Options) -> Result<SimConfig, ConfigError> {
    let mut profile = profile(arg.unwrap_or_default())?;
    profile.apply_options(o)?;
    if o.given("slack") && o.given("fill") {
        return Err(o.invalid("give slack (bytes) or fill (a fraction), not both"));
    }
    Ok(SimConfig {
        profile,
        seed: o.u64("seed"),
        precondition: o
            .word("precondition")
            .and_then(Precondition::from_word)
            .unwrap_or_default(),
        slack_bytes: o.bytes("slack").unwrap_or(SIM_SLACK_BYTES),
        fill: o.f64("fill"),
        // The schema's range fits u32.
        queue_depth: o
            .u64("qd")
            .map_or(1, |d| u32::try_from(d).unwrap_or(MAX_QUEUE_DEPTH)),
    })
}

/// Parses `sim:PROFILE[:options]` into its typed configuration (no I/O), for callers that
/// need the [`SimDevice`] itself (profiling, reproductions).
pub fn parse_sim(spec: &Spec) -> Result<SimConfig, ConfigError> {
    if spec.name != "sim" {
        return Err(ConfigError::invalid(
            spec,
            "not a simulated device (sim:PROFILE)",
        ));
    }
    let arg = spec.arg.as_deref();
    let named = Spec {
        name: format!("sim:{}", arg.unwrap_or_default()),
        ..spec.clone()
    };
    config(arg, &Options::validate(&named, options(arg)?)?)
}

pub(super) fn examples() -> Vec<String> {
    let mut out: Vec<String> = sim_profile_names()
        .iter()
        .map(|p| format!("sim:{p}"))
        .collect();
    out.push("sim:mtron:seed=9,precondition=fresh,channels=4,log-blocks=8".into());
    out.push("sim:nvme:ftl=fast,log-blocks=6".into());
    out.push("sim:hdd:rpm=5400,readahead=64KiB".into());
    out
}

/// A parsed `sim:PROFILE[:options]`: the profile with its options applied, the device's
/// seed if given (else the run's), and how to precondition it.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// The profile, options applied.
    pub profile: SimProfile,
    /// The device's seed; `None`: the run's.
    pub seed: Option<u64>,
    /// How the device starts (default: [`Precondition::Steady`]).
    pub precondition: Precondition,
    /// Logical bytes beyond the run's data (default [`SIM_SLACK_BYTES`]).
    pub slack_bytes: u64,
    /// Instead of the slack: the fraction of the capacity the run's data fills.
    pub fill: Option<f64>,
    /// Queue depth of `write_batch` (`qd`, default 1; see [`crate::sim::queue`]).
    pub queue_depth: u32,
}

impl SimConfig {
    /// Logical capacity for a run storing `hint` bytes: the hint plus the slack, or the
    /// hint divided by the fill (at least the hint plus 1 MiB), rounded up to a MiB.
    pub fn capacity_bytes(&self, hint: u64) -> u64 {
        self.wanted_bytes(hint).div_ceil(1 << 20) << 20
    }

    /// [`Self::capacity_bytes`] before rounding.
    fn wanted_bytes(&self, hint: u64) -> u64 {
        match self.fill {
            Some(f) => ((hint as f64 / f) as u64).max(hint.saturating_add(1 << 20)),
            None => hint.saturating_add(self.slack_bytes),
        }
    }

    /// Builds the simulated device for a run, preconditioned as configured (steady state
    /// unless `precondition=fresh|sequential`).
    pub fn build_sim(&self, ctx: &DeviceContext) -> Result<SimDevice, DeviceError> {
        let capacity = self.capacity_bytes(ctx.capacity_hint_bytes);
        let dev = SimDevice::new(
            self.profile.clone(),
            capacity,
            self.seed.unwrap_or(ctx.seed),
        )?
        .with_queue_depth(self.queue_depth)?;
        dev.precondition_as(self.precondition);
        Ok(dev)
    }
}

impl DeviceFactory for SimConfig {
    fn build(&self, ctx: &DeviceContext) -> Result<BuiltDevice, DeviceError> {
        Ok(BuiltDevice {
            device: Box::new(self.build_sim(ctx)?),
            cleanup: None,
        })
    }

    /// The erase block from the geometry, and random page read and write latencies from a
    /// quick uFLIP profile of a *separate* device of the same configuration, on an area of
    /// the run's capacity within 16..256 MiB (the run's device stays untouched).
    fn facts(&self, ctx: &DeviceContext) -> Result<DeviceFacts, DeviceError> {
        let page = ctx.page_size.max(1) as u64;
        let area = self
            .wanted_bytes(ctx.capacity_hint_bytes)
            .clamp(16 << 20, 256 << 20);
        let probe_ctx = DeviceContext {
            // Whole pages, as the run's own hint is.
            capacity_hint_bytes: area / page * page,
            ..*ctx
        };
        let probe = self.build_sim(&probe_ctx)?;
        let erase_block_bytes = probe.info().geometry.map(|g| g.block_bytes());
        let area = area.min(probe.capacity());
        probe.set_len(area)?;
        let mut opts = ProfileOptions::quick();
        opts.page_size = page;
        opts.area_bytes = Some(area);
        opts.seed = ctx.seed;
        opts.sweep = false;
        let p = run_profile(&probe, &opts)?;
        Ok(DeviceFacts {
            erase_block_bytes,
            read_us: p.read_random_us.max(f64::MIN_POSITIVE),
            write_us: p.write_random_us.max(f64::MIN_POSITIVE),
            seq_write_us: Some(p.write_seq_us.max(f64::MIN_POSITIVE)),
        })
    }
}
