#![allow(clippy::unwrap_used)]
//! `flashbuf profile` on a simulated device and on a real file.

use std::process::Command;

fn flashbuf(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(args)
        .output()
        .unwrap()
}

const FIELDS: &[&str] = &[
    "device",
    "page_size",
    "granularity_bytes",
    "read_seq_us",
    "read_random_us",
    "write_seq_us",
    "write_partitioned_us",
    "write_focused_us",
    "write_random_us",
    "theta_min_bytes",
    "focused_area_bytes",
    "asymmetry_r",
];

#[test]
fn profile_of_simulated_sd_card_has_its_asymmetry_and_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("sd.json");
    let o = flashbuf(&[
        "profile",
        "--device",
        "sim:sd-card",
        "--quick",
        "--json",
        "--save",
        save.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for f in FIELDS {
        assert!(!v[f].is_null(), "{f} missing");
    }
    // FD-Buffer Table 1: R = 136 for the Kingston SDHC (8 KB pages).
    let r = v["asymmetry_r"].as_f64().unwrap();
    assert!((136.0 * 0.8..=136.0 * 1.2).contains(&r), "R = {r}");
    // The saved file is the same profile.
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&save).unwrap()).unwrap();
    assert_eq!(saved["asymmetry_r"], v["asymmetry_r"]);
}

#[test]
fn profile_of_a_real_file_works() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("probe");
    let o = flashbuf(&[
        "profile",
        "--file",
        f.to_str().unwrap(),
        "--quick",
        "--area",
        "8MiB",
        "--page-size",
        "4096",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["write_random_us"].as_f64().unwrap() > 0.0);
    assert!(v["read_seq_us"].as_f64().unwrap() > 0.0);
    assert!(!f.exists(), "the probe file the command created is removed");
}

#[test]
fn profile_refuses_a_non_simulated_device_name() {
    let o = flashbuf(&["profile", "--device", "memory"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--file"));
}
