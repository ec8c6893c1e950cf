//! The micro-benchmark runner behind [`run_profile`](super::run_profile).

use super::report::{BenchResult, DeviceProfile};
use super::ProfileOptions;
use crate::sim::SplitMix64;
use crate::{Device, DeviceError};
use flashbuf_core::AlignedBuf;
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Clock {
    Device,
    Wall,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Read,
    Write,
}

struct Prober<'a> {
    dev: &'a dyn Device,
    clock: Clock,
    buf: AlignedBuf,
    lat: Vec<f64>,
    results: Vec<BenchResult>,
}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{}MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{}KiB", bytes >> 10)
    } else {
        format!("{bytes}B")
    }
}

impl Prober<'_> {
    /// Latency of one I/O in µs.
    fn io(&mut self, op: Op, off: u64, len: u64) -> Result<f64, DeviceError> {
        let len = len as usize;
        let t0 = (self.clock == Clock::Device).then(|| self.dev.stats().device_time_us);
        let w0 = Instant::now();
        match op {
            Op::Read => self.dev.read_at(off, &mut self.buf[..len])?,
            Op::Write => self.dev.write_at(off, &self.buf[..len])?,
        }
        Ok(match t0 {
            Some(t0) => self.dev.stats().device_time_us - t0,
            None => w0.elapsed().as_secs_f64() * 1e6,
        })
    }

    /// Runs `warmup + ios` I/Os at the offsets `at(i)` gives, keeps the measured ones,
    /// syncs (unmeasured) and records the result.
    #[allow(clippy::too_many_arguments)]
    fn bench(
        &mut self,
        name: String,
        ops: (Op, Op),
        io_bytes: u64,
        area_bytes: u64,
        warmup: u64,
        ios: u64,
        mut at: impl FnMut(u64) -> u64,
    ) -> Result<BenchResult, DeviceError> {
        self.lat.clear();
        for i in 0..warmup + ios {
            let op = if i.is_multiple_of(2) { ops.0 } else { ops.1 };
            let us = self.io(op, at(i), io_bytes)?;
            if i >= warmup {
                self.lat.push(us);
            }
        }
        self.dev.sync()?;
        let n = self.lat.len().max(1) as f64;
        let mean = self.lat.iter().sum::<f64>() / n;
        self.lat.sort_by(f64::total_cmp);
        let r = BenchResult {
            name,
            io_bytes,
            area_bytes,
            warmup_ios: warmup,
            ios,
            mean_us: mean,
            p50_us: self.lat.get(self.lat.len() / 2).copied().unwrap_or(0.0),
            min_us: self.lat.first().copied().unwrap_or(0.0),
            max_us: self.lat.last().copied().unwrap_or(0.0),
        };
        self.results.push(r.clone());
        Ok(r)
    }
}

fn config(msg: String) -> DeviceError {
    DeviceError::Config(format!("profile: {msg}"))
}

pub(super) fn run(dev: &dyn Device, opts: &ProfileOptions) -> Result<DeviceProfile, DeviceError> {
    let g = opts.granularity_bytes.unwrap_or(opts.page_size);
    let align = dev.alignment().max(1) as u64;
    let mut sizes: Vec<u64> = opts.granularities.clone();
    sizes.push(g);
    if sizes.iter().any(|&s| s == 0 || !s.is_multiple_of(align)) {
        return Err(config(format!(
            "I/O sizes {sizes:?} must be positive multiples of the device alignment {align}"
        )));
    }
    let max_io = sizes.iter().copied().max().unwrap_or(g);
    let area = opts.area_bytes.unwrap_or(dev.len()).min(dev.len());
    let area = area - area % max_io;
    if area < 8 * max_io {
        return Err(config(format!(
            "test area of {area} bytes is too small for {max_io}-byte I/Os (need 8)"
        )));
    }
    if opts.io_count == 0 || opts.partitions == 0 {
        return Err(config("io_count and partitions must be positive".into()));
    }
    let chunk = (1u64 << 20).min(area);
    let chunk = chunk - chunk % max_io;
    let mut buf = AlignedBuf::zeroed(chunk.max(max_io) as usize, 4096);
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
    let mut p = Prober {
        dev,
        clock: Clock::Wall,
        buf,
        lat: Vec::with_capacity(opts.io_count as usize),
        results: Vec::new(),
    };
    let (ios, warm) = (u64::from(opts.io_count), u64::from(opts.warmup_ios));
    let mut rng = SplitMix64::new(opts.seed);
    let mut random = move |slot: u64, slots: u64| -> u64 { slot * (rng.next_u64() % slots) };

    // 1. Prefill, and find out which clock to use.
    if opts.prefill {
        let mut off = 0;
        while off < area {
            let len = chunk.min(area - off);
            dev.write_at(off, &p.buf[..len as usize])?;
            off += len;
        }
        dev.sync()?;
    }
    let before = dev.stats().device_time_us;
    p.io(Op::Read, 0, g)?;
    if dev.stats().device_time_us > before {
        p.clock = Clock::Device;
    }

    // 2. Reads.
    let slots = area / g;
    let read_seq = p.bench(
        "read-seq".into(),
        (Op::Read, Op::Read),
        g,
        area,
        warm,
        ios,
        |i| (i % slots) * g,
    )?;
    let read_random = p.bench(
        "read-random".into(),
        (Op::Read, Op::Read),
        g,
        area,
        warm,
        ios,
        |_| random(g, slots),
    )?;

    // 3.-4. Sequential and partitioned writes.
    let write_seq = p.bench(
        "write-seq".into(),
        (Op::Write, Op::Write),
        g,
        area,
        warm,
        ios,
        |i| (i % slots) * g,
    )?;
    let parts = u64::from(opts.partitions).min(slots);
    let part_slots = slots / parts;
    let write_part = p.bench(
        format!("write-partitioned-{parts}"),
        (Op::Write, Op::Write),
        g,
        area,
        warm,
        ios,
        |i| ((i % parts) * part_slots + (i / parts) % part_slots) * g,
    )?;

    // 5. Focused writes.
    let mut focused: Vec<(u64, f64)> = Vec::new();
    for &a in &opts.focused_areas {
        let a = a - a % g;
        if a < g || a > area {
            continue;
        }
        // Cover the area twice before measuring, and measure at least once over it: log
        // blocks fill (and merge) only after the area has been written over.
        let cover = a / g;
        let r = p.bench(
            format!("write-focused-{}", human(a)),
            (Op::Write, Op::Write),
            g,
            a,
            warm.max(2 * cover),
            ios.max(cover),
            |_| random(g, cover),
        )?;
        focused.push((a, r.mean_us));
    }
    let fast_limit = opts.focused_factor * write_seq.mean_us;
    let (focused_area, focused_us) = match focused.iter().rev().find(|(_, us)| *us <= fast_limit) {
        Some(&(a, us)) => (a, us),
        None => (0, focused.first().map_or(0.0, |f| f.1)),
    };

    // 6. Random writes after the start-up phase.
    let rw_warm = opts.random_warmup_bytes.unwrap_or(area) / g;
    let write_random = p.bench(
        "write-random".into(),
        (Op::Write, Op::Write),
        g,
        area,
        warm.max(rw_warm),
        ios.max(u64::from(opts.random_write_ios)),
        |_| random(g, slots),
    )?;

    let read_random_us = read_random.mean_us;
    let mut profile = DeviceProfile {
        device: opts.device_name.clone().unwrap_or_else(|| dev.describe()),
        page_size: opts.page_size,
        granularity_bytes: g,
        read_seq_us: read_seq.mean_us,
        read_random_us,
        write_seq_us: write_seq.mean_us,
        write_partitioned_us: write_part.mean_us,
        write_focused_us: focused_us,
        write_random_us: write_random.mean_us,
        theta_min_bytes: g,
        focused_area_bytes: focused_area,
        asymmetry_r: if read_random_us > 0.0 {
            write_random.mean_us / read_random_us
        } else {
            0.0
        },
        clock: match p.clock {
            Clock::Device => "device".into(),
            Clock::Wall => "wall".into(),
        },
        area_bytes: area,
        partitions: parts as u32,
        benchmarks: Vec::new(),
    };
    if !opts.sweep {
        profile.benchmarks = p.results;
        return Ok(profile);
    }

    // 7. Granularity sweep.
    let mut best_bw = 0.0f64;
    let mut seq_bw: Vec<(u64, f64)> = Vec::new();
    let mut sweep = opts.granularities.clone();
    sweep.sort_unstable();
    sweep.dedup();
    for &s in &sweep {
        let n = area / s;
        let r = p.bench(
            format!("granularity-write-seq-{}", human(s)),
            (Op::Write, Op::Write),
            s,
            area,
            warm,
            ios,
            |i| (i % n) * s,
        )?;
        let bw = s as f64 / r.mean_us.max(f64::MIN_POSITIVE);
        best_bw = best_bw.max(bw);
        seq_bw.push((s, bw));
        p.bench(
            format!("granularity-write-random-{}", human(s)),
            (Op::Write, Op::Write),
            s,
            area,
            warm,
            ios,
            |_| random(s, n),
        )?;
    }
    let theta_min = seq_bw
        .iter()
        .find(|(_, bw)| *bw >= 0.9 * best_bw)
        .map_or(g, |&(s, _)| s);

    // 8. Alignment (only where the device accepts unaligned I/O).
    if align == 1 && g >= 2 {
        p.bench(
            "alignment-write-random-shift-half".into(),
            (Op::Write, Op::Write),
            g,
            area,
            warm,
            ios,
            |_| random(g, slots - 1) + g / 2,
        )?;
    }

    // 9. Order.
    p.bench(
        "order-write-reverse".into(),
        (Op::Write, Op::Write),
        g,
        area,
        warm,
        ios,
        |i| (slots - 1 - i % slots) * g,
    )?;
    p.bench(
        "order-write-stride-2".into(),
        (Op::Write, Op::Write),
        g,
        area,
        warm,
        ios,
        |i| ((2 * i) % slots) * g,
    )?;

    // 10. Mix.
    p.bench(
        "mix-read-write-random".into(),
        (Op::Read, Op::Write),
        g,
        area,
        warm,
        ios,
        |_| random(g, slots),
    )?;

    profile.theta_min_bytes = theta_min;
    profile.benchmarks = p.results;
    Ok(profile)
}
