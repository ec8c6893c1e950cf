//! The device registration table (design.md §12): every device the lab can name, with its
//! typed options, a cheap I/O-free `parse` into a typed configuration, and a `build` with
//! the run's context.
//!
//! | name | argument | options | device |
//! |---|---|---|---|
//! | `memory` | — | — | [`MemDevice`] (no clock) |
//! | `cost` | — | `read_us`, `write_us`, `sync_us` | [`CostDevice`] over memory |
//! | `file` | `PATH` | `direct`, `overwrite` | [`FileDevice`] (wall clock) |
//! | `sim` | `PROFILE` | `seed`, `precondition`, `slack`, `fill`, `qd` + the profile's ([`sim`]) | [`SimDevice`](crate::sim::SimDevice) |
//!
//! Two phases, as for every kind: [`parse_device`] checks a name against the table and its
//! options against the entry's schema (for `sim`, the schema of the profile's kind: flash
//! or disk) and returns a [`DeviceConfig`] — nothing is opened or built, so the lab runs it
//! for a whole matrix before the first run. [`DeviceConfig::build`] then builds the device
//! for a run's [`DeviceContext`] (capacity hint, page size, seed) and
//! [`DeviceConfig::facts`] says what the device is like ([`DeviceFacts`]).

pub mod sim;

use crate::{
    CostDevice, Device, DeviceError, FileDevice, FileDeviceOptions, LatencyModel, MemDevice,
};
use flashbuf_core::config::{self, ConfigError, OptKind, OptionSpec, Options, Spec};
use flashbuf_core::DeviceFacts;
use std::fmt;
use std::path::PathBuf;

pub use self::sim::{parse_sim, SimConfig, SIM_SLACK_BYTES};

/// What the lab knows when it builds a device for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceContext {
    /// Bytes of data the run will store (devices with a fixed capacity size themselves
    /// from it; 0 if unknown).
    pub capacity_hint_bytes: u64,
    /// Page size of the run, bytes.
    pub page_size: usize,
    /// Seed of the run (a device's own `seed` option overrides it).
    pub seed: u64,
}

/// A device built for a run.
pub struct BuiltDevice {
    /// The device.
    pub device: Box<dyn Device>,
    /// A file the build created, for the caller to remove when the run is over.
    pub cleanup: Option<PathBuf>,
}

impl fmt::Debug for BuiltDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuiltDevice")
            .field("device", &self.device.describe())
            .field("cleanup", &self.cleanup)
            .finish()
    }
}

/// A parsed device configuration's second phase.
pub trait DeviceFactory: fmt::Debug + Send + Sync {
    /// Builds the device for a run.
    fn build(&self, ctx: &DeviceContext) -> Result<BuiltDevice, DeviceError>;
    /// What the device is like: latencies and erase block (for `sim`, measured by a quick
    /// uFLIP profile of a separate device of the same configuration). Deterministic.
    fn facts(&self, ctx: &DeviceContext) -> Result<DeviceFacts, DeviceError>;
}

/// What an entry's `parse` returns: the typed configuration, ready to build.
pub type ParsedDevice = Result<Box<dyn DeviceFactory>, ConfigError>;

/// Which clock a device's `stats().device_time_us` follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceClock {
    /// None: device time stays 0.
    None,
    /// A deterministic virtual clock.
    Virtual,
    /// The measured wall time of each call.
    Wall,
}

/// One device kind the lab can name.
#[derive(Debug)]
pub struct DeviceEntry {
    /// The name (`sim`).
    pub name: &'static str,
    /// The positional argument it takes, as shown in help (`PROFILE`), if any.
    pub arg: Option<&'static str>,
    /// One line: what the device is.
    pub help: &'static str,
    /// The options, given the positional argument (`sim`: those of the profile's kind;
    /// without an argument, the options every profile takes). Fails on a bad argument.
    pub options: fn(arg: Option<&str>) -> Result<&'static [OptionSpec], ConfigError>,
    /// Parses the argument and the validated options into a typed configuration, without
    /// I/O.
    pub parse: fn(arg: Option<&str>, opts: &Options) -> ParsedDevice,
    /// The device's capacity follows [`DeviceContext::capacity_hint_bytes`] (the lab must
    /// know the trace's data size before building it).
    pub sized_by_hint: bool,
    /// The clock of its device time.
    pub clock: DeviceClock,
    /// Example names the golden test (`tests/golden_devices.rs`) runs; `{dir}` stands for
    /// a scratch directory.
    pub examples: fn() -> Vec<String>,
}

/// Every device, by name.
pub const DEVICES: &[DeviceEntry] = &[
    DeviceEntry {
        name: "memory",
        arg: None,
        help: "bytes in memory, no latency",
        options: |_| Ok(&[]),
        parse: |_, _| Ok(Box::new(MemoryConfig)),
        sized_by_hint: false,
        clock: DeviceClock::None,
        examples: || vec!["memory".into()],
    },
    DeviceEntry {
        name: "cost",
        arg: None,
        help: "bytes in memory, a fixed latency per read, write and sync on a virtual clock",
        options: |_| Ok(COST_OPTIONS),
        parse: parse_cost,
        sized_by_hint: false,
        clock: DeviceClock::Virtual,
        examples: || vec!["cost".into(), "cost:read_us=5,write_us=70,sync_us=3".into()],
    },
    DeviceEntry {
        name: "file",
        arg: Some("PATH"),
        help: "a file (pread/pwrite, fsync); refuses to overwrite a non-empty file",
        options: |_| Ok(FILE_OPTIONS),
        parse: parse_file,
        sized_by_hint: false,
        clock: DeviceClock::Wall,
        examples: || vec!["file:{dir}/golden.img".into()],
    },
    DeviceEntry {
        name: "sim",
        arg: Some("PROFILE"),
        help: "a simulated flash device or disk of a named profile, on a virtual clock",
        options: sim::options,
        parse: sim::parse,
        sized_by_hint: true,
        clock: DeviceClock::Virtual,
        examples: sim::examples,
    },
];

/// The entry called `name`.
pub fn device_entry(name: &str) -> Result<&'static DeviceEntry, ConfigError> {
    config::lookup("device", DEVICES, name, |e| e.name)
}

/// Whether device `name` takes a positional argument (`file:PATH`, `sim:PROFILE`).
pub fn takes_arg(name: &str) -> bool {
    DEVICES.iter().any(|e| e.name == name && e.arg.is_some())
}

/// Names as shown in help: `memory`, `cost`, `file:PATH`, `sim:PROFILE`.
pub fn device_names() -> Vec<String> {
    DEVICES
        .iter()
        .map(|e| match e.arg {
            Some(a) => format!("{}:{a}", e.name),
            None => e.name.to_string(),
        })
        .collect()
}

/// A device name parsed and checked against its entry: the first phase (no I/O).
#[derive(Debug)]
pub struct DeviceConfig {
    entry: &'static DeviceEntry,
    spec: Spec,
    factory: Box<dyn DeviceFactory>,
}

impl DeviceConfig {
    /// The table entry.
    pub fn entry(&self) -> &'static DeviceEntry {
        self.entry
    }

    /// The name as given.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// Builds the device for a run.
    pub fn build(&self, ctx: &DeviceContext) -> Result<BuiltDevice, DeviceError> {
        self.factory.build(ctx)
    }

    /// What the device is like (see [`DeviceFactory::facts`]).
    pub fn facts(&self, ctx: &DeviceContext) -> Result<DeviceFacts, DeviceError> {
        self.factory.facts(ctx)
    }
}

/// Parses `spec` against [`DEVICES`]: the name, the positional argument, every option's
/// key, type and range. Does no I/O.
///
/// ```
/// use flashbuf_core::config::Spec;
/// use flashbuf_device::registry::{parse_device, takes_arg};
/// let spec = |t: &str| Spec::parse(t, takes_arg).unwrap();
/// assert!(parse_device(&spec("sim:mtron:channels=4,seed=7")).is_ok());
/// let e = parse_device(&spec("sim:mtron:channels=x")).unwrap_err().to_string();
/// assert!(e.contains("channels=x") && e.contains("whole number"), "{e}");
/// let e = parse_device(&spec("sim:hdd:channels=4")).unwrap_err().to_string();
/// assert!(e.contains("valid options: seed, precondition") && e.contains("rpm"), "{e}");
/// ```
pub fn parse_device(spec: &Spec) -> Result<DeviceConfig, ConfigError> {
    let entry = device_entry(&spec.name)?;
    let arg = spec.arg.as_deref();
    match (entry.arg, arg) {
        (Some(want), None | Some("")) => {
            return Err(ConfigError::Argument {
                component: spec.to_string(),
                detail: format!("needs an argument: {}:{want}", entry.name),
            })
        }
        (None, Some(_)) => {
            return Err(ConfigError::Argument {
                component: spec.to_string(),
                detail: "takes no argument".into(),
            })
        }
        _ => {}
    }
    let schema = (entry.options)(arg)?;
    // Name the component with its argument in messages (`sim:hdd`), paths aside.
    let named = Spec {
        name: match arg {
            Some(a) if entry.name == "sim" => format!("{}:{a}", entry.name),
            _ => entry.name.to_string(),
        },
        ..spec.clone()
    };
    let options = Options::validate(&named, schema)?;
    let factory = (entry.parse)(arg, &options)?;
    Ok(DeviceConfig {
        entry,
        spec: spec.clone(),
        factory,
    })
}

#[derive(Debug)]
struct MemoryConfig;

impl DeviceFactory for MemoryConfig {
    fn build(&self, _: &DeviceContext) -> Result<BuiltDevice, DeviceError> {
        Ok(BuiltDevice {
            device: Box::new(MemDevice::new(0)),
            cleanup: None,
        })
    }

    fn facts(&self, _: &DeviceContext) -> Result<DeviceFacts, DeviceError> {
        Ok(DeviceFacts::default())
    }
}

const LATENCY: OptKind = OptKind::Float { min: 0.0, max: 1e9 };

const COST_OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "read_us",
        kind: LATENCY,
        default: Some("100"),
        help: "latency of a read, microseconds",
    },
    OptionSpec {
        key: "write_us",
        kind: LATENCY,
        default: Some("1000"),
        help: "latency of a write, microseconds",
    },
    OptionSpec {
        key: "sync_us",
        kind: LATENCY,
        default: Some("0"),
        help: "latency of a sync, microseconds",
    },
];

#[derive(Debug)]
struct CostConfig(LatencyModel);

fn parse_cost(_: Option<&str>, o: &Options) -> ParsedDevice {
    let us = |k: &str| {
        o.f64(k)
            .ok_or_else(|| o.invalid(format!("{k} has no value")))
    };
    Ok(Box::new(CostConfig(LatencyModel {
        latency_read_us: us("read_us")?,
        latency_write_us: us("write_us")?,
        latency_sync_us: us("sync_us")?,
    })))
}

impl DeviceFactory for CostConfig {
    fn build(&self, _: &DeviceContext) -> Result<BuiltDevice, DeviceError> {
        Ok(BuiltDevice {
            device: Box::new(CostDevice::new(MemDevice::new(0), self.0)),
            cleanup: None,
        })
    }

    fn facts(&self, _: &DeviceContext) -> Result<DeviceFacts, DeviceError> {
        Ok(DeviceFacts {
            erase_block_bytes: None,
            read_us: self.0.latency_read_us,
            write_us: self.0.latency_write_us,
            seq_write_us: None,
        })
    }
}

const FILE_OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "direct",
        kind: OptKind::Bool,
        default: Some("false"),
        help: "open with O_DIRECT (bypass the page cache)",
    },
    OptionSpec {
        key: "overwrite",
        kind: OptKind::Bool,
        default: Some("false"),
        help: "allow the run to overwrite a non-empty file",
    },
];

#[derive(Debug)]
struct FileConfig {
    path: PathBuf,
    direct: bool,
    overwrite: bool,
}

fn parse_file(arg: Option<&str>, o: &Options) -> ParsedDevice {
    Ok(Box::new(FileConfig {
        path: PathBuf::from(arg.unwrap_or_default()),
        direct: o.bool("direct").unwrap_or(false),
        overwrite: o.bool("overwrite").unwrap_or(false),
    }))
}

impl DeviceFactory for FileConfig {
    /// Opens (creating if needed) the file; refuses a non-empty file unless `overwrite`.
    /// A file this build created is the caller's to remove.
    fn build(&self, _: &DeviceContext) -> Result<BuiltDevice, DeviceError> {
        let existed = self.path.exists();
        if existed && !self.overwrite && std::fs::metadata(&self.path).is_ok_and(|m| m.len() > 0) {
            return Err(DeviceError::Config(format!(
                "{} exists and is not empty; the run would overwrite it (add :overwrite=true)",
                self.path.display()
            )));
        }
        let opts = FileDeviceOptions {
            direct: self.direct,
            ..FileDeviceOptions::default()
        };
        Ok(BuiltDevice {
            device: Box::new(FileDevice::open(&self.path, opts)?),
            cleanup: (!existed).then(|| self.path.clone()),
        })
    }

    fn facts(&self, _: &DeviceContext) -> Result<DeviceFacts, DeviceError> {
        Ok(DeviceFacts::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(t: &str) -> Spec {
        Spec::parse(t, takes_arg).unwrap()
    }

    #[test]
    fn every_schema_is_well_formed() {
        for e in DEVICES {
            Options::check_schema((e.options)(None).unwrap()).unwrap();
            for ex in (e.examples)() {
                let s = spec(&ex);
                let schema = (e.options)(s.arg.as_deref()).unwrap();
                Options::check_schema(schema).unwrap_or_else(|m| panic!("{ex}: {m}"));
            }
        }
    }

    #[test]
    fn names_arguments_and_options_are_checked_without_io() {
        let e = parse_device(&spec("ssd")).unwrap_err().to_string();
        assert!(e.contains("valid names: memory, cost, file, sim"), "{e}");
        let e = parse_device(&spec("sim")).unwrap_err().to_string();
        assert!(e.contains("sim:PROFILE"), "{e}");
        let e = parse_device(&spec("sim:floppy")).unwrap_err().to_string();
        assert!(e.contains("floppy") && e.contains("mtron"), "{e}");
        let e = parse_device(&spec("cost:write_us=-1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("write_us=-1"), "{e}");
        let e = parse_device(&spec("sim:nvme:log-blocks=4"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("page-mapped"), "{e}");
        let e = parse_device(&spec("sim:mtron:ftl=dftl"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("valid names: page-mapped, bast, fast"), "{e}");
        // A file that does not exist is not created by parsing.
        let dir = std::env::temp_dir().join(format!("flashbuf-parse-{}", std::process::id()));
        let p = dir.join("never");
        parse_device(&spec(&format!("file:{}", p.display()))).unwrap();
        assert!(!p.exists());
        assert_eq!(
            device_names(),
            ["memory", "cost", "file:PATH", "sim:PROFILE"]
        );
    }

    #[test]
    fn cost_facts_are_its_latencies() {
        let c = parse_device(&spec("cost:read_us=5,write_us=70")).unwrap();
        let ctx = DeviceContext {
            capacity_hint_bytes: 0,
            page_size: 4096,
            seed: 1,
        };
        let f = c.facts(&ctx).unwrap();
        assert_eq!(
            (f.read_us, f.write_us, f.erase_block_bytes),
            (5.0, 70.0, None)
        );
        assert_eq!(c.entry().clock, DeviceClock::Virtual);
    }
}
