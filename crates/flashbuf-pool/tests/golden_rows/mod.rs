//! Golden rows in a text file, one per line: `KEY VALUES`, `#` comments. Shared by the
//! golden suites that iterate a registration table (the pool's `policies_golden.rs`, the
//! lab's `policies_golden_lab.rs`, which includes this file by path).
//!
//! With `FLASHBUF_REGEN_GOLDEN` set, [`check`] rewrites the file from the computed rows.
//! Otherwise every computed row must be in the file with the same values; a row missing
//! from the file (a new table entry, a new golden spec) and a row of the file that nothing
//! computes (a removed one) fail, naming the row and the command that regenerates it.
#![allow(dead_code)]

use std::path::Path;

/// The environment variable that regenerates golden files.
pub const REGEN: &str = "FLASHBUF_REGEN_GOLDEN";

/// One computed row: its key (a spec, maybe with a size) and its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// What the row is about (`lru`, `cfdc frames=64`); no two rows share it.
    pub key: String,
    /// The numbers, as `name=value` words.
    pub values: String,
}

impl Row {
    /// The row's line in the file.
    pub fn line(&self) -> String {
        format!("{} {}", self.key, self.values)
    }
}

/// Compares `rows` with the golden file at `path` (or rewrites it, see the module
/// documentation). `header` lines are written as comments on regeneration; `command` is
/// the command that regenerates the file.
pub fn check(path: &Path, command: &str, header: &[&str], rows: &[Row]) {
    if std::env::var_os(REGEN).is_some() {
        let mut text: String = header.iter().map(|h| format!("# {h}\n")).collect();
        text += &format!("# Regenerate: {command}\n");
        for r in rows {
            text += &r.line();
            text.push('\n');
        }
        std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        eprintln!("wrote {} rows to {}", rows.len(), path.display());
        return;
    }
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let file: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let find = |key: &str| {
        let prefix = format!("{key} ");
        file.iter().find(|l| l.starts_with(&prefix)).copied()
    };
    let mut problems = Vec::new();
    for r in rows {
        match find(&r.key) {
            None => problems.push(format!("missing golden row '{}'", r.key)),
            Some(l) if l != r.line() => problems.push(format!(
                "golden row changed:\n  want {l}\n  got  {}",
                r.line()
            )),
            Some(_) => {}
        }
    }
    for l in &file {
        if !rows.iter().any(|r| l.starts_with(&format!("{} ", r.key))) {
            problems.push(format!("stale golden row (nothing computes it): {l}"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} in {}:\n{}\nIf the change is intended, regenerate with `{command}`",
        if problems.len() == 1 {
            "1 problem"
        } else {
            "problems"
        },
        path.display(),
        problems.join("\n")
    );
}
