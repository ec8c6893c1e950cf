//! Names with options: `NAME[:key=value,key=value]` (design.md §7).
//!
//! A few names carry a positional argument before their options: `file:PATH[:opts]` and
//! `sim:PROFILE[:opts]`. Unknown keys are errors that list the valid ones; every option a
//! component reads is declared, so a typo never passes silently.

use crate::LabError;
use std::collections::BTreeMap;
use std::fmt;

/// A parsed component name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// The component kind (`lru`, `direct`, `sim`, ...).
    pub name: String,
    /// Positional argument (`file:PATH`, `sim:PROFILE`), if the kind takes one.
    pub arg: Option<String>,
    /// Options in the order given.
    pub opts: BTreeMap<String, String>,
}

/// Kinds whose first segment after the name is a positional argument.
const POSITIONAL: &[&str] = &["file", "sim"];

impl Spec {
    /// Parses `text`.
    ///
    /// ```
    /// use flashbuf_lab::spec::Spec;
    /// let s = Spec::parse("stable-buffer:recognition=incremental,size=4MiB").unwrap();
    /// assert_eq!(s.name, "stable-buffer");
    /// assert_eq!(s.opts["size"], "4MiB");
    /// let d = Spec::parse("sim:mtron:seed=7").unwrap();
    /// assert_eq!((d.arg.as_deref(), d.opts["seed"].as_str()), (Some("mtron"), "7"));
    /// ```
    pub fn parse(text: &str) -> Result<Self, LabError> {
        let text = text.trim();
        let (name, rest) = match text.split_once(':') {
            Some((n, r)) => (n, Some(r)),
            None => (text, None),
        };
        if name.is_empty() {
            return Err(LabError::Usage(format!("empty component name in '{text}'")));
        }
        let mut arg = None;
        let mut opt_text = rest;
        if POSITIONAL.contains(&name) {
            let Some(r) = rest else {
                return Err(LabError::Usage(format!(
                    "'{name}' needs an argument: {name}:{}",
                    if name == "file" { "PATH" } else { "PROFILE" }
                )));
            };
            // The positional part ends at the last ':' followed by key=value options.
            match r.rsplit_once(':') {
                Some((a, o)) if o.contains('=') => {
                    arg = Some(a.to_string());
                    opt_text = Some(o);
                }
                _ => {
                    arg = Some(r.to_string());
                    opt_text = None;
                }
            }
        }
        let mut opts = BTreeMap::new();
        if let Some(o) = opt_text {
            for kv in o.split(',').filter(|s| !s.is_empty()) {
                let Some((k, v)) = kv.split_once('=') else {
                    return Err(LabError::Usage(format!(
                        "option '{kv}' of '{text}' is not key=value"
                    )));
                };
                if opts
                    .insert(k.trim().to_string(), v.trim().to_string())
                    .is_some()
                {
                    return Err(LabError::Usage(format!(
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

    /// Fails if an option is not in `valid`, listing the valid ones.
    pub fn allow(&self, valid: &[&str]) -> Result<(), LabError> {
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

    /// Option `key` parsed as `T`, or `default`.
    pub fn get<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, LabError>
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

    /// Option `key` as a byte size (`4096`, `4KiB`, `16MiB`, `1GiB`, `512k`), or `default`.
    pub fn get_bytes(&self, key: &str, default: u64) -> Result<u64, LabError> {
        match self.opts.get(key) {
            None => Ok(default),
            Some(v) => parse_bytes(v)
                .map_err(|e| LabError::Usage(format!("option {key}={v} of '{}': {e}", self.name))),
        }
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
pub fn parse_bytes(v: &str) -> Result<u64, String> {
    let v = v.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{v}' is not a byte size"))?;
    let mul = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("unknown size unit '{unit}' in '{v}'")),
    };
    n.checked_mul(mul)
        .ok_or_else(|| format!("'{v}' is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_args_and_options() {
        let s = Spec::parse("lru").unwrap();
        assert_eq!(
            (s.name.as_str(), s.arg.clone(), s.opts.len()),
            ("lru", None, 0)
        );
        let s = Spec::parse("file:/tmp/a:b/store:direct=true").unwrap();
        assert_eq!(s.arg.as_deref(), Some("/tmp/a:b/store"));
        assert_eq!(s.opts["direct"], "true");
        let s = Spec::parse("file:/tmp/x").unwrap();
        assert_eq!(s.arg.as_deref(), Some("/tmp/x"));
        assert!(Spec::parse("file").is_err());
        assert_eq!(
            Spec::parse("cfdc:window=0.5").unwrap().to_string(),
            "cfdc:window=0.5"
        );
    }

    #[test]
    fn unknown_keys_list_valid_ones() {
        let s = Spec::parse("cfdc:windw=0.5").unwrap();
        let e = s
            .allow(&["window", "cluster_size"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown option 'windw'") && e.contains("window, cluster_size"),
            "{e}"
        );
        assert!(Spec::parse("lru:x").is_err());
        assert!(Spec::parse("lru:a=1,a=2").is_err());
    }

    #[test]
    fn typed_options() {
        let s = Spec::parse("x:f=0.25,n=12,size=4MiB").unwrap();
        assert_eq!(s.get("f", 0.0f64).unwrap(), 0.25);
        assert_eq!(s.get("n", 0u32).unwrap(), 12);
        assert_eq!(s.get("missing", 7u32).unwrap(), 7);
        assert_eq!(s.get_bytes("size", 0).unwrap(), 4 << 20);
        assert!(s.get::<u32>("f", 0).is_err());
        assert_eq!(parse_bytes("512k").unwrap(), 512 * 1024);
        assert!(parse_bytes("12XB").is_err());
    }
}
