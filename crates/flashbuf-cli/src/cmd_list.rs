//! `flashbuf list [KIND]`: every component with its options, from the registration tables.

use crate::common::print;
use clap::Args;
use flashbuf_lab::list::{components, text};
use flashbuf_lab::LabError;
use std::process::ExitCode;

#[derive(Args)]
pub struct ListArgs {
    /// What to list: policies, stores, devices, ftls or workloads (default: all).
    pub kind: Option<String>,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// What `flashbuf list` prints (JSON when `a` asks).
pub fn output(a: &ListArgs) -> Result<String, LabError> {
    let list = components(a.kind.as_deref())?;
    if a.json {
        let doc = serde_json::to_string_pretty(&list)
            .map_err(|e| LabError::Invariant(format!("listing as JSON: {e}")))?;
        Ok(format!("{doc}\n"))
    } else {
        Ok(text(&list))
    }
}

pub fn run(a: ListArgs) -> Result<ExitCode, LabError> {
    print(&output(&a)?)?;
    Ok(ExitCode::SUCCESS)
}
