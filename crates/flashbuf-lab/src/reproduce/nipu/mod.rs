//! `flashbuf reproduce nipu`: the experiments of Wang, Goda and Kitsuregawa, "Evaluating
//! Non-In-Place Update Techniques for Flash-Based Transaction Processing Systems" (DEXA
//! 2009, `../shared/papers/nipu-evaluation.txt`), §4: TPC-C on a DBMS with a small buffer,
//! its data on an in-place file system (EXT2) or a log-structured one (NILFS2), on a flash
//! SSD and on a disk.
//!
//! Ours, per PostgreSQL trace found in the traces directory (`--traces`; when it holds
//! none, the bundled samples in `testdata/traces`, a quick look that works on a fresh
//! clone), every one reported, none singled out:
//! - **page traces** (`*.pagetrace.csv*`: every buffer access of PostgreSQL) replayed
//!   through LRU with the paper's DBMS buffers (§4.1): 8 MB (the commercial DBMS) and 4 MB
//!   (MySQL), in frames of the trace's 8 KB pages;
//! - **I/O traces** (`*.iotrace.msr.csv*`: the reads and write-backs below PostgreSQL's own
//!   256 kB buffer) replayed in pass-through mode.
//!
//! The four systems of Fig. 5: the direct store (in place: EXT2) and the log-structured
//! store (NILFS2: 8 MB segments, NILFS2's oldest-first cleaner, `prefill`: the database
//! exists on the device before the run, as the paper's did) on `sim:nipu-ssd` (the paper's
//! SSD, Table 2; preconditioned to steady state: every logical page written once) and
//! `sim:hdd` (its disk). The log-structured store takes the whole device, as NILFS2 its
//! partition; the device holds the data plus a quarter, its summaries' 1% and 48 MiB
//! (the cleaner's reserve, the open segment, alignment, checkpoints), so that the data
//! fills about 80% of the segments the store's writers may fill. The direct store's data area exists
//! from the start too (`presize`), so that both read every page the DBMS misses.
//!
//! Readings (where the paper leaves the mapping open):
//! - **Throughput** (tpm, Fig. 5, Table 3, Fig. 9) is proportional to references per
//!   second of device time: the paper's systems were I/O-bound (§4.4: most CPU time in
//!   I/O wait), and a replay has no think time. Speedups are ratios of device time.
//! - **Fig. 6**: IOPS = device requests per second of device time; response time = device
//!   time per request (the simulator serves one request at a time: no queueing, so the
//!   paper's response times, which include queueing, are not comparable in absolute
//!   terms); sectors/s = bytes moved / 512 per second of device time.
//! - **GC off** (§4.1–4.5: "we set the interval of garbage collection to a very large
//!   value"): no background cleaning. NILFS2 then simply had room for the run's writes; our
//!   space is 80% full, so the store cleans in the foreground once it runs out of free
//!   segments (counted and shown: the cleaning share of device time). **GC on** (Table 3,
//!   Fig. 9): the daemon of the paper's NILFS2 (nilfs-utils 2.0, before the min/max
//!   clean-segment thresholds of 2.1): every CI seconds it cleans NSPC segments older than
//!   PP, on the device's virtual clock — `min_free`/`max_free` set so that it always runs.
//! - Fig. 9 is a grid of (PP 0, NSPC, CI) on the 8 MB setting (page traces) or
//!   pass-through (I/O traces), on the flash device.
//! - Figs. 7 (CPU split) and 8 (OS page cache) have no counterpart: the replay measures
//!   device time only, and there is no file-system cache between the pool and the store.

mod figures;
mod gc;

use super::runner::Runner;
use super::{Report, ReproduceOptions};
use crate::config::{BufferSize, RunConfig};
use crate::registry::DeviceFacts;
use crate::result::RunResult;
use crate::LabError;
use std::path::{Path, PathBuf};

/// Page size of the PostgreSQL traces.
pub const PAGE_SIZE: usize = 8192;
/// The in-place store (the paper's EXT2).
pub const EXT2: &str = "direct";
/// The log-structured store (the paper's NILFS2) with the cleaning daemon off.
pub const NILFS2: &str = "log-structured:cleaner=oldest,prefill=true,background=false";
/// Where the bundled samples are (relative to the working directory: the repository).
pub const SAMPLES_DIR: &str = "testdata/traces";
/// `min_free`/`max_free` that keep the cleaning daemon running (the paper's NILFS2 had
/// no thresholds).
const ALWAYS: u64 = 1 << 30;

/// One of Fig. 5's systems.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct System {
    /// The paper's name (`Flash-NILFS2`).
    pub label: &'static str,
    /// On the flash device (else the disk).
    pub flash: bool,
    /// Store spec.
    pub store: &'static str,
}

/// The device of a run whose data spans `data_bytes`: the paper's SSD (preconditioned to
/// steady state) or its disk, with room beyond the data for the log-structured store's
/// space at 80% full — a quarter of the data, its segments' summaries (under 1%), and
/// 48 MiB for the cleaner's reserve, the open segment, the alignment and the checkpoints
/// (the store takes the whole device).
pub fn device(flash: bool, data_bytes: u64) -> String {
    let slack = data_bytes / 4 + data_bytes / 100 + (48 << 20);
    if flash {
        format!("sim:nipu-ssd:precondition=sequential,slack={slack}")
    } else {
        format!("sim:hdd:slack={slack}")
    }
}

/// HDD-EXT2 (the paper's baseline), Flash-EXT2, HDD-NILFS2, Flash-NILFS2.
pub const SYSTEMS: [System; 4] = [
    System {
        label: "HDD-EXT2",
        flash: false,
        store: EXT2,
    },
    System {
        label: "Flash-EXT2",
        flash: true,
        store: EXT2,
    },
    System {
        label: "HDD-NILFS2",
        flash: false,
        store: NILFS2,
    },
    System {
        label: "Flash-NILFS2",
        flash: true,
        store: NILFS2,
    },
];

/// The log-structured store with the cleaning daemon on at `(PP, NSPC, CI)` (seconds,
/// segments, seconds).
pub fn nilfs2_gc(pp: f64, nspc: u32, ci: f64) -> String {
    format!(
        "log-structured:cleaner=oldest,prefill=true,background=true,pp={pp},nspc={nspc},ci={ci},\
         min_free={ALWAYS},max_free={ALWAYS}"
    )
}

/// What kind of PostgreSQL trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceKind {
    /// Every buffer access: replayed through LRU at the paper's buffers.
    Page,
    /// The I/O below PostgreSQL's buffer: replayed in pass-through mode.
    Io,
}

/// A PostgreSQL trace found in the traces directory.
#[derive(Debug, Clone)]
pub struct PgTrace {
    /// The file.
    pub path: PathBuf,
    /// Its file name.
    pub name: String,
    /// Page or I/O trace.
    pub kind: TraceKind,
}

/// A buffer setting of a run: the paper's DBMS it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// Label (`8 MB`).
    pub label: &'static str,
    /// The paper's DBMS with that buffer (`commercial`, `MySQL`, or both for I/O traces).
    pub dbms: Dbms,
    /// Policy spec (`lru` or `none`).
    pub policy: &'static str,
    /// Frames of 8 KB.
    pub frames: usize,
}

/// Which of the paper's DBMS a setting is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dbms {
    /// The commercial DBMS: 8 MB buffer, 4 KB blocks.
    Commercial,
    /// MySQL/InnoDB: 4 MB buffer, 16 KB blocks.
    MySql,
    /// An I/O trace (PostgreSQL's own 256 kB buffer): both of the paper's ranges.
    Both,
}

/// The settings of a trace.
pub fn settings(kind: TraceKind) -> Vec<Setting> {
    match kind {
        TraceKind::Page => vec![
            Setting {
                label: "8 MB",
                dbms: Dbms::Commercial,
                policy: "lru",
                frames: (8 << 20) / PAGE_SIZE,
            },
            Setting {
                label: "4 MB",
                dbms: Dbms::MySql,
                policy: "lru",
                frames: (4 << 20) / PAGE_SIZE,
            },
        ],
        TraceKind::Io => vec![Setting {
            label: "pass-through",
            dbms: Dbms::Both,
            policy: "none",
            frames: 1,
        }],
    }
}

/// The PostgreSQL traces of `dir` (TPC-C first), and the files of PostgreSQL traces not
/// replayed with the reason.
pub fn find_traces(dir: &Path) -> (Vec<PgTrace>, Vec<String>) {
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (found, skipped);
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains("tpcc") || n.contains("pgbench"))
        .collect();
    names.sort_by_key(|n| (!n.contains("tpcc"), !n.contains("pagetrace"), n.clone()));
    for name in names {
        let kind = if name.contains(".pagetrace.csv") {
            Some(TraceKind::Page)
        } else if name.contains(".iotrace.msr.csv") {
            Some(TraceKind::Io)
        } else {
            None
        };
        match kind {
            Some(kind) => found.push(PgTrace {
                path: dir.join(&name),
                name,
                kind,
            }),
            None if name.contains("iotrace-ranges") => skipped.push(format!(
                "{name}: the range I/O CSV has no reader in this build \
                 (scripts/nipu-passthrough.sh replays it converted to op,page)"
            )),
            None if name.contains("disksim") => {
                skipped.push(format!("{name}: not a PostgreSQL trace (MQSim's TPC-C)"))
            }
            None => skipped.push(format!(
                "{name}: another encoding of a trace replayed here, or not a trace"
            )),
        }
    }
    (found, skipped)
}

/// The traces of `opts.traces_dir`, or of the bundled samples when it holds none; the
/// directory used.
fn traces(opts: &ReproduceOptions) -> Result<(Vec<PgTrace>, Vec<String>, PathBuf), LabError> {
    let (found, skipped) = find_traces(&opts.traces_dir);
    if !found.is_empty() {
        return Ok((found, skipped, opts.traces_dir.clone()));
    }
    let samples = PathBuf::from(SAMPLES_DIR);
    let (found, skipped) = find_traces(&samples);
    if found.is_empty() {
        return Err(LabError::Usage(format!(
            "reproduce nipu: no PostgreSQL trace (*.pagetrace.csv*, *.iotrace.msr.csv*) in {} nor in {SAMPLES_DIR}; give the directory with --traces",
            opts.traces_dir.display()
        )));
    }
    Ok((found, skipped, samples))
}

/// The runs of one trace at one setting.
#[derive(Debug, Clone)]
pub struct Cell {
    /// Trace file name.
    pub trace: String,
    /// The setting.
    pub setting: Setting,
    /// One run per system, in [`SYSTEMS`] order.
    pub runs: Vec<RunResult>,
    /// Flash-NILFS2 with the daemon on at Table 3's (PP 1, NSPC 2, CI 5).
    pub gc_on: Option<RunResult>,
    /// Fig. 9's grid on flash: (NSPC, CI, run) at PP 0.
    pub grid: Vec<(u32, f64, RunResult)>,
}

impl Cell {
    /// The run of the system labelled `label`.
    pub fn run(&self, label: &str) -> &RunResult {
        let i = SYSTEMS.iter().position(|s| s.label == label).unwrap_or(0);
        &self.runs[i]
    }
}

/// Fig. 9's segments per clean.
pub const GRID_NSPC: [u32; 4] = [1, 2, 4, 8];
/// Fig. 9's cleaning intervals, seconds.
pub const GRID_CI: [f64; 4] = [5.0, 10.0, 30.0, 60.0];

/// Runs `store` on the flash device (or the disk) for `trace` at `setting`.
fn one(
    rn: &mut Runner<'_>,
    trace: &PgTrace,
    setting: &Setting,
    store: &str,
    flash: bool,
) -> Result<RunResult, LabError> {
    let data_bytes = rn.scan(&trace.path, PAGE_SIZE)?.dense_pages * PAGE_SIZE as u64;
    let device = device(flash, data_bytes);
    let ropts = RunConfig {
        presize: true,
        // Neither LRU nor pass-through reads the device facts: skip their probe.
        facts: Some(DeviceFacts::default()),
        ..RunConfig::default()
    };
    rn.run_store(
        &trace.path,
        PAGE_SIZE,
        (setting.policy, store, &device),
        BufferSize::Pages(setting.frames),
        &ropts,
    )
}

/// Every run of `trace`: the four systems at each setting, Table 3's GC-on run and Fig. 9's
/// grid at the first setting.
fn measure(rn: &mut Runner<'_>, trace: &PgTrace) -> Result<Vec<Cell>, LabError> {
    let mut cells = Vec::new();
    for (i, setting) in settings(trace.kind).iter().enumerate() {
        let runs = SYSTEMS
            .iter()
            .map(|s| one(rn, trace, setting, s.store, s.flash))
            .collect::<Result<Vec<_>, _>>()?;
        let mut cell = Cell {
            trace: trace.name.clone(),
            setting: *setting,
            runs,
            gc_on: None,
            grid: Vec::new(),
        };
        if i == 0 {
            cell.gc_on = Some(one(rn, trace, setting, &nilfs2_gc(1.0, 2, 5.0), true)?);
            for nspc in GRID_NSPC {
                for ci in GRID_CI {
                    let r = one(rn, trace, setting, &nilfs2_gc(0.0, nspc, ci), true)?;
                    cell.grid.push((nspc, ci, r));
                }
            }
        }
        cells.push(cell);
    }
    Ok(cells)
}

/// Runs the reproduction.
pub fn run(opts: &ReproduceOptions) -> Result<Report, LabError> {
    let (traces, skipped, dir) = traces(opts)?;
    let mut rn = Runner::new("nipu", opts);
    let mut cells = Vec::new();
    for t in &traces {
        cells.extend(measure(&mut rn, t)?);
    }
    let mut setup = figures::setup(&dir, &traces, &skipped, opts);
    setup.notes.push(format!(
        "{} runs in {:.0} s of wall time",
        rn.runs_done(),
        rn.elapsed_s()
    ));
    let fig5 = figures::fig5(&cells);
    let fig6 = figures::fig6(&cells);
    let table3 = gc::table3(&cells);
    let fig9 = gc::fig9(&cells);
    let verdicts = figures::verdicts(
        &[&fig5, &fig6, &table3, &fig9],
        figures::flash_vs_disk(&cells),
    );
    Ok(Report {
        paper: "nipu".to_string(),
        sections: vec![
            setup,
            fig5.section,
            fig6.section,
            table3.section,
            fig9.section,
            figures::no_counterpart(),
        ],
        verdicts,
        runs: rn.runs_done(),
    })
}
