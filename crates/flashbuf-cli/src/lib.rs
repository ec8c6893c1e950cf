//! `flashbuf`: the lab's command line (design.md §7), one module per command, as a library
//! so that other front ends (the Python package under `python/`) parse the same arguments
//! and get the same JSON documents as `flashbuf <command> --json`.

mod cmd_bench;
mod cmd_check;
mod cmd_compare;
mod cmd_convert;
mod cmd_list;
mod cmd_mrc;
mod cmd_profile;
mod cmd_replay;
mod cmd_reproduce;
mod cmd_run;
mod cmd_torture;
mod common;

use clap::{CommandFactory, Parser, Subcommand};
use flashbuf_lab::LabError;
use std::ffi::OsString;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "flashbuf",
    version,
    about = "flashbuf lab: replay traces through buffer policies, write paths and (simulated) flash devices"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replay one trace through one policy × store × device.
    Replay(common::ReplayArgs),
    /// Replay a trace through every policy × store × device × buffer size given.
    Compare(cmd_compare::CompareArgs),
    /// Measure replay speed: repeat one configuration and report the best and median
    /// references per second (trace reading and decompression included) and peak memory.
    Bench(cmd_bench::BenchArgs),
    /// Convert a trace to the page-reference CSV (`op,page`), plain or .zst.
    Convert(cmd_convert::ConvertArgs),
    /// LRU's miss and write-back curves (and the I/O cost curve) for every buffer size in
    /// one pass; SHARDS sampling with --sample.
    Mrc(cmd_mrc::MrcArgs),
    /// uFLIP-style device profile of a simulated device or a real file.
    Profile(cmd_profile::ProfileArgs),
    /// Run an engine workload (TPC-C-like, TPC-B-like, CFDC's mix) on the native B+-tree
    /// engine or on SQLite, over policy × store × device: throughput, response times, I/O,
    /// and the workload's consistency conditions.
    Run(cmd_run::RunArgs),
    /// Reproduce a paper's experiments on the simulated counterpart devices.
    Reproduce(cmd_reproduce::ReproduceArgs),
    /// Crash torture: simulated power cuts (--sim), or a real process writing and syncing a
    /// store on files until killed (verify with `check`).
    Torture(cmd_torture::TortureArgs),
    /// Recover a store and verify it (against a torture journal if the directory has one).
    Check(cmd_check::CheckArgs),
    /// Every policy, store, device, FTL and workload with its options, defaults, ranges
    /// and a line of help (the names `--policy`, `--store`, `--device` and `--workload`
    /// take).
    List(cmd_list::ListArgs),
}

/// The commands whose `--json` document [`document`] returns.
pub const DOCUMENT_COMMANDS: &[&str] = &["replay", "compare", "mrc", "run", "reproduce", "list"];

/// Runs the command line `std::env::args()` names; the exit code of `flashbuf`.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let r: Result<ExitCode, LabError> = match cli.command {
        Command::Replay(a) => cmd_replay::run(a),
        Command::Compare(a) => cmd_compare::run(a),
        Command::Bench(a) => cmd_bench::run(a),
        Command::Convert(a) => cmd_convert::run(a),
        Command::Mrc(a) => cmd_mrc::run(a),
        Command::Profile(a) => cmd_profile::run(a),
        Command::Reproduce(a) => cmd_reproduce::run(a),
        Command::Run(a) => cmd_run::run(a),
        Command::Torture(a) => cmd_torture::run(a),
        Command::Check(a) => cmd_check::run(a),
        Command::List(a) => cmd_list::run(a),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// The JSON text `flashbuf ARGS --json` prints (without the final newline), computed in
/// this process: `args` are the command line after the program name, e.g.
/// `["replay", "--policy", "cfdc"]`; `--json` is added. Commands: [`DOCUMENT_COMMANDS`].
/// A bad argument is a [`LabError::Usage`] with clap's message (no usage lines).
pub fn document<I, T>(args: I) -> Result<String, LabError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let argv = std::iter::once(OsString::from("flashbuf"))
        .chain(args.into_iter().map(Into::into))
        .chain(std::iter::once(OsString::from("--json")));
    let cli = Cli::try_parse_from(argv).map_err(|e| LabError::Usage(clap_message(&e)))?;
    match cli.command {
        Command::Replay(a) => Ok(flashbuf_lab::result::json(&cmd_replay::runs(&a)?)),
        Command::Compare(a) => Ok(flashbuf_lab::result::json(&cmd_compare::runs(&a)?)),
        Command::Mrc(a) => cmd_mrc::output(&a).map(|s| s.trim_end().to_string()),
        Command::Run(a) => Ok(cmd_run::json(&cmd_run::result(&a)?)),
        Command::Reproduce(a) => Ok(cmd_reproduce::json(&cmd_reproduce::reports(&a)?)),
        Command::List(a) => cmd_list::output(&a).map(|s| s.trim_end().to_string()),
        _ => Err(LabError::Usage(format!(
            "this command has no JSON document here (only {}); run it with the `flashbuf` binary",
            DOCUMENT_COMMANDS.join(", ")
        ))),
    }
}

/// The trace the commands read when given none: the bundled sample, relative to the
/// working directory if it is there, else in the source tree this was built from.
pub fn default_trace() -> std::path::PathBuf {
    common::default_trace()
}

/// The `--help` text of `command` (one of the binary's commands), or of `flashbuf` itself
/// for `""`.
pub fn help(command: &str) -> Result<String, LabError> {
    let mut cli = Cli::command();
    if command.is_empty() {
        return Ok(cli.render_long_help().to_string());
    }
    let names: Vec<String> = cli
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    match cli.find_subcommand_mut(command) {
        Some(c) => Ok(c
            .clone()
            .bin_name(format!("flashbuf {command}"))
            .render_long_help()
            .to_string()),
        None => Err(LabError::Usage(format!(
            "unknown command '{command}'; valid: {}",
            names.join(", ")
        ))),
    }
}

/// Clap's message for `e` without the usage lines and the pointer to `--help`: the error
/// and its tips.
fn clap_message(e: &clap::Error) -> String {
    let text = e.to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    let cut = text.find("\n\nUsage:").unwrap_or(text.len());
    text[..cut].trim_end().to_string()
}
