//! `flashbuf reproduce <paper>`: a paper's experiments printed beside its figures.

use crate::common::print;
use clap::Args;
use flashbuf_lab::reproduce::{run as reproduce, Report, ReproduceOptions};
use flashbuf_lab::LabError;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `flashbuf reproduce`.
#[derive(Args)]
pub struct ReproduceArgs {
    /// The paper (every paper the lab reproduces, or all).
    #[arg(value_parser = papers())]
    pub paper: String,
    /// Directory of the shared traces.
    #[arg(long, default_value = "../shared/traces")]
    pub traces: PathBuf,
    /// Seed of every run.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Replay at most N references per run (a quick look; figures then differ).
    #[arg(long)]
    pub limit: Option<u64>,
    /// Print one JSON document instead of tables.
    #[arg(long)]
    pub json: bool,
    /// No progress output.
    #[arg(long)]
    pub quiet: bool,
}

/// The papers the lab reproduces (its table), and `all`.
fn papers() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        flashbuf_lab::reproduce::PAPERS
            .iter()
            .copied()
            .chain(["all"]),
    )
}

/// The reports of `flashbuf reproduce`.
pub fn reports(a: &ReproduceArgs) -> Result<Vec<Report>, LabError> {
    let opts = ReproduceOptions {
        traces_dir: a.traces.clone(),
        seed: a.seed,
        limit_refs: a.limit,
        progress: !a.quiet && !a.json && std::io::stderr().is_terminal(),
        ..ReproduceOptions::default()
    };
    reproduce(&a.paper, &opts)
}

/// The JSON document of `flashbuf reproduce --json` (without the final newline).
pub fn json(reports: &[Report]) -> String {
    let doc = serde_json::json!({ "reports": reports });
    format!("{doc:#}")
}

/// Runs `flashbuf reproduce`.
pub fn run(a: ReproduceArgs) -> Result<ExitCode, LabError> {
    let reports = reports(&a)?;
    if a.json {
        print(&format!("{}\n", json(&reports)))?;
    } else {
        for r in &reports {
            print(&r.render())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
