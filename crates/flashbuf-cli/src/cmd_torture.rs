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
use std::io::IsTerminal;
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
    /// `--sim`: what pages carry, `bytes` or `none` (each page's 64-byte metadata page,
    /// the whole page's requests on the device, as in `replay --data none`). With `none`
    /// and no `--store`, every store that takes the mode; a named store that does not is
    /// refused with its reason.
    #[arg(long, default_value = "bytes", value_name = "bytes|none")]
    pub data: flashbuf_core::DataMode,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

fn sim_table(runs: &[StoreTorture], cfg: &SimTortureConfig) -> String {
    let mut s = format!(
        "torture --sim: seed {}, {} crash points per store, {} crash images per point\n",
        cfg.seed, cfg.crash_points, cfg.fanout
    );
    let head = [
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
        "torn",
        "seconds",
    ];
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            let p = &r.report;
            vec![
                r.store.clone(),
                p.scenarios.to_string(),
                r.pool_scenarios.to_string(),
                p.ops.to_string(),
                p.crash_points.to_string(),
                p.pages_checked.to_string(),
                p.synced.to_string(),
                p.old.to_string(),
                p.newest.to_string(),
                p.intermediate.to_string(),
                p.corrupt_unsynced.to_string(),
                format!("{:.1}", r.seconds),
            ]
        })
        .collect();
    // Every column as wide as its widest cell, so long store names never shift the rest.
    let widths: Vec<usize> = (0..head.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].len())
                .chain([head[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<String>| {
        let mut l = String::new();
        for (c, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if c == 0 {
                l.push_str(&format!("{cell:<w$}"));
            } else {
                l.push_str(&format!("  {cell:>w$}"));
            }
        }
        l.push('\n');
        l
    };
    s.push_str(&line(head.iter().map(|h| h.to_string()).collect()));
    for r in rows {
        s.push_str(&line(r));
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
    s.push_str(
        "old/newest/interm: pages found at their last synced version, at the newest written, \
         or between; torn: unsynced pages a crash tore, reported corrupt and never returned \
         as data (allowed)\n0 violations\n",
    );
    s
}

fn run_sim(a: &TortureArgs) -> Result<ExitCode, LabError> {
    let cfg = SimTortureConfig {
        stores: SimTortureConfig::stores_in(a.store.as_deref(), a.data)?,
        crash_points: a.crash_points,
        seed: a.seed,
        via: a.via.parse::<Via>()?,
        fanout: 8,
    };
    let per_store = cfg.crash_points;
    let total = per_store.saturating_mul(cfg.stores.len() as u64);
    let bar = if a.json || !std::io::stderr().is_terminal() {
        indicatif::ProgressBar::hidden()
    } else {
        let pb = indicatif::ProgressBar::new(total);
        if let Ok(st) = indicatif::ProgressStyle::with_template(
            "torture --sim {msg} [{bar:30}] {pos}/{len} crash points, ETA {eta}",
        ) {
            pb.set_style(st.progress_chars("=> "));
        }
        pb
    };
    let (mut current, mut done_before) = (String::new(), 0u64);
    let mut on_scenario = |t: &StoreTorture| {
        if t.store != current {
            if !current.is_empty() {
                done_before += per_store;
            }
            current.clone_from(&t.store);
            bar.set_message(current.clone());
        }
        bar.set_position(done_before + t.report.crash_points.min(per_store));
    };
    let outcome = torture_sim(&cfg, &mut on_scenario);
    bar.finish_and_clear();
    match outcome {
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
    } else if a.data != flashbuf_core::DataMode::Bytes {
        Err(LabError::Usage(
            "--data none: only with --sim (a files-mode torture checks every page's bytes)".into(),
        ))
    } else {
        run_files(&a)
    }
}
