#![allow(clippy::unwrap_used)]
//! FD-Buffer's clustered-cost variant on a real trace (issue 16, item 7): on the sysbench
//! OLTP page trace over the steady simulated SD card, Eq. (3) as printed shrinks the dirty
//! pool to a few pages, so each write-back is a lone page of its erase block; the variant
//! (the same policy, only the cost model changed) keeps a dirty pool large enough for its
//! clusters to share merges, and the device works less. The variant's own defaults
//! (`count=io`, `groups=256`) against the ones they replaced (`count=eq3`, `group=64`):
//! the second test; paid moves of `M_c` (the default `moves=cusum`) against free moves:
//! the third; `k` calibrated
//! to the drained clusters (`calibrate=drained`) against `k` as read off the writes: the
//! fourth.

use flashbuf_lab::{run, BufferSize, RunConfig, RunResult};
use std::path::PathBuf;

fn oltp() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../traces/oltp-pg15-t8.pagetrace.csv.zst"
    ))
}

fn go(policy: &str) -> RunResult {
    go_at(policy, 0.03)
}

fn go_at(policy: &str, ratio: f64) -> RunResult {
    let cfg = RunConfig {
        trace: oltp(),
        policy: flashbuf_lab::spec::parse(policy).unwrap(),
        device: flashbuf_lab::spec::parse("sim:sd-card").unwrap(),
        buffer: BufferSize::Ratio(ratio),
        page_size: 8192,
        limit_refs: Some(200_000),
        ..RunConfig::default()
    };
    let r = run(&cfg, None).unwrap();
    assert_eq!(r.verify_errors, 0, "{policy}");
    r
}

fn dirty_pages(r: &RunResult) -> f64 {
    r.policy_report["dirty_pages"]
}

#[test]
fn the_clustered_cost_model_keeps_a_dirty_pool_and_costs_the_device_less() {
    let faithful = go("fd-buffer");
    // Only the cost model differs (the variant's other defaults set back to the paper's).
    let variant = go("fd-buffer:cost=clustered,victim=priority,window=5000,group=64");
    assert_eq!(faithful.references, variant.references);
    let (d_f, d_v) = (dirty_pages(&faithful), dirty_pages(&variant));
    assert!(
        d_v >= 10.0 * d_f.max(1.0),
        "dirty pool at the end: variant {d_v} vs Eq. (3) {d_f}"
    );
    let per_write = |r: &RunResult| r.device_write_time_us / r.page_writes as f64;
    assert!(
        per_write(&variant) < per_write(&faithful),
        "device time per page written: variant {:.0} us vs Eq. (3) {:.0} us",
        per_write(&variant),
        per_write(&faithful)
    );
    assert!(
        variant.device_time_us < 0.95 * faithful.device_time_us,
        "device time: variant {:.1} s vs Eq. (3) {:.1} s",
        variant.device_time_us / 1e6,
        faithful.device_time_us / 1e6
    );
    // The variant reports its model at the M_d in force; the faithful policy has none.
    let pr = &variant.policy_report;
    let (k, f, pw) = (pr["k_at_m_d"], pr["r_factor"], pr["window_written_pages"]);
    assert!(k >= 1.0 && pw >= 1.0, "{pr:?}");
    assert!(f > 0.0 && f <= 1.0, "{pr:?}");
    assert!(!faithful.policy_report.contains_key("k_at_m_d"));
}

#[test]
fn counting_ios_and_groups_from_the_buffer_cost_the_device_less() {
    // OLTP, 3% of the distinct pages of the first 200,000 references (311 frames): with
    // Eq. (3) and groups of 64 the stacks have 5 groups and the advisor misprices
    // write-backs (Eq. (3) charges them per miss, not per write missing the dirty pool).
    let old = go("fd-buffer:cost=clustered,count=eq3,group=64");
    let counted = go("fd-buffer:cost=clustered,group=64,moves=free");
    let grouped = go("fd-buffer:cost=clustered,count=eq3");
    let new = go("fd-buffer:cost=clustered");
    let s = |r: &RunResult| r.device_time_us / 1e6;
    // Measured: old 462 s, counted 441, grouped 437, new 437 (with calibrate=drained:
    // 462, 440, 435, 436).
    for (what, r) in [
        ("count=io", &counted),
        ("groups=256", &grouped),
        ("both", &new),
    ] {
        assert!(
            s(r) < 0.97 * s(&old),
            "{what}: {:.1} s vs the old defaults' {:.1} s",
            s(r),
            s(&old)
        );
    }
    // Groups of ceil(311 / 256) = 2 pages: the advisor can settle on a clean pool smaller
    // than one old group (it does: 8 pages at the end, measured).
    assert!(new.policy_report["m_c"] < 64.0, "{:?}", new.policy_report);
}

#[test]
fn charging_the_moves_of_m_c_saves_forced_write_backs() {
    // OLTP, 1% of the distinct pages of the first 200,000 references (103 frames): with
    // free moves the advisor raises and lowers M_c from window to window, and every raise
    // writes dirty pages back before their time.
    let free = go_at("fd-buffer:cost=clustered,moves=free", 0.01);
    let paid = go_at("fd-buffer:cost=clustered", 0.01);
    assert_eq!(free.references, paid.references);
    // Measured: free 1,254 s and 12,790 pages written, paid 1,074 s and 12,370 (the same
    // with calibrate=drained: here the calibration does not move M_c) with windows of
    // 20,000; with the paper's 5,000 (the default since stop 25) free 1,087 s, paid 1,032:
    // a move pays for itself over a shorter window, so fewer moves are worth paying for.
    // `moves=cusum` (the default since stop 26) makes the same choices as `moves=paid`
    // here (on the steady SD card through the CLI: free 5,437 s, paid and cusum 5,158).
    assert!(
        paid.page_writes < free.page_writes,
        "pages written: paid {} vs free {}",
        paid.page_writes,
        free.page_writes
    );
    assert!(
        paid.device_time_us < 0.97 * free.device_time_us,
        "device time: paid {:.1} s vs free {:.1} s",
        paid.device_time_us / 1e6,
        free.device_time_us / 1e6
    );
}

#[test]
fn the_calibrated_model_reads_the_realised_pages_per_cluster_write() {
    // OLTP, 3% (311 frames) on the SD card: the recent writes' k at the dirty pool's size
    // reads 3.6 pages per cluster where the device is sent 5.3 per cluster write; scaled
    // to the clusters the pool drained, 4.5 (measured with the paper's windows of 5,000;
    // 4.9 for 5.1 with windows of 20,000: a shorter window drains fewer clusters to
    // calibrate on). With moves paid out of the savings since the last move
    // (`moves=cusum`, the default since stop 26) the last window's split differs: 4.2
    // for 5.3 (error 0.20; uncalibrated 3.6, error 0.32).
    let cal = go("fd-buffer:cost=clustered,calibrate=drained");
    let off = go("fd-buffer:cost=clustered,calibrate=none");
    let error = |r: &RunResult| {
        let written = r.dirty_pages_per_cluster_write.unwrap();
        (r.policy_report["k_at_m_d"] - written).abs() / written
    };
    assert!(
        error(&cal) < 0.7 * error(&off) && error(&cal) < 0.25,
        "k_at_m_d against pages per cluster write: calibrated {:?} vs {:?}; none {:?} vs {:?}",
        cal.policy_report,
        cal.dirty_pages_per_cluster_write,
        off.policy_report,
        off.dirty_pages_per_cluster_write
    );
    let f = cal.policy_report["k_calibration"];
    assert!(
        f > 1.0,
        "the drained clusters are larger than the model's: {f}"
    );
    assert_eq!(off.policy_report["k_calibration"], 1.0);
    let drained = cal.policy_report["mean_drained_pages"];
    assert!(
        (cal.policy_report["k_at_m_d"] - drained).abs() < 1.0,
        "{:?}",
        cal.policy_report
    );
}
