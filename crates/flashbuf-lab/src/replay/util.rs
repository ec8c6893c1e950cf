//! Progress bar, final verification and CPU time of a replay.

use crate::config::RunConfig;
use crate::oracle::Oracle;
use crate::scan::TraceScan;
use crate::LabError;
use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::{AlignedBuf, PageId};
use flashbuf_store::{PageStore, ReadOutcome, StoreError};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The run's progress bar on stderr (hidden unless `cfg.progress`).
pub(super) fn progress_bar(cfg: &RunConfig, scan: Option<&TraceScan>) -> ProgressBar {
    if !cfg.progress {
        return ProgressBar::hidden();
    }
    let total = scan.map(|s| s.references);
    let pb = match total {
        Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
    };
    let style = if total.is_some() {
        ProgressStyle::with_template(
            "{prefix} [{bar:30}] {human_pos}/{human_len} refs, {rate}, ETA {eta}",
        )
    } else {
        ProgressStyle::with_template("{prefix} {spinner} {human_pos} refs, {rate}")
    };
    if let Ok(s) = style {
        pb.set_style(
            s.with_key(
                "rate",
                |st: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.2} M refs/s", st.per_sec() / 1e6);
                },
            )
            .progress_chars("=> "),
        );
    }
    pb.set_prefix(format!("{} {} {}", cfg.policy, cfg.store, cfg.device));
    pb
}

/// Reads every page the oracle saw written straight from the store and checks its stamp.
pub(super) fn verify_all(store: &dyn PageStore, oracle: &mut Oracle) -> Result<(), LabError> {
    let mut buf = AlignedBuf::zeroed(store.page_size(), 4096);
    let written: Vec<(PageId, u32)> = oracle.written().collect();
    for (pid, _) in written {
        match store.read_page(pid, &mut buf) {
            Ok(ReadOutcome::Found) => oracle.check(pid, &buf[HEADER_BYTES..]),
            Ok(ReadOutcome::Unwritten) => {
                oracle.record_error(format!("{pid} lost: store has never seen it"))
            }
            Err(StoreError::Corrupt { pid, reason }) => {
                oracle.record_error(format!("{pid} corrupt: {reason}"))
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// CPU seconds used by the process so far (all threads).
pub fn process_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
