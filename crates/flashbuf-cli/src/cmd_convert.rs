//! `flashbuf convert`: any supported trace format to the page-reference CSV (`op,page`,
//! `--to csv`, the default) or to the binary page trace (`--to bin`, the `pagebin` format
//! of `flashbuf_trace::PageBinWriter`: 8 bytes per reference, read back by every command),
//! plain or zstd-compressed (by the output's `.zst` ending). Byte-addressed formats become
//! one reference per page touched at `--page-size`, as in a replay.

use crate::common::print;
use clap::{Args, ValueEnum};
use flashbuf_lab::LabError;
use flashbuf_trace::{Format, PageBinWriteError, PageBinWriter, PageRef, TraceReader};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `flashbuf convert`.
#[derive(Args)]
pub struct ConvertArgs {
    /// Input trace (any supported format; .zst/.gz accepted).
    #[arg(long)]
    pub trace: PathBuf,
    /// Input format: auto, pagetrace, msr, spc, lcs-csv, disksim, arc, oracle-general,
    /// blkparse, blkparse-d, pagebin.
    #[arg(long, default_value = "auto")]
    pub format: String,
    /// Page size in bytes for byte-addressed inputs.
    #[arg(long, default_value_t = 4096)]
    pub page_size: u32,
    /// Output file; zstd-compressed if it ends in `.zst`. Refuses to overwrite an existing
    /// file.
    #[arg(long)]
    pub out: PathBuf,
    /// Output format: `csv` (page-reference CSV, `op,page`) or `bin` (pagebin).
    #[arg(long, value_enum, default_value_t = OutputFormat::Csv)]
    pub to: OutputFormat,
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
    let sink: Box<dyn Write> = if zst {
        Box::new(zstd::Encoder::new(file, 9)?.auto_finish())
    } else {
        Box::new(BufWriter::new(file))
    };
    let mut out = match a.to {
        OutputFormat::Csv => Output::Csv(sink, String::new()),
        OutputFormat::Bin => Output::Bin(PageBinWriter::new(sink)?),
    };
    out.start()?;
    let mut batch: Vec<PageRef> = Vec::with_capacity(1 << 15);
    let (mut refs, mut writes) = (0u64, 0u64);
    let limit = a.limit.unwrap_or(u64::MAX);
    while refs < limit {
        batch.clear();
        let want = (limit - refs).min(1 << 15) as usize;
        if reader.next_batch(&mut batch, want)? == 0 {
            break;
        }
        out.write(&batch, &a.out)?;
        writes += batch.iter().filter(|r| r.op.is_write()).count() as u64;
        refs += batch.len() as u64;
    }
    out.finish()?;
    print(&format!(
        "{} ({}) -> {} ({}): {refs} references, {writes} writes\n",
        a.trace.display(),
        reader.format(),
        a.out.display(),
        match a.to {
            OutputFormat::Csv => "pagetrace",
            OutputFormat::Bin => "pagebin",
        }
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// What `convert` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Page-reference CSV: `op,page`, then `R,123` / `W,123`.
    Csv,
    /// flashbuf's binary page trace (`pagebin`): 16-byte header, then 8 bytes per reference.
    Bin,
}

/// The output being written.
enum Output {
    /// The sink and a line buffer.
    Csv(Box<dyn Write>, String),
    Bin(PageBinWriter<Box<dyn Write>>),
}

impl Output {
    fn start(&mut self) -> Result<(), LabError> {
        if let Output::Csv(sink, _) = self {
            writeln!(sink, "op,page")?;
        }
        Ok(())
    }

    fn write(&mut self, batch: &[PageRef], out: &Path) -> Result<(), LabError> {
        match self {
            Output::Csv(sink, text) => {
                use std::fmt::Write as _;
                text.clear();
                for r in batch {
                    let _ = writeln!(text, "{},{}", r.op, r.page.0);
                }
                sink.write_all(text.as_bytes())?;
            }
            Output::Bin(w) => w.write_refs(batch).map_err(|e| match e {
                PageBinWriteError::Io(e) => LabError::Output(e),
                e => LabError::Usage(format!("{}: {e}", out.display())),
            })?,
        }
        Ok(())
    }

    /// Flushes and closes the output (a zstd stream is finished when dropped).
    fn finish(self) -> Result<(), LabError> {
        match self {
            Output::Csv(mut sink, _) => sink.flush()?,
            Output::Bin(w) => w.finish()?.flush()?,
        }
        Ok(())
    }
}
