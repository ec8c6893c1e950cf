//! The shape of the FTL registration table ([`FtlEntry`]) and a chosen FTL with its typed
//! options ([`FtlConfig`]), which is what a flash profile holds.

use super::{Ftl, FtlKind, FTLS};
use crate::sim::nand::Nand;
use flashbuf_core::config::{self, ConfigError, OptionSpec, Options, Spec};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// What an entry's `build` returns: the FTL, or why the geometry does not fit it.
pub type BuiltFtl = Result<Box<dyn Ftl>, String>;

/// One FTL the simulator can run: its name, typed options and builder. The table is
/// [`FTLS`]; each FTL's file declares its own entry.
#[derive(Debug)]
pub struct FtlEntry {
    /// Name in profiles and on the command line (`bast`).
    pub name: &'static str,
    /// One line: what the FTL is and where it comes from.
    pub help: &'static str,
    /// The FTL's options (typed, with defaults and ranges).
    pub options: &'static [OptionSpec],
    /// Blocks the FTL needs beyond the data blocks (log blocks, spares), given
    /// `op_blocks` blocks of over-provisioning the profile asks for.
    pub extra_blocks: fn(opts: &Options, op_blocks: u32) -> u32,
    /// Builds the FTL over `nand` exporting `logical_pages` pages, `seed` choosing the
    /// initial order of the free blocks. Refuses a geometry without enough spare blocks.
    pub build: fn(opts: &Options, nand: Nand, logical_pages: u32, seed: u64) -> BuiltFtl,
}

/// The `log-blocks` option of the hybrid FTLs (BAST's log blocks, FAST's random log pool).
pub(crate) const LOG_BLOCKS: OptionSpec = OptionSpec {
    key: "log-blocks",
    kind: config::OptKind::UInt {
        min: 1,
        max: 65_536,
    },
    default: Some("8"),
    help: "log blocks (BAST: one per logical block being updated; FAST: the random log pool)",
};

/// The `log-blocks` option's value. Validated options always hold it (it has a default
/// and a range within `u32`); anything else is a bug.
pub(crate) fn log_blocks(o: &Options) -> u32 {
    match o.u64(LOG_BLOCKS.key).map(u32::try_from) {
        Some(Ok(n)) => n,
        _ => unreachable!("'{}' validated without log-blocks", o.component()),
    }
}

/// An FTL chosen from [`FTLS`] with its options checked against the entry's schema:
/// `page-mapped`, `bast:log-blocks=32`. Displays (and serializes) as that text.
///
/// ```
/// use flashbuf_device::sim::FtlConfig;
/// let f = FtlConfig::parse("bast:log-blocks=32")?;
/// assert_eq!((f.name(), f.to_string().as_str()), ("bast", "bast:log-blocks=32"));
/// let e = FtlConfig::parse("bast:logblocks=3").unwrap_err().to_string();
/// assert!(e.contains("valid options: log-blocks"), "{e}");
/// # Ok::<(), flashbuf_core::ConfigError>(())
/// ```
#[derive(Debug, Clone)]
pub struct FtlConfig {
    entry: &'static FtlEntry,
    spec: Spec,
    options: Options,
}

impl FtlConfig {
    /// Parses `NAME[:key=value,...]`.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        Self::from_spec(&Spec::parse(text, |_| false)?)
    }

    /// The FTL named by `spec`, its options checked.
    pub fn from_spec(spec: &Spec) -> Result<Self, ConfigError> {
        let entry = config::lookup("FTL", FTLS, &spec.name, |e| e.name)?;
        if spec.arg.is_some() {
            return Err(ConfigError::Argument {
                component: spec.name.clone(),
                detail: "an FTL takes no positional argument".into(),
            });
        }
        let options = Options::validate(spec, entry.options)?;
        Ok(Self {
            entry,
            spec: spec.clone(),
            options,
        })
    }

    /// The FTL called `name` with its default options.
    pub fn by_name(name: &str) -> Result<Self, ConfigError> {
        Self::from_spec(&Spec {
            name: name.to_string(),
            ..Spec::default()
        })
    }

    /// This FTL with option `key` set to `value` (checked).
    pub fn with_option(&self, key: &str, value: &str) -> Result<Self, ConfigError> {
        let mut spec = self.spec.clone();
        spec.opts.insert(key.to_string(), value.to_string());
        Self::from_spec(&spec)
    }

    /// The table entry.
    pub fn entry(&self) -> &'static FtlEntry {
        self.entry
    }

    /// The FTL's name.
    pub fn name(&self) -> &'static str {
        self.entry.name
    }

    /// The checked options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Blocks the FTL needs beyond the data blocks, with `op_blocks` of over-provisioning.
    pub fn extra_blocks(&self, op_blocks: u32) -> u32 {
        (self.entry.extra_blocks)(&self.options, op_blocks)
    }

    /// Builds the FTL (see [`FtlEntry::build`]).
    pub fn build(&self, nand: Nand, logical_pages: u32, seed: u64) -> Result<Box<dyn Ftl>, String> {
        (self.entry.build)(&self.options, nand, logical_pages, seed)
    }
}

impl TryFrom<FtlKind> for FtlConfig {
    type Error = ConfigError;

    /// The built-in FTL `kind` as a table entry with its options.
    fn try_from(kind: FtlKind) -> Result<Self, ConfigError> {
        let c = FtlConfig::by_name(kind.name())?;
        match kind {
            FtlKind::PageMapped => Ok(c),
            FtlKind::Bast { log_blocks } => c.with_option(LOG_BLOCKS.key, &log_blocks.to_string()),
            FtlKind::Fast { random_log_blocks } => {
                c.with_option(LOG_BLOCKS.key, &random_log_blocks.to_string())
            }
        }
    }
}

impl PartialEq for FtlConfig {
    fn eq(&self, other: &Self) -> bool {
        self.entry.name == other.entry.name && self.options == other.options
    }
}

impl fmt::Display for FtlConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.spec.fmt(f)
    }
}

impl Serialize for FtlConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for FtlConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        FtlConfig::parse(&text).map_err(serde::de::Error::custom)
    }
}
