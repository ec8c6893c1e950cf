//! `flashbuf reproduce <paper>`: each paper's experiments that traces allow, on the
//! simulated counterpart devices, printed beside the paper's figures.
//!
//! One module per paper; each exposes `run(&ReproduceOptions) -> Result<Report, LabError>`
//! and registers one arm in [`run`]. A [`Report`] is a list of sections, each a table whose
//! rows pair flashbuf's measurement with the paper's figure where the paper gives one.

pub mod cfdc;
pub mod cfdc_engine;
pub mod fd_buffer;
pub mod icl;
pub mod nipu;
mod runner;
pub mod stablebuffer;
mod tally;

use crate::LabError;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Papers `reproduce` knows.
pub const PAPERS: &[&str] = &[
    "cfdc",
    "cfdc-engine",
    "fd-buffer",
    "stablebuffer",
    "nipu",
    "icl",
];

/// Options shared by every reproduction.
#[derive(Debug, Clone)]
pub struct ReproduceOptions {
    /// Directory holding the shared traces (`../shared/traces` by default).
    pub traces_dir: PathBuf,
    /// Seed of every run.
    pub seed: u64,
    /// Replay at most this many references per run (quick looks; `None` = whole traces).
    pub limit_refs: Option<u64>,
    /// Show progress on stderr (runs done of the runs planned, and an ETA).
    pub progress: bool,
    /// Count the runs the reproduction would make without making them (the planning pass
    /// behind the progress's total; the report has no figures then, only `runs`).
    pub plan_only: bool,
    /// Runs planned, for the progress's total and ETA (set by [`run`] from a planning pass).
    pub planned_runs: Option<usize>,
}

impl Default for ReproduceOptions {
    /// The shared traces at `../shared/traces`, seed 42, whole traces, quiet.
    fn default() -> Self {
        Self {
            traces_dir: PathBuf::from("../shared/traces"),
            seed: 42,
            limit_refs: None,
            progress: false,
            plan_only: false,
            planned_runs: None,
        }
    }
}

/// One table of a reproduction.
#[derive(Debug, Clone, Serialize)]
pub struct Section {
    /// What the table reproduces (e.g. "Fig. 5: page flushes vs buffer size").
    pub title: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
    /// Notes: the paper's figure, the reading taken, what differs and why.
    pub notes: Vec<String>,
}

impl Section {
    /// An empty table.
    pub fn new(title: impl Into<String>, columns: &[&str]) -> Self {
        Self {
            title: title.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Renders the table as aligned text.
    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.columns.iter().map(|c| c.len()).collect();
        for r in &self.rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.len());
            }
        }
        let mut out = format!("## {}\n", self.title);
        let mut line = |cells: &[String]| {
            let mut l = String::new();
            for (c, w) in cells.iter().zip(&widths) {
                let _ = write!(l, "{c:>w$}  ");
            }
            out.push_str(l.trim_end());
            out.push('\n');
        };
        line(&self.columns);
        for r in &self.rows {
            line(r);
        }
        for n in &self.notes {
            let _ = writeln!(out, "  note: {n}");
        }
        out
    }
}

/// Whether a measured magnitude falls in the paper's range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Magnitude {
    /// Inside the paper's range.
    Inside,
    /// Below the paper's range (a smaller effect).
    Below,
    /// Above the paper's range (a larger effect).
    Above,
    /// Inside the paper's range for some settings or traces, outside for others.
    Mixed,
    /// The paper gives no number to compare with.
    NoFigure,
}

/// Tolerance around a single figure of the paper: measured within ±20% counts as inside.
pub const POINT_TOLERANCE: f64 = 0.2;

impl Magnitude {
    /// Where `x` falls against a single figure `paper` of the paper, within
    /// [`POINT_TOLERANCE`].
    pub fn around(x: f64, paper: f64) -> Self {
        Self::of(
            x,
            paper * (1.0 - POINT_TOLERANCE),
            paper * (1.0 + POINT_TOLERANCE),
        )
    }

    /// Where `x` falls against `lo..=hi`.
    pub fn of(x: f64, lo: f64, hi: f64) -> Self {
        if x < lo {
            Magnitude::Below
        } else if x > hi {
            Magnitude::Above
        } else {
            Magnitude::Inside
        }
    }

    fn text(self) -> &'static str {
        match self {
            Magnitude::Inside => "inside",
            Magnitude::Below => "below",
            Magnitude::Above => "above",
            Magnitude::Mixed => "mixed",
            Magnitude::NoFigure => "no figure",
        }
    }
}

/// The verdict on one figure: does the paper's direction hold, is the magnitude inside its
/// range, and if not, the measured cause.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// The figure or table (`Fig. 5`).
    pub figure: String,
    /// The paper's claim, with its numbers.
    pub paper: String,
    /// What was measured, with numbers.
    pub measured: String,
    /// Whether the direction of the paper's claim holds.
    pub direction_holds: bool,
    /// The magnitude against the paper's range.
    pub magnitude: Magnitude,
    /// Why the direction or magnitude differs, from the measurements (empty if it
    /// does not differ).
    pub cause: String,
}

/// The result of one reproduction.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Paper name (`cfdc`, ...).
    pub paper: String,
    /// Its tables.
    pub sections: Vec<Section>,
    /// One verdict per reproduced figure, summarized at the end of the text.
    pub verdicts: Vec<Verdict>,
    /// Runs made (memoized repeats not counted); in a planning pass, the runs planned.
    pub runs: usize,
}

impl Report {
    /// All tables as text.
    pub fn render(&self) -> String {
        let mut s = format!("# reproduce {}\n\n", self.paper);
        for sec in &self.sections {
            s.push_str(&sec.render());
            s.push('\n');
        }
        if !self.verdicts.is_empty() {
            s.push_str(&self.verdict_table().render());
            s.push('\n');
        }
        s
    }

    /// The verdicts as a table (the summary at the end of the text).
    pub fn verdict_table(&self) -> Section {
        let mut t = Section::new(
            format!("Verdicts ({})", self.paper),
            &["figure", "direction", "magnitude", "paper", "measured"],
        );
        for v in &self.verdicts {
            t.row(vec![
                v.figure.clone(),
                if v.direction_holds {
                    "holds"
                } else {
                    "does not hold"
                }
                .into(),
                v.magnitude.text().into(),
                v.paper.clone(),
                v.measured.clone(),
            ]);
            if !v.cause.is_empty() {
                t.notes.push(format!("{}: {}", v.figure, v.cause));
            }
        }
        t
    }
}

/// Runs the reproduction of `paper` (`all` runs every one). With progress on, a planning
/// pass first counts each paper's runs, so that the progress shows a total and an ETA.
pub fn run(paper: &str, opts: &ReproduceOptions) -> Result<Vec<Report>, LabError> {
    let papers: Vec<&str> = if paper == "all" {
        PAPERS.to_vec()
    } else {
        vec![paper]
    };
    papers.into_iter().map(|p| run_planned(p, opts)).collect()
}

/// One paper, planned first when its progress is shown.
fn run_planned(paper: &str, opts: &ReproduceOptions) -> Result<Report, LabError> {
    if !opts.progress || opts.plan_only {
        return run_one(paper, opts);
    }
    let plan = ReproduceOptions {
        plan_only: true,
        progress: false,
        ..opts.clone()
    };
    let planned = run_one(paper, &plan)?.runs;
    eprintln!("reproduce {paper}: {planned} runs planned");
    run_one(
        paper,
        &ReproduceOptions {
            planned_runs: Some(planned),
            ..opts.clone()
        },
    )
}

/// The runs `paper` would make under `opts` (a planning pass: nothing runs).
pub fn plan(paper: &str, opts: &ReproduceOptions) -> Result<usize, LabError> {
    let plan = ReproduceOptions {
        plan_only: true,
        progress: false,
        ..opts.clone()
    };
    Ok(run_one(paper, &plan)?.runs)
}

/// One paper: one arm per module.
fn run_one(paper: &str, opts: &ReproduceOptions) -> Result<Report, LabError> {
    match paper {
        "cfdc" => cfdc::run(opts),
        "cfdc-engine" => cfdc_engine::run(opts),
        "fd-buffer" => fd_buffer::run(opts),
        "stablebuffer" => stablebuffer::run(opts),
        "nipu" => nipu::run(opts),
        "icl" => icl::run(opts),
        other => Err(LabError::Usage(format!(
            "unknown paper '{other}'; valid: {}all",
            PAPERS.iter().map(|p| format!("{p}, ")).collect::<String>()
        ))),
    }
}
