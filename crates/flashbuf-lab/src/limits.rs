//! What a run can use and what the machine can hold: buffer pools are capped at the pages
//! a run can ever touch, and refused (with the size named) when the machine's available
//! memory cannot hold them — instead of an allocation that aborts the process.

use crate::LabError;

/// Bytes of memory available to a new allocation: `MemAvailable` of `/proc/meminfo`
/// (Linux), `None` where that is unknown.
pub fn available_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line
        .trim_start_matches("MemAvailable:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// `bytes` in GiB with one decimal (`64.0 GiB`).
pub fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
}

/// Refuses a buffer pool of `frames` frames of `page_size` bytes that the machine cannot
/// hold (more than its available memory), naming the size. `what` names the option
/// (`--pool-frames 1048576`).
pub fn check_pool_fits(frames: usize, page_size: usize, what: &str) -> Result<(), LabError> {
    let bytes = (frames as u64).saturating_mul(page_size as u64);
    let available = available_memory_bytes();
    check_fits_in(
        bytes,
        available,
        &format!("{what}: a pool of {frames} frames of {page_size} bytes"),
    )
}

/// [`check_pool_fits`] against a given amount of available memory (`None`: unknown, so
/// only sizes beyond the address space are refused).
pub fn check_fits_in(bytes: u64, available: Option<u64>, what: &str) -> Result<(), LabError> {
    let limit = available.unwrap_or(isize::MAX as u64);
    if bytes > limit {
        let have = match available {
            Some(a) => format!("this machine has {} available", gib(a)),
            None => "more than the address space".to_string(),
        };
        return Err(LabError::Usage(format!(
            "{what} needs {} of memory; {have}",
            gib(bytes)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_beyond_the_memory_are_refused_naming_them() {
        let e = check_fits_in(64 << 30, Some(16 << 30), "--pool-frames 1048576")
            .unwrap_err()
            .to_string();
        assert!(e.contains("64.0 GiB") && e.contains("16.0 GiB"), "{e}");
        assert!(check_fits_in(1 << 30, Some(16 << 30), "x").is_ok());
        assert!(check_fits_in(u64::MAX, None, "x").is_err());
        assert_eq!(gib(3 << 29), "1.5 GiB");
    }

    #[test]
    fn this_machine_reports_its_memory() {
        if cfg!(target_os = "linux") {
            assert!(available_memory_bytes().is_some_and(|b| b > 0));
        }
    }
}
