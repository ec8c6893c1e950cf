//! The lab's `flashbuf profile --device sim:<p>` path: default options on every profile.

use flashbuf_device::{run_profile, sim_profile_names, Device, ProfileOptions, SimDevice};

#[test]
fn default_options_profile_every_simulated_device() {
    for name in sim_profile_names() {
        let dev = SimDevice::by_name(name, 32 << 20, 1).expect("device");
        let opts = ProfileOptions {
            io_count: 128,
            random_write_ios: 512,
            ..ProfileOptions::default()
        };
        let p = run_profile(&dev, &opts).expect(name);
        assert_eq!(p.device, format!("sim:{name}"));
        assert_eq!((p.clock.as_str(), p.area_bytes), ("device", 32 << 20));
        for v in [
            p.read_seq_us,
            p.read_random_us,
            p.write_seq_us,
            p.write_partitioned_us,
            p.write_focused_us,
            p.write_random_us,
            p.asymmetry_r,
        ] {
            assert!(v.is_finite() && v > 0.0, "{name}: {p:?}");
        }
        assert!(p.theta_min_bytes >= 4096, "{name}");
        assert!(p.benchmarks.len() >= 18, "{name}: {}", p.benchmarks.len());
        assert!(!p.to_table().is_empty());
        dev.check_invariants().expect(name);
        let s = dev.stats();
        assert!((s.device_time_us - dev.clock_us()).abs() < 1e-6);
    }
}

#[test]
fn a_one_gib_device_is_cheap_to_build() {
    let dev = SimDevice::by_name("nvme", 1 << 30, 1).expect("1 GiB device");
    assert_eq!(dev.len(), 1 << 30);
    dev.write_at((1 << 30) - 4096, &[9u8; 4096])
        .expect("last page");
    let mut b = [0u8; 4096];
    dev.read_at((1 << 30) - 4096, &mut b).expect("read");
    assert_eq!(b, [9u8; 4096]);
    let info = dev.info();
    assert_eq!(info.ftl, "page-mapped");
    assert!(info.geometry.map_or(0, |g| g.blocks) > (1 << 30) / (4 << 20));
}
