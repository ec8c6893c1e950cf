//! `flashbuf replay`: one trace through one policy × store × device.

use crate::common::{exit_for, print, replay_config, ReplayArgs};
use flashbuf_lab::result::{json, table};
use flashbuf_lab::LabError;
use std::process::ExitCode;

pub fn run(a: ReplayArgs) -> Result<ExitCode, LabError> {
    let cfg = replay_config(&a)?;
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
    let runs = vec![r];
    if a.common.json {
        print(&json(&runs))?;
        print("\n")?;
    } else {
        print(&table(&runs))?;
    }
    Ok(exit_for(&runs))
}
