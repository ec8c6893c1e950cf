//! Queue depth above one on the simulated devices (`sim/queue.rs`): one stream keeps the
//! queue-depth-one numbers exactly, streams overlap on distinct channels and not on a
//! shared one, everything is deterministic, and `qd=N` batches are never slower than
//! `qd=1` while storing the same bytes.

use flashbuf_core::config::Spec;
use flashbuf_core::rng::SplitMix64;
use flashbuf_device::registry::{parse_sim, takes_arg, DeviceContext};
use flashbuf_device::sim::{
    sim_profile_names, DeviceModel, Precondition, SimDevice, SimProfile, StreamId,
};
use flashbuf_device::{Device, DeviceError, WriteOp};

const CAPACITY: u64 = 16 << 20;

/// A seeded mix of writes, reads, batches and syncs through the `Device` trait; returns
/// the exact counters and clock.
fn trait_workload(dev: &SimDevice, seed: u64) -> String {
    let mut rng = SplitMix64::new(seed);
    let page = 4096u64;
    let pages = CAPACITY / page;
    for i in 0..400u64 {
        let n = 1 + rng.below(4);
        let off = rng.below(pages - n) * page;
        match rng.below(10) {
            0..=4 => {
                let data = vec![(i % 251) as u8; (n * page) as usize];
                dev.write_at(off, &data).expect("write");
            }
            5..=6 => {
                let mut buf = vec![0u8; (n * page) as usize];
                dev.read_at(off, &mut buf).expect("read");
            }
            7..=8 => {
                let bufs: Vec<Vec<u8>> = (0..n).map(|k| vec![k as u8; page as usize]).collect();
                let ops: Vec<WriteOp<'_>> = bufs
                    .iter()
                    .enumerate()
                    .map(|(k, b)| WriteOp {
                        offset: (off + rng.below(64) * page + k as u64 * page).min(CAPACITY - page),
                        data: b,
                    })
                    .collect();
                dev.write_batch(&ops).expect("batch");
            }
            _ => dev.sync().expect("sync"),
        }
    }
    let s = dev.stats();
    format!(
        "{} {} {} {} {} {} {} {} {} {}",
        s.device_time_us.to_bits(),
        s.reads,
        s.writes,
        s.read_bytes,
        s.written_bytes,
        s.syncs,
        s.erases,
        s.flash_programs,
        s.flash_reads,
        s.host_programs
    )
}

fn device(name: &str, seed: u64) -> SimDevice {
    let d = SimDevice::by_name(name, CAPACITY, seed).expect(name);
    d.precondition_as(Precondition::Sequential);
    d
}

/// The numbers of [`trait_workload`] (seed 11) on every profile, as the queue-depth-one
/// simulator gave them before streams existed (captured at the commit before `sim/queue.rs`).
const BEFORE_STREAMS: &[(&str, &str)] = &[
    (
        "mtron",
        "4685729626611664290 78 402 823296 2973696 36 0 726 201 726",
    ),
    (
        "sd-card",
        "4721143625983060869 78 402 823296 2973696 36 436 56534 56009 726",
    ),
    (
        "usb-stick",
        "4727135042830552007 78 402 823296 2973696 36 308 79574 79049 726",
    ),
    (
        "flash-25",
        "4694278368533105607 78 402 823296 2973696 36 115 7498 6973 726",
    ),
    (
        "nipu-ssd",
        "4701078197877535146 78 402 823296 2973696 36 476 16081 15556 726",
    ),
    (
        "nvme",
        "4675042510650677920 78 402 823296 2973696 36 0 726 201 726",
    ),
    (
        "hdd",
        "4706145749070470185 78 402 823296 2973696 36 0 0 0 0",
    ),
];

#[test]
fn one_stream_keeps_the_queue_depth_one_numbers_exactly() {
    for name in sim_profile_names() {
        let d = device(name, 5);
        let got = trait_workload(&d, 11);
        let want = BEFORE_STREAMS.iter().find(|(n, _)| n == name);
        assert_eq!(Some(got.as_str()), want.map(|w| w.1), "{name}");
        // One stream: the makespan is the sum of the latencies.
        let q = d.queue_info();
        assert_eq!((q.queue_depth, q.streams), (1, 1));
        assert_eq!(q.makespan_us, d.stats().device_time_us);
        assert!(
            (q.latency_sum_us - q.makespan_us).abs() < 1e-6,
            "{name}: {q:?}"
        );
        // An opened stream left unused changes nothing; qd=1 is the default.
        let e = device(name, 5).with_queue_depth(1).expect("qd");
        let _idle = e.open_stream();
        assert_eq!(trait_workload(&e, 11), got, "{name}");
    }
    assert_eq!(BEFORE_STREAMS.len(), sim_profile_names().len());
}

/// A flash profile of `channels` channels, page-mapped (writes fill the active block, so
/// consecutive programs go to consecutive channels), without command overhead or host
/// transfer: a request's time is its flash work alone.
fn bare_flash(channels: u32) -> SimDevice {
    let mut p = SimProfile::by_name("nvme").expect("nvme");
    if let DeviceModel::Flash(f) = &mut p.model {
        f.channels = channels;
        f.read_overhead_us = 0.0;
        f.write_overhead_us = 0.0;
        f.host_ns_per_byte = 0.0;
        f.write_buffer_pages = 0;
    }
    SimDevice::new(p, CAPACITY, 1).expect("device")
}

/// 64 one-page writes: serially on one stream, then the same on two streams submitted
/// alternately; returns (serial makespan, parallel makespan, parallel latency sum).
fn serial_vs_two_streams(channels: u32) -> (f64, f64, f64) {
    let page = vec![1u8; 4096];
    let serial = bare_flash(channels);
    for i in 0..64u64 {
        serial.write_at(i * 4096, &page).expect("write");
    }
    let par = bare_flash(channels);
    let (a, b) = (par.open_stream(), par.open_stream());
    for i in 0..64u64 {
        let s = if i % 2 == 0 { a } else { b };
        par.write_on(s, i * 4096, &page).expect("write");
    }
    let q = par.queue_info();
    assert_eq!((q.streams, q.requests), (3, 64));
    assert_eq!(q.makespan_us, par.stats().device_time_us);
    assert_eq!(par.stats().host_programs, serial.stats().host_programs);
    (serial.clock_us(), q.makespan_us, q.latency_sum_us)
}

#[test]
fn two_streams_overlap_on_distinct_channels_and_not_on_one() {
    // Two channels: the streams' pages land on alternate channels and run side by side.
    let (serial, par, sum) = serial_vs_two_streams(2);
    assert!(par < sum, "makespan {par} vs latency sum {sum}");
    assert!(
        (serial / par - 2.0).abs() < 0.02,
        "two channels: serial {serial} µs, two streams {par} µs"
    );
    // One channel: every program waits for the previous one; no gain.
    let (serial, par, sum) = serial_vs_two_streams(1);
    assert_eq!(
        serial, par,
        "one channel: serial {serial} µs, two streams {par} µs"
    );
    assert!(sum > par, "the waits count as latency: {sum} vs {par}");
}

#[test]
fn streams_are_deterministic_and_checked() {
    let run = |seed: u64| {
        let d = device("mtron", seed);
        let s = [StreamId::MAIN, d.open_stream(), d.open_stream()];
        let mut rng = SplitMix64::new(seed);
        let mut buf = vec![0u8; 8192];
        for i in 0..300u64 {
            let st = s[rng.below(3) as usize];
            let off = rng.below(CAPACITY / 8192) * 8192;
            if rng.chance(0.7) {
                d.write_on(st, off, &[(i % 200) as u8; 8192])
                    .expect("write");
            } else {
                d.read_on(st, off, &mut buf).expect("read");
            }
        }
        d.sync_on(s[1]).expect("sync");
        let clocks: Vec<u64> = s
            .iter()
            .map(|&x| d.stream_clock_us(x).expect("clock").to_bits())
            .collect();
        d.check_invariants().expect("invariants");
        (clocks, d.queue_info(), d.stats())
    };
    let (c1, q1, s1) = run(3);
    let (c2, q2, s2) = run(3);
    assert_eq!((c1.clone(), q1), (c2, q2));
    assert_eq!(s1, s2);
    assert_eq!(
        q1.makespan_us.to_bits(),
        c1.iter().copied().max().unwrap_or(0)
    );
    assert_ne!(run(4).1, q1, "another seed, other numbers");
    // A stream another device opened, unknown here, is refused.
    let busy = device("mtron", 1);
    let third = [busy.open_stream(), busy.open_stream(), busy.open_stream()][2];
    assert_eq!(third.index(), 3);
    let e = device("mtron", 3).write_on(third, 0, &[0u8; 4096]);
    assert!(matches!(e, Err(DeviceError::Config(_))), "{e:?}");
}

/// Writes 40 seeded batches of 8 KB writes through `write_batch` at `qd`; returns
/// the device.
fn batches_at(name: &str, qd: u32, seed: u64) -> SimDevice {
    let d = device(name, 2).with_queue_depth(qd).expect("qd");
    let mut rng = SplitMix64::new(seed);
    for b in 0..40u64 {
        let n = 1 + rng.below(16) as usize;
        let bufs: Vec<Vec<u8>> = (0..n)
            .map(|k| vec![(b * 16 + k as u64) as u8; 8192])
            .collect();
        let ops: Vec<WriteOp<'_>> = bufs
            .iter()
            .map(|data| WriteOp {
                offset: rng.below(CAPACITY / 8192) * 8192,
                data,
            })
            .collect();
        d.write_batch(&ops).expect("batch");
        if b % 8 == 7 {
            d.sync().expect("sync");
        }
    }
    d
}

#[test]
fn deeper_batches_are_never_slower_and_store_the_same_bytes() {
    for name in sim_profile_names() {
        let one = batches_at(name, 1, 9);
        let t1 = one.stats().device_time_us;
        let mut image_one = vec![0u8; CAPACITY as usize];
        one.read_at(0, &mut image_one).expect("read");
        for qd in [2, 4, 16] {
            let deep = batches_at(name, qd, 9);
            assert_eq!(deep.describe(), format!("sim:{name}:qd={qd}"));
            let tq = deep.stats().device_time_us;
            assert!(tq <= t1, "{name} qd={qd}: {tq} µs > qd=1 {t1} µs");
            let (s1, sq) = (one.stats(), deep.stats());
            assert_eq!(
                (s1.writes, s1.flash_programs, s1.erases),
                (sq.writes, sq.flash_programs, sq.erases),
                "{name}: the FTL saw the same requests"
            );
            let mut image = vec![0u8; CAPACITY as usize];
            deep.read_at(0, &mut image).expect("read");
            assert!(image == image_one, "{name} qd={qd}: bytes differ");
            deep.check_invariants().expect(name);
            eprintln!("{name} qd={qd}: {tq:.1} µs vs qd=1 {t1:.1} µs");
            if *name == "hdd" {
                assert_eq!(tq, t1, "one actuator: no overlap");
            } else if *name == "mtron" && qd >= 4 {
                // Eight channels, write-through: 8 KB writes use two, four fit side by side.
                assert!(tq < 0.6 * t1, "{name} qd={qd}: {tq} µs vs {t1} µs");
            }
        }
    }
    let e = device("mtron", 1).with_queue_depth(0).map(|_| ());
    assert!(matches!(e, Err(DeviceError::Config(_))), "{e:?}");
}

#[test]
fn the_qd_option_sets_the_batch_depth() {
    let ctx = DeviceContext {
        capacity_hint_bytes: 8 << 20,
        page_size: 4096,
        seed: 1,
    };
    let build = |text: &str| {
        parse_sim(&Spec::parse(text, takes_arg).expect("spec")).map(|c| c.build_sim(&ctx))
    };
    let d = build("sim:mtron:precondition=fresh,qd=4")
        .expect("config")
        .expect("device");
    assert_eq!(d.queue_info().queue_depth, 4);
    assert_eq!(d.describe(), "sim:mtron:qd=4");
    let d = build("sim:hdd").expect("config").expect("device");
    assert_eq!(d.queue_info().queue_depth, 1);
    assert_eq!(d.describe(), "sim:hdd");
    for bad in ["sim:mtron:qd=0", "sim:nvme:qd=257", "sim:hdd:qd=x"] {
        let e = build(bad).map(|_| ()).expect_err(bad).to_string();
        assert!(e.contains("qd"), "{bad}: {e}");
    }
}
