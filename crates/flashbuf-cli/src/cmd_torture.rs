//! `flashbuf torture`: crash torture of the stores (issue 6).
//!
//! - `--sim`: simulated power cuts on a fault-injecting device, `--crash-points N` per
//!   store (every crash mode: lost, kept, prefix, subset, torn at 512 B / 4 KB with old
//!   bytes or garbage), straight to the store and through a buffer pool; prints counts.
//! - files (`--path DIR`): writes and syncs pages of a real store until killed (or for
//!   `--seconds`), journaling every acknowledged version; verify with `flashbuf check`.

use crate::common::print;
use clap::Args;
use flashbuf_lab::torture::real::{torture, TortureConfig};
use flashbuf_lab::torture::{torture_sim, SimTortureConfig, StoreTorture, Via};
use flashbuf_lab::LabError;
use flashbuf_testkit::CrashStore;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `flashbuf torture`.
#[derive(Args)]
pub struct TortureArgs {
    /// Simulated crashes on a fault-injecting device instead of a real process on files.
    #[arg(long)]
    pub sim: bool,
    /// Crash points to reach per store (`--sim`).
    #[arg(long, default_value_t = 10_000)]
    pub crash_points: u64,
    /// The store, as the store table names it (`direct`, `stable-buffer:recognition=ondemand`;
    /// default `direct`). With `--sim`: default every store's crash variants; a bare name
    /// runs that store's variants, a variant's label that one, and options are laid over
    /// each variant's small sizes (give sizes as `slots=`, `grow_pages=`).
    #[arg(long)]
    pub store: Option<String>,
    /// Directory holding the store and its journal (files mode; resumed if it holds a run).
    #[arg(long)]
    pub path: Option<PathBuf>,
    /// Seed of everything random.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Stop after this many seconds (files mode; default: run until killed).
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Stop after this many rounds (files mode).
    #[arg(long)]
    pub rounds: Option<u64>,
    /// Page size of a new store (files mode; default 4096). Resuming a run with another
    /// page size is refused.
    #[arg(long)]
    pub page_size: Option<usize>,
    /// Pages of a new store (files mode; default 256, at most 1048576). Resuming a run with
    /// another page count is refused.
    #[arg(long)]
    pub pages: Option<u64>,
    /// Frames of the buffer pool the writes go through; 0 writes straight to the store
    /// (files mode). Capped at the run's pages; refused if the machine cannot hold it.
    #[arg(long, default_value_t = 16)]
    pub pool_frames: usize,
    /// Most pages written per round (files mode).
    #[arg(long, default_value_t = 16)]
    pub max_pages_per_round: usize,
    /// Open the store file with O_DIRECT (files mode).
    #[arg(long)]
    pub direct_io: bool,
    /// `--sim`: go straight to the store, through a pool, or both (alternating).
    #[arg(long, default_value = "both")]
    pub via: String,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

fn sim_table(runs: &[StoreTorture], cfg: &SimTortureConfig) -> String {
    let mut s = format!(
        "torture --sim: seed {}, {} crash points per store, {} crash images per point\n",
        cfg.seed, cfg.crash_points, cfg.fanout
    );
    // Stores given with options have long names: the column fits the longest.
    let w = runs
        .iter()
        .map(|r| r.store.len())
        .max()
        .unwrap_or(0)
        .max(16);
    s.push_str(&format!(
        "{:<w$} {:>9} {:>6} {:>8} {:>12} {:>12} {:>9} {:>7} {:>7} {:>6} {:>8} {:>8}\n",
        "store",
        "scenarios",
        "pool",
        "ops",
        "crash_points",
        "pages_judged",
        "synced",
        "old",
        "newest",
        "interm",
        "corrupt",
        "seconds"
    ));
    for r in runs {
        let p = &r.report;
        s.push_str(&format!(
            "{:<w$} {:>9} {:>6} {:>8} {:>12} {:>12} {:>9} {:>7} {:>7} {:>6} {:>8} {:>8.1}\n",
            r.store,
            p.scenarios,
            r.pool_scenarios,
            p.ops,
            p.crash_points,
            p.pages_checked,
            p.synced,
            p.old,
            p.newest,
            p.intermediate,
            p.corrupt_unsynced,
            r.seconds
        ));
    }
    for r in runs {
        let modes: Vec<String> = r
            .report
            .by_mode
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        s.push_str(&format!(
            "crash points by mode ({}): {}\n",
            r.store,
            modes.join(", ")
        ));
    }
    s.push_str("0 violations\n");
    s
}

fn run_sim(a: &TortureArgs) -> Result<ExitCode, LabError> {
    let cfg = SimTortureConfig {
        stores: SimTortureConfig::stores_named(a.store.as_deref())?,
        crash_points: a.crash_points,
        seed: a.seed,
        via: a.via.parse::<Via>()?,
        fanout: 8,
    };
    match torture_sim(&cfg, &mut |_| {}) {
        Ok(runs) => {
            if a.json {
                let doc = serde_json::json!({
                    "mode": "sim",
                    "seed": a.seed,
                    "crash_points_per_store": a.crash_points,
                    "stores": runs.iter().map(StoreTorture::to_json).collect::<Vec<_>>(),
                    "violations": 0,
                });
                print(&format!("{doc}\n"))?;
            } else {
                print(&sim_table(&runs, &cfg))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(f) => {
            eprintln!("VIOLATION: {f}");
            Ok(ExitCode::from(2))
        }
    }
}

fn run_files(a: &TortureArgs) -> Result<ExitCode, LabError> {
    let Some(dir) = a.path.clone() else {
        return Err(LabError::Usage(
            "give --path DIR (a real-process torture), or --sim".into(),
        ));
    };
    let store = CrashStore::from_spec(a.store.as_deref().unwrap_or("direct"))?;
    let duration = match a.seconds {
        Some(s) => Some(Duration::try_from_secs_f64(s).map_err(|_| {
            LabError::Usage(format!(
                "--seconds {s:e} is not a duration this run can wait (0 to about 1.8e19 seconds)"
            ))
        })?),
        None => None,
    };
    let cfg = TortureConfig {
        store: store.clone(),
        dir: dir.clone(),
        seed: a.seed,
        duration,
        rounds: a.rounds,
        page_size: a.page_size,
        pages: a.pages,
        pool_frames: a.pool_frames,
        max_pages_per_round: a.max_pages_per_round,
        direct_io: a.direct_io,
    };
    eprintln!(
        "torture: store '{}' in {} (seed {}, {}); stop it any time, then run `flashbuf check --store {} --path {}`",
        store.name,
        dir.display(),
        a.seed,
        if a.pool_frames > 0 {
            format!("through a {}-frame pool", a.pool_frames)
        } else {
            "straight to the store".to_string()
        },
        store.name,
        dir.display()
    );
    if a.max_pages_per_round == 0 {
        return Err(LabError::Usage(
            "--max-pages-per-round must be at least 1".into(),
        ));
    }
    let r = match torture(&cfg, &mut |_| {}) {
        Ok(r) => r,
        Err(LabError::Invariant(m)) => {
            eprintln!("VIOLATION: {m}");
            return Ok(ExitCode::from(2));
        }
        Err(e) => return Err(e),
    };
    if r.pool_frames < a.pool_frames {
        eprintln!(
            "torture: --pool-frames {} capped at {} (the run writes only that many pages)",
            a.pool_frames, r.pool_frames
        );
    }
    if a.json {
        let doc = serde_json::json!({
            "mode": "files",
            "store": store.name,
            "path": dir.display().to_string(),
            "rounds": r.rounds,
            "pages_written": r.pages_written,
            "first_round": r.first_round,
            "resumed": r.resumed,
            "pool_frames": r.pool_frames,
        });
        print(&format!("{doc}\n"))?;
    } else {
        print(&format!(
            "torture: store '{}' in {}: {} rounds acknowledged (rounds {} to {}), {} pages written{}\n",
            store.name,
            dir.display(),
            r.rounds,
            r.first_round,
            (r.first_round + r.rounds).saturating_sub(1),
            r.pages_written,
            if r.resumed {
                ", resumed after verifying the previous run"
            } else {
                ""
            }
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `flashbuf torture`.
pub fn run(a: TortureArgs) -> Result<ExitCode, LabError> {
    if a.sim {
        run_sim(&a)
    } else {
        run_files(&a)
    }
}
