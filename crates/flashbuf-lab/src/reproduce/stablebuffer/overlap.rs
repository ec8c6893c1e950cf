//! Proactive flushing on the device's background queue against passive flushing and the
//! flusher thread (issue 16 item 2), on the reproduction's setup (the pgbench I/O trace,
//! pass-through, preconditioned `sim:` devices, each device's measured profile).
//!
//! - `I+Pro` (the reproduction's method, `flusher=queue` by default): each proactive flush
//!   runs inline on the simulated device's background queue and overlaps the foreground
//!   on its clock — the paper's reading of its Fig. 5 ("the parallel mode simulates the
//!   page writing in the incremental+proactive method").
//! - `I+Pro/thread` (`flusher=thread`): the flusher thread of before, every request on the
//!   device's one queue (its figures vary slightly from run to run).
//!
//! `cargo test -p flashbuf-lab --lib -- --ignored proactive_on_the_background_queue`
//! prints device seconds per device and method (whole trace; `FLASHBUF_SB_LIMIT=N` for a
//! prefix of N references).

use super::{profiles, run_method, Measure, MeterHook, Method, Setup, METHODS, TRACE};
use crate::replay::run_hooked;
use crate::result::RunResult;
use crate::{LabError, ReplayHook};
use flashbuf_device::{forward_device, Device};
use flashbuf_store::PageStore;
use flashbuf_trace::Op;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The flusher thread of before (every request on the device's one queue).
pub const PROACTIVE_THREAD: Method = Method {
    label: "I+Pro/thread",
    store: "stable-buffer:recognition=incremental,flush=proactive,flusher=thread",
};

/// A device whose background handle is the device itself: the same requests in the same
/// order as on a background queue, served one after another on the main queue.
struct SerialBackground {
    inner: Arc<Box<dyn Device>>,
}

impl Device for SerialBackground {
    fn background(&self) -> Option<Box<dyn Device>> {
        Some(Box::new(Arc::clone(&self.inner)))
    }
    forward_device!(inner => read_at, write_at, write_batch, read_head, write_head,
        write_heads, prefetch, sync, len, set_len, max_len, stats, alignment, describe);
}

/// The meter over [`SerialBackground`].
struct SerialHook(MeterHook);

impl ReplayHook for SerialHook {
    fn wrap_device(&mut self, device: Box<dyn Device>) -> Box<dyn Device> {
        self.0.wrap_device(Box::new(SerialBackground {
            inner: Arc::new(device),
        }))
    }
    fn store_ready(&mut self, store: &dyn PageStore) -> Result<(), LabError> {
        self.0.store_ready(store)
    }
    fn before_ref(&mut self, op: Op) {
        self.0.before_ref(op)
    }
    fn after_ref(&mut self, op: Op, store: &dyn PageStore) {
        self.0.after_ref(op, store)
    }
    fn finish(&mut self, store: &dyn PageStore, result: &mut RunResult) -> Result<(), LabError> {
        self.0.finish(store, result)
    }
}

/// `I+Pro` with its background flushes served serially on the main queue: (device
/// seconds, write-path seconds, proactive flushes).
fn proactive_serial(setup: &Setup, dev: &str, profile: &Path) -> (f64, f64, u64) {
    let mut store = crate::spec::parse(method("I+Pro").store).expect("spec");
    store
        .opts
        .insert("profile".into(), profile.display().to_string());
    let cfg = setup.config(dev, &store.to_string()).expect("config");
    let mut hook = SerialHook(MeterHook::new());
    let r = run_hooked(&cfg, Some(&setup.scan), &mut hook).expect("run");
    assert_eq!(r.verify_errors, 0);
    let flushes = flashbuf_store::stable_buffer::report::from_figures(&r.store_report)
        .map_or(0, |(s, _)| s.proactive_flushes);
    (
        r.device_time_us / 1e6,
        hook.0.metered.buckets.write_path_us() / 1e6,
        flushes,
    )
}

fn shared_trace() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(TRACE);
    p.exists().then_some(p)
}

fn method(label: &str) -> Method {
    METHODS
        .iter()
        .copied()
        .find(|m| m.label == label)
        .unwrap_or(PROACTIVE_THREAD)
}

fn line(m: &Measure) -> String {
    format!(
        "{:<9} {:<12} device {:>8.2} s  write path {:>8.2} s  {:>8.1} pages/s  proactive \
         flushes {:>6}  passive {:>6}",
        m.device,
        m.method,
        m.device_stats.device_time_us / 1e6,
        m.buckets.write_path_us() / 1e6,
        m.throughput(),
        m.sb.map_or(0, |s| s.proactive_flushes),
        m.sb.map_or(0, |s| s.passive_flushes),
    )
}

#[test]
fn proactive_on_the_background_queue_is_deterministic_in_the_lab() {
    let Some(trace) = shared_trace() else {
        eprintln!("skipped: {TRACE} not found");
        return;
    };
    let setup = Setup::new(trace, Some(40_000), 42, true).expect("setup");
    let dir = tempfile::tempdir().expect("tempdir");
    let p = profiles(dir.path(), 42).expect("profiles");
    let (dev, path, _) = &p[0];
    let run = || run_method(&setup, dev, &method("I+Pro"), None, Some(path)).expect("run");
    let (a, b) = (run(), run());
    eprintln!("{}", line(&a));
    assert_eq!(a.verify_errors, 0);
    assert!(a.sb.is_some_and(|s| s.proactive_flushes > 0), "{:?}", a.sb);
    assert_eq!(
        a.device_stats.device_time_us.to_bits(),
        b.device_stats.device_time_us.to_bits(),
        "the same replay gives the same device time"
    );
    assert_eq!(a.device_stats, b.device_stats);
    assert_eq!(a.sb, b.sb);
}

#[test]
#[ignore]
fn proactive_on_the_background_queue() {
    let Some(trace) = shared_trace() else {
        eprintln!("skipped: {TRACE} not found");
        return;
    };
    let limit = std::env::var("FLASHBUF_SB_LIMIT")
        .ok()
        .and_then(|v| v.parse().ok());
    let setup = Setup::new(trace, limit, 42, true).expect("setup");
    let dir = tempfile::tempdir().expect("tempdir");
    for (dev, path, _) in profiles(dir.path(), 42).expect("profiles") {
        for label in ["direct", "O+P", "I+P", "I+Pro", "I+Pro/thread"] {
            let m = run_method(&setup, &dev, &method(label), None, Some(&path)).expect("run");
            assert_eq!(m.verify_errors, 0, "{dev} {label}");
            eprintln!("{}", line(&m));
        }
        let (device_s, write_s, flushes) = proactive_serial(&setup, &dev, &path);
        eprintln!(
            "{dev:<9} {:<12} device {device_s:>8.2} s  write path {write_s:>8.2} s  \
             (I+Pro's requests, background ones on the main queue; {flushes} proactive flushes)",
            "I+Pro/serial"
        );
    }
}
