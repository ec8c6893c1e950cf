//! Component names with typed options (design.md §7 and §12).
//!
//! Every component the lab builds (policy, store, device, FTL, workload) is named
//! `NAME[:ARG][:key=value,key=value]`: [`Spec`] is that text parsed. Each kind's
//! registration table declares, per entry, its options as an [`OptionSpec`] schema (key,
//! type with range, default, one-line help); [`Options::validate`] checks a spec against
//! its schema *before anything runs* and yields typed values, so a typo in the last cell
//! of a matrix fails at once, naming the option, the value and the valid choices.
//!
//! Nothing here does I/O; the registries in the crates above hold the tables.

mod options;
#[cfg(test)]
mod tests;

pub use options::{OptKind, OptionSpec, Options};

use std::collections::BTreeMap;
use std::fmt;
use thiserror::Error;

/// A configuration error: an unknown name or option, a value of the wrong type or out of
/// range, or options that contradict each other. The message names the component, the
/// option and what is valid.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The text is not `NAME[:ARG][:key=value,...]`.
    #[error("{0}")]
    Syntax(String),
    /// No entry of this kind has that name.
    #[error("unknown {kind} '{name}'; valid names: {}", valid.join(", "))]
    UnknownName {
        /// `policy`, `store`, `device`, ...
        kind: &'static str,
        /// The name given.
        name: String,
        /// The names the table knows.
        valid: Vec<String>,
    },
    /// The component has no such option.
    #[error("unknown option '{key}' for '{component}'; valid options: {}",
        if valid.is_empty() { "none".to_string() } else { valid.join(", ") })]
    UnknownOption {
        /// The component (its name).
        component: String,
        /// The key given.
        key: String,
        /// The keys the component takes.
        valid: Vec<&'static str>,
    },
    /// A value does not parse as the option's type or is out of its range.
    #[error("option {key}={value} of '{component}': expected {expected}")]
    BadValue {
        /// The component.
        component: String,
        /// The option.
        key: String,
        /// The value given.
        value: String,
        /// What the option takes (`a number in [0, 1]`, `one of lru, fifo`, ...).
        expected: String,
    },
    /// The component's positional argument is missing, or given where none is taken.
    #[error("'{component}': {detail}")]
    Argument {
        /// The component.
        component: String,
        /// What is wrong.
        detail: String,
    },
    /// Options that are valid alone but not together, or a value the component refuses
    /// for a reason the schema cannot express.
    #[error("'{component}': {detail}")]
    Invalid {
        /// The component (the spec as given).
        component: String,
        /// What is wrong.
        detail: String,
    },
}

impl ConfigError {
    /// An [`ConfigError::Invalid`] for `component`.
    pub fn invalid(component: impl fmt::Display, detail: impl Into<String>) -> Self {
        ConfigError::Invalid {
            component: component.to_string(),
            detail: detail.into(),
        }
    }
}

/// A parsed component name: `NAME[:ARG][:key=value,...]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Spec {
    /// The component kind (`lru`, `direct`, `sim`, ...).
    pub name: String,
    /// Positional argument (`file:PATH`, `sim:PROFILE`), if the kind takes one.
    pub arg: Option<String>,
    /// Options, by key.
    pub opts: BTreeMap<String, String>,
}

impl Spec {
    /// Parses `text`. Whether the name takes a positional argument decides how the part
    /// after the first `:` is read: with `takes_arg`, the argument runs up to the last `:`
    /// that is followed by `key=value` options (so paths may hold `:`), else to the end;
    /// without, that part is the options.
    ///
    /// ```
    /// use flashbuf_core::config::Spec;
    /// let s = Spec::parse("stable-buffer:recognition=incremental,size=4MiB", |_| false).unwrap();
    /// assert_eq!(s.name, "stable-buffer");
    /// assert_eq!(s.opts["size"], "4MiB");
    /// let d = Spec::parse("sim:mtron:seed=7", |n| n == "sim").unwrap();
    /// assert_eq!((d.arg.as_deref(), d.opts["seed"].as_str()), (Some("mtron"), "7"));
    /// ```
    pub fn parse(text: &str, takes_arg: impl Fn(&str) -> bool) -> Result<Self, ConfigError> {
        let text = text.trim();
        let (name, rest) = match text.split_once(':') {
            Some((n, r)) => (n.trim(), Some(r)),
            None => (text, None),
        };
        if name.is_empty() {
            return Err(ConfigError::Syntax(format!(
                "empty component name in '{text}'"
            )));
        }
        let (arg, opt_text) = match rest {
            Some(r) if takes_arg(name) => match r.rsplit_once(':') {
                Some((a, o)) if o.contains('=') => (Some(a.to_string()), Some(o)),
                _ => (Some(r.to_string()), None),
            },
            other => (None, other),
        };
        let mut opts = BTreeMap::new();
        if let Some(o) = opt_text {
            for kv in o.split(',').filter(|s| !s.trim().is_empty()) {
                let Some((k, v)) = kv.split_once('=') else {
                    return Err(ConfigError::Syntax(format!(
                        "option '{kv}' of '{text}' is not key=value"
                    )));
                };
                let k = k.trim();
                if k.is_empty() {
                    return Err(ConfigError::Syntax(format!(
                        "option '{kv}' of '{text}' has no key"
                    )));
                }
                if opts.insert(k.to_string(), v.trim().to_string()).is_some() {
                    return Err(ConfigError::Syntax(format!(
                        "option '{k}' given twice in '{text}'"
                    )));
                }
            }
        }
        Ok(Self {
            name: name.to_string(),
            arg,
            opts,
        })
    }

    /// Splits a comma-separated list of components (`--policies lru,cfdc:window=0.5,
    /// cluster_size=32,casa`) at the commas *between* components: a segment that holds
    /// `=` before any `:` continues the previous component's options.
    ///
    /// ```
    /// use flashbuf_core::config::Spec;
    /// assert_eq!(
    ///     Spec::split_list("lru,cfdc:window=0.5,cluster_size=32,casa"),
    ///     vec!["lru", "cfdc:window=0.5,cluster_size=32", "casa"]
    /// );
    /// ```
    pub fn split_list(text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for seg in text.split(',') {
            let continues = match (seg.find('='), seg.find(':')) {
                (Some(eq), Some(colon)) => eq < colon,
                (Some(_), None) => true,
                _ => false,
            };
            match out.last_mut() {
                Some(last) if continues => {
                    last.push(',');
                    last.push_str(seg);
                }
                _ => out.push(seg.to_string()),
            }
        }
        out.retain(|s| !s.trim().is_empty());
        out.iter_mut().for_each(|s| *s = s.trim().to_string());
        out
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(a) = &self.arg {
            write!(f, ":{a}")?;
        }
        if !self.opts.is_empty() {
            let o: Vec<String> = self.opts.iter().map(|(k, v)| format!("{k}={v}")).collect();
            write!(f, ":{}", o.join(","))?;
        }
        Ok(())
    }
}

/// Parses a byte size with an optional binary suffix (`k`, `KiB`, `M`, `MiB`, `G`, `GiB`;
/// all binary).
///
/// ```
/// use flashbuf_core::config::parse_bytes;
/// assert_eq!(parse_bytes("16MiB"), Ok(16 << 20));
/// assert!(parse_bytes("12XB").is_err());
/// ```
pub fn parse_bytes(v: &str) -> Result<u64, String> {
    let v = v.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{v}' is not a byte size"))?;
    let mul = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(format!("unknown size unit '{unit}' in '{v}'")),
    };
    n.checked_mul(mul)
        .ok_or_else(|| format!("'{v}' is too large"))
}

/// Looks `name` up in a table of entries with names; the error lists the valid names.
pub fn lookup<'t, E>(
    kind: &'static str,
    table: &'t [E],
    name: &str,
    name_of: impl Fn(&E) -> &str,
) -> Result<&'t E, ConfigError> {
    table
        .iter()
        .find(|e| name_of(e) == name)
        .ok_or_else(|| ConfigError::UnknownName {
            kind,
            name: name.to_string(),
            valid: table.iter().map(|e| name_of(e).to_string()).collect(),
        })
}
