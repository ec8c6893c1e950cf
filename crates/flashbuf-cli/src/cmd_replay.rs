//! `flashbuf replay`: one trace through one policy × store × device.

use crate::common::{exit_for, print, replay_config, ReplayArgs};
use flashbuf_lab::result::{json, legend, table};
use flashbuf_lab::{LabError, RunResult};
use std::process::ExitCode;

/// The run of `flashbuf replay` (one), with a note on stderr when the buffer was capped.
pub fn runs(a: &ReplayArgs) -> Result<Vec<RunResult>, LabError> {
    let cfg = replay_config(a)?;
    let r = flashbuf_lab::run(&cfg, None)?;
    if let Some(n) = a
        .buffer_pages
        .filter(|&n| r.buffer_pages > 0 && r.buffer_pages < n)
    {
        eprintln!(
            "replay: --buffer-pages {n} capped at {} (the trace's distinct pages: the run can use no more)",
            r.buffer_pages
        );
    }
    Ok(vec![r])
}

pub fn run(a: ReplayArgs) -> Result<ExitCode, LabError> {
    let runs = runs(&a)?;
    if a.common.json {
        print(&json(&runs))?;
        print("\n")?;
    } else {
        print(&table(&runs))?;
        if a.common.explain {
            print(&format!("\n{}", legend(&runs)))?;
        }
    }
    Ok(exit_for(&runs))
}
