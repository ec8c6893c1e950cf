//! `flashbuf convert`: any supported trace format to the page-reference CSV (`op,page`),
//! plain or zstd-compressed (by the output's `.zst` ending). Byte-addressed formats become
//! one reference per page touched at `--page-size`, as in a replay.

use crate::common::print;
use clap::Args;
use flashbuf_lab::LabError;
use flashbuf_trace::{Format, PageRef, TraceReader};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `flashbuf convert`.
#[derive(Args)]
pub struct ConvertArgs {
    /// Input trace (any supported format; .zst/.gz accepted).
    #[arg(long)]
    pub trace: PathBuf,
    /// Input format: auto, pagetrace, msr, spc, lcs-csv, disksim, arc.
    #[arg(long, default_value = "auto")]
    pub format: String,
    /// Page size in bytes for byte-addressed inputs.
    #[arg(long, default_value_t = 4096)]
    pub page_size: u32,
    /// Output file: a page-reference CSV; zstd-compressed if it ends in `.zst`. Refuses
    /// to overwrite an existing file.
    #[arg(long)]
    pub out: PathBuf,
    /// Convert at most N references.
    #[arg(long)]
    pub limit: Option<u64>,
}

/// Runs `flashbuf convert`.
pub fn run(a: ConvertArgs) -> Result<ExitCode, LabError> {
    let format = if a.format == "auto" {
        None
    } else {
        Some(
            a.format
                .parse::<Format>()
                .map_err(|e| LabError::Usage(e.to_string()))?,
        )
    };
    let mut reader = TraceReader::open(&a.trace, format, a.page_size)?;
    let file = File::options()
        .write(true)
        .create_new(true)
        .open(&a.out)
        .map_err(|e| LabError::Usage(format!("{}: {e}", a.out.display())))?;
    let zst = a.out.extension().is_some_and(|e| e == "zst");
    let mut sink: Box<dyn Write> = if zst {
        Box::new(zstd::Encoder::new(file, 9)?.auto_finish())
    } else {
        Box::new(BufWriter::new(file))
    };
    writeln!(sink, "op,page")?;
    let mut batch: Vec<PageRef> = Vec::with_capacity(1 << 15);
    let (mut refs, mut writes) = (0u64, 0u64);
    let limit = a.limit.unwrap_or(u64::MAX);
    let mut line = String::new();
    while refs < limit {
        batch.clear();
        let want = (limit - refs).min(1 << 15) as usize;
        if reader.next_batch(&mut batch, want)? == 0 {
            break;
        }
        line.clear();
        for r in &batch {
            use std::fmt::Write as _;
            let _ = writeln!(line, "{},{}", r.op, r.page.0);
            writes += u64::from(r.op.is_write());
        }
        sink.write_all(line.as_bytes())?;
        refs += batch.len() as u64;
    }
    sink.flush()?;
    drop(sink);
    print(&format!(
        "{} ({}) -> {}: {refs} references, {writes} writes\n",
        a.trace.display(),
        reader.format(),
        a.out.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}
