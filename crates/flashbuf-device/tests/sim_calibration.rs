//! Calibration: `run_profile` on each simulated device reproduces its published figures
//! within 20% (design.md §3). Each test prints its rows (`--nocapture`); the table in
//! `src/sim/profiles.rs` is copied from them.

use flashbuf_device::{run_profile, DeviceProfile, ProfileOptions, SimDevice};

const TOLERANCE: f64 = 0.20;

fn profile(
    name: &str,
    capacity_mib: u64,
    granularity: u64,
    tweak: impl FnOnce(&mut ProfileOptions),
) -> DeviceProfile {
    let dev = SimDevice::by_name(name, capacity_mib << 20, 1).expect("device");
    let mut o = ProfileOptions {
        granularity_bytes: Some(granularity),
        io_count: 256,
        warmup_ios: 64,
        random_warmup_bytes: Some(0),
        random_write_ios: 0,
        focused_areas: vec![],
        sweep: false,
        ..ProfileOptions::default()
    };
    tweak(&mut o);
    let p = run_profile(&dev, &o).expect("profile");
    dev.check_invariants()
        .expect("invariants after the profile");
    p
}

/// Asserts `measured` within 20% of `published` and prints a table row.
fn check(profile: &str, figure: &str, published: f64, measured: f64) {
    let err = measured / published - 1.0;
    eprintln!(
        "| `{profile}` | {figure} | {published} | {measured:.1} | {:+.0}% |",
        err * 100.0
    );
    assert!(
        err.abs() <= TOLERANCE,
        "{profile}: {figure}: published {published}, measured {measured:.2} ({:+.1}%)",
        err * 100.0
    );
}

#[test]
fn mtron_32k_patterns() {
    let p = profile("mtron", 256, 32 << 10, |o| {
        o.focused_areas = vec![4 << 20, 16 << 20]
    });
    let seq = p.write_seq_us;
    check("mtron", "32 KB sequential write, ms", 0.4, seq / 1000.0);
    check(
        "mtron",
        "32 KB random write, ms",
        9.0,
        p.write_random_us / 1000.0,
    );
    check(
        "mtron",
        "partitioned / sequential",
        1.5,
        p.write_partitioned_us / seq,
    );
    let focused4 = p
        .benchmark("write-focused-4MiB")
        .expect("4 MiB focused")
        .mean_us;
    eprintln!(
        "| `mtron` | focused (4 MB) / sequential | ≤ 2.5 (≈ 2) | {:.2} | |",
        focused4 / seq
    );
    assert!(
        focused4 <= 2.5 * seq,
        "focused within 4 MB {focused4} vs sequential {seq}"
    );
    eprintln!(
        "| `mtron` | 32 KB random read, ms | < 0.4 | {:.3} | |",
        p.read_random_us / 1000.0
    );
    assert!(p.read_random_us < 400.0);
    assert!(
        p.focused_area_bytes >= 4 << 20,
        "focused area {}",
        p.focused_area_bytes
    );
}

#[test]
fn mtron_theta_min_is_32k() {
    let p = profile("mtron", 64, 32 << 10, |o| {
        o.sweep = true;
        o.io_count = 128;
        o.granularities = vec![4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10];
    });
    eprintln!(
        "| `mtron` | θ_min | 32 KB | {} KB | |",
        p.theta_min_bytes >> 10
    );
    assert_eq!(p.theta_min_bytes, 32 << 10);
}

#[test]
fn sd_card_8k_random() {
    let p = profile("sd-card", 128, 8 << 10, |_| {});
    check(
        "sd-card",
        "8 KB random reads/s",
        680.4,
        1e6 / p.read_random_us,
    );
    check(
        "sd-card",
        "8 KB random writes/s",
        5.0,
        1e6 / p.write_random_us,
    );
    check("sd-card", "R", 136.2, p.asymmetry_r);
}

#[test]
fn usb_stick_8k_random() {
    let p = profile("usb-stick", 128, 8 << 10, |_| {});
    check(
        "usb-stick",
        "8 KB random reads/s",
        666.1,
        1e6 / p.read_random_us,
    );
    check(
        "usb-stick",
        "8 KB random writes/s",
        1.4,
        1e6 / p.write_random_us,
    );
    check("usb-stick", "R", 475.7, p.asymmetry_r);
}

#[test]
fn flash_25_asymmetry() {
    // FAST: random writes are cheap until the random log pool fills; the default warm-up
    // (the area written over once) passes that start-up phase.
    let p = profile("flash-25", 128, 8 << 10, |o| o.random_warmup_bytes = None);
    check("flash-25", "R (8 KB random)", 25.0, p.asymmetry_r);
}

#[test]
fn nipu_ssd_4k_iometer() {
    let p = profile("nipu-ssd", 128, 4 << 10, |_| {});
    check("nipu-ssd", "4 KB sequential read, µs", 94.0, p.read_seq_us);
    check(
        "nipu-ssd",
        "4 KB sequential write, µs",
        75.0,
        p.write_seq_us,
    );
    check("nipu-ssd", "4 KB random read, µs", 106.0, p.read_random_us);
    check(
        "nipu-ssd",
        "4 KB random write, µs",
        8143.0,
        p.write_random_us,
    );
}

#[test]
fn nvme_random_write_costs_three_sequential() {
    let p = profile("nvme", 128, 4 << 10, |o| {
        o.random_warmup_bytes = None;
        o.random_write_ios = 4096;
    });
    check(
        "nvme",
        "4 KB random / sequential write",
        3.0,
        p.write_random_us / p.write_seq_us,
    );
}

#[test]
fn hdd_4k_iometer() {
    let p = profile("hdd", 64, 4 << 10, |o| o.random_write_ios = 1024);
    check("hdd", "4 KB random read, µs", 13146.0, p.read_random_us);
    check("hdd", "4 KB random write, µs", 6738.0, p.write_random_us);
    check("hdd", "4 KB sequential read, µs", 127.0, p.read_seq_us);
    check("hdd", "4 KB sequential write, µs", 183.0, p.write_seq_us);
}

/// Calibration aid: prints the full default-option profile of every simulated device (or of
/// those named in `FLASHBUF_SIM_PROFILE`, comma-separated) at 256 MiB. Run with
/// `cargo test --release -p flashbuf-device --test sim_calibration -- --ignored --nocapture print`.
#[test]
#[ignore = "prints tables for calibration work"]
fn print_default_profiles() {
    let wanted = std::env::var("FLASHBUF_SIM_PROFILE").unwrap_or_default();
    for name in flashbuf_device::sim_profile_names() {
        if !wanted.is_empty() && !wanted.split(',').any(|w| w == *name) {
            continue;
        }
        let dev = SimDevice::by_name(name, 256 << 20, 1).expect("device");
        let p = run_profile(&dev, &ProfileOptions::default()).expect("profile");
        println!(
            "{}\nftl {:?}\nwear {:?}\n",
            p.to_table(),
            dev.ftl_stats(),
            dev.wear()
        );
    }
}
