//! Beyond the paper's traces (issue 16): FD-Buffer as published, its clustered-cost
//! variant and the baselines on every PostgreSQL page trace we have, on steady-state
//! devices — the matrix behind the claim "the variant is the cheapest policy on every
//! trace", by one command with a verdict per trace.
//!
//! # Setup
//! - Traces: the two shared ones (TPC-C w4, pgbench s20) and the three captured for issue
//!   16 (`traces/` of the repository: pgbench s50, sysbench OLTP, TPC-C w8; their
//!   `README.md` says how), first [`LIMIT_REFS`] references of each (fewer with
//!   `--limit`). A trace not under `--traces` is looked for in `traces/` of the working
//!   directory, then of the source tree this binary was built from.
//! - Devices: `sim:sd-card`, `sim:mtron`, `sim:usb-stick` in their default steady state
//!   (preconditioned, the SNIA PTS way; not the fresh devices of Figs. 2–8).
//! - Buffers: 1, 3 and 10 % of the distinct pages of the references replayed.
//! - Policies, every one clustering writes as the papers do (§5.2), clusters of the
//!   device's erase block / page size: LRU, CFLRU and CASA with drain clustering, CFDC,
//!   FD-Buffer with its defaults (the paper's setup: drain clustering, `R` from the device,
//!   windows of 5,000, groups of 64, CFDC's priority), and the variant
//!   `fd-buffer:cost=clustered` with its defaults. These are `flashbuf compare --policies
//!   … --devices sim:sd-card,sim:mtron,sim:usb-stick --buffer-ratio 0.01,0.03,0.1 --limit
//!   1000000`'s runs, cell for cell.
//! - Cost: device time of the replayed references (no warm-up: the same for every policy).
//!
//! - Toward the offline lower bound: every run also gets the bounds of its trace and buffer
//!   (`crate::bounds`, costs = the device's random page read and write latencies), and
//!   each policy's share of LRU's distance to the lower bound is
//!   `(cost_LRU − cost) / (cost_LRU − lower)` in that per-page model (LRU with drain
//!   clustering). The model prices every page write alike: a bound that prices clustered
//!   write-backs is not built, so the shares say how far each policy gets on reads and
//!   page writes, not on device time.
//!
//! A cell the variant does not win is named in its trace's verdict with what differs from
//! the cheapest policy there (reads, page writes, erases), measured.

use super::super::runner::{secs, Runner};
use super::super::{Magnitude, Section, Verdict};
use super::{PGBENCH, TPCC};
use crate::compare::Matrix;
use crate::config::{BoundsCost, BufferSize, RunConfig};
use crate::result::RunResult;
use crate::spec::Spec;
use crate::LabError;
use std::path::{Path, PathBuf};

/// References replayed per run (the first ones of each trace).
pub const LIMIT_REFS: u64 = 1_000_000;
/// The traces: the shared two, then those of the repository's `traces/`.
pub const TRACES: &[&str] = &[
    TPCC,
    PGBENCH,
    "pgbench-pg15-s50.pagetrace.csv.zst",
    "oltp-pg15-t8.pagetrace.csv.zst",
    "tpcc-pg15-w8.pagetrace.csv.zst",
];
/// Steady-state simulated devices.
pub const DEVICES: &[&str] = &["sim:sd-card", "sim:mtron", "sim:usb-stick"];
/// Buffer sizes, fractions of the distinct pages.
pub const BUFFERS: &[f64] = &[0.01, 0.03, 0.1];
/// `(label, spec)`: the other policies, then the variant (last).
pub const POLICIES: &[(&str, &str)] = &[
    ("LRU", "lru:clustering=drain"),
    ("CFLRU", "cflru:clustering=drain"),
    ("CFDC", "cfdc"),
    ("CASA", "casa:clustering=drain"),
    ("FD-Buffer", "fd-buffer"),
    ("variant", "fd-buffer:cost=clustered"),
];
const VARIANT: usize = 5;
const FD: usize = 4;

/// Where trace `name` is: under `--traces`, else `traces/` here, else the source tree's.
fn locate(rn: &Runner<'_>, name: &str) -> Result<PathBuf, LabError> {
    if let Ok(p) = rn.trace(name) {
        return Ok(p);
    }
    let here = Path::new("traces").join(name);
    let tree = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../traces")
        .join(name);
    [here, tree]
        .into_iter()
        .find(|p| p.exists())
        .ok_or_else(|| {
            LabError::Usage(format!(
                "reproduce fd-buffer: trace {name} is neither under --traces nor in traces/ \
                 (the repository's captured traces)"
            ))
        })
}

/// One cell: the runs of every policy, in [`POLICIES`]' order.
struct Cell {
    trace: &'static str,
    device: &'static str,
    buffer: f64,
    runs: Vec<RunResult>,
}

impl Cell {
    fn cost(&self, i: usize) -> f64 {
        self.runs[i].device_time_us
    }

    /// The cheapest policy other than the variant, and its cost.
    fn best_other(&self) -> (usize, f64) {
        (0..VARIANT)
            .map(|i| (i, self.cost(i)))
            .fold((0, f64::INFINITY), |b, x| if x.1 < b.1 { x } else { b })
    }

    /// The variant's cost over the best other policy's.
    fn ratio(&self) -> f64 {
        let (v, b) = (self.cost(VARIANT), self.best_other().1);
        if b > 0.0 {
            v / b
        } else if v > 0.0 {
            f64::INFINITY
        } else {
            1.0
        }
    }

    /// What differs between the variant and the best other policy, measured.
    fn difference(&self) -> String {
        let (b, _) = self.best_other();
        let (v, o) = (&self.runs[VARIANT], &self.runs[b]);
        let rel = |a: u64, b: u64| 100.0 * (a as f64 / (b as f64).max(1.0) - 1.0);
        format!(
            "{} {} {:.0}%: {:.3}× {}'s device time; reads {:+.1}%, page writes {:+.1}%, \
             erases {:+.1}%",
            short(self.trace),
            self.device,
            self.buffer * 100.0,
            self.ratio(),
            POLICIES[b].0,
            rel(v.page_reads, o.page_reads),
            rel(v.page_writes, o.page_writes),
            rel(v.erases, o.erases)
        )
    }
}

/// A trace's name without its format suffix.
fn short(trace: &str) -> &str {
    trace.split('.').next().unwrap_or(trace)
}

/// Every cell of the matrix: per trace, one matrix of every policy, device and buffer.
fn cells(rn: &mut Runner<'_>) -> Result<Vec<Cell>, LabError> {
    let specs = |names: &[&str]| -> Result<Vec<Spec>, LabError> {
        names.iter().map(|n| crate::spec::parse(n)).collect()
    };
    let policies = specs(&POLICIES.iter().map(|(_, p)| *p).collect::<Vec<_>>())?;
    let mut out = Vec::new();
    for &trace in TRACES {
        let m = Matrix {
            base: RunConfig {
                trace: locate(rn, trace)?,
                page_size: super::PAGE_SIZE,
                limit_refs: Some(LIMIT_REFS),
                bounds: Some(BoundsCost::Device),
                ..RunConfig::default()
            },
            policies: policies.clone(),
            stores: specs(&["direct"])?,
            devices: specs(DEVICES)?,
            buffers: BUFFERS.iter().map(|&b| BufferSize::Ratio(b)).collect(),
        };
        // Devices outermost, then buffers, then policies (`Matrix::configs`).
        let mut runs = rn.run_matrix(&m)?.into_iter();
        for &device in DEVICES {
            for &buffer in BUFFERS {
                let runs: Vec<RunResult> = runs.by_ref().take(POLICIES.len()).collect();
                if runs.len() != POLICIES.len() {
                    return Err(LabError::Invariant("matrix runs missing".into()));
                }
                out.push(Cell {
                    trace,
                    device,
                    buffer,
                    runs,
                });
            }
        }
    }
    Ok(out)
}

/// The matrix's sections and verdicts: every cell, a summary per trace, a verdict per
/// trace for the variant and one for FD-Buffer as published.
pub(super) fn every_trace(rn: &mut Runner<'_>) -> Result<(Vec<Section>, Vec<Verdict>), LabError> {
    let limit = rn.limit_with(Some(LIMIT_REFS)).unwrap_or(LIMIT_REFS);
    let cells = cells(rn)?;
    let mut cols = vec!["trace", "device", "buffer", "frames"];
    cols.extend(POLICIES.iter().map(|(l, _)| *l));
    cols.extend(["variant / best other", "best other"]);
    let mut all = Section::new(
        format!(
            "Every trace (beyond the paper): device seconds, first {limit} references, \
             steady devices"
        ),
        &cols,
    );
    for c in &cells {
        let mut row = vec![
            short(c.trace).to_string(),
            c.device.to_string(),
            format!("{:.0}%", c.buffer * 100.0),
            c.runs[0].buffer_pages.to_string(),
        ];
        row.extend((0..POLICIES.len()).map(|i| secs(c.cost(i))));
        row.push(format!("{:.3}", c.ratio()));
        row.push(POLICIES[c.best_other().0].0.to_string());
        all.row(row);
    }
    all.notes.push(
        "issue 16's traces and devices; every policy clusters writes (module docs of \
         reproduce::fd_buffer::traces)"
            .into(),
    );
    let (summary, mut verdicts) = summarize(&cells);
    let (bounds, v) = toward_bound(&cells);
    verdicts.push(v);
    Ok((vec![all, summary, bounds], verdicts))
}

/// Per trace: the variant's wins and ratios, FD-Buffer's standing against CASA, CFDC
/// and LRU; the verdicts.
fn summarize(cells: &[Cell]) -> (Section, Vec<Verdict>) {
    let mut s = Section::new(
        "Every trace: summary",
        &[
            "trace",
            "variant cheapest",
            "variant / best other",
            "geo. mean",
            "cheapest in total",
            "FD-Buffer < CASA",
            "FD-Buffer < CFDC",
            "FD-Buffer < LRU",
        ],
    );
    let mut verdicts = Vec::new();
    let below =
        |cs: &[&Cell], other: usize| cs.iter().filter(|c| c.cost(FD) < c.cost(other)).count();
    let (mut fd_casa, mut fd_cfdc, mut fd_lru, mut n_all) = (0, 0, 0, 0);
    for &trace in TRACES {
        let cs: Vec<&Cell> = cells.iter().filter(|c| c.trace == trace).collect();
        let n = cs.len();
        let ratios: Vec<f64> = cs.iter().map(|c| c.ratio()).collect();
        let wins = ratios.iter().filter(|&&r| r < 1.0).count();
        let (lo, hi) = ratios
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), &r| (a.min(r), b.max(r)));
        let geo = (ratios.iter().map(|r| r.ln()).sum::<f64>() / n.max(1) as f64).exp();
        let (c_casa, c_cfdc, c_lru) = (below(&cs, 3), below(&cs, 2), below(&cs, 0));
        let totals: Vec<f64> = (0..POLICIES.len())
            .map(|i| cs.iter().map(|c| c.cost(i)).sum())
            .collect();
        let cheapest = (0..POLICIES.len())
            .min_by(|&a, &b| totals[a].total_cmp(&totals[b]))
            .unwrap_or(VARIANT);
        fd_casa += c_casa;
        fd_cfdc += c_cfdc;
        fd_lru += c_lru;
        n_all += n;
        s.row(vec![
            short(trace).to_string(),
            format!("{wins} of {n}"),
            format!("{lo:.3}–{hi:.3}"),
            format!("{geo:.4}"),
            format!("{} ({} s)", POLICIES[cheapest].0, secs(totals[cheapest])),
            format!("{c_casa} of {n}"),
            format!("{c_cfdc} of {n}"),
            format!("{c_lru} of {n}"),
        ]);
        let losses: Vec<String> = cs
            .iter()
            .filter(|c| c.ratio() >= 1.0)
            .map(|c| c.difference())
            .collect();
        verdicts.push(Verdict {
            figure: format!("Every trace: the variant on {}", short(trace)),
            paper: "(issue 16, not the paper) the clustered-cost variant cheapest of all \
                    policies in every cell"
                .into(),
            measured: format!(
                "cheapest in {wins} of {n} cells; {lo:.3}–{hi:.3}× the best other policy \
                 (geometric mean {geo:.4})"
            ),
            direction_holds: losses.is_empty(),
            magnitude: Magnitude::NoFigure,
            cause: losses.join("; "),
        });
    }
    verdicts.push(fd_verdict(fd_casa, fd_cfdc, fd_lru, n_all));
    (s, verdicts)
}

/// FD-Buffer as published against CASA, CFDC and LRU over every cell.
fn fd_verdict(casa: usize, cfdc: usize, lru: usize, n: usize) -> Verdict {
    let holds = casa == n && cfdc == n && lru == n;
    Verdict {
        figure: "Every trace: FD-Buffer (paper's setup) vs CASA, CFDC, LRU".into(),
        paper: "cheaper than CASA (4.0–33.4 %), CFDC and LRU on the paper's traces".into(),
        measured: format!("cheaper than CASA in {casa} of {n} cells, CFDC in {cfdc}, LRU in {lru}"),
        direction_holds: holds,
        magnitude: if holds {
            Magnitude::NoFigure
        } else {
            Magnitude::Mixed
        },
        cause: if holds {
            String::new()
        } else {
            "Eq. (3) prices every write-back at the random-write cost and shrinks the dirty \
             pool where clustered write-backs would be cheap, and CFDC's priority picks \
             clusters that are rewritten (measured in policy::fd_buffer::clustered_cost's \
             docs)"
                .into()
        },
    }
}

/// Each policy's share of LRU's distance to the lower bound, per cell; the verdict on the
/// issue's aim (half of the distance).
fn toward_bound(cells: &[Cell]) -> (Section, Verdict) {
    let mut cols = vec!["trace", "device", "buffer"];
    cols.extend(POLICIES[1..].iter().map(|(l, _)| *l));
    cols.push("offline heuristic");
    let mut s = Section::new(
        "Every trace: share of LRU's distance to the offline lower bound (per-page costs)",
        &cols,
    );
    let mut best = vec![f64::NEG_INFINITY; POLICIES.len()];
    let mut halves = vec![0usize; POLICIES.len()];
    for c in cells {
        let lru = c.runs[0].cost.unwrap_or(f64::NAN);
        let lower = c.runs[0].cost_lower_bound.unwrap_or(f64::NAN);
        let share = |cost: f64| (lru - cost) / (lru - lower);
        let mut row = vec![
            short(c.trace).to_string(),
            c.device.to_string(),
            format!("{:.0}%", c.buffer * 100.0),
        ];
        for (i, r) in c.runs.iter().enumerate().skip(1) {
            let x = share(r.cost.unwrap_or(f64::NAN));
            if x.is_finite() {
                best[i] = best[i].max(x);
            }
            halves[i] += usize::from(x >= 0.5);
            row.push(format!("{x:.2}"));
        }
        row.push(format!(
            "{:.2}",
            share(c.runs[0].cost_upper_bound.unwrap_or(f64::NAN))
        ));
        s.row(row);
    }
    s.notes.push(
        "1 = at the lower bound, 0 = no better than LRU (drain clustering), < 0 = worse; the \
         offline heuristic is the cheapest of the write-aware offline rules (an upper bound \
         on the offline optimum)"
            .into(),
    );
    let n = cells.len();
    let everywhere: Vec<&str> = (1..POLICIES.len())
        .filter(|&i| halves[i] == n)
        .map(|i| POLICIES[i].0)
        .collect();
    let measured = (1..POLICIES.len())
        .map(|i| {
            format!(
                "{} at most {:.2}, half or more in {} of {n} cells",
                POLICIES[i].0, best[i], halves[i]
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let v = Verdict {
        figure: "Every trace: toward the offline lower bound".into(),
        paper: "(issue 16's aim, not the paper) an online policy captures half of LRU's \
                distance to the lower bound"
            .into(),
        measured,
        direction_holds: !everywhere.is_empty(),
        magnitude: Magnitude::NoFigure,
        cause: if everywhere.is_empty() {
            "the lower bound is Belady's misses plus the write-backs no policy avoids, each \
             priced alone: the offline heuristics near it evict by next use, which no online \
             policy knows (the shares per cell are in the table above)"
                .into()
        } else {
            String::new()
        },
    };
    (s, v)
}
