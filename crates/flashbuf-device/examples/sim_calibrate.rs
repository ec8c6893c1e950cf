//! Prints the uFLIP-style profile of every simulated device (calibration aid):
//! `cargo run --release -p flashbuf-device --example sim_calibrate [profile] [MiB] [granularity|0] [io_count]`.

use flashbuf_device::{run_profile, sim_profile_names, ProfileOptions, SimDevice};

fn main() -> Result<(), flashbuf_device::DeviceError> {
    let args: Vec<String> = std::env::args().collect();
    let names: Vec<&str> = match args.get(1) {
        Some(n) if n != "all" => vec![n.as_str()],
        _ => sim_profile_names().to_vec(),
    };
    let mib: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(256);
    let gran: Option<u64> = args.get(3).and_then(|s| s.parse().ok()).filter(|&g| g > 0);
    let ios: Option<u32> = args.get(4).and_then(|s| s.parse().ok());
    for name in names {
        let dev = SimDevice::by_name(name, mib << 20, 1)?;
        let opts = ProfileOptions {
            granularity_bytes: gran,
            io_count: ios.unwrap_or(ProfileOptions::default().io_count),
            ..ProfileOptions::default()
        };
        let t = std::time::Instant::now();
        let p = run_profile(&dev, &opts)?;
        println!("{}", p.to_table());
        println!("ftl {:?}", dev.ftl_stats());
        println!("wall {:.2}s\n", t.elapsed().as_secs_f64());
    }
    Ok(())
}
