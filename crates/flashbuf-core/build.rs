//! Records the compiler and profile of the build (`FLASHBUF_RUSTC`, `FLASHBUF_PROFILE`) for
//! `flashbuf_core::buildinfo`. The commit is read at run time, not here: a build script
//! that watched git would rebuild every crate of the workspace on each commit.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    println!("cargo:rustc-env=FLASHBUF_RUSTC={version}");
    println!(
        "cargo:rustc-env=FLASHBUF_PROFILE={}",
        std::env::var("PROFILE").unwrap_or_default()
    );
}
