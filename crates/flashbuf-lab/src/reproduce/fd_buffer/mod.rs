//! `flashbuf reproduce fd-buffer`: the experiments of On, Gao, He, Wu, Luo and Xu,
//! "FD-Buffer: A Cost-Based Adaptive Buffer Replacement Algorithm for Flash Memory Devices"
//! (IEEE TC 63(9), 2014, `fd-buffer.txt` §5) that page traces allow, on the simulated
//! counterparts of the paper's devices with 8 KB pages: `sim:sd-card` (Flash-136, Kingston
//! SDHC), `sim:usb-stick` (Flash-475, Sandisk Cruzer), `sim:flash-25` (Mtron MOBI3500).
//!
//! # Setup, and where it differs from the paper's
//! - Traces: the shared TPC-C (5.1 M references, 17 % writes, 41,399 distinct pages) and
//!   pgbench (TPC-B-like; 3.3 M references, 24 % writes) page traces of PostgreSQL, the
//!   kind the paper used (its TPC-C: 16.8 M references, 15 % writes; TPC-B 3.5 % writes).
//!   TM1 and the file-system trace are not available.
//! - Buffer: a percentage of the trace's distinct pages (the paper: of the data set size);
//!   3 % by default (1,241 frames of TPC-C).
//! - Policies, all with write clustering (§5.2), clusters of 256 pages on the two cards as
//!   the paper set them ("we set the write cluster size to 256 on both Flash-136 and
//!   Flash-475", [`PAPER_CLUSTER_PAGES`]; our sd-card profile's erase block holds 128 8 KB
//!   pages, the usb-stick's 256) and the device's erase block / page size on flash-25 (32
//!   pages), clusters draining one page per fault (the papers' behaviour,
//!   `clustering=drain`):
//!   LRU (`lru:clustering=drain`: the LRU victim's cluster drains), CFDC (its own clusters,
//!   `cfdc:cluster_size=<erase block>`, window 0.5 as in the paper), CASA
//!   (`casa:clustering=drain,learn=true`: read/write costs as moving averages of measured
//!   latencies, "the same method as CASA" of §5.1), FD-Buffer as published
//!   (`fd-buffer:clustering=drain,r=online`: online `R` over m = 32,768, windows of 5,000
//!   references, group size 64, present conditions, victim cluster by CFDC's priority,
//!   §4.5), and a variant whose victim cluster is the dirty pool's LRU page's
//!   (`victim=order`, an extension).
//! - Cost: device time (virtual time of the simulated device); the paper's "average I/O
//!   cost" is device time per reference. Improvement of A over B = `1 − cost_A / cost_B`.
//! - Dynamics (Figs. 9–12): the lab's `--asymmetry rm1|rm2` stretches the device's write
//!   (or read) latencies per epoch; `--workload wm1|wm2` rewrites reads and writes per epoch
//!   with `w_0` = the whole trace's write ratio (`w0=trace`): our traces start cold, and
//!   their first epoch has under 1 % writes (see `crate::dynamics`).
//! - Table 5: mean relative errors `|v − v'| / v` over windows of FD-Buffer's Two-Stack
//!   estimates at the `M_c` in force against the miss rates measured in the real pools
//!   during the window, with present conditions and (second estimator) without.
//! - Every run has the data set on the device from the start (`RunConfig::presize`), on
//!   fresh (not preconditioned) simulated devices, as the profiles were calibrated.
//! - Last, beyond the paper (issue 16, `traces`): every policy on five PostgreSQL page
//!   traces (the shared two and the three of `traces/`) × three steady-state devices ×
//!   1, 3 and 10 % buffers, first million references, with a verdict per trace on the
//!   clustered-cost variant (cheapest in every cell?) and one on FD-Buffer as published
//!   against CASA, CFDC and LRU; the cells run in parallel, one trace decoded once.
//!
//! # Results (whole traces after the warm-up, seed 42; 110 runs, 7 minutes)
//! Measured after the buffer is full (`Warmup::Fill`, §5.1), on fresh devices, with the
//! paper's 256-page clusters on both cards. TPC-C, sd-card, 3 % (1,241 frames), device
//! seconds: LRU 17,810, CFDC 12,521, CASA 10,697, FD-Buffer 9,363 (12.5 % below CASA,
//! 47.4 % below LRU), FD-Buffer/order 9,518. Averaged over TPC-C and pgbench FD-Buffer is
//! 3.2 % below CASA on the sd-card (paper 18.1 %) and 5.1 % above it on the USB stick
//! (paper 15.4 % below): on pgbench CASA wins on both cards (4,213 vs 4,469 s; 7,131 vs
//! 8,269 s), the clusters CFDC's priority picks get rewritten (FD-Buffer writes 7 % more
//! than LRU there). Over LRU (43–46 %) and CFDC (26–34 %) FD-Buffer gains more than the
//! paper's 30–33 % and 18–24 %. FD-Buffer's gain over CASA grows with the buffer (Fig. 8:
//! −24 % at 0.75 %, +22 % at 6 %; paper +9 % to +24 %); it holds under RM2 (+12.7 %), WM1
//! (+5.2 %) and WM2 (+14.3 %), not under RM1 (−7.2 %). With the device's own erase block
//! (128 pages on our sd-card profile, every policy; the previous setup) FD-Buffer was
//! 5.0 % below CASA on TPC-C (10,322 vs 10,864 s) but 6.5 % above it on average over the
//! two traces: the paper's cluster size turns the sd-card average from a loss into a
//! small gain (the USB stick's erase block already held 256 pages). FD-Buffer reads 14.3 % more and writes 1.2 % less than
//! LRU (paper: +29.9 % / −21.5 %). Eq. (3) hardly reacts to `R` beyond about `1 / P_d^w`,
//! so a growing `R` (RM1) or a clustering-dependent write cost is not followed; a static
//! split with a 5 % clean pool (8,589 s) shows the room left. The clustered-cost variant
//! (not the paper's, `policy::fd_buffer::clustered_cost`) is the cheapest policy in all
//! four trace × card cells of Figs. 2–3 (TPC-C 8,573 and 14,885 s, pgbench 3,646 and
//! 6,294 s against CASA's 10,697, 18,107, 4,213 and 7,131; with its defaults since stop 25:
//! the device's `R`, `calibrate=drained`, the paper's windows of 5,000 — with windows of
//! 20,000 it was 8,559, 14,795, 3,633 and 6,298 s, with `r=online` and uncalibrated `k`
//! 8,736, 14,976, 3,825 and 6,535 s) and on flash-25 (885 vs 1,006 s). Why FD-Buffer
//! loses to CASA on other traces and on steady devices: the same module.
//!
//! # Every trace (the last part; 380 runs in all, 14 minutes on a loaded 2-core machine)
//! First million references of each of the five traces, steady devices, 1/3/10 %: the
//! variant is the cheapest of the six policies in 43 of 45 cells (0.883–1.028× the best
//! other, geometric mean 0.9596) and in total over the nine cells of every trace; CASA
//! with drain clustering wins OLTP on the USB stick at 10 % (1.028×: the variant reads
//! 48.9 % more and writes 4.3 % fewer pages) and pgbench s20 there (1.006×). FD-Buffer as
//! published is cheaper than CASA in none of the 45 cells, than CFDC in 31, than LRU in
//! 22. Share of LRU's distance to the per-page lower bound, at most: variant 0.55 (half or
//! more in 6 cells, all on sysbench OLTP), CASA 0.52 (2), CFDC 0.49, CFLRU 0.47,
//! FD-Buffer 0.30; the offline heuristic 0.76–0.99.

mod figs_4_6;
mod overall;
mod parametric;
mod table_3;
pub mod traces;

use super::runner::Runner;
use super::{Report, ReproduceOptions, Section};
use crate::config::{BufferSize, RunConfig, Warmup};
use crate::registry::DeviceFacts;
use crate::result::RunResult;
use crate::LabError;
use flashbuf_workload::dynamics::{AsymmetryModel, WorkloadModel};
use flashbuf_workload::dynamics::{Dynamics, WorkloadTransform, W0};
use std::path::{Path, PathBuf};

/// The TPC-C trace.
pub const TPCC: &str = "tpcc-pg15-w4.pagetrace.csv.zst";
/// The pgbench (TPC-B-like) trace.
pub const PGBENCH: &str = "pgbench-pg15-s20.pagetrace.csv.zst";
/// Page size (the paper's 8 KB).
pub const PAGE_SIZE: usize = 8192;
// Fresh devices, as the profiles were calibrated (module docs): since issue 16 `sim:`
// devices start in steady state, where FD-Buffer loses Table 6 to CASA (TPC-C, 3%:
// 16,304 s vs 14,688 s; fresh: 10,052 vs 10,626).
/// Flash-136.
pub const SD_CARD: &str = "sim:sd-card:precondition=fresh";
/// Flash-475.
pub const USB_STICK: &str = "sim:usb-stick:precondition=fresh";
/// Flash-25.
pub const FLASH_25: &str = "sim:flash-25:precondition=fresh";
/// Default buffer: 3 % of the distinct pages.
pub const BUFFER: f64 = 0.03;
/// Fig. 8's buffer sizes.
pub const BUFFERS: &[f64] = &[0.0075, 0.015, 0.03, 0.06];
/// Fig. 11's window sizes, times the default 5,000 references.
pub const WINDOW_FACTORS: &[f64] = &[0.25, 0.5, 1.0, 2.0, 5.0];

/// FD-Buffer as published (online `R`, CFDC's priority for the victim cluster).
pub const FD_PAPER: &str = "fd-buffer:clustering=drain,r=online";
/// FD-Buffer with the dirty pool's LRU page choosing the victim cluster.
pub const FD_ORDER: &str = "fd-buffer:clustering=drain,r=online,victim=order";
/// The clustered-cost variant (not the paper's; `policy::fd_buffer::clustered_cost`),
/// with the device's `R` (its own default): an online `R` is measured from writes the
/// device served clustered, and the variant's `k` would discount them again
/// (`policy::fd_buffer::calibration`).
pub const FD_CLUSTERED: &str = "fd-buffer:clustering=drain,cost=clustered";
/// CASA as compared in the paper (learned costs).
pub const CASA: &str = "casa:clustering=drain,learn=true";
/// LRU with write clustering.
pub const LRU: &str = "lru:clustering=drain";

/// The write-cluster size the paper set on both its flash cards (§5.2, Figs. 2–3).
pub const PAPER_CLUSTER_PAGES: u64 = 256;

/// `spec` with clusters of `cluster` pages if it clusters writes and names no size
/// (`cluster=` for the clustering decorator and FD-Buffer, `cluster_size=` for CFDC).
pub fn with_cluster(spec: &str, cluster: u64) -> String {
    let (name, opts) = spec.split_once(':').unwrap_or((spec, ""));
    let clusters = match name {
        "cfdc" => true,
        "fd-buffer" => !opts.contains("clustering=off") && !opts.contains("clustering=none"),
        _ => opts.contains("clustering=drain") || opts.contains("clustering=batch"),
    };
    if !clusters || opts.contains("cluster=") || opts.contains("cluster_size=") {
        return spec.to_string();
    }
    let key = if name == "cfdc" {
        "cluster_size"
    } else {
        "cluster"
    };
    if opts.is_empty() {
        format!("{name}:{key}={cluster}")
    } else {
        format!("{spec},{key}={cluster}")
    }
}

/// The compared policies for clusters of `cluster` pages:
/// `(label, lab name)`, FD-Buffer (paper) at index 3.
pub fn policies(cluster: u64) -> Vec<(&'static str, String)> {
    vec![
        ("LRU", with_cluster(LRU, cluster)),
        ("CFDC", with_cluster("cfdc", cluster)),
        ("CASA", with_cluster(CASA, cluster)),
        ("FD-Buffer", with_cluster(FD_PAPER, cluster)),
        ("FD-Buffer/order", with_cluster(FD_ORDER, cluster)),
        (
            "FD-Buffer/clustered-cost",
            with_cluster(FD_CLUSTERED, cluster),
        ),
    ]
}

const FD: usize = 3;
const FD_O: usize = 4;
const CASA_I: usize = 2;

/// Every run: the data set on the device from the start, measured after the warm-up
/// (§5.1: "after the buffer is filled").
fn base() -> RunConfig {
    RunConfig {
        presize: true,
        warmup: Warmup::Fill,
        ..RunConfig::default()
    }
}

fn wm(model: WorkloadModel, epoch: u64) -> RunConfig {
    RunConfig {
        dynamics: Dynamics {
            workload: Some(WorkloadTransform::Model {
                model,
                w0: W0::Trace,
            }),
            asymmetry: None,
            epoch_refs: epoch,
        },
        ..base()
    }
}

fn rm(model: AsymmetryModel) -> RunConfig {
    RunConfig {
        dynamics: Dynamics {
            asymmetry: Some(model),
            ..Dynamics::default()
        },
        ..base()
    }
}

struct Ctx<'a> {
    rn: Runner<'a>,
    tpcc: PathBuf,
}

impl Ctx<'_> {
    /// The write-cluster size on `device`: the paper's on its two cards, else the device's
    /// erase block / page size.
    fn cluster(&mut self, device: &str, trace: &Path) -> Result<(u64, DeviceFacts), LabError> {
        let f = self.rn.facts(device, trace, PAGE_SIZE)?;
        let cluster = if device == SD_CARD || device == USB_STICK {
            PAPER_CLUSTER_PAGES
        } else {
            f.cluster_pages(PAGE_SIZE)
        };
        Ok((cluster, f))
    }

    /// One run of `spec` with the device's clusters ([`Ctx::cluster`]).
    fn run(
        &mut self,
        trace: &Path,
        spec: &str,
        device: &str,
        buffer: BufferSize,
        ro: &RunConfig,
    ) -> Result<RunResult, LabError> {
        let (cluster, _) = self.cluster(device, trace)?;
        let spec = with_cluster(spec, cluster);
        self.rn.run(trace, PAGE_SIZE, &spec, device, buffer, ro)
    }

    /// Every policy on `device` × `trace` at `buffer` with `ro`.
    fn all(
        &mut self,
        trace: &Path,
        device: &str,
        buffer: f64,
        ro: &RunConfig,
    ) -> Result<Vec<(&'static str, RunResult)>, LabError> {
        let (cluster, _) = self.cluster(device, trace)?;
        let mut out = Vec::new();
        for (label, p) in policies(cluster) {
            let r = self
                .rn
                .run(trace, PAGE_SIZE, &p, device, BufferSize::Ratio(buffer), ro)?;
            out.push((label, r));
        }
        Ok(out)
    }
}

/// Device time per reference, µs (the paper's average I/O cost).
fn io_cost(r: &RunResult) -> f64 {
    r.device_time_us / r.references.max(1) as f64
}

/// Runs the reproduction: one function per figure or table, in the paper's order of
/// importance.
pub fn run(opts: &ReproduceOptions) -> Result<Report, LabError> {
    let rn = Runner::new("fd-buffer", opts);
    let tpcc = rn.trace(TPCC)?;
    let pgbench = rn.trace(PGBENCH)?;
    let mut cx = Ctx { rn, tpcc };
    let tpcc = cx.tpcc.clone();
    let plain = base();
    use overall::{fig_8, figs_2_3, table_5, table_6};
    use parametric::{fig_11, fig_12, fig_7, figs_9_10, sensitivity};
    let (mut sections, table6, mut verdicts) = figs_2_3(&mut cx, &tpcc, &pgbench, &plain)?;
    let (t6, v6) = table_6(&table6);
    sections.push(t6);
    verdicts.push(v6);
    let (s46, v46) = figs_4_6::figs_4_6(&table6);
    sections.extend(s46);
    verdicts.extend(v46);
    sections.push(table_5(&mut cx, &tpcc, &pgbench, &plain)?);
    sections.push(fig_8(&mut cx, &tpcc, &plain)?);
    sections.extend(figs_9_10(&mut cx, &tpcc, &plain)?);
    sections.push(fig_11(&mut cx, &tpcc, &plain)?);
    sections.push(fig_12(&mut cx, &tpcc)?);
    sections.push(fig_7(&mut cx, &tpcc, &plain)?);
    let fd_paper = table6.get(FD).map_or(f64::NAN, |(_, r)| r.device_time_us);
    sections.push(sensitivity(&mut cx, &tpcc, &plain, fd_paper, opts)?);
    let (st, vt) = traces::every_trace(&mut cx.rn)?;
    sections.extend(st);
    verdicts.extend(vt);
    Ok(Report {
        paper: "fd-buffer".into(),
        sections,
        verdicts,
        runs: cx.rn.runs_done(),
    })
}

/// The policies' runs of Figs. 2-3 on TPC-C, sd-card (for Table 6).
pub(super) type Table6 = Vec<(&'static str, RunResult)>;
