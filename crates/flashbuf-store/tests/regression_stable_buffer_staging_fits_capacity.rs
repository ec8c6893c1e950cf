#![allow(clippy::unwrap_used)]
//! Regression (issue 16): `flashbuf replay --store stable-buffer --device sim:nvme` over
//! the pgbench `sb256k` I/O traces stopped with "store full: page 135936 lies beyond the
//! capacity", fresh devices too. The lab sizes a simulated device as the run's data plus
//! 64 MiB of slack; StableBuffer's staging area defaults to the profile's focused area
//! (paper §2.1 and §4), which is 64 MiB for sim:nvme, and with the superblock, the state
//! record and the 4 MiB alignment in front of it the data area began at 68 MiB — so the
//! last 4 MiB of the trace's pages lay beyond the device.
//!
//! Now a staging area taken from the profile shrinks to what a fixed-capacity device
//! leaves beside the run's data (`StoreContext::data_pages`); a size given as an option is
//! kept as given.

use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::sim::SimDevice;
use flashbuf_device::{Device, DeviceProfile};
use flashbuf_store::registry::{parse_text, StoreContext};
use flashbuf_store::{ReadOutcome, StoreError};
use flashbuf_testkit::content::filled_page;

const PS: usize = 8192;
const MIB: u64 = 1 << 20;

/// A profile like sim:nvme's: a focused area as large as the lab's slack.
fn nvme_like(focused_area_bytes: u64) -> DeviceProfile {
    DeviceProfile {
        device: "sim:nvme".to_string(),
        page_size: PS as u64,
        granularity_bytes: PS as u64,
        read_seq_us: 20.0,
        read_random_us: 70.0,
        write_seq_us: 50.0,
        write_partitioned_us: 55.0,
        write_focused_us: 60.0,
        write_random_us: 100.0,
        theta_min_bytes: 32 << 10,
        focused_area_bytes,
        asymmetry_r: 1.5,
        clock: "device".to_string(),
        area_bytes: 128 * MIB,
        partitions: 4,
        benchmarks: Vec::new(),
    }
}

/// Formats `spec` on a simulated device holding `data_pages` pages of data plus `slack`
/// bytes, then writes the first and the last page of the data and reads them back.
fn run(spec: &str, data_pages: u64, slack: u64, focused: u64) -> Result<(), StoreError> {
    let profile = nvme_like(focused);
    let measure = |_: &str| -> Result<DeviceProfile, String> { Ok(profile.clone()) };
    let ctx = StoreContext {
        data_pages,
        measure_profile: Some(&measure),
        ..StoreContext::new(PS)
    };
    let dev = SimDevice::by_name("nvme", data_pages * PS as u64 + slack, 1).unwrap();
    assert_eq!(dev.max_len(), Some(data_pages * PS as u64 + slack));
    let store = parse_text(spec)
        .unwrap()
        .factory
        .create(Box::new(dev), &ctx)?;
    let mut buf = vec![0u8; PS];
    for pid in [0, data_pages / 2, data_pages - 1] {
        let page = filled_page(PS, PageId(pid), 1, 3);
        store.write_page(PageId(pid), &page, &DirtyRanges::full(PS))?;
        store.sync()?;
        assert_eq!(store.read_page(PageId(pid), &mut buf)?, ReadOutcome::Found);
        assert_eq!(buf, page, "page {pid}");
    }
    Ok(())
}

#[test]
fn regression_stable_buffer_staging_from_the_profile_fits_beside_the_data() {
    // 2,048 data pages (16 MiB) and 16 MiB of slack; a 16 MiB focused area: the default
    // staging area plus the superblock and the alignment would not fit in the slack.
    run("stable-buffer:align=4MiB", 2048, 16 * MIB, 16 * MIB).unwrap();
    // A staging area that fits is kept whole: the same run with an 8 MiB focused area.
    run("stable-buffer", 2048, 16 * MIB, 8 * MIB).unwrap();
}

#[test]
fn regression_stable_buffer_an_explicit_size_is_kept_and_refused_when_it_cannot_fit() {
    // A size given as an option is not shrunk: the last page cannot fit, and the store
    // says so (a bad request, not a device failure).
    let e = run("stable-buffer:size=16MiB", 2048, 16 * MIB, 16 * MIB).unwrap_err();
    assert!(
        matches!(e, StoreError::Full(ref m) if m.contains("beyond the capacity")),
        "{e}"
    );
}
