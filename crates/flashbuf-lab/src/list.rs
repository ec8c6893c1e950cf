//! `flashbuf list`: every component the lab can name, with its options (type and range,
//! default, one-line help), generated from the registration tables — policies
//! (`flashbuf_pool::policy::POLICIES` and the pass-through `none`), stores
//! (`flashbuf_store::registry::STORES`), devices (`flashbuf_device::registry::DEVICES`,
//! with each simulated profile and its options), FTLs (`flashbuf_device::sim::FTLS`, the
//! `ftl=` of a flash profile) and engine workloads (`flashbuf_workload::WORKLOADS`).

use crate::LabError;
use flashbuf_core::config::OptionSpec;
use serde::Serialize;
use std::fmt::Write as _;

/// The kinds of components.
pub const KINDS: &[&str] = &["policies", "stores", "devices", "ftls", "workloads"];

/// One option of a component.
#[derive(Debug, Clone, Serialize)]
pub struct OptionInfo {
    /// The key.
    pub key: &'static str,
    /// Type and range (`a whole number in [1, 64]`).
    pub expected: String,
    /// The default, if it is a fixed value (otherwise the help says where it comes from).
    pub default: Option<&'static str>,
    /// What it does.
    pub help: &'static str,
}

/// One nameable component.
#[derive(Debug, Clone, Serialize)]
pub struct Component {
    /// Its kind (one of [`KINDS`]).
    pub kind: &'static str,
    /// How to name it (`sim:mtron`, `cfdc`).
    pub name: String,
    /// What it is.
    pub help: String,
    /// Its options.
    pub options: Vec<OptionInfo>,
}

fn options(specs: &[OptionSpec]) -> Vec<OptionInfo> {
    specs
        .iter()
        .map(|o| OptionInfo {
            key: o.key,
            expected: o.kind.expected(),
            default: o.default,
            help: o.help,
        })
        .collect()
}

/// Every component of `kind` (one of [`KINDS`]), or of every kind.
pub fn components(kind: Option<&str>) -> Result<Vec<Component>, LabError> {
    if let Some(k) = kind {
        if !KINDS.contains(&k) {
            return Err(LabError::Usage(format!(
                "unknown kind '{k}'; valid kinds: {}",
                KINDS.join(", ")
            )));
        }
    }
    let want = |k: &str| kind.is_none_or(|x| x == k);
    let mut out = Vec::new();
    if want("policies") {
        out.push(Component {
            kind: "policies",
            name: crate::registry::PASS_THROUGH.to_string(),
            help: "pass-through: no buffer pool, every reference goes to the store (I/O traces captured below a buffer)".to_string(),
            options: Vec::new(),
        });
        out.extend(flashbuf_pool::policy::POLICIES.iter().map(|e| Component {
            kind: "policies",
            name: e.name.to_string(),
            help: e.help.to_string(),
            options: options(e.options),
        }));
    }
    if want("stores") {
        out.extend(flashbuf_store::registry::STORES.iter().map(|e| Component {
            kind: "stores",
            name: e.name.to_string(),
            help: e.help.to_string(),
            options: options(e.options),
        }));
    }
    if want("devices") {
        devices(&mut out)?;
    }
    if want("ftls") {
        out.extend(flashbuf_device::sim::FTLS.iter().map(|e| Component {
            kind: "ftls",
            name: e.name.to_string(),
            help: e.help.to_string(),
            options: options(e.options),
        }));
    }
    if want("workloads") {
        out.extend(flashbuf_workload::WORKLOADS.iter().map(|e| Component {
            kind: "workloads",
            name: e.name.to_string(),
            help: e.help.to_string(),
            options: options(e.options),
        }));
    }
    Ok(out)
}

/// Devices: each entry; `sim` once per profile, with that profile's options.
fn devices(out: &mut Vec<Component>) -> Result<(), LabError> {
    for e in flashbuf_device::registry::DEVICES {
        if e.name == "sim" {
            for p in flashbuf_device::sim::sim_profile_names() {
                let profile = flashbuf_device::sim::SimProfile::by_name(p)
                    .map_err(|err| LabError::Invariant(err.to_string()))?;
                let opts =
                    (e.options)(Some(p)).map_err(|err| LabError::Invariant(err.to_string()))?;
                out.push(Component {
                    kind: "devices",
                    name: format!("sim:{p}"),
                    help: format!("{} — {}", e.help, profile.source),
                    options: options(opts),
                });
            }
            continue;
        }
        let opts = (e.options)(None).map_err(|err| LabError::Invariant(err.to_string()))?;
        out.push(Component {
            kind: "devices",
            name: match e.arg {
                Some(a) => format!("{}:{a}", e.name),
                None => e.name.to_string(),
            },
            help: e.help.to_string(),
            options: options(opts),
        });
    }
    Ok(())
}

/// The listing as text: per kind a heading, per component its name and help, per option
/// `key=…` with type, default and help.
pub fn text(components: &[Component]) -> String {
    let mut out = String::new();
    let mut kind = "";
    for c in components {
        if c.kind != kind {
            kind = c.kind;
            let _ = writeln!(out, "{}{kind}:", if out.is_empty() { "" } else { "\n" });
        }
        let _ = writeln!(out, "  {}  — {}", c.name, c.help);
        for o in &c.options {
            let default = o
                .default
                .map_or(String::new(), |d| format!(", default {d}"));
            let _ = writeln!(out, "      {}=  {}{default}: {}", o.key, o.expected, o.help);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_is_listed_with_its_options() {
        let all = components(None).unwrap();
        for kind in KINDS {
            assert!(all.iter().any(|c| c.kind == *kind), "{kind}");
        }
        assert_eq!(
            all.iter().filter(|c| c.kind == "policies").count(),
            flashbuf_pool::policy::POLICIES.len() + 1
        );
        let cfdc = all.iter().find(|c| c.name == "cfdc").unwrap();
        assert!(cfdc
            .options
            .iter()
            .any(|o| o.key == "window" && o.default.is_some()));
        assert!(all
            .iter()
            .any(|c| c.name == "sim:mtron" && !c.options.is_empty()));
        assert!(all.iter().any(|c| c.name == "file:PATH"));
        let t = text(&components(Some("stores")).unwrap());
        assert!(t.starts_with("stores:") && t.contains("direct"), "{t}");
        let e = components(Some("polices")).unwrap_err().to_string();
        assert!(e.contains("valid kinds: policies"), "{e}");
    }
}
