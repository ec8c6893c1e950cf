//! `flashbuf profile`: uFLIP's micro-benchmarks against a simulated device or a real file,
//! producing a device profile (table, `--json`, or a file the write paths and FD-Buffer load).

use crate::common::print;
use clap::Args;
use flashbuf_device::profile::{run_profile, DeviceProfile, ProfileOptions};
use flashbuf_device::{Device, FileDevice, FileDeviceOptions};
use flashbuf_lab::registry::{build_sim, BuildContext};
use flashbuf_lab::spec::parse_bytes;
use flashbuf_lab::LabError;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `flashbuf profile`.
#[derive(Args)]
#[command(group = clap::ArgGroup::new("target").required(true).args(["device", "file"]))]
pub struct ProfileArgs {
    /// A simulated device, `sim:PROFILE[:opts]`.
    #[arg(long)]
    pub device: Option<String>,
    /// A real file to profile (O_DIRECT when the file system allows it). Created if absent
    /// and removed afterwards if it was created.
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// Size of each I/O of the headline figures (default: the page size).
    #[arg(long)]
    pub granularity: Option<String>,
    /// Database page size the profile is for.
    #[arg(long, default_value_t = 8192)]
    pub page_size: u64,
    /// Bytes of the device to use (default: 256 MiB for simulated devices, 64 MiB for files).
    #[arg(long)]
    pub area: Option<String>,
    /// Fewer I/Os per benchmark and no secondary sweep (seconds instead of minutes on
    /// slow simulated devices).
    #[arg(long)]
    pub quick: bool,
    /// Save the profile as JSON to this file (loadable by write paths and FD-Buffer).
    #[arg(long)]
    pub save: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Seed of the random offsets (and of the simulated device).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

fn bytes(v: &Option<String>, what: &str) -> Result<Option<u64>, LabError> {
    v.as_deref()
        .map(|s| parse_bytes(s).map_err(|e| LabError::Usage(format!("--{what}: {e}"))))
        .transpose()
}

/// Runs `flashbuf profile`.
pub fn run(a: ProfileArgs) -> Result<ExitCode, LabError> {
    let mut opts = if a.quick {
        ProfileOptions::quick()
    } else {
        ProfileOptions::default()
    };
    opts.page_size = a.page_size;
    opts.granularity_bytes = bytes(&a.granularity, "granularity")?;
    opts.seed = a.seed;
    let area = bytes(&a.area, "area")?;
    let profile: DeviceProfile = match (&a.device, &a.file) {
        (Some(d), _) => {
            let spec = flashbuf_lab::spec::parse(d)?;
            if spec.name != "sim" {
                return Err(LabError::Usage(format!(
                    "--device takes a simulated device sim:PROFILE, not '{d}'; profile a real file with --file"
                )));
            }
            let area = area.unwrap_or(256 << 20);
            let ctx = BuildContext {
                page_size: a.page_size as usize,
                data: flashbuf_core::DataMode::Bytes,
                data_pages: area / a.page_size,
                seed: a.seed,
                facts: Default::default(),
            };
            let dev = build_sim(&spec, &ctx)?;
            dev.set_len(area)?;
            opts.area_bytes = Some(area);
            opts.device_name = Some(spec.to_string());
            run_profile(&dev, &opts)?
        }
        (None, Some(path)) => {
            let area = area.unwrap_or(64 << 20);
            let existed = path.exists();
            let direct = FileDeviceOptions {
                direct: true,
                ..FileDeviceOptions::default()
            };
            let dev = match FileDevice::open(path, direct) {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("note: O_DIRECT refused ({e}); profiling through the page cache");
                    FileDevice::open(path, FileDeviceOptions::default())?
                }
            };
            if dev.len() < area {
                dev.set_len(area)?;
            }
            opts.area_bytes = Some(area);
            let r = run_profile(&dev, &opts);
            drop(dev);
            if !existed {
                let _ = std::fs::remove_file(path);
            }
            r?
        }
        (None, None) => return Err(LabError::Usage("give --device or --file".into())),
    };
    if let Some(p) = &a.save {
        profile.save(p)?;
    }
    if a.json {
        print(&profile.to_json())?;
        print("\n")?;
    } else {
        print(&profile.to_table())?;
    }
    Ok(ExitCode::SUCCESS)
}
