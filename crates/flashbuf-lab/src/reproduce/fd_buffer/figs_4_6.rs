//! FD-Buffer's Figs. 4-6 (On et al., "FD-Buffer", IEEE TC 2014, §5.3): the clean pages of
//! FD-Buffer and CASA per workload-estimation window beside the read share of the device
//! time (Fig. 4), the mean clean pages per policy (Fig. 5) and the dirty pages per write
//! cluster (Fig. 6), all from Table 6's runs (TPC-C, sd-card = Flash-136, 3 %, after the
//! warm-up): no run of their own.
//!
//! # Measures
//! - Clean pages: resident clean frames (`BufferPool::resident_counts`) at the end of every
//!   window of 5,000 references after the warm-up (`replay::windows`); Fig. 5's mean is the
//!   mean over those samples.
//! - Read share: device read time / device time within each window, per policy (the paper
//!   plots one curve; each policy's own is used here). "Follows the fluctuation" is read as
//!   the Pearson correlation between the clean pages and the read share over the windows,
//!   the better of lag 0 (same window) and lag 1 (clean pages at the end of the next
//!   window: FD-Buffer's advisor sets `M_c` when a window closes) for each policy;
//!   "more fluctuated" as the standard deviation of the clean pages.
//! - Dirty pages per write cluster: pages written / maximal runs of consecutive writes
//!   within one erase block (`crate::cluster_runs`; 128 pages on sd-card).
//!
//! # Results (`flashbuf reproduce fd-buffer`, whole traces, seed 42, release build; 110
//! runs, 407 s wall; TPC-C, sd-card, 3 % = 1,241 frames, 1,022 windows after the fill;
//! write clusters of 256 pages as the paper set them)
//! - Fig. 5 holds: mean clean pages LRU 843.2, CFDC 355.8, CASA 410.8, FD-Buffer 238.2
//!   (19 % of the buffer; extras: /order 237.5, /clustered-cost 37.3 with its defaults since stop 25, 47.5 with windows of 20,000, 87.7 with `r=online` and uncalibrated `k`).
//! - Fig. 6 holds in direction, below in magnitude: pages per write run (within one
//!   128-page erase block) LRU 1.85, CFDC 1.89, CASA 1.99, FD-Buffer 2.04 (+2.6 % vs CASA;
//!   paper +12.3 %); FD-Buffer as published writes 6 % more pages than CASA (379,777 vs
//!   357,266). With 128-page clusters (the previous setup) the runs were longer (CASA 5.57,
//!   FD-Buffer 5.63, +1.1 %): a 256-page cluster drains across two of the SD card's erase
//!   blocks.
//! - Fig. 4 half holds: FD-Buffer's clean pages fluctuate more than CASA's (sd 154.2 vs
//!   74.3), but they do not follow its windows' read share of the device time (Pearson
//!   −0.15, lag 1: 0.12), while CASA's do (0.56, lag 1: 0.51). A likely cause (not
//!   measured): CASA moves its clean target on every miss by the measured costs, FD-Buffer
//!   sets `M_c` once per window from Eq. (3)'s miss-rate estimates, which hardly react to
//!   `R` (module docs of `fd_buffer`). The verdict asks for both, so it does not hold.
//! - Table 3 holds exactly (8 misses, 1 hit, 8 reads, 1 write); row 8 read as `[B, C]`.

use super::table_3::table_3;
use super::{Table6, CASA_I, FD};
use crate::replay::WindowSample;
use crate::reproduce::runner::pct;
use crate::reproduce::{Magnitude, Section, Verdict};
use crate::result::RunResult;

/// Fig. 6's figure: FD-Buffer's dirty pages per write cluster, relative to CASA's.
const FIG6_PAPER_MORE_THAN_CASA: f64 = 0.123;
/// Rows of Fig. 4's condensed series.
const FIG4_ROWS: usize = 20;

/// The sections and verdicts of Table 3 and Figs. 4-6.
pub(super) fn figs_4_6(table6: &Table6) -> (Vec<Section>, Vec<Verdict>) {
    let (t3, v3) = table_3();
    let (s4, v4) = fig_4(table6);
    let (s5, v5) = fig_5(table6);
    let (s6, v6) = fig_6(table6);
    (vec![t3, s4, s5, s6], vec![v3, v4, v5, v6])
}

/// Mean and standard deviation of `xs` (NaN if empty).
fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n;
    (m, var.sqrt())
}

/// Pearson correlation of `xs` and `ys` (NaN if either is constant or empty).
fn pearson(xs: &[f64], ys: &[f64]) -> f64 {
    let (mx, sx) = mean_sd(xs);
    let (my, sy) = mean_sd(ys);
    let n = xs.len().min(ys.len()) as f64;
    let cov = xs
        .iter()
        .zip(ys)
        .map(|(x, y)| (x - mx) * (y - my))
        .sum::<f64>()
        / n;
    cov / (sx * sy)
}

/// Fig. 4's figures of one run: clean pages and read shares of the windows where the
/// device worked, their spread, and their correlation.
struct Series {
    clean: Vec<f64>,
    share: Vec<f64>,
    clean_mean: f64,
    clean_sd: f64,
    share_sd: f64,
    corr: f64,
    /// Clean pages at the end of window k+1 against the read share of window k.
    corr_lag1: f64,
}

impl Series {
    /// The better of the two correlations.
    fn best_corr(&self) -> f64 {
        self.corr.max(self.corr_lag1)
    }
}

fn series(samples: &[WindowSample]) -> Series {
    let (clean, share): (Vec<f64>, Vec<f64>) = samples
        .iter()
        .filter_map(|s| s.read_share().map(|r| (s.clean_pages as f64, r)))
        .unzip();
    let (clean_mean, clean_sd) = mean_sd(&clean);
    let share_sd = mean_sd(&share).1;
    let corr = pearson(&clean, &share);
    let corr_lag1 = match (clean.get(1..), share.len().checked_sub(1)) {
        (Some(later), Some(n)) => pearson(later, &share[..n]),
        _ => f64::NAN,
    };
    Series {
        clean,
        share,
        clean_mean,
        clean_sd,
        share_sd,
        corr,
        corr_lag1,
    }
}

fn f1(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "-".into()
    }
}

fn f2(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "-".into()
    }
}

/// Fig. 4: FD-Buffer's and CASA's clean pages per window with the read share.
fn fig_4(table6: &Table6) -> (Section, Verdict) {
    let pick = |i: usize| table6.get(i).map(|(l, r)| (*l, series(&r.window_samples)));
    let (Some((_, fd)), Some((_, casa))) = (pick(FD), pick(CASA_I)) else {
        return missing("Fig. 4", "clean pages per window");
    };
    let mut s = Section::new(
        "Fig. 4: clean pages and read share of device time per 5,000-reference window \
         (TPC-C, sd-card, 3%; every k-th window)",
        &[
            "window",
            "FD-Buffer clean",
            "FD-Buffer read share",
            "CASA clean",
            "CASA read share",
        ],
    );
    let n = fd.clean.len().min(casa.clean.len());
    let step = n.div_ceil(FIG4_ROWS).max(1);
    for w in (0..n).step_by(step) {
        s.row(vec![
            (w + 1).to_string(),
            f1(fd.clean[w]),
            f2(fd.share[w]),
            f1(casa.clean[w]),
            f2(casa.share[w]),
        ]);
    }
    for (label, x) in [("FD-Buffer", &fd), ("CASA", &casa)] {
        s.notes.push(format!(
            "{label}: {} windows, clean pages mean {} sd {}, read share sd {}, \
             corr(clean, read share) {} (lag 1: {})",
            x.clean.len(),
            f1(x.clean_mean),
            f1(x.clean_sd),
            f2(x.share_sd),
            f2(x.corr),
            f2(x.corr_lag1)
        ));
    }
    s.notes.push(
        "read share = device read time / device time in the window, each policy's own; \
         windows where the device did nothing are left out"
            .into(),
    );
    let fluctuates = fd.clean_sd > casa.clean_sd;
    let follows = fd.best_corr() > casa.best_corr();
    let mut cause = String::new();
    if !fluctuates {
        cause.push_str(&format!(
            "FD-Buffer's clean pages vary less than CASA's (sd {} vs {}). ",
            f1(fd.clean_sd),
            f1(casa.clean_sd)
        ));
    }
    if !follows {
        cause.push_str(&format!(
            "CASA's clean pages track the read share at least as closely (corr {} vs {}).",
            f2(casa.best_corr()),
            f2(fd.best_corr())
        ));
    }
    let v = Verdict {
        figure: "Fig. 4".into(),
        paper: "FD-Buffer's clean pages fluctuate more than CASA's and follow the read \
                share of the I/O cost; CASA is not very sensitive"
            .into(),
        measured: format!(
            "clean-page sd FD-Buffer {} vs CASA {}; corr with read share (best of lag 0/1) \
             {} vs {}",
            f1(fd.clean_sd),
            f1(casa.clean_sd),
            f2(fd.best_corr()),
            f2(casa.best_corr())
        ),
        direction_holds: fluctuates && follows,
        magnitude: Magnitude::NoFigure,
        cause: cause.trim_end().to_string(),
    };
    (s, v)
}

/// Fig. 5: mean clean pages per policy.
fn fig_5(table6: &Table6) -> (Section, Verdict) {
    let mut s = Section::new(
        "Fig. 5: average clean pages (TPC-C, sd-card, 3%)",
        &[
            "policy",
            "mean clean pages",
            "mean dirty pages",
            "clean share",
        ],
    );
    for (label, r) in table6 {
        let (c, d) = (opt(r.mean_clean_pages), opt(r.mean_dirty_pages));
        s.row(vec![
            extra_label(label),
            f1(c),
            f1(d),
            if c + d > 0.0 {
                format!("{:.1}%", 100.0 * c / (c + d))
            } else {
                "-".into()
            },
        ]);
    }
    s.notes.push(
        "mean over the 5,000-reference windows after the warm-up; FD-Buffer/order and \
         FD-Buffer/clustered-cost are extensions, not in the paper's figure"
            .into(),
    );
    let clean = |i: usize| {
        table6
            .get(i)
            .map_or(f64::NAN, |(_, r)| opt(r.mean_clean_pages))
    };
    let fd = clean(FD);
    let others: Vec<(&str, f64)> = table6
        .iter()
        .take(FD)
        .map(|(l, r)| (*l, opt(r.mean_clean_pages)))
        .collect();
    let smaller: Vec<&str> = others
        .iter()
        .filter(|(_, c)| !below(fd, *c))
        .map(|(l, _)| *l)
        .collect();
    let v = Verdict {
        figure: "Fig. 5".into(),
        paper: "FD-Buffer has the smallest average number of clean pages of LRU, CFDC, \
                CASA, FD-Buffer"
            .into(),
        measured: format!(
            "FD-Buffer {}; {}",
            f1(fd),
            others
                .iter()
                .map(|(l, c)| format!("{l} {}", f1(*c)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        direction_holds: !others.is_empty() && smaller.is_empty(),
        magnitude: Magnitude::NoFigure,
        cause: if smaller.is_empty() {
            String::new()
        } else {
            format!(
                "no more clean pages than FD-Buffer on average: {}",
                smaller.join(", ")
            )
        },
    };
    (s, v)
}

/// Fig. 6: dirty pages per write cluster.
fn fig_6(table6: &Table6) -> (Section, Verdict) {
    let mut s = Section::new(
        "Fig. 6: average dirty pages in a write cluster (TPC-C, sd-card, 3%)",
        &[
            "policy",
            "pages per write run",
            "write runs",
            "page writes",
            "vs CASA",
        ],
    );
    let per = |r: &RunResult| opt(r.dirty_pages_per_cluster_write);
    let casa = table6.get(CASA_I).map_or(f64::NAN, |(_, r)| per(r));
    for (label, r) in table6 {
        s.row(vec![
            extra_label(label),
            f2(per(r)),
            r.cluster_write_runs.map_or("-".into(), |n| n.to_string()),
            r.page_writes.to_string(),
            pct(per(r) / casa - 1.0),
        ]);
    }
    let cluster = table6
        .first()
        .and_then(|(_, r)| r.write_cluster_pages)
        .map_or("-".into(), |c| c.to_string());
    s.notes.push(format!(
        "write run = maximal run of consecutive page writes within one cluster of {cluster} \
         pages (the erase block); reads in between do not end it"
    ));
    let fd = table6.get(FD).map_or(f64::NAN, |(_, r)| per(r));
    let rivals: Vec<(&str, f64)> = table6.iter().take(FD).map(|(l, r)| (*l, per(r))).collect();
    let larger: Vec<&str> = rivals
        .iter()
        .filter(|(_, x)| !below(*x, fd))
        .map(|(l, _)| *l)
        .collect();
    let more = fd / casa - 1.0;
    let magnitude = Magnitude::around(more, FIG6_PAPER_MORE_THAN_CASA);
    let v = Verdict {
        figure: "Fig. 6".into(),
        paper: "FD-Buffer writes the most dirty pages per cluster, 12.3% more than CASA".into(),
        measured: format!(
            "FD-Buffer {} pages per run ({} vs CASA); {}",
            f2(fd),
            pct(more),
            rivals
                .iter()
                .map(|(l, x)| format!("{l} {}", f2(*x)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        direction_holds: !rivals.is_empty() && larger.is_empty(),
        magnitude,
        cause: if larger.is_empty() && magnitude == Magnitude::Inside {
            String::new()
        } else if larger.is_empty() {
            format!(
                "the margin over CASA is {} against the paper's +12.3%",
                pct(more)
            )
        } else {
            format!(
                "at least as many pages per write run as FD-Buffer: {}",
                larger.join(", ")
            )
        },
    };
    (s, v)
}

/// `a < b` (false if either is NaN).
fn below(a: f64, b: f64) -> bool {
    a.partial_cmp(&b) == Some(std::cmp::Ordering::Less)
}

fn opt(x: Option<f64>) -> f64 {
    x.unwrap_or(f64::NAN)
}

/// The extensions are labelled as such.
fn extra_label(label: &str) -> String {
    if label.starts_with("FD-Buffer/") {
        format!("{label} (extra)")
    } else {
        label.to_string()
    }
}

/// A figure whose runs are missing (a planning pass has no results).
fn missing(figure: &str, what: &str) -> (Section, Verdict) {
    let s = Section::new(format!("{figure}: {what} (no runs)"), &["-"]);
    let v = Verdict {
        figure: figure.into(),
        paper: String::new(),
        measured: "no runs".into(),
        direction_holds: false,
        magnitude: Magnitude::NoFigure,
        cause: "the runs are missing".into(),
    };
    (s, v)
}
