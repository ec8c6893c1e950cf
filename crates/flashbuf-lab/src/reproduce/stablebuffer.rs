//! `flashbuf reproduce stablebuffer`: the experiments of Li, Xu, Choi and Hu,
//! "StableBuffer: Optimizing Write Performance for DBMS Applications on Flash Devices"
//! (CIKM 2010), §4: a PostgreSQL write trace replayed without a buffer against direct
//! write-through and three StableBuffer methods on an SSD, a USB stick and an SD card.
//!
//! Ours: `pgbench-pg15-s20.iotrace.msr.csv.zst` (the I/O below PostgreSQL 15's buffer under
//! pgbench, 8 KB pages; the paper's was TPC-C on PostgreSQL 8.4, 4 KB pages, 122,150
//! writes) in pass-through mode on `sim:mtron`, `sim:usb-stick` and `sim:sd-card`, each
//! write path measured by a meter around the simulated device:
//! - **throughput** = writes / device time of the write path (staging, flushing and
//!   syncs; the trace's reads cost one I/O either way and are left out), pages/s;
//! - **response time** of a write = the virtual device time that passed during the call
//!   (its staging write, any flush it triggered, and — proactive — the background
//!   flusher's I/O interleaved with it) + the CPU time of the call on its thread, minus
//!   the CPU the simulator itself spent (the store's own CPU: recognition, tables,
//!   checksums, copies);
//! - Fig. 6's split is the two parts of the mean response time; Fig. 7 sweeps the
//!   staging size from 25% to 400% of the default.
//!
//! The default staging size is each device's focused-area size as the profiler measures it
//! on the simulated device (the paper's rule: "the setting of StableBuffer size to that of
//! the focused area"); the paper's own sizes (4 MB SSD, 2 MB USB and SD) are in the sweep.
//! The devices are preconditioned (every logical page written once, free of charge): the
//! trace updates the pages of an existing database, as the paper's did; a last table
//! repeats the default setting on fresh devices.
//!
//! Every run replays the whole trace (1.59 M references; `--limit` shortens them). The 60
//! runs take 6–10 minutes of wall time on one core; the simulated device time they
//! report does not depend on it.

use super::{Report, ReproduceOptions, Section};
use crate::feed::Feed;
use crate::oracle::Oracle;
use crate::registry::{
    build_sim, build_store, measure_sim_profile, stable_buffer_config, BuildContext,
};
use crate::scan::scan_trace;
use crate::LabError;
use flashbuf_core::page::{self, HEADER_BYTES};
use flashbuf_core::{AlignedBuf, DeviceStats, DirtyRanges};
use flashbuf_device::{Device, DeviceError, DeviceProfile, SimDevice, WriteOp};
use flashbuf_store::stable_buffer::{MemoryReport, StableBufferStats, StableBufferStore};
use flashbuf_store::{PageStore, StoreError, Superblock};
use flashbuf_trace::Op;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The trace replayed.
pub const TRACE: &str = "pgbench-pg15-s20.iotrace.msr.csv.zst";
/// Its page size.
pub const PAGE_SIZE: usize = 8192;
/// The devices.
pub const DEVICES: &[&str] = &["mtron", "usb-stick", "sd-card"];

/// A write path of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Method {
    /// Short label (`direct`, `O+P`, `I+P`, `I+Pro`).
    pub label: &'static str,
    /// Store name with options (the size is added per run).
    pub store: &'static str,
}

/// Direct write-through and the paper's three StableBuffer combinations.
pub const METHODS: &[Method] = &[
    Method {
        label: "direct",
        store: "direct",
    },
    Method {
        label: "O+P",
        store: "stable-buffer:recognition=ondemand,flush=passive",
    },
    Method {
        label: "I+P",
        store: "stable-buffer:recognition=incremental,flush=passive",
    },
    Method {
        label: "I+Pro",
        store: "stable-buffer:recognition=incremental,flush=proactive",
    },
];

// ---------------------------------------------------------------------------------------
// The meter: a device wrapper attributing virtual time to parts of the write path.

thread_local! {
    /// Set while the replay thread serves a trace read.
    static FOREGROUND_READ: Cell<bool> = const { Cell::new(false) };
    /// CPU nanoseconds this thread spent inside the simulated device.
    static DEVICE_CPU_NS: Cell<u64> = const { Cell::new(0) };
}

/// CPU time of the calling thread, nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Device time by part of the path, µs, and request counts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Buckets {
    /// Trace reads (foreground).
    pub read_us: f64,
    /// Writes into the staging area (or any write, for direct).
    pub stage_write_us: f64,
    /// Writes of flushed pages home.
    pub home_write_us: f64,
    /// Reads of staged pages by flushes (and recovery).
    pub flush_read_us: f64,
    /// Syncs.
    pub sync_us: f64,
    /// Staging writes.
    pub stage_writes: u64,
    /// Home writes.
    pub home_writes: u64,
    /// Flush reads.
    pub flush_reads: u64,
}

impl Buckets {
    /// Device time of the write path, µs.
    pub fn write_path_us(&self) -> f64 {
        self.stage_write_us + self.home_write_us + self.flush_read_us + self.sync_us
    }
}

/// A simulated device behind a meter. Requests are serialized (the simulator serves one
/// at a time anyway) so that each one's virtual time is exact.
#[derive(Debug)]
struct Metered {
    sim: SimDevice,
    serial: Mutex<Buckets>,
    /// Writes at or beyond this offset are home writes (`u64::MAX` until known).
    data_offset: AtomicU64,
}

impl Metered {
    fn new(sim: SimDevice) -> Self {
        Self {
            sim,
            serial: Mutex::new(Buckets::default()),
            data_offset: AtomicU64::new(u64::MAX),
        }
    }

    fn buckets(&self) -> Buckets {
        *self.serial.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn clock_us(&self) -> f64 {
        self.sim.clock_us()
    }

    fn metered<T>(
        &self,
        f: impl FnOnce(&SimDevice) -> Result<T, DeviceError>,
        account: impl FnOnce(&mut Buckets, f64),
    ) -> Result<T, DeviceError> {
        let mut b = self.serial.lock().unwrap_or_else(|e| e.into_inner());
        let t0 = self.sim.clock_us();
        let c0 = thread_cpu_ns();
        let r = f(&self.sim);
        let c1 = thread_cpu_ns();
        let t1 = self.sim.clock_us();
        DEVICE_CPU_NS.with(|c| c.set(c.get() + c1.saturating_sub(c0)));
        account(&mut b, t1 - t0);
        r
    }
}

impl Device for Metered {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        let fg = FOREGROUND_READ.with(Cell::get);
        self.metered(
            |d| d.read_at(offset, buf),
            |b, us| {
                if fg {
                    b.read_us += us;
                } else {
                    b.flush_read_us += us;
                    b.flush_reads += 1;
                }
            },
        )
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        self.write_batch(&[WriteOp { offset, data: buf }])
    }

    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        let data = self.data_offset.load(Relaxed);
        for op in ops {
            self.metered(
                |d| d.write_at(op.offset, op.data),
                |b, us| {
                    if op.offset >= data {
                        b.home_write_us += us;
                        b.home_writes += 1;
                    } else {
                        b.stage_write_us += us;
                        b.stage_writes += 1;
                    }
                },
            )?;
        }
        Ok(())
    }

    fn sync(&self) -> Result<(), DeviceError> {
        self.metered(|d| d.sync(), |b, us| b.sync_us += us)
    }

    fn len(&self) -> u64 {
        self.sim.len()
    }

    fn set_len(&self, len: u64) -> Result<(), DeviceError> {
        self.sim.set_len(len)
    }

    fn max_len(&self) -> Option<u64> {
        self.sim.max_len()
    }

    fn stats(&self) -> DeviceStats {
        self.sim.stats()
    }

    fn describe(&self) -> String {
        self.sim.describe()
    }
}

// ---------------------------------------------------------------------------------------
// One run.

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Measure {
    /// Device profile name.
    pub device: String,
    /// Method label.
    pub method: &'static str,
    /// Staging bytes (0 for direct).
    pub size_bytes: u64,
    /// Trace writes replayed.
    pub writes: u64,
    /// Trace reads replayed.
    pub reads: u64,
    /// Device time by part.
    pub buckets: Buckets,
    /// Sum over writes of the virtual time during the call, µs.
    pub resp_io_us: f64,
    /// Sum over writes of the store's own CPU time, µs.
    pub resp_cpu_us: f64,
    /// Device counters at the end.
    pub device_stats: DeviceStats,
    /// Staging counters (StableBuffer only).
    pub sb: Option<StableBufferStats>,
    /// Memory (StableBuffer only).
    pub memory: Option<MemoryReport>,
    /// Mean fraction of the slots in use, sampled every 256 writes (StableBuffer only).
    pub mean_used: Option<f64>,
    /// Whether the device was preconditioned.
    pub preconditioned: bool,
    /// Verify errors of the oracle.
    pub verify_errors: u64,
    /// Wall seconds of the run.
    pub wall_s: f64,
}

impl Measure {
    /// Writes per second of write-path device time.
    pub fn throughput(&self) -> f64 {
        let s = self.buckets.write_path_us() / 1e6;
        if s > 0.0 {
            self.writes as f64 / s
        } else {
            0.0
        }
    }

    /// Mean response time of a write, µs.
    pub fn response_us(&self) -> f64 {
        (self.resp_io_us + self.resp_cpu_us) / self.writes.max(1) as f64
    }

    /// Mean I/O part, µs.
    pub fn io_us(&self) -> f64 {
        self.resp_io_us / self.writes.max(1) as f64
    }

    /// Mean CPU part, µs.
    pub fn cpu_us(&self) -> f64 {
        self.resp_cpu_us / self.writes.max(1) as f64
    }
}

/// Everything a run needs besides the method.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The trace.
    pub trace: PathBuf,
    /// Replay at most this many references.
    pub limit_refs: Option<u64>,
    /// Dense pages of the trace.
    pub data_pages: u64,
    /// Seed.
    pub seed: u64,
    /// Precondition the simulated devices (write every logical page once, free of
    /// charge) so that the trace's writes update existing data, as on the paper's devices.
    pub precondition: bool,
}

/// Stores a run may build.
enum AnyStore {
    Direct(Box<dyn PageStore>),
    Stable(StableBufferStore<Arc<Metered>>),
}

impl AnyStore {
    fn store(&self) -> &dyn PageStore {
        match self {
            AnyStore::Direct(s) => s.as_ref(),
            AnyStore::Stable(s) => s,
        }
    }
}

/// Replays the trace through `method` on `sim:device` with `size_bytes` of staging
/// (`None`: the store's default) and the pattern figures of `profile` (a saved profile).
pub fn run_method(
    setup: &Setup,
    device: &str,
    method: &Method,
    size_bytes: Option<u64>,
    profile: Option<&Path>,
) -> Result<Measure, LabError> {
    let mut store_spec = crate::spec::parse(method.store)?;
    if store_spec.name == "stable-buffer" {
        if let Some(s) = size_bytes {
            store_spec.opts.insert("size".into(), s.to_string());
        }
        if let Some(p) = profile {
            store_spec
                .opts
                .insert("profile".into(), p.display().to_string());
        }
    }
    // Room for the superblock, the staging area (up to 64 MiB) and alignment.
    let extra_pages = (80u64 << 20) / PAGE_SIZE as u64;
    let ctx = BuildContext {
        page_size: PAGE_SIZE,
        data_pages: setup.data_pages + extra_pages,
        seed: setup.seed,
        facts: crate::registry::DeviceFacts::default(),
    };
    let dev_name = if setup.precondition {
        format!("sim:{device}:precondition=true")
    } else {
        format!("sim:{device}")
    };
    let sim = build_sim(&crate::spec::parse(&dev_name)?, &ctx)?;
    let meter = Arc::new(Metered::new(sim));
    let any = if store_spec.name == "stable-buffer" {
        let cfg = stable_buffer_config(&store_spec, meter.as_ref(), &ctx)?;
        AnyStore::Stable(StableBufferStore::create(Arc::clone(&meter), cfg)?)
    } else {
        AnyStore::Direct(build_store(
            &store_spec,
            Box::new(Arc::clone(&meter)),
            &ctx,
        )?)
    };
    let sb = Superblock::read(meter.as_ref())?;
    meter.data_offset.store(sb.data_offset, Relaxed);
    let b0 = meter.buckets();
    let size = match &any {
        AnyStore::Stable(s) => s.layout().staging_bytes(),
        AnyStore::Direct(_) => 0,
    };
    let store = any.store();
    let started = Instant::now();
    let mut oracle = Oracle::with_capacity(setup.data_pages as usize);
    let mut feed = Feed::start(&setup.trace, None, PAGE_SIZE as u32, setup.limit_refs)?;
    let mut rbuf = AlignedBuf::zeroed(PAGE_SIZE, 4096);
    let mut wbuf = AlignedBuf::zeroed(PAGE_SIZE, 4096);
    let full = DirtyRanges::full(PAGE_SIZE);
    let (mut reads, mut writes) = (0u64, 0u64);
    let (mut resp_io, mut resp_cpu) = (0.0f64, 0.0f64);
    let (mut used_sum, mut used_samples) = (0.0f64, 0u64);
    while let Some(batch) = feed.next_batch()? {
        for r in &batch {
            let pid = r.page;
            match r.op {
                Op::Read => {
                    FOREGROUND_READ.with(|f| f.set(true));
                    let res = store.read_page(pid, &mut rbuf);
                    FOREGROUND_READ.with(|f| f.set(false));
                    match res {
                        Ok(_) => oracle.check(pid, &rbuf[HEADER_BYTES..]),
                        Err(StoreError::Corrupt { pid, reason }) => {
                            oracle.record_error(format!("{pid} corrupt: {reason}"));
                        }
                        Err(e) => return Err(e.into()),
                    }
                    reads += 1;
                }
                Op::Write => {
                    let s = oracle.bump(pid);
                    wbuf[HEADER_BYTES..HEADER_BYTES + s.len()].copy_from_slice(&s);
                    page::seal(&mut wbuf, pid, u64::from(oracle.expected(pid)));
                    let t0 = meter.clock_us();
                    let c0 = thread_cpu_ns();
                    let d0 = DEVICE_CPU_NS.with(Cell::get);
                    store.write_page(pid, &wbuf, &full)?;
                    let d1 = DEVICE_CPU_NS.with(Cell::get);
                    let c1 = thread_cpu_ns();
                    let t1 = meter.clock_us();
                    resp_io += t1 - t0;
                    resp_cpu += (c1.saturating_sub(c0)).saturating_sub(d1 - d0) as f64 / 1e3;
                    writes += 1;
                    if writes.is_multiple_of(256) {
                        if let AnyStore::Stable(s) = &any {
                            used_sum += s.staged() as f64 / f64::from(s.layout().slots);
                            used_samples += 1;
                        }
                    }
                }
            }
        }
        feed.recycle(batch);
    }
    feed.finish()?;
    store.sync()?;
    store
        .check_invariants()
        .map_err(|e| LabError::Invariant(format!("{} on {device}: {e}", method.label)))?;
    let (sbs, memory) = match &any {
        AnyStore::Stable(s) => {
            s.stop_flusher();
            (Some(s.sb_stats()), Some(s.memory()))
        }
        AnyStore::Direct(_) => (None, None),
    };
    let b1 = meter.buckets();
    let buckets = Buckets {
        read_us: b1.read_us - b0.read_us,
        stage_write_us: b1.stage_write_us - b0.stage_write_us,
        home_write_us: b1.home_write_us - b0.home_write_us,
        flush_read_us: b1.flush_read_us - b0.flush_read_us,
        sync_us: b1.sync_us - b0.sync_us,
        stage_writes: b1.stage_writes - b0.stage_writes,
        home_writes: b1.home_writes - b0.home_writes,
        flush_reads: b1.flush_reads - b0.flush_reads,
    };
    Ok(Measure {
        device: device.to_string(),
        method: method.label,
        size_bytes: size,
        writes,
        reads,
        buckets,
        resp_io_us: resp_io,
        resp_cpu_us: resp_cpu,
        device_stats: meter.stats(),
        sb: sbs,
        memory,
        mean_used: (used_samples > 0).then(|| used_sum / used_samples as f64),
        preconditioned: setup.precondition,
        verify_errors: oracle.errors(),
        wall_s: started.elapsed().as_secs_f64(),
    })
}

// ---------------------------------------------------------------------------------------
// The report.

/// The paper's Fig. 4 figures as its text states them (change against direct; the
/// figure's other bars are not in the text).
fn paper_fig4(device: &str, method: &str) -> (&'static str, &'static str) {
    match (device, method) {
        ("mtron", "O+P") => ("+159%", "-67%"),
        ("mtron", "I+Pro") => ("+132%", "-71%"),
        ("usb-stick", "O+P") => ("+624%", ""),
        ("usb-stick", "I+P") => ("", "-87%"),
        ("usb-stick", "I+Pro") => ("+317%", "-77%"),
        ("sd-card", "O+P") => ("+1,256%", ""),
        ("sd-card", "I+P") => ("", "-97%"),
        ("sd-card", "I+Pro") => ("+49%", "-33%"),
        _ => ("", ""),
    }
}

/// The paper's Fig. 6 CPU shares of the passive methods.
fn paper_fig6(device: &str, method: &str) -> &'static str {
    match (device, method) {
        ("mtron", "O+P") => "24.3%",
        ("mtron", "I+P") => "31.5%",
        ("usb-stick", "O+P") => "5.1%",
        ("usb-stick", "I+P") => "5.3%",
        ("sd-card", "O+P") => "4.2%",
        ("sd-card", "I+P") => "5.5%",
        _ => "",
    }
}

fn pct(x: f64) -> String {
    format!("{:+.0}%", x * 100.0)
}

fn mib(b: u64) -> String {
    if b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else {
        format!("{} KiB", b >> 10)
    }
}

/// Measures each device's profile once and saves it (so every run reads the same figures).
fn profiles(dir: &Path, seed: u64) -> Result<Vec<(String, PathBuf, DeviceProfile)>, LabError> {
    DEVICES
        .iter()
        .map(|d| {
            let p = measure_sim_profile(&format!("sim:{d}"), PAGE_SIZE, seed)?;
            let path = dir.join(format!("{d}.profile.json"));
            p.save(&path)?;
            Ok((d.to_string(), path, p))
        })
        .collect()
}

/// Runs the reproduction.
pub fn run(opts: &ReproduceOptions) -> Result<Report, LabError> {
    let trace = opts.traces_dir.join(TRACE);
    let scan = scan_trace(&trace, None, PAGE_SIZE as u32, opts.limit_refs)?;
    let setup = Setup {
        trace,
        limit_refs: opts.limit_refs,
        data_pages: scan.dense_pages,
        seed: opts.seed,
        precondition: true,
    };
    let dir = std::env::temp_dir().join(format!("flashbuf-sb-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = report(opts, &setup, &scan, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn progress(opts: &ReproduceOptions, m: &Measure) {
    if opts.progress {
        eprintln!(
            "stablebuffer: {:<9} {:<6} {:>8}  {:>9.1} pages/s  {:>9.1} µs/write  ({:.1} s)",
            m.device,
            m.method,
            if m.size_bytes == 0 {
                "-".to_string()
            } else {
                mib(m.size_bytes)
            },
            m.throughput(),
            m.response_us(),
            m.wall_s
        );
    }
}

fn report(
    opts: &ReproduceOptions,
    setup: &Setup,
    scan: &crate::scan::TraceScan,
    dir: &Path,
) -> Result<Report, LabError> {
    let profiles = profiles(dir, opts.seed)?;
    let mut main: Vec<Measure> = Vec::new();
    for (dev, path, _) in &profiles {
        for m in METHODS {
            let r = run_method(setup, dev, m, None, Some(path))?;
            progress(opts, &r);
            main.push(r);
        }
    }
    let mut sections = Vec::new();
    sections.push(fig4(&main, scan, &profiles));
    sections.push(fig6(&main));
    sections.push(details(&main));
    let mut sweep = Vec::new();
    for (dev, path, p) in &profiles {
        let default = p.focused_area_bytes.max(1 << 20);
        for factor in [0.25, 0.5, 1.0, 2.0, 4.0] {
            let size = ((default as f64 * factor) as u64).max(PAGE_SIZE as u64);
            for m in METHODS.iter().filter(|m| m.label != "direct") {
                let r = if factor == 1.0 {
                    main.iter()
                        .find(|x| x.device == *dev && x.method == m.label)
                        .cloned()
                        .ok_or_else(|| LabError::Invariant("missing default run".into()))?
                } else {
                    let r = run_method(setup, dev, m, Some(size), Some(path))?;
                    progress(opts, &r);
                    r
                };
                sweep.push((factor, r));
            }
        }
    }
    sections.push(fig7(&main, &sweep));
    let fresh_setup = Setup {
        precondition: false,
        ..setup.clone()
    };
    let mut fresh = Vec::new();
    for (dev, path, _) in &profiles {
        for m in METHODS {
            let r = run_method(&fresh_setup, dev, m, None, Some(path))?;
            progress(opts, &r);
            fresh.push(r);
        }
    }
    sections.push(fresh_devices(&fresh));
    Ok(Report {
        paper: "stablebuffer".to_string(),
        sections,
    })
}

fn direct_of<'a>(all: &'a [Measure], dev: &str) -> Option<&'a Measure> {
    all.iter().find(|m| m.device == dev && m.method == "direct")
}

fn fig4(
    main: &[Measure],
    scan: &crate::scan::TraceScan,
    profiles: &[(String, PathBuf, DeviceProfile)],
) -> Section {
    let mut s = Section::new(
        "Fig. 4: write throughput and response time under the default setting",
        &[
            "device",
            "method",
            "staging",
            "pages/s",
            "vs direct",
            "paper",
            "resp ms",
            "vs direct",
            "paper",
            "verify",
        ],
    );
    for m in main {
        let d = direct_of(main, &m.device);
        let (pt, pr) = paper_fig4(&m.device, m.method);
        let (vt, vr) = match d {
            Some(d) if m.method != "direct" => (
                pct(m.throughput() / d.throughput() - 1.0),
                pct(m.response_us() / d.response_us() - 1.0),
            ),
            _ => (String::new(), String::new()),
        };
        s.row(vec![
            m.device.clone(),
            m.method.to_string(),
            if m.size_bytes == 0 {
                "-".into()
            } else {
                mib(m.size_bytes)
            },
            format!("{:.1}", m.throughput()),
            vt,
            pt.to_string(),
            format!("{:.3}", m.response_us() / 1e3),
            vr,
            pr.to_string(),
            m.verify_errors.to_string(),
        ]);
    }
    s.notes.push(format!(
        "trace {TRACE}: {} references, {} writes, {} distinct pages (8 KiB), pass-through; the paper \
         replayed 122,150 TPC-C writes (PostgreSQL 8.4, 4 KiB pages)",
        scan.references, scan.writes, scan.distinct_pages
    ));
    s.notes.push(
        "devices preconditioned (every logical page written once, free of charge): the trace \
         updates the pages of an existing 330 MB database, as the paper's did; on fresh devices \
         the first write of each page is a free erased-page program (see the last table)"
            .into(),
    );
    s.notes.push(
        "pages/s = writes / device time of the write path (staging, flush reads, home writes, \
         syncs; virtual time); resp = virtual time during the write call + the store's own CPU"
            .into(),
    );
    s.notes.push(
        "paper: the text gives the range ends only (throughput +132% to +159% on the SSD, +317% \
         to +624% USB, +49% to +1,256% SD; response time -67% to -71%, -77% to -87%, -33% to -97%)"
            .into(),
    );
    for (dev, _, p) in profiles {
        s.notes.push(format!(
            "{dev}: measured profile (8 KiB I/Os) T_seq {:.0} µs, T_par {:.0} µs, T_focus {:.0} µs, \
             T_random {:.0} µs, θ_min {} KiB, focused area {} = default staging size",
            p.write_seq_us,
            p.write_partitioned_us,
            p.write_focused_us,
            p.write_random_us,
            p.theta_min_bytes >> 10,
            mib(p.focused_area_bytes)
        ));
    }
    s.notes.push(
        "proactive: the simulated devices serve one request at a time (queue depth 1), so the \
         background flusher cannot overlap its I/O with the writers' as the paper's SSD did \
         (its Fig. 5: parallel writes twice as fast); its figures vary slightly from run to run"
            .into(),
    );
    s
}

fn fig6(main: &[Measure]) -> Section {
    let mut s = Section::new(
        "Fig. 6: I/O vs CPU time of a write (mean)",
        &[
            "device",
            "method",
            "I/O µs",
            "CPU µs",
            "CPU share",
            "paper CPU share",
        ],
    );
    for m in main {
        let share = m.cpu_us() / (m.io_us() + m.cpu_us()).max(f64::MIN_POSITIVE);
        s.row(vec![
            m.device.clone(),
            m.method.to_string(),
            format!("{:.1}", m.io_us()),
            format!("{:.2}", m.cpu_us()),
            format!("{:.2}%", share * 100.0),
            paper_fig6(&m.device, m.method).to_string(),
        ]);
    }
    s.notes.push(
        "CPU = the write call's thread CPU time minus the simulator's. The paper's shares come \
         from a 2008 desktop simulator (Core 2 Quad); ours are a few microseconds of native \
         code against millisecond-scale simulated I/O, so CPU is negligible on all three \
         devices (the paper found it so on the USB stick and SD card, ~5%, but not on its \
         SSD, 24-32%); O+P's sort at each flush and I+P's per-write upkeep cost about the same"
            .into(),
    );
    s
}

fn details(main: &[Measure]) -> Section {
    let mut s = Section::new(
        "Where the write path's device time goes",
        &[
            "device",
            "method",
            "stage ms",
            "flush-read ms",
            "home ms",
            "staging writes",
            "home writes",
            "absorbed",
            "flushes seq/par/foc",
            "pages/flush",
            "erases",
            "B/slot",
            "recognizer B/slot",
        ],
    );
    for m in main {
        let b = &m.buckets;
        let recog = m
            .memory
            .map(|mem| {
                if mem.recognizer_bytes == 0 {
                    "-".to_string()
                } else {
                    format!("{:.1}", mem.recognizer_bytes as f64 / f64::from(mem.slots))
                }
            })
            .unwrap_or_default();
        let (flushes, per, absorbed, mem) = match (&m.sb, &m.memory) {
            (Some(sb), Some(mem)) => {
                let n: u64 = sb.flushes.iter().sum();
                let p: u64 = sb.flushed_pages.iter().sum();
                (
                    format!("{}/{}/{}", sb.flushes[0], sb.flushes[1], sb.flushes[2]),
                    format!("{:.1}", p as f64 / n.max(1) as f64),
                    format!(
                        "{:.1}%",
                        100.0 * (1.0 - b.home_writes as f64 / m.writes.max(1) as f64)
                    ),
                    format!("{:.2}", mem.per_slot_bytes),
                )
            }
            _ => Default::default(),
        };
        s.row(vec![
            m.device.clone(),
            m.method.to_string(),
            format!("{:.0}", b.stage_write_us / 1e3),
            format!("{:.0}", b.flush_read_us / 1e3),
            format!("{:.0}", b.home_write_us / 1e3),
            b.stage_writes.to_string(),
            b.home_writes.to_string(),
            absorbed,
            flushes,
            per,
            m.device_stats.erases.to_string(),
            mem,
            recog,
        ]);
    }
    s.notes.push(
        "absorbed = writes that never reached home (overwritten while staged, or still staged); \
         B/slot = SBTT + bitmap memory per slot; recognizer = the incremental method's ordered \
         sets at the end of the run, per slot (approximate)"
            .into(),
    );
    s
}

fn fig7(main: &[Measure], sweep: &[(f64, Measure)]) -> Section {
    let mut s = Section::new(
        "Fig. 7: staging size from 25% to 400% of the default",
        &[
            "device",
            "method",
            "size",
            "% default",
            "pages/s",
            "vs direct",
            "resp ms",
            "mean used",
            "max used",
        ],
    );
    for (f, m) in sweep {
        let d = direct_of(main, &m.device);
        s.row(vec![
            m.device.clone(),
            m.method.to_string(),
            mib(m.size_bytes),
            format!("{:.0}%", f * 100.0),
            format!("{:.1}", m.throughput()),
            d.map(|d| pct(m.throughput() / d.throughput() - 1.0))
                .unwrap_or_default(),
            format!("{:.3}", m.response_us() / 1e3),
            m.mean_used
                .map(|u| format!("{:.0}%", 100.0 * u))
                .unwrap_or_default(),
            m.sb.map(|sb| {
                format!(
                    "{:.0}%",
                    100.0 * sb.max_staged as f64 / f64::from(sb.slots.max(1))
                )
            })
            .unwrap_or_default(),
        ]);
    }
    s.notes.push(
        "paper: performance degrades at both extremes (too small: poor patterns; too large: \
         staging writes stop being focused); incremental+proactive stays stable above the \
         default on the SSD (27% utilisation at 16 MB)"
            .into(),
    );
    s
}

fn fresh_devices(runs: &[Measure]) -> Section {
    let mut s = Section::new(
        "The same on fresh (not preconditioned) devices",
        &[
            "device",
            "method",
            "pages/s",
            "vs direct",
            "resp ms",
            "vs direct",
        ],
    );
    for m in runs {
        let d = direct_of(runs, &m.device);
        let (vt, vr) = match d {
            Some(d) if m.method != "direct" => (
                pct(m.throughput() / d.throughput() - 1.0),
                pct(m.response_us() / d.response_us() - 1.0),
            ),
            _ => (String::new(), String::new()),
        };
        s.row(vec![
            m.device.clone(),
            m.method.to_string(),
            format!("{:.1}", m.throughput()),
            vt,
            format!("{:.3}", m.response_us() / 1e3),
            vr,
        ]);
    }
    s.notes.push(
        "a page's first write on a fresh hybrid-FTL device goes to its erased place in the data \
         block at the cost of one program, so direct pays less for the 40 K pages the trace \
         writes first; the ratios are smaller, most on the SD card"
            .into(),
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared_trace() -> Option<PathBuf> {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/traces")
            .join(TRACE);
        if p.exists() {
            Some(p)
        } else {
            eprintln!("skipped: {} not found", p.display());
            None
        }
    }

    /// Runs `methods` on every device and asserts that the best StableBuffer method
    /// writes at least 1.5× as many pages per second of device time as direct.
    fn gain_on_every_device(limit: Option<u64>, methods: &[&str]) {
        let Some(trace) = shared_trace() else { return };
        let scan = scan_trace(&trace, None, PAGE_SIZE as u32, limit).unwrap();
        let setup = Setup {
            trace,
            limit_refs: limit,
            data_pages: scan.dense_pages,
            seed: 42,
            precondition: true,
        };
        let dir = tempfile::tempdir().unwrap();
        for dev in DEVICES {
            let profile = measure_sim_profile(&format!("sim:{dev}"), PAGE_SIZE, 42).unwrap();
            let path = dir.path().join(format!("{dev}.json"));
            profile.save(&path).unwrap();
            let mut direct = 0.0;
            let mut best = (0.0, "");
            for m in METHODS.iter().filter(|m| methods.contains(&m.label)) {
                let r = run_method(&setup, dev, m, None, Some(&path)).unwrap();
                assert_eq!(r.verify_errors, 0, "{dev} {}", m.label);
                assert_eq!(r.writes, scan.writes);
                eprintln!(
                    "{dev:<9} {:<6} {:>9.1} pages/s {:>10.1} µs/write",
                    m.label,
                    r.throughput(),
                    r.response_us()
                );
                if m.label == "direct" {
                    direct = r.throughput();
                } else if r.throughput() > best.0 {
                    best = (r.throughput(), m.label);
                }
            }
            let ratio = best.0 / direct;
            assert!(
                ratio >= 1.5,
                "{dev}: best StableBuffer method {} writes {ratio:.2}x direct",
                best.1
            );
        }
    }

    #[test]
    fn store_options_parse_and_refuse_with_the_valid_ones() {
        use flashbuf_device::MemDevice;
        use flashbuf_store::stable_buffer::{FlushMode, Recognition};
        let ctx = BuildContext {
            page_size: 4096,
            data_pages: 16,
            seed: 1,
            facts: crate::registry::DeviceFacts::default(),
        };
        let mem = MemDevice::new(0);
        let cfg = |s: &str| stable_buffer_config(&crate::spec::parse(s).unwrap(), &mem, &ctx);
        // Defaults without a profile: the paper's Mtron figures and 4 MiB.
        let c = cfg("stable-buffer").unwrap();
        assert_eq!(
            (c.recognition, c.flush, c.staging_bytes),
            (Recognition::Incremental, FlushMode::Passive, 4 << 20)
        );
        let c = cfg("stable-buffer:recognition=ondemand,flush=passive,size=2MiB").unwrap();
        assert_eq!(
            (c.recognition, c.staging_bytes),
            (Recognition::OnDemand, 2 << 20)
        );
        let e = cfg("stable-buffer:sise=1MiB").unwrap_err().to_string();
        assert!(e.contains("recognition, flush, size, profile"), "{e}");
        let e = cfg("stable-buffer:flush=eager").unwrap_err().to_string();
        assert!(e.contains("passive, proactive"), "{e}");
        let e = cfg("stable-buffer:profile=/no/such.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("profile=/no/such.json"), "{e}");
        // A saved profile gives the figures and the default size.
        let dir = tempfile::tempdir().unwrap();
        let p = measure_sim_profile("sim:sd-card", 4096, 1).unwrap();
        let path = dir.path().join("sd.json");
        p.save(&path).unwrap();
        let c = cfg(&format!("stable-buffer:profile={}", path.display())).unwrap();
        assert_eq!(c.staging_bytes, p.focused_area_bytes);
        assert_eq!(c.costs.t_seq_us, p.write_seq_us);
        // The store is built by name and works under the lab.
        let store = build_store(
            &crate::spec::parse("stable-buffer:size=64KiB,align=4KiB").unwrap(),
            Box::new(MemDevice::new(0)),
            &ctx,
        )
        .unwrap();
        assert_eq!(store.name(), "stable-buffer");
    }

    #[test]
    fn stable_buffer_beats_direct_by_half_on_a_trace_prefix() {
        // The first 250,000 references (≈ 95,000 writes) on preconditioned devices.
        gain_on_every_device(Some(250_000), &["direct", "O+P", "I+P"]);
    }

    /// The whole trace, all four methods (about a minute and a half in release mode):
    /// `cargo test -p flashbuf-lab --release -- --ignored stable_buffer_beats`.
    #[test]
    #[ignore]
    fn stable_buffer_beats_direct_by_half_on_the_whole_trace() {
        gain_on_every_device(None, &["direct", "O+P", "I+P", "I+Pro"]);
    }
}
