//! `flashbuf check`: recover a store and verify it — against the journal of a
//! `flashbuf torture` run when the directory holds one (every acknowledged page at least
//! at its acknowledged version, nothing newer than what was written, no torn or mixed
//! page, no corrupt page that was synced, no phantom), else by reading every page.
//! Exit status: 0 verified, 2 violations found, 1 the store could not be opened (missing,
//! held by another process, another page size / format version / kind).

use crate::common::print;
use clap::Args;
use flashbuf_lab::torture::real::{check, CheckConfig};
use flashbuf_lab::LabError;
use flashbuf_testkit::CrashStore;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `flashbuf check`.
#[derive(Args)]
pub struct CheckArgs {
    /// The store, as the store table names it (`direct`, `stable-buffer:recognition=ondemand`):
    /// the spec the torture run used.
    #[arg(long, default_value = "direct")]
    pub store: String,
    /// Directory holding the store (and the torture journal, if any).
    #[arg(long)]
    pub path: PathBuf,
    /// Page size to open the store with (default: the journal's, else 4096).
    #[arg(long)]
    pub page_size: Option<usize>,
    /// Pages to read when there is no journal.
    #[arg(long)]
    pub pages: Option<u64>,
    /// Open the store file with O_DIRECT.
    #[arg(long)]
    pub direct_io: bool,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Runs `flashbuf check`.
pub fn run(a: CheckArgs) -> Result<ExitCode, LabError> {
    let store = CrashStore::from_spec(&a.store)?;
    let cfg = CheckConfig {
        store,
        dir: a.path.clone(),
        page_size: a.page_size,
        pages: a.pages,
        direct_io: a.direct_io,
    };
    let r = check(&cfg)?;
    if a.json {
        print(&format!("{}\n", r.to_json()))?;
    } else {
        print(&r.to_text(&a.path))?;
    }
    Ok(if r.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
