//! Option schemas ([`OptionSpec`], [`OptKind`]) and the typed values a spec's options
//! validate to ([`Options`]).

use super::{parse_bytes, ConfigError, Spec};
use std::collections::{BTreeMap, BTreeSet};

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
