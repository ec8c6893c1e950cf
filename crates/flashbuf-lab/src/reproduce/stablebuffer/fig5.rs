//! Fig. 5 of the StableBuffer paper: two focused write streams written serially (one
//! thread, one stream after the other) or in parallel (two threads, one stream each).
//! The paper: on the SSD the parallel mode is almost twice as fast, on the USB stick
//! about the same, on the SD card much worse (interleaving the two focused streams hurts
//! it); hence proactive flushing pays off on the SSD only.
//!
//! Ours, on the simulated device at steady state (the registry's default preconditioning)
//! with queue depth above one ([`flashbuf_device::sim::queue`]):
//! - **streams**: A and B, each [`WRITES_PER_STREAM`] random [`PAGE_SIZE`] writes
//!   (page-aligned, seeded) within its own focused area, A's area at the device's start
//!   and B's in its middle; the area is the profile's focused-area size (the
//!   reproduction's default staging size, [`area_of`]; the verdicts' basis) and, as a
//!   second setting, the paper's staging sizes ([`paper_area`]: 4 MB SSD, 2 MB USB, SD);
//! - **serial**: A's writes, then B's, on one stream (queue depth one);
//! - **parallel**: two streams of the device, one per write stream, each with its own
//!   clock; the next write submitted is that of the stream whose clock is earliest (A on
//!   ties), so the FTL sees the two streams interleaved as their requests complete;
//! - **throughput** = bytes written / virtual time (the makespan; a final sync included),
//!   MB/s (10^6 bytes); the ratio is parallel over serial.
//!
//! Every run starts from an identical device (same profile, capacity, seed and
//! preconditioning), so the two modes differ only in how they submit.

use super::PAGE_SIZE;
use crate::reproduce::{Magnitude, Section, Verdict};
use crate::LabError;
use flashbuf_core::rng::SplitMix64;
use flashbuf_device::registry::{parse_sim, DeviceContext};
use flashbuf_device::sim::{FtlStats, SimDevice, StreamId};
use flashbuf_device::DeviceProfile;

/// Writes per stream.
pub const WRITES_PER_STREAM: u64 = 2048;
/// Logical bytes of the device (hint; the registry adds its slack).
pub const DATA_BYTES: u64 = 64 << 20;
/// Runs per device: serial and parallel at two area sizes.
pub const RUNS_PER_DEVICE: usize = 4;

/// Each stream's focused area on a device of profile `p`: its focused-area size (at
/// least 1 MiB), as the reproduction's default staging size.
pub fn area_of(p: &DeviceProfile) -> u64 {
    p.focused_area_bytes.max(1 << 20)
}

/// The paper's staging size on `device` (§4: 4 MB on the SSD, 2 MB on the USB stick and
/// the SD card), the second area setting.
pub fn paper_area(device: &str) -> u64 {
    match device {
        "mtron" => 4 << 20,
        _ => 2 << 20,
    }
}

/// One device's runs at both area settings.
#[derive(Debug, Clone)]
pub struct Fig5Device {
    /// Areas of the profile's focused-area size.
    pub profile_area: Fig5Measure,
    /// Areas of the paper's staging size.
    pub paper_area: Fig5Measure,
}

/// [`measure`] at the profile's focused-area size ([`area_of`] of `p`) and at the paper's
/// ([`paper_area`]).
pub fn measure_device(
    device: &str,
    p: &DeviceProfile,
    seed: u64,
    mut tick: impl FnMut(&str, f64),
) -> Result<Fig5Device, LabError> {
    Ok(Fig5Device {
        profile_area: measure(device, area_of(p), seed, &mut tick)?,
        paper_area: measure(device, paper_area(device), seed, &mut tick)?,
    })
}

/// One device's serial and parallel runs.
#[derive(Debug, Clone)]
pub struct Fig5Measure {
    /// Profile name.
    pub device: String,
    /// Focused-area bytes of each stream.
    pub area_bytes: u64,
    /// The device's erase block, bytes.
    pub block_bytes: u64,
    /// The device's flash page, bytes.
    pub page_bytes: u64,
    /// The device's channels.
    pub channels: u32,
    /// Bytes written per mode.
    pub bytes: u64,
    /// Serial: virtual time, µs.
    pub serial_us: f64,
    /// Parallel: makespan, µs.
    pub parallel_us: f64,
    /// Parallel: sum of the two streams' request latencies, µs.
    pub parallel_latency_sum_us: f64,
    /// FTL counters of the serial run.
    pub serial_ftl: Option<FtlStats>,
    /// FTL counters of the parallel run.
    pub parallel_ftl: Option<FtlStats>,
}

impl Fig5Measure {
    /// Serial throughput, MB/s.
    pub fn serial_mbs(&self) -> f64 {
        mbs(self.bytes, self.serial_us)
    }

    /// Parallel throughput, MB/s.
    pub fn parallel_mbs(&self) -> f64 {
        mbs(self.bytes, self.parallel_us)
    }

    /// Parallel over serial throughput.
    pub fn ratio(&self) -> f64 {
        if self.parallel_us > 0.0 {
            self.serial_us / self.parallel_us
        } else {
            0.0
        }
    }
}

fn mbs(bytes: u64, us: f64) -> f64 {
    if us > 0.0 {
        bytes as f64 / us
    } else {
        0.0
    }
}

/// The device of every run: `sim:device` at its default (steady) preconditioning.
fn build(device: &str, seed: u64) -> Result<SimDevice, LabError> {
    let spec = crate::spec::parse(&format!("sim:{device}"))?;
    let ctx = DeviceContext {
        capacity_hint_bytes: DATA_BYTES,
        page_size: PAGE_SIZE,
        seed,
    };
    Ok(parse_sim(&spec)?.build_sim(&ctx)?)
}

/// The offsets of stream `which` (0 = A, 1 = B): random pages of its focused area.
fn stream(dev: &SimDevice, which: u64, area_bytes: u64, seed: u64) -> Vec<u64> {
    let page = PAGE_SIZE as u64;
    let area_pages = (area_bytes / page).max(1);
    let base = if which == 0 {
        0
    } else {
        dev.capacity() / 2 / (4 << 20) * (4 << 20)
    };
    let mut rng = SplitMix64::new(seed ^ (which + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    (0..WRITES_PER_STREAM)
        .map(|_| base + rng.below(area_pages) * page)
        .collect()
}

/// Runs both modes on `device` with focused areas of `area_bytes`; calls `tick` after
/// each run.
pub fn measure(
    device: &str,
    area_bytes: u64,
    seed: u64,
    mut tick: impl FnMut(&str, f64),
) -> Result<Fig5Measure, LabError> {
    let page = vec![0x5Au8; PAGE_SIZE];
    let serial = build(device, seed)?;
    let a = stream(&serial, 0, area_bytes, seed);
    let b = stream(&serial, 1, area_bytes, seed);
    for &off in a.iter().chain(&b) {
        serial.write_on(StreamId::MAIN, off, &page)?;
    }
    serial.sync_on(StreamId::MAIN)?;
    let serial_us = serial.clock_us();
    tick("serial", serial_us);
    let par = build(device, seed)?;
    let streams = [par.open_stream(), par.open_stream()];
    let offsets = [&a, &b];
    let mut next = [0usize; 2];
    while next[0] < a.len() || next[1] < b.len() {
        let mut pick = None;
        for i in 0..2 {
            if next[i] < offsets[i].len() {
                let clock = par.stream_clock_us(streams[i])?;
                if pick.is_none_or(|(_, c)| clock < c) {
                    pick = Some((i, clock));
                }
            }
        }
        let Some((i, _)) = pick else { break };
        par.write_on(streams[i], offsets[i][next[i]], &page)?;
        next[i] += 1;
    }
    for s in streams {
        par.sync_on(s)?;
    }
    let q = par.queue_info();
    tick("parallel", q.makespan_us);
    let geometry = par.info().geometry;
    Ok(Fig5Measure {
        device: device.to_string(),
        area_bytes,
        block_bytes: geometry.map_or(0, |g| g.block_bytes()),
        page_bytes: geometry.map_or(PAGE_SIZE as u64, |g| u64::from(g.page_bytes)),
        channels: geometry.map_or(1, |g| g.channels),
        bytes: 2 * WRITES_PER_STREAM * PAGE_SIZE as u64,
        serial_us,
        parallel_us: q.makespan_us,
        parallel_latency_sum_us: q.latency_sum_us,
        serial_ftl: serial.ftl_stats(),
        parallel_ftl: par.ftl_stats(),
    })
}

fn merges(f: &Option<FtlStats>) -> String {
    f.as_ref().map_or("-".into(), |f| {
        format!("{}/{}/{}", f.switch_merges, f.partial_merges, f.full_merges)
    })
}

fn wa(f: &Option<FtlStats>) -> f64 {
    f.as_ref().map_or(1.0, FtlStats::write_amplification)
}

/// The table.
pub fn section(ds: &[Fig5Device]) -> Section {
    let mut s = Section::new(
        "Fig. 5: two focused write streams, serial vs parallel",
        &[
            "device",
            "area",
            "serial MB/s",
            "parallel MB/s",
            "parallel/serial",
            "paper",
            "merges s/p/f serial",
            "merges parallel",
            "WA serial",
            "WA parallel",
        ],
    );
    for m in ds.iter().flat_map(|d| [&d.profile_area, &d.paper_area]) {
        s.row(vec![
            m.device.clone(),
            super::figures::mib(m.area_bytes),
            format!("{:.2}", m.serial_mbs()),
            format!("{:.2}", m.parallel_mbs()),
            format!("{:.2}", m.ratio()),
            paper(&m.device).0.to_string(),
            merges(&m.serial_ftl),
            merges(&m.parallel_ftl),
            format!("{:.2}", wa(&m.serial_ftl)),
            format!("{:.2}", wa(&m.parallel_ftl)),
        ]);
    }
    s.notes.push(format!(
        "{WRITES_PER_STREAM} random {} KiB writes per stream, each stream within its own \
         focused area (first the profile's focused-area size, then the paper's staging \
         size); serial = A then B on one queue, \
         parallel = one stream each, submitted by earliest stream clock; throughput = bytes \
         / virtual makespan. Requests of the two streams overlap where their flash \
         operations use different channels (sim/queue.rs); the FTL sees them interleaved.",
        PAGE_SIZE >> 10
    ));
    s
}

/// The paper's claim for `device`: its words and the ratio's range.
fn paper(device: &str) -> (&'static str, f64, f64) {
    match device {
        "mtron" => ("≈ 2x", 1.6, 2.4),
        "usb-stick" => ("≈ 1x", 0.8, 1.2),
        _ => ("< 1 (much worse)", 0.0, 1.0),
    }
}

/// The direction and magnitude of ratio `r` against the paper's claim for `device`.
fn judge(device: &str, r: f64) -> (bool, Magnitude) {
    let (_, lo, hi) = paper(device);
    match device {
        "mtron" => (r > 1.0, Magnitude::of(r, lo, hi)),
        "usb-stick" => ((lo..=hi).contains(&r), Magnitude::around(r, 1.0)),
        _ => (r < 1.0, Magnitude::NoFigure),
    }
}

/// One verdict per device against the paper's direction, judged at the profile's
/// focused-area size (the magnitude is `mixed` where the paper's size falls elsewhere).
pub fn verdicts(ds: &[Fig5Device]) -> Vec<Verdict> {
    ds.iter()
        .map(|d| {
            let (m, q) = (&d.profile_area, &d.paper_area);
            let (direction, magnitude) = judge(&m.device, m.ratio());
            let (paper_direction, paper_magnitude) = judge(&m.device, q.ratio());
            let magnitude = if paper_magnitude == magnitude {
                magnitude
            } else {
                Magnitude::Mixed
            };
            let ok = direction
                && paper_direction
                && matches!(magnitude, Magnitude::Inside | Magnitude::NoFigure);
            Verdict {
                figure: format!("Fig. 5: parallel vs serial focused streams, {}", m.device),
                paper: format!("parallel/serial {}", paper(&m.device).0),
                measured: format!(
                    "{:.2}x at {} areas ({:.2} vs {:.2} MB/s); {:.2}x at the paper's {}",
                    m.ratio(),
                    super::figures::mib(m.area_bytes),
                    m.parallel_mbs(),
                    m.serial_mbs(),
                    q.ratio(),
                    super::figures::mib(q.area_bytes),
                ),
                direction_holds: direction,
                magnitude,
                cause: if ok {
                    String::new()
                } else {
                    format!(
                        "{} areas: {}. {} areas: {}",
                        super::figures::mib(m.area_bytes),
                        cause(m),
                        super::figures::mib(q.area_bytes),
                        cause(q)
                    )
                },
            }
        })
        .collect()
}

/// What set a run's ratio, from its own numbers.
fn cause(m: &Fig5Measure) -> String {
    let full = |f: &Option<FtlStats>| f.as_ref().map_or(0, |f| f.full_merges);
    let (fs, fp) = (full(&m.serial_ftl), full(&m.parallel_ftl));
    let blocks = (2 * m.area_bytes).div_ceil(m.block_bytes.max(1));
    let merges = if fp as f64 > 1.5 * fs as f64 {
        format!(
            "interleaving the two areas ({blocks} erase blocks of {}) multiplied the merges, \
             {fs} -> {fp} full merges, write amplification {:.2} -> {:.2}: each area alone \
             fits the FTL's log blocks (a focused area), the two together do not",
            super::figures::mib(m.block_bytes.max(1)),
            wa(&m.serial_ftl),
            wa(&m.parallel_ftl)
        )
    } else {
        format!(
            "interleaving added no merges ({fs} vs {fp} full; the two areas' {blocks} erase \
             blocks of {} stay within the log blocks)",
            super::figures::mib(m.block_bytes.max(1))
        )
    };
    if m.ratio() <= 1.0 {
        return merges;
    }
    let gain = if m.channels > 1 {
        format!(
            "the gain: a {} KiB write programs {} of the {} channels, so the streams' \
             programs overlap where their channels differ and queue where they collide, and \
             every merge (a block copied and erased) takes all channels",
            PAGE_SIZE >> 10,
            (PAGE_SIZE as u64)
                .div_ceil(m.page_bytes.max(1))
                .min(u64::from(m.channels)),
            m.channels
        )
    } else {
        "the gain: on one channel the flash work serializes, but each request's command \
         overhead and host transfer overlap the other stream's flash work (the model queues \
         commands and does not share the host link; a device serving one command at a time \
         would not gain)"
            .to_string()
    };
    format!("{merges}; {gain}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_stay_in_their_areas_and_are_seeded() {
        let dev = SimDevice::by_name("mtron", 128 << 20, 1).expect("device");
        let a = stream(&dev, 0, 4 << 20, 7);
        let b = stream(&dev, 1, 4 << 20, 7);
        assert!(a.iter().all(|&o| o < 4 << 20 && o % PAGE_SIZE as u64 == 0));
        assert!(b.iter().all(|&o| (64 << 20..68 << 20).contains(&o)));
        assert_eq!(a, stream(&dev, 0, 4 << 20, 7));
        assert_ne!(a, stream(&dev, 0, 4 << 20, 8));
    }
}
