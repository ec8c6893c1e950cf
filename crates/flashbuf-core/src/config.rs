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

use std::collections::{BTreeMap, BTreeSet};
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

/// The type (and range) of an option's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptKind {
    /// `true` or `false`.
    Bool,
    /// A whole number in `min..=max`.
    UInt {
        /// Smallest value.
        min: u64,
        /// Largest value.
        max: u64,
    },
    /// A finite number in `min..=max`.
    Float {
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
    },
    /// A byte size (`4096`, `4KiB`, `16MiB`, `1GiB`; binary units) in `min..=max`.
    Bytes {
        /// Smallest value.
        min: u64,
        /// Largest value.
        max: u64,
    },
    /// One of the listed words.
    Choice(&'static [&'static str]),
    /// A number in `min..=max`, or one of the listed words (`r=online`, `r=136`).
    FloatOr {
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
        /// Words accepted instead of a number.
        words: &'static [&'static str],
    },
    /// Free text (a path, a name resolved later).
    Text,
}

impl OptKind {
    /// What the kind accepts, for messages and help.
    pub fn expected(&self) -> String {
        match self {
            OptKind::Bool => "true or false".into(),
            OptKind::UInt { min, max } => format!("a whole number in [{min}, {max}]"),
            OptKind::Float { min, max } => format!("a number in [{min}, {max}]"),
            OptKind::Bytes { min, max } => {
                format!("a byte size (e.g. 4KiB, 16MiB) in [{min}, {max}] bytes")
            }
            OptKind::Choice(c) => format!("one of {}", c.join(", ")),
            OptKind::FloatOr { min, max, words } => {
                format!("a number in [{min}, {max}] or one of {}", words.join(", "))
            }
            OptKind::Text => "text".into(),
        }
    }

    fn parse(&self, v: &str) -> Option<Value> {
        match *self {
            OptKind::Bool => match v {
                "true" | "on" | "yes" | "1" => Some(Value::Bool(true)),
                "false" | "off" | "no" | "0" => Some(Value::Bool(false)),
                _ => None,
            },
            OptKind::UInt { min, max } => v
                .parse::<u64>()
                .ok()
                .filter(|x| (min..=max).contains(x))
                .map(Value::UInt),
            OptKind::Float { min, max } => parse_float(v, min, max).map(Value::Float),
            OptKind::Bytes { min, max } => parse_bytes(v)
                .ok()
                .filter(|x| (min..=max).contains(x))
                .map(Value::Bytes),
            OptKind::Choice(c) => c.iter().find(|w| **w == v).map(|w| Value::Word(w)),
            OptKind::FloatOr { min, max, words } => match words.iter().find(|w| **w == v) {
                Some(w) => Some(Value::Word(w)),
                None => parse_float(v, min, max).map(Value::Float),
            },
            OptKind::Text => Some(Value::Text(v.to_string())),
        }
    }
}

fn parse_float(v: &str, min: f64, max: f64) -> Option<f64> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= min && *x <= max)
}

/// One option of a component: key, type, default and a one-line help.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptionSpec {
    /// The key (`window`).
    pub key: &'static str,
    /// Type and range of the value.
    pub kind: OptKind,
    /// The default as text (parsed by `kind`); `None` when the default is derived at build
    /// time (from the device, the trace) or the option is off unless given — the help
    /// says which.
    pub default: Option<&'static str>,
    /// One line: what the option does.
    pub help: &'static str,
}

impl OptionSpec {
    /// A `key=value` help line: `window=0.5  a number in [0, 1]  the priority window...`.
    pub fn help_line(&self) -> String {
        let default = match self.default {
            Some(d) => format!(" (default {d})"),
            None => String::new(),
        };
        format!(
            "{}: {}{default} — {}",
            self.key,
            self.kind.expected(),
            self.help
        )
    }
}

/// A typed option value.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Bool(bool),
    UInt(u64),
    Float(f64),
    Bytes(u64),
    Word(&'static str),
    Text(String),
}

/// The options of one spec, checked against the component's schema: every key known,
/// every value of its type and in range, defaults filled in. Getters return `None` for
/// an option neither given nor defaulted (and for keys not in the schema, which is a
/// bug the `debug_assert!`s catch in tests).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    component: String,
    schema: &'static [OptionSpec],
    values: BTreeMap<&'static str, Value>,
    given: BTreeSet<&'static str>,
}

impl Options {
    /// Checks `spec`'s options against `schema`.
    pub fn validate(spec: &Spec, schema: &'static [OptionSpec]) -> Result<Self, ConfigError> {
        let component = spec.name.clone();
        let mut values = BTreeMap::new();
        let mut given = BTreeSet::new();
        for (k, v) in &spec.opts {
            let Some(o) = schema.iter().find(|o| o.key == k) else {
                return Err(ConfigError::UnknownOption {
                    component,
                    key: k.clone(),
                    valid: schema.iter().map(|o| o.key).collect(),
                });
            };
            let value = o.kind.parse(v).ok_or_else(|| ConfigError::BadValue {
                component: component.clone(),
                key: k.clone(),
                value: v.clone(),
                expected: o.kind.expected(),
            })?;
            values.insert(o.key, value);
            given.insert(o.key);
        }
        for o in schema {
            if values.contains_key(o.key) {
                continue;
            }
            if let Some(d) = o.default {
                // A default that does not parse is a bug in the table (a test checks
                // every table's defaults); treat it as absent rather than panic.
                debug_assert!(o.kind.parse(d).is_some(), "bad default {}={d}", o.key);
                if let Some(v) = o.kind.parse(d) {
                    values.insert(o.key, v);
                }
            }
        }
        Ok(Self {
            component,
            schema,
            values,
            given,
        })
    }

    /// Checks that every default of `schema` parses as its kind (for table tests).
    pub fn check_schema(schema: &[OptionSpec]) -> Result<(), String> {
        let mut seen = BTreeSet::new();
        for o in schema {
            if !seen.insert(o.key) {
                return Err(format!("option '{}' declared twice", o.key));
            }
            if let Some(d) = o.default {
                if o.kind.parse(d).is_none() {
                    return Err(format!(
                        "default {}={d} is not {}",
                        o.key,
                        o.kind.expected()
                    ));
                }
            }
            if o.help.is_empty() {
                return Err(format!("option '{}' has no help", o.key));
            }
        }
        Ok(())
    }

    /// The component these options belong to.
    pub fn component(&self) -> &str {
        &self.component
    }

    /// Whether the user gave `key` (rather than its default applying).
    pub fn given(&self, key: &str) -> bool {
        self.debug_known(key);
        self.given.contains(key)
    }

    fn debug_known(&self, key: &str) {
        debug_assert!(
            self.schema.iter().any(|o| o.key == key),
            "'{}' reads option '{key}' that its schema does not declare",
            self.component
        );
    }

    fn value(&self, key: &str) -> Option<&Value> {
        self.debug_known(key);
        self.values.get(key)
    }

    /// A [`OptKind::Bool`] option.
    pub fn bool(&self, key: &str) -> Option<bool> {
        match self.value(key)? {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// A [`OptKind::UInt`] option.
    pub fn u64(&self, key: &str) -> Option<u64> {
        match self.value(key)? {
            Value::UInt(x) => Some(*x),
            _ => None,
        }
    }

    /// A [`OptKind::UInt`] option as `usize` (saturating on 32-bit targets).
    pub fn usize(&self, key: &str) -> Option<usize> {
        self.u64(key)
            .map(|x| usize::try_from(x).unwrap_or(usize::MAX))
    }

    /// A [`OptKind::Float`] option, or the number of a [`OptKind::FloatOr`] one.
    pub fn f64(&self, key: &str) -> Option<f64> {
        match self.value(key)? {
            Value::Float(x) => Some(*x),
            _ => None,
        }
    }

    /// A [`OptKind::Bytes`] option.
    pub fn bytes(&self, key: &str) -> Option<u64> {
        match self.value(key)? {
            Value::Bytes(x) => Some(*x),
            _ => None,
        }
    }

    /// A [`OptKind::Choice`] option, or the word of a [`OptKind::FloatOr`] one.
    pub fn word(&self, key: &str) -> Option<&'static str> {
        match self.value(key)? {
            Value::Word(w) => Some(w),
            _ => None,
        }
    }

    /// A [`OptKind::Text`] option.
    pub fn text(&self, key: &str) -> Option<&str> {
        match self.value(key)? {
            Value::Text(t) => Some(t),
            _ => None,
        }
    }

    /// A [`ConfigError::Invalid`] about these options.
    pub fn invalid(&self, detail: impl Into<String>) -> ConfigError {
        ConfigError::invalid(&self.component, detail)
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

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &[OptionSpec] = &[
        OptionSpec {
            key: "window",
            kind: OptKind::Float { min: 0.0, max: 1.0 },
            default: Some("0.5"),
            help: "priority window",
        },
        OptionSpec {
            key: "n",
            kind: OptKind::UInt { min: 1, max: 100 },
            default: None,
            help: "n",
        },
        OptionSpec {
            key: "inner",
            kind: OptKind::Choice(&["lru", "fifo"]),
            default: Some("lru"),
            help: "inner",
        },
        OptionSpec {
            key: "r",
            kind: OptKind::FloatOr {
                min: 0.0,
                max: 1e9,
                words: &["online"],
            },
            default: None,
            help: "r",
        },
        OptionSpec {
            key: "size",
            kind: OptKind::Bytes {
                min: 1,
                max: u64::MAX,
            },
            default: Some("4MiB"),
            help: "size",
        },
    ];

    fn plain(t: &str) -> Spec {
        Spec::parse(t, |_| false).unwrap()
    }

    #[test]
    fn parses_names_args_and_options() {
        let pos = |n: &str| n == "file" || n == "sim";
        let s = Spec::parse("file:/tmp/a:b/store:direct=true", pos).unwrap();
        assert_eq!(s.arg.as_deref(), Some("/tmp/a:b/store"));
        assert_eq!(s.opts["direct"], "true");
        let s = Spec::parse("file:/tmp/x=y", pos).unwrap();
        assert_eq!(s.arg.as_deref(), Some("/tmp/x=y"));
        assert_eq!(plain("cfdc:window=0.5").to_string(), "cfdc:window=0.5");
        assert!(Spec::parse("lru:x", |_| false).is_err());
        assert!(Spec::parse("lru:a=1,a=2", |_| false).is_err());
        assert!(Spec::parse(":a=1", |_| false).is_err());
    }

    #[test]
    fn validates_types_ranges_and_defaults() {
        let o = Options::validate(&plain("x:window=0.25,r=online"), SCHEMA).unwrap();
        assert_eq!(o.f64("window"), Some(0.25));
        assert_eq!(o.word("inner"), Some("lru"));
        assert_eq!(o.word("r"), Some("online"));
        assert_eq!(o.f64("r"), None);
        assert_eq!(o.u64("n"), None);
        assert_eq!(o.bytes("size"), Some(4 << 20));
        assert!(o.given("window") && !o.given("inner"));
        let o = Options::validate(&plain("x:r=136"), SCHEMA).unwrap();
        assert_eq!(o.f64("r"), Some(136.0));

        let e = Options::validate(&plain("cfdc:windw=0.5"), SCHEMA).unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("unknown option 'windw'") && m.contains("window, n"),
            "{m}"
        );
        let e = Options::validate(&plain("x:window=1.5"), SCHEMA).unwrap_err();
        assert!(e.to_string().contains("a number in [0, 1]"), "{e}");
        let e = Options::validate(&plain("x:inner=mru"), SCHEMA).unwrap_err();
        assert!(e.to_string().contains("one of lru, fifo"), "{e}");
        let e = Options::validate(&plain("x:n=0"), SCHEMA).unwrap_err();
        assert!(e.to_string().contains("[1, 100]"), "{e}");
        assert!(Options::validate(&plain("x:window=NaN"), SCHEMA).is_err());
        Options::check_schema(SCHEMA).unwrap();
    }

    #[test]
    fn lists_split_between_components_only() {
        assert_eq!(
            Spec::split_list("sim:mtron:seed=7,precondition=true,memory,cost:read_us=1,write_us=2"),
            vec![
                "sim:mtron:seed=7,precondition=true",
                "memory",
                "cost:read_us=1,write_us=2"
            ]
        );
        assert_eq!(Spec::split_list("lru, cfdc ,"), vec!["lru", "cfdc"]);
    }

    #[test]
    fn byte_sizes() {
        assert_eq!(parse_bytes("512k"), Ok(512 * 1024));
        assert_eq!(parse_bytes("1GiB"), Ok(1 << 30));
        assert!(parse_bytes("99999999999999999999").is_err());
        assert!(parse_bytes("18446744073709551615G").is_err());
    }

    #[test]
    fn lookup_lists_names() {
        let t = ["lru", "cfdc"];
        let e = lookup("policy", &t, "lruu", |e| e).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown policy 'lruu'; valid names: lru, cfdc"
        );
    }
}
