//! Devices by name: a thin adapter over the device table
//! ([`flashbuf_device::registry::DEVICES`]: `memory`, `cost`, `file:PATH`, `sim:PROFILE`),
//! which holds every name, typed option and builder. The lab parses names up front
//! ([`validate_devices`]: no I/O, a whole matrix before the first run) and builds per run
//! with its [`BuildContext`].

use super::BuildContext;
use crate::spec::Spec;
use crate::LabError;
use flashbuf_core::DeviceFacts;
use flashbuf_device::registry::{self as table, DeviceClock, DeviceContext};
use flashbuf_device::sim::SimDevice;
use flashbuf_device::{run_profile, Device, DeviceProfile, ProfileOptions};
use std::path::PathBuf;

pub use flashbuf_device::registry::{DeviceConfig, SIM_SLACK_BYTES};

/// Device names as help shows them (`memory`, `cost`, `file:PATH`, `sim:PROFILE`).
pub fn device_names() -> Vec<String> {
    table::device_names()
}

/// A device built for a run, and a file to remove after it (for `file:` devices the lab
/// created).
pub struct BuiltDevice {
    /// The device.
    pub device: Box<dyn Device>,
    /// A file the lab created and removes when the run is over.
    pub cleanup: Option<PathBuf>,
}

/// The device context of a run.
fn device_ctx(ctx: &BuildContext) -> DeviceContext {
    DeviceContext {
        capacity_hint_bytes: ctx.data_bytes(),
        page_size: ctx.page_size,
        seed: ctx.seed,
    }
}

/// Parses and checks the device named by `spec` (name, argument, every option's key, type
/// and range) without building anything.
pub fn parse_device(spec: &Spec) -> Result<DeviceConfig, LabError> {
    Ok(table::parse_device(spec)?)
}

/// Checks every device name of a matrix before anything runs; the first bad one fails,
/// naming the option, the value and what is valid.
pub fn validate_devices<'a>(specs: impl IntoIterator<Item = &'a Spec>) -> Result<(), LabError> {
    for s in specs {
        parse_device(s)?;
    }
    Ok(())
}

/// Whether the device's capacity follows the trace's data size (the lab must scan the
/// trace before building it): `sim`.
pub fn device_needs_capacity(spec: &Spec) -> bool {
    table::device_entry(&spec.name).is_ok_and(|e| e.sized_by_hint)
}

/// Whether the device has a clock (its device time is worth splitting into reads and
/// writes): all but `memory`.
pub fn device_has_clock(spec: &Spec) -> bool {
    table::device_entry(&spec.name).is_ok_and(|e| e.clock != DeviceClock::None)
}

/// Builds the device named by `spec`.
pub fn build_device(spec: &Spec, ctx: &BuildContext) -> Result<BuiltDevice, LabError> {
    let built = parse_device(spec)?.build(&device_ctx(ctx))?;
    Ok(BuiltDevice {
        device: built.device,
        cleanup: built.cleanup,
    })
}

/// What the device named by `spec` is like: for `cost`, its latencies; for `sim`, its
/// erase block and a quick uFLIP profile of a separate device of the same profile; 1:1
/// costs otherwise. Deterministic; `compare` computes it once per device.
pub fn device_facts(spec: &Spec, ctx: &BuildContext) -> Result<DeviceFacts, LabError> {
    Ok(parse_device(spec)?.facts(&device_ctx(ctx))?)
}

/// Builds `sim:PROFILE[:opts]` as a [`SimDevice`]: `seed` and `precondition` (`steady`,
/// the default: filled and randomly overwritten until the FTL's write amplification is
/// steady, at no cost, as real databases' aged devices; `sequential`; `fresh`) are the
/// lab's; the other options are the profile's, typed per profile kind (flash or disk).
pub fn build_sim(spec: &Spec, ctx: &BuildContext) -> Result<SimDevice, LabError> {
    Ok(table::parse_sim(spec)?.build_sim(&device_ctx(ctx))?)
}

/// Measures the uFLIP-style profile of the simulated device `sim_name` (`sim:PROFILE[:opts]`)
/// on a 256 MiB device in the state its spec names (steady unless `precondition=fresh` or
/// `sequential`), for `page_size`: what `flashbuf profile --device` prints.
pub fn measure_sim_profile(
    sim_name: &str,
    page_size: usize,
    seed: u64,
) -> Result<DeviceProfile, LabError> {
    let area: u64 = 256 << 20;
    let spec = crate::spec::parse(sim_name)?;
    let ctx = DeviceContext {
        capacity_hint_bytes: area / page_size as u64 * page_size as u64,
        page_size,
        seed,
    };
    let dev = table::parse_sim(&spec)?.build_sim(&ctx)?;
    dev.set_len(area)?;
    let opts = ProfileOptions {
        page_size: page_size as u64,
        area_bytes: Some(area),
        device_name: Some(spec.to_string()),
        seed,
        ..ProfileOptions::default()
    };
    Ok(run_profile(&dev, &opts)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(t: &str) -> Spec {
        crate::spec::parse(t).unwrap()
    }

    #[test]
    fn a_matrix_with_one_bad_device_fails_before_building_anything() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("never-created");
        let specs = [
            spec(&format!("file:{}", path.display())),
            spec("sim:mtron:seed=3"),
            spec("sim:hdd:rpm=7200,channels=4"),
        ];
        let e = validate_devices(&specs).unwrap_err().to_string();
        assert!(
            e.contains("unknown option 'channels'") && e.contains("rpm, write-cache, readahead"),
            "{e}"
        );
        assert!(!path.exists(), "validation created the file");
        validate_devices(&specs[..2]).unwrap();
        assert!(device_needs_capacity(&specs[1]) && !device_needs_capacity(&specs[0]));
        assert!(!device_has_clock(&spec("memory")) && device_has_clock(&spec("cost")));
        let e = build_sim(
            &spec("cost"),
            &BuildContext {
                page_size: 4096,
                data: flashbuf_core::DataMode::Bytes,
                data_pages: 1,
                seed: 1,
                facts: DeviceFacts::default(),
            },
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("sim:PROFILE"), "{e}");
    }
}
