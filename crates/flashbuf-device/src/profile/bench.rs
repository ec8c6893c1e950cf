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

const READS: (Op, Op) = (Op::Read, Op::Read);
const WRITES: (Op, Op) = (Op::Write, Op::Write);

/// Runs the benchmarks on one device and collects their results.
struct Prober<'a> {
    dev: &'a dyn Device,
    clock: Clock,
    buf: AlignedBuf,
    lat: Vec<f64>,
    results: Vec<BenchResult>,
}

/// One benchmark: `warmup + ios` I/Os of `io_bytes` (alternating `ops.0` and `ops.1`)
/// within `area_bytes`, of which the last `ios` are measured.
struct Bench {
    name: String,
    ops: (Op, Op),
    io_bytes: u64,
    area_bytes: u64,
    warmup: u64,
    ios: u64,
}

/// What the options and the device allow: sizes and counts every benchmark uses.
struct Plan {
    /// Granularity of the headline figures, bytes.
    g: u64,
    /// The device's alignment, bytes.
    align: u64,
    /// Test area, bytes (a multiple of the largest I/O).
    area: u64,
    /// Prefill request size, bytes.
    chunk: u64,
    /// `g`-sized slots in the area.
    slots: u64,
    warm: u64,
    ios: u64,
    /// Partitions of the partitioned-write benchmark.
    parts: u64,
}

impl Plan {
    /// A benchmark of `g`-byte I/Os over the whole area with the default counts.
    fn bench(&self, name: impl Into<String>, ops: (Op, Op)) -> Bench {
        Bench {
            name: name.into(),
            ops,
            io_bytes: self.g,
            area_bytes: self.area,
            warmup: self.warm,
            ios: self.ios,
        }
    }
}

/// Seeded random slot offsets, one stream shared by every benchmark in order.
struct RandomSlots(SplitMix64);

impl RandomSlots {
    /// The offset of a random one of `slots` slots of `slot` bytes.
    fn offset(&mut self, slot: u64, slots: u64) -> u64 {
        slot * (self.0.next_u64() % slots)
    }
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

impl<'a> Prober<'a> {
    fn new(dev: &'a dyn Device, plan: &Plan, max_io: u64, io_count: u32) -> Self {
        let mut buf = AlignedBuf::zeroed(plan.chunk.max(max_io) as usize, 4096);
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        Self {
            dev,
            clock: Clock::Wall,
            buf,
            lat: Vec::with_capacity(io_count as usize),
            results: Vec::new(),
        }
    }

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

    /// Benchmark 1: writes the area sequentially (if asked), then picks the clock: the
    /// device's own if one read advances it, else the wall clock.
    fn prefill_and_pick_clock(&mut self, plan: &Plan, prefill: bool) -> Result<(), DeviceError> {
        if prefill {
            let mut off = 0;
            while off < plan.area {
                let len = plan.chunk.min(plan.area - off);
                self.dev.write_at(off, &self.buf[..len as usize])?;
                off += len;
            }
            self.dev.sync()?;
        }
        let before = self.dev.stats().device_time_us;
        self.io(Op::Read, 0, plan.g)?;
        if self.dev.stats().device_time_us > before {
            self.clock = Clock::Device;
        }
        Ok(())
    }

    /// Runs benchmark `b` at the offsets `at(i)` gives, keeps the measured latencies,
    /// syncs (unmeasured) and records the result.
    fn bench(
        &mut self,
        b: Bench,
        mut at: impl FnMut(u64) -> u64,
    ) -> Result<BenchResult, DeviceError> {
        self.lat.clear();
        for i in 0..b.warmup + b.ios {
            let op = if i.is_multiple_of(2) {
                b.ops.0
            } else {
                b.ops.1
            };
            let us = self.io(op, at(i), b.io_bytes)?;
            if i >= b.warmup {
                self.lat.push(us);
            }
        }
        self.dev.sync()?;
        let n = self.lat.len().max(1) as f64;
        let mean = self.lat.iter().sum::<f64>() / n;
        self.lat.sort_by(f64::total_cmp);
        let r = BenchResult {
            name: b.name,
            io_bytes: b.io_bytes,
            area_bytes: b.area_bytes,
            warmup_ios: b.warmup,
            ios: b.ios,
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

/// Checks the options against the device and derives the sizes; also returns the largest
/// I/O size.
fn plan(dev: &dyn Device, opts: &ProfileOptions) -> Result<(Plan, u64), DeviceError> {
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
    let slots = area / g;
    let plan = Plan {
        g,
        align,
        area,
        chunk: chunk - chunk % max_io,
        slots,
        warm: u64::from(opts.warmup_ios),
        ios: u64::from(opts.io_count),
        parts: u64::from(opts.partitions).min(slots),
    };
    Ok((plan, max_io))
}

pub(super) fn run(dev: &dyn Device, opts: &ProfileOptions) -> Result<DeviceProfile, DeviceError> {
    let (plan, max_io) = plan(dev, opts)?;
    let mut p = Prober::new(dev, &plan, max_io, opts.io_count);
    let mut rnd = RandomSlots(SplitMix64::new(opts.seed));
    p.prefill_and_pick_clock(&plan, opts.prefill)?;
    let mut profile = headline(&mut p, &mut rnd, &plan, opts)?;
    if opts.sweep {
        profile.theta_min_bytes = secondary(&mut p, &mut rnd, &plan, opts)?;
    }
    profile.device = opts.device_name.clone().unwrap_or_else(|| dev.describe());
    profile.benchmarks = p.results;
    Ok(profile)
}

/// Benchmarks 2-6 (reads, sequential, partitioned, focused and random writes) and the
/// profile's headline figures; `theta_min_bytes` is the granularity and `device` and
/// `benchmarks` are left for the caller.
fn headline(
    p: &mut Prober<'_>,
    rnd: &mut RandomSlots,
    plan: &Plan,
    opts: &ProfileOptions,
) -> Result<DeviceProfile, DeviceError> {
    let Plan {
        g,
        area,
        slots,
        warm,
        ios,
        parts,
        ..
    } = *plan;
    // 2. Reads.
    let read_seq = p.bench(plan.bench("read-seq", READS), |i| (i % slots) * g)?;
    let read_random = p.bench(plan.bench("read-random", READS), |_| rnd.offset(g, slots))?;
    // 3.-4. Sequential and partitioned writes.
    let write_seq = p.bench(plan.bench("write-seq", WRITES), |i| (i % slots) * g)?;
    let part_slots = slots / parts;
    let write_part = p.bench(
        plan.bench(format!("write-partitioned-{parts}"), WRITES),
        |i| ((i % parts) * part_slots + (i / parts) % part_slots) * g,
    )?;
    // 5. Focused writes.
    let (focused_area, focused_us) = focused(p, rnd, plan, opts, write_seq.mean_us)?;
    // 6. Random writes after the start-up phase.
    let rw_warm = opts.random_warmup_bytes.unwrap_or(area) / g;
    let write_random = p.bench(
        Bench {
            warmup: warm.max(rw_warm),
            ios: ios.max(u64::from(opts.random_write_ios)),
            ..plan.bench("write-random", WRITES)
        },
        |_| rnd.offset(g, slots),
    )?;
    let read_random_us = read_random.mean_us;
    Ok(DeviceProfile {
        device: String::new(),
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
    })
}

/// Benchmark 5: random writes within each focused area; returns the largest area whose
/// writes stay within `focused_factor` × sequential ones, and the latency there (the
/// smallest area's if none does).
fn focused(
    p: &mut Prober<'_>,
    rnd: &mut RandomSlots,
    plan: &Plan,
    opts: &ProfileOptions,
    write_seq_us: f64,
) -> Result<(u64, f64), DeviceError> {
    let g = plan.g;
    let mut focused: Vec<(u64, f64)> = Vec::new();
    for &a in &opts.focused_areas {
        let a = a - a % g;
        if a < g || a > plan.area {
            continue;
        }
        // Cover the area twice before measuring, and measure at least once over it: log
        // blocks fill (and merge) only after the area has been written over.
        let cover = a / g;
        let b = Bench {
            area_bytes: a,
            warmup: plan.warm.max(2 * cover),
            ios: plan.ios.max(cover),
            ..plan.bench(format!("write-focused-{}", human(a)), WRITES)
        };
        let r = p.bench(b, |_| rnd.offset(g, cover))?;
        focused.push((a, r.mean_us));
    }
    let fast_limit = opts.focused_factor * write_seq_us;
    Ok(
        match focused.iter().rev().find(|(_, us)| *us <= fast_limit) {
            Some(&(a, us)) => (a, us),
            None => (0, focused.first().map_or(0.0, |f| f.1)),
        },
    )
}

/// Benchmarks 7-10 (granularity sweep, alignment, order, mix); returns θ_min.
fn secondary(
    p: &mut Prober<'_>,
    rnd: &mut RandomSlots,
    plan: &Plan,
    opts: &ProfileOptions,
) -> Result<u64, DeviceError> {
    let Plan { g, slots, .. } = *plan;
    // 7. Granularity sweep.
    let mut best_bw = 0.0f64;
    let mut seq_bw: Vec<(u64, f64)> = Vec::new();
    let mut sweep = opts.granularities.clone();
    sweep.sort_unstable();
    sweep.dedup();
    for &s in &sweep {
        let n = plan.area / s;
        let at_size = |name: String| Bench {
            io_bytes: s,
            ..plan.bench(name, WRITES)
        };
        let r = p.bench(
            at_size(format!("granularity-write-seq-{}", human(s))),
            |i| (i % n) * s,
        )?;
        let bw = s as f64 / r.mean_us.max(f64::MIN_POSITIVE);
        best_bw = best_bw.max(bw);
        seq_bw.push((s, bw));
        p.bench(
            at_size(format!("granularity-write-random-{}", human(s))),
            |_| rnd.offset(s, n),
        )?;
    }
    let theta_min = seq_bw
        .iter()
        .find(|(_, bw)| *bw >= 0.9 * best_bw)
        .map_or(g, |&(s, _)| s);
    // 8. Alignment (only where the device accepts unaligned I/O).
    if plan.align == 1 && g >= 2 {
        p.bench(
            plan.bench("alignment-write-random-shift-half", WRITES),
            |_| rnd.offset(g, slots - 1) + g / 2,
        )?;
    }
    // 9. Order.
    p.bench(plan.bench("order-write-reverse", WRITES), |i| {
        (slots - 1 - i % slots) * g
    })?;
    p.bench(plan.bench("order-write-stride-2", WRITES), |i| {
        ((2 * i) % slots) * g
    })?;
    // 10. Mix.
    p.bench(
        plan.bench("mix-read-write-random", (Op::Read, Op::Write)),
        |_| rnd.offset(g, slots),
    )?;
    Ok(theta_min)
}
