//! What the binary's end-to-end tests share.

use std::process::{Command, Output};

/// Runs the `flashbuf` binary with `args` from the repository root (where the bundled
/// sample lies) and returns what it did.
pub fn flashbuf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("the flashbuf binary runs")
}

/// The JSON document a successful run printed (fails with its stderr otherwise).
#[allow(dead_code)] // not every suite reads JSON
pub fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("a JSON document")
}
