//! `flashbuf`: the lab's command line (design.md §7). One module per command.

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

use clap::{Parser, Subcommand};
use flashbuf_lab::LabError;
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

fn main() -> ExitCode {
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
