//! The StableBuffer reproduction's tables, one function per figure, beside the paper's
//! figures as its text states them.

use super::{pct, Measure, TRACE};
use crate::reproduce::Section;
use crate::scan::TraceScan;
use flashbuf_device::DeviceProfile;
use std::path::PathBuf;

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

pub(super) fn mib(b: u64) -> String {
    if b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else {
        format!("{} KiB", b >> 10)
    }
}

fn direct_of<'a>(all: &'a [Measure], dev: &str) -> Option<&'a Measure> {
    all.iter().find(|m| m.device == dev && m.method == "direct")
}

pub(super) fn fig4(
    main: &[Measure],
    scan: &TraceScan,
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
        "proactive (I+Pro): each flush runs inline on the simulated device's background \
         queue, a second stream whose requests start at the foreground's clock and share the \
         channels, so it overlaps the writers' I/O as the paper's parallel mode does (its \
         Fig. 5: 'the parallel mode simulates the page writing in the incremental+proactive \
         method'; our Fig. 5 below measures two streams on the device alone); a writer waits \
         for a background flush only to reuse a slot it freed or read a page it wrote home; \
         deterministic (flusher=thread keeps the old flusher thread on the one queue)"
            .into(),
    );
    s
}

pub(super) fn fig6(main: &[Measure]) -> Section {
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

pub(super) fn details(main: &[Measure]) -> Section {
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

pub(super) fn fig7(main: &[Measure], sweep: &[(f64, Measure)]) -> Section {
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

pub(super) fn fresh_devices(runs: &[Measure]) -> Section {
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

/// The paper's Fig. 4 throughput gains over direct, per device (range ends of its text).
const FIG4_GAIN: &[(&str, f64, f64)] = &[
    ("mtron", 1.32, 1.59),
    ("usb-stick", 3.17, 6.24),
    ("sd-card", 0.49, 12.56),
];

/// Fig. 4's verdict per device: every StableBuffer method beats direct (direction), and
/// the methods' throughput gains against the paper's range (magnitude: the best method).
pub(super) fn fig4_verdicts(main: &[Measure]) -> Vec<crate::reproduce::Verdict> {
    use crate::reproduce::{Magnitude, Verdict};
    let mut out = Vec::new();
    for &(dev, lo, hi) in FIG4_GAIN {
        let Some(d) = direct_of(main, dev) else {
            continue;
        };
        let gains: Vec<(&str, f64)> = main
            .iter()
            .filter(|m| m.device == dev && m.method != "direct")
            .map(|m| (m.method, m.throughput() / d.throughput() - 1.0))
            .collect();
        let Some(&(best_m, best)) = gains.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
            continue;
        };
        let worst = gains.iter().map(|g| g.1).fold(f64::MAX, f64::min);
        let magnitude = Magnitude::of(best, lo, hi);
        let direction = worst > 0.0;
        let staged = main
            .iter()
            .find(|m| m.device == dev && m.method == best_m)
            .map_or(0, |m| m.size_bytes);
        out.push(Verdict {
            figure: format!("Fig. 4: write throughput vs direct, {dev}"),
            paper: format!("{} .. {}", pct(lo), pct(hi)),
            measured: format!("{} .. {} (best {best_m})", pct(worst), pct(best)),
            direction_holds: direction,
            magnitude,
            cause: if direction && magnitude == Magnitude::Inside {
                String::new()
            } else {
                format!(
                    "direct writes {:.1} pages/s on the preconditioned {dev}; {best_m} with {} \
                     of staging {:.1} pages/s: the simulated device's random-write penalty \
                     against its sequential and partitioned patterns sets the gain",
                    d.throughput(),
                    mib(staged.max(1)),
                    d.throughput() * (1.0 + best)
                )
            },
        });
    }
    out
}
