//! `run_profile` on a real temporary file (O_DIRECT where the file system allows it, else
//! buffered), the JSON contract of `flashbuf profile --json`, and save/load.

use flashbuf_device::{
    run_profile, Device, DeviceProfile, FileDevice, FileDeviceOptions, ProfileOptions, SimDevice,
};

fn open_file(path: &std::path::Path) -> (FileDevice, &'static str) {
    let direct = FileDeviceOptions {
        direct: true,
        ..FileDeviceOptions::default()
    };
    match FileDevice::open(path, direct) {
        Ok(d) => (d, "O_DIRECT"),
        Err(e) => {
            eprintln!("O_DIRECT refused here ({e}); profiling through the page cache");
            let d = FileDevice::open(path, FileDeviceOptions::default()).expect("open");
            (d, "buffered")
        }
    }
}

#[test]
fn profiles_a_real_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (dev, mode) = open_file(&dir.path().join("dev"));
    dev.set_len(16 << 20).expect("set_len");
    let opts = ProfileOptions {
        device_name: Some(format!("file ({mode})")),
        ..ProfileOptions::quick()
    };
    let p = run_profile(&dev, &opts).expect("profile");
    eprintln!("{}", p.to_table());
    assert_eq!(p.clock, "device", "files report their call times");
    for v in [
        p.read_seq_us,
        p.read_random_us,
        p.write_seq_us,
        p.write_partitioned_us,
        p.write_random_us,
    ] {
        assert!(v.is_finite() && v > 0.0, "{p:?}");
    }
    assert!(p.asymmetry_r > 0.0);
    assert_eq!(p.granularity_bytes, 4096);
    assert!(p.benchmarks.len() >= 10, "{}", p.benchmarks.len());
    // O_DIRECT demands alignment: the alignment benchmark is skipped there.
    assert_eq!(
        p.benchmark("alignment-write-random-shift-half").is_some(),
        dev.alignment() == 1
    );
}

#[test]
fn json_has_the_contract_fields_and_round_trips() {
    let dev = SimDevice::by_name("nipu-ssd", 16 << 20, 1).expect("device");
    let p = run_profile(&dev, &ProfileOptions::quick()).expect("profile");
    let v: serde_json::Value = serde_json::from_str(&p.to_json()).expect("json");
    for key in [
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
    ] {
        assert!(v.get(key).is_some_and(|x| !x.is_null()), "missing {key}");
    }
    assert_eq!(v["device"], "sim:nipu-ssd");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("p.json");
    p.save(&path).expect("save");
    assert_eq!(DeviceProfile::load(&path).expect("load"), p);
    // Only the contract fields are required to load.
    let minimal = r#"{"device":"x","page_size":4096,"granularity_bytes":4096,"read_seq_us":1,
        "read_random_us":1,"write_seq_us":1,"write_partitioned_us":1,"write_focused_us":1,
        "write_random_us":1,"theta_min_bytes":4096,"focused_area_bytes":0,"asymmetry_r":1}"#;
    std::fs::write(&path, minimal).expect("write");
    assert_eq!(DeviceProfile::load(&path).expect("minimal").device, "x");
    std::fs::write(&path, "{}").expect("write");
    assert!(DeviceProfile::load(&path).is_err());
}

#[test]
fn same_seed_same_profile() {
    let run = || {
        let dev = SimDevice::by_name("flash-25", 16 << 20, 5).expect("device");
        run_profile(&dev, &ProfileOptions::quick()).expect("profile")
    };
    assert_eq!(run(), run());
}

#[test]
fn bad_options_are_errors() {
    let dev = SimDevice::by_name("nvme", 1 << 20, 1).expect("device");
    let o = ProfileOptions {
        granularity_bytes: Some(512 << 10),
        ..ProfileOptions::quick()
    };
    assert!(
        run_profile(&dev, &o).is_err(),
        "area too small for the I/O size"
    );
    let o = ProfileOptions {
        io_count: 0,
        ..ProfileOptions::quick()
    };
    assert!(run_profile(&dev, &o).is_err());
}
