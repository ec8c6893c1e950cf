//! The typed options of the simulated devices' profiles, one schema per model kind:
//! [`FLASH_OPTIONS`] (channels, over-provisioning, FTL and its log blocks, timings, write
//! buffer) and [`HDD_OPTIONS`] (spindle speed, write cache, read-ahead). A device name such
//! as `sim:mtron:channels=4,op=0.1` is checked against the schema of its profile's kind
//! before anything is built; [`SimProfile::apply_options`] then sets the fields.
//!
//! Readings: `log-blocks` sets BAST's log blocks or FAST's random log pool (the FTLs' own
//! `log-blocks` option); a profile whose FTL has no log blocks (page-mapped) refuses it.
//! `ftl=NAME` replaces the profile's FTL by `NAME` of [`FTLS`](super::ftl::FTLS) with that FTL's default
//! options, before `log-blocks` applies.

use super::ftl::FtlConfig;
use super::nand::MAX_CHANNELS;
use super::profiles::{DeviceModel, FlashModel, HddModel, SimProfile};
use flashbuf_core::config::{ConfigError, OptKind, OptionSpec, Options};

const fn opt(key: &'static str, kind: OptKind, help: &'static str) -> OptionSpec {
    OptionSpec {
        key,
        kind,
        default: None,
        help,
    }
}

const US: OptKind = OptKind::Float { min: 0.0, max: 1e7 };

/// Options of a flash profile; each defaults to the profile's own value.
pub const FLASH_OPTIONS: &[OptionSpec] = &[
    opt(
        "ftl",
        OptKind::Text,
        "the FTL, by name (page-mapped, bast, fast), with its default options",
    ),
    opt(
        "channels",
        OptKind::UInt {
            min: 1,
            max: MAX_CHANNELS as u64,
        },
        "channels (dies) working in parallel",
    ),
    opt(
        "op",
        OptKind::Float {
            min: 0.0,
            max: 10.0,
        },
        "over-provisioning: spare blocks as a fraction of the data blocks",
    ),
    opt(
        "log-blocks",
        OptKind::UInt {
            min: 1,
            max: 65_536,
        },
        "BAST's log blocks or FAST's random log pool",
    ),
    opt(
        "pages-per-block",
        OptKind::UInt {
            min: 1,
            max: 65_535,
        },
        "pages per erase block",
    ),
    opt("read-us", US, "NAND page read, microseconds"),
    opt("program-us", US, "NAND page program, microseconds"),
    opt("erase-us", US, "NAND block erase, microseconds"),
    opt(
        "write-buffer",
        OptKind::UInt {
            min: 0,
            max: 1 << 24,
        },
        "write-back buffer in pages (0 = write-through)",
    ),
];

/// Options of a disk profile; each defaults to the profile's own value.
pub const HDD_OPTIONS: &[OptionSpec] = &[
    opt(
        "rpm",
        OptKind::Float {
            min: 1.0,
            max: 100_000.0,
        },
        "spindle speed, revolutions per minute",
    ),
    opt(
        "write-cache",
        OptKind::UInt {
            min: 0,
            max: 1 << 20,
        },
        "writes the write-back cache holds (0 = write-through)",
    ),
    opt(
        "readahead",
        OptKind::Bytes {
            min: 0,
            max: 1 << 30,
        },
        "read-ahead window after a media read (e.g. 2MiB)",
    ),
];

fn u32_of(o: &Options, key: &str) -> Option<u32> {
    // The schemas' ranges fit u32.
    o.u64(key).map(|x| u32::try_from(x).unwrap_or(u32::MAX))
}

impl SimProfile {
    /// The options this profile takes ([`FLASH_OPTIONS`] or [`HDD_OPTIONS`]).
    pub fn option_schema(&self) -> &'static [OptionSpec] {
        match &self.model {
            DeviceModel::Flash(_) => FLASH_OPTIONS,
            DeviceModel::Hdd(_) => HDD_OPTIONS,
        }
    }

    /// Sets every option of `o` that belongs to this profile's schema (options validated
    /// against a schema holding [`SimProfile::option_schema`]; others are ignored).
    pub fn apply_options(&mut self, o: &Options) -> Result<(), ConfigError> {
        let component = format!("sim:{}", self.name);
        match &mut self.model {
            DeviceModel::Flash(f) => apply_flash(f, o, &component),
            DeviceModel::Hdd(h) => {
                apply_hdd(h, o);
                Ok(())
            }
        }
    }
}

fn apply_flash(f: &mut FlashModel, o: &Options, component: &str) -> Result<(), ConfigError> {
    if let Some(name) = o.text("ftl") {
        f.ftl = FtlConfig::by_name(name)?;
    }
    if let Some(n) = u32_of(o, "channels") {
        f.channels = n;
    }
    if let Some(x) = o.f64("op") {
        f.over_provisioning = x;
    }
    if let Some(n) = u32_of(o, "log-blocks") {
        f.ftl = f
            .ftl
            .with_option("log-blocks", &n.to_string())
            .map_err(|e| {
                ConfigError::invalid(
                    component,
                    format!("log-blocks: its FTL {} has none ({e})", f.ftl.name()),
                )
            })?;
    }
    if let Some(n) = u32_of(o, "pages-per-block") {
        f.pages_per_block = n;
    }
    if let Some(x) = o.f64("read-us") {
        f.timing.read_us = x;
    }
    if let Some(x) = o.f64("program-us") {
        f.timing.program_us = x;
    }
    if let Some(x) = o.f64("erase-us") {
        f.timing.erase_us = x;
    }
    if let Some(n) = u32_of(o, "write-buffer") {
        f.write_buffer_pages = n;
    }
    Ok(())
}

fn apply_hdd(h: &mut HddModel, o: &Options) {
    if let Some(x) = o.f64("rpm") {
        h.rpm = x;
    }
    if let Some(n) = u32_of(o, "write-cache") {
        h.write_cache_entries = n;
    }
    if let Some(b) = o.bytes("readahead") {
        h.readahead_bytes = b;
    }
}
