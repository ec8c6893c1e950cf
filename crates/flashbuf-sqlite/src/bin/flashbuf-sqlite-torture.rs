//! `flashbuf-sqlite-torture`: runs the SQLite torture (TPC-B-like transactions on a
//! flashbuf store on a file, every commit journalled to an fsynced side file) until killed
//! or for `--transactions N`, and checks a torture directory.
//!
//! ```sh
//! flashbuf-sqlite-torture run --dir /tmp/t --store direct --pool 64 --policy cfdc &
//! kill -9 %1
//! flashbuf-sqlite-torture check --dir /tmp/t   # exit 0 verified, 2 violations, 1 error
//! ```

use clap::{Parser, Subcommand, ValueEnum};
use flashbuf_sqlite::torture::{self, TortureConfig};
use flashbuf_sqlite::JournalMode;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(about = "SQLite on flashbuf, killed at random moments and checked")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum Journal {
    Wal,
    Delete,
}

#[derive(Subcommand)]
enum Cmd {
    /// Runs (or resumes) the torture in DIR.
    Run {
        /// The torture's directory.
        #[arg(long)]
        dir: PathBuf,
        /// Store spec from the store table.
        #[arg(long, default_value = "direct")]
        store: String,
        /// Pool mode with this many frames (pass-through without it).
        #[arg(long)]
        pool: Option<usize>,
        /// The pool's policy: lru, cflru, cfdc.
        #[arg(long, default_value = "lru")]
        policy: String,
        /// SQLite's journal mode.
        #[arg(long, value_enum, default_value = "wal")]
        journal: Journal,
        /// Accounts per branch.
        #[arg(long, default_value_t = 2000)]
        accounts: u32,
        /// Branches.
        #[arg(long, default_value_t = 1)]
        scale: u32,
        /// Page size.
        #[arg(long, default_value_t = 4096)]
        page_size: usize,
        /// Seed of the draws.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Stop after this many transactions (default: run until killed).
        #[arg(long)]
        transactions: Option<u64>,
    },
    /// Checks DIR: integrity, consistency, every journalled commit present.
    Check {
        /// The torture's directory.
        #[arg(long)]
        dir: PathBuf,
    },
}

fn main() -> ExitCode {
    match Cli::parse().cmd {
        Cmd::Run {
            dir,
            store,
            pool,
            policy,
            journal,
            accounts,
            scale,
            page_size,
            seed,
            transactions,
        } => {
            let cfg = TortureConfig {
                store,
                pool: pool.map(|f| (f, policy)),
                journal_mode: match journal {
                    Journal::Wal => JournalMode::Wal,
                    Journal::Delete => JournalMode::Delete,
                },
                scale,
                accounts,
                page_size,
                seed,
            };
            match torture::run(&dir, &cfg, transactions) {
                Ok(s) => {
                    println!(
                        "committed {} transactions after {}",
                        s.committed, s.resumed_at
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("flashbuf-sqlite-torture: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Cmd::Check { dir } => match torture::check(&dir) {
            Ok(r) if r.ok() => {
                println!(
                    "ok: integrity {}, {} journalled, {} in the database",
                    r.integrity, r.journalled, r.in_database
                );
                ExitCode::SUCCESS
            }
            Ok(r) => {
                for v in &r.violations {
                    println!("violation: {v}");
                }
                ExitCode::from(2)
            }
            Err(e) => {
                eprintln!("flashbuf-sqlite-torture: {e}");
                ExitCode::from(1)
            }
        },
    }
}
