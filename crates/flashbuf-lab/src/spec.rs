//! Names with options: `NAME[:ARG][:key=value,key=value]` (design.md §7), as the lab's
//! registries read them. The grammar and the typed option schemas live in
//! [`flashbuf_core::config`]; which names take a positional argument (`file:PATH`,
//! `sim:PROFILE`) comes from the device table ([`flashbuf_device::registry::DEVICES`]).

use crate::LabError;
pub use flashbuf_core::config::{parse_bytes, ConfigError, OptKind, OptionSpec, Options, Spec};
use std::fmt;

/// Whether component `name` takes a positional argument (a device whose table entry
/// declares one).
pub fn takes_arg(name: &str) -> bool {
    flashbuf_device::registry::takes_arg(name)
}

/// Parses a component name.
///
/// ```
/// let s = flashbuf_lab::spec::parse("stable-buffer:recognition=incremental,size=4MiB").unwrap();
/// assert_eq!(s.name, "stable-buffer");
/// assert_eq!(s.opts["size"], "4MiB");
/// let d = flashbuf_lab::spec::parse("sim:mtron:seed=7").unwrap();
/// assert_eq!((d.arg.as_deref(), d.opts["seed"].as_str()), (Some("mtron"), "7"));
/// ```
pub fn parse(text: &str) -> Result<Spec, LabError> {
    let s = Spec::parse(text, takes_arg)?;
    if s.arg.is_none() {
        if let Ok(e) = flashbuf_device::registry::device_entry(&s.name) {
            if let Some(arg) = e.arg {
                return Err(LabError::Usage(format!(
                    "'{}' needs an argument: {}:{arg}",
                    s.name, s.name
                )));
            }
        }
    }
    Ok(s)
}

/// Untyped option access used by builders not yet on a typed schema.
pub trait SpecExt {
    /// Fails if an option is not in `valid`, listing the valid ones.
    fn allow(&self, valid: &[&str]) -> Result<(), LabError>;
    /// Option `key` parsed as `T`, or `default`.
    fn get<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, LabError>
    where
        T::Err: fmt::Display;
    /// Option `key` as a byte size, or `default`.
    fn get_bytes(&self, key: &str, default: u64) -> Result<u64, LabError>;
}

impl SpecExt for Spec {
    fn allow(&self, valid: &[&str]) -> Result<(), LabError> {
        for k in self.opts.keys() {
            if !valid.contains(&k.as_str()) {
                return Err(LabError::Usage(format!(
                    "unknown option '{k}' for '{}'; valid options: {}",
                    self.name,
                    if valid.is_empty() {
                        "none".to_string()
                    } else {
                        valid.join(", ")
                    }
                )));
            }
        }
        Ok(())
    }

    fn get<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, LabError>
    where
        T::Err: fmt::Display,
    {
        match self.opts.get(key) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|e| LabError::Usage(format!("option {key}={v} of '{}': {e}", self.name))),
        }
    }

    fn get_bytes(&self, key: &str, default: u64) -> Result<u64, LabError> {
        match self.opts.get(key) {
            None => Ok(default),
            Some(v) => parse_bytes(v)
                .map_err(|e| LabError::Usage(format!("option {key}={v} of '{}': {e}", self.name))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positional_names() {
        let s = parse("file:/tmp/a:b/store:direct=true").unwrap();
        assert_eq!(s.arg.as_deref(), Some("/tmp/a:b/store"));
        assert_eq!(s.opts["direct"], "true");
        assert!(parse("file").is_err());
        assert!(parse("lru:x").is_err());
    }

    #[test]
    fn unknown_keys_list_valid_ones() {
        let s = parse("cfdc:windw=0.5").unwrap();
        let e = s
            .allow(&["window", "cluster_size"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown option 'windw'") && e.contains("window, cluster_size"),
            "{e}"
        );
    }
}
