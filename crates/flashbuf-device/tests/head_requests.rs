//! Metadata-only requests (`read_head` / `write_head` / `write_heads`, the `--data none`
//! mode): on every simulated profile, at queue depth 1 and 4, a seeded workload issued as
//! head requests times and counts exactly what the same workload issued as whole-range
//! byte requests does, and every head reads back as written; the memory device counts the
//! same; the trait's defaults (a wrapper that overrides none of them) agree too; a head
//! longer than its request is refused.

use flashbuf_core::rng::SplitMix64;
use flashbuf_device::sim::{sim_profile_names, Precondition, SimDevice};
use flashbuf_device::{
    CostDevice, Device, DeviceStats, HeadWrite, LatencyModel, MemDevice, WriteOp,
};
use std::collections::HashMap;

const CAPACITY: u64 = 16 << 20;
const PAGE: u64 = 4096;
const HEAD: usize = 64;

/// One request of the workload: a page, or pages `[first, first + n)` (a batch writes
/// them as separate ops).
#[derive(Clone, Copy)]
enum Op {
    Write(u64),
    Read(u64),
    Batch(u64, u64),
    Sync,
}

fn workload(seed: u64) -> Vec<(u64, Op)> {
    let mut rng = SplitMix64::new(seed);
    let pages = CAPACITY / PAGE;
    (0..600u64)
        .map(|i| {
            let n = 1 + rng.below(4);
            let first = rng.below(pages - n);
            let op = match rng.below(10) {
                0..=3 => Op::Write(first),
                4..=6 => Op::Read(first),
                7..=8 => Op::Batch(first, n),
                _ => Op::Sync,
            };
            (i, op)
        })
        .collect()
}

/// The head of page `p` written at step `i`.
fn head(p: u64, i: u64) -> [u8; HEAD] {
    let mut h = [0u8; HEAD];
    h[..8].copy_from_slice(&p.to_le_bytes());
    h[8..16].copy_from_slice(&(i + 1).to_le_bytes());
    h
}

/// Runs the workload with byte requests (`heads == false`) or head requests; returns the
/// device's counters and checks that every head reads back as last written.
fn run(dev: &dyn Device, seed: u64, heads: bool) -> DeviceStats {
    let mut last: HashMap<u64, [u8; HEAD]> = HashMap::new();
    let whole = |h: &[u8; HEAD]| {
        let mut b = vec![0u8; PAGE as usize];
        b[..HEAD].copy_from_slice(h);
        b
    };
    for (i, op) in workload(seed) {
        match op {
            Op::Write(p) => {
                let h = head(p, i);
                if heads {
                    dev.write_head(p * PAGE, PAGE as usize, &h)
                        .expect("write_head");
                } else {
                    dev.write_at(p * PAGE, &whole(&h)).expect("write_at");
                }
                last.insert(p, h);
            }
            Op::Read(p) => {
                let mut got = [0u8; HEAD];
                if heads {
                    dev.read_head(p * PAGE, PAGE as usize, &mut got)
                        .expect("read_head");
                } else {
                    let mut b = vec![0u8; PAGE as usize];
                    dev.read_at(p * PAGE, &mut b).expect("read_at");
                    got.copy_from_slice(&b[..HEAD]);
                }
                assert_eq!(got, last.get(&p).copied().unwrap_or([0; HEAD]), "page {p}");
            }
            Op::Batch(first, n) => {
                let hs: Vec<[u8; HEAD]> = (first..first + n).map(|p| head(p, i)).collect();
                if heads {
                    let ops: Vec<HeadWrite<'_>> = hs
                        .iter()
                        .zip(first..)
                        .map(|(h, p)| HeadWrite {
                            offset: p * PAGE,
                            len: PAGE as usize,
                            head: h,
                        })
                        .collect();
                    dev.write_heads(&ops).expect("write_heads");
                } else {
                    let bufs: Vec<Vec<u8>> = hs.iter().map(whole).collect();
                    let ops: Vec<WriteOp<'_>> = bufs
                        .iter()
                        .zip(first..)
                        .map(|(b, p)| WriteOp {
                            offset: p * PAGE,
                            data: b,
                        })
                        .collect();
                    dev.write_batch(&ops).expect("write_batch");
                }
                for (h, p) in hs.into_iter().zip(first..) {
                    last.insert(p, h);
                }
            }
            Op::Sync => dev.sync().expect("sync"),
        }
    }
    dev.stats()
}

fn sim(name: &str, qd: u32) -> SimDevice {
    let d = SimDevice::by_name(name, CAPACITY, 3)
        .expect(name)
        .with_queue_depth(qd)
        .expect("qd");
    d.precondition_as(Precondition::Sequential);
    d
}

#[test]
fn head_requests_cost_what_whole_requests_cost_on_every_profile() {
    for name in sim_profile_names() {
        for qd in [1, 4] {
            for seed in [1, 2] {
                let bytes = run(&sim(name, qd), seed, false);
                let heads = run(&sim(name, qd), seed, true);
                assert_eq!(bytes, heads, "{name} qd={qd} seed={seed}");
                assert!(
                    bytes.writes > 0 && bytes.reads > 0,
                    "{name}: the workload ran"
                );
            }
        }
    }
}

#[test]
fn memory_device_counts_head_requests_as_whole_ones() {
    let bytes = MemDevice::new(CAPACITY);
    let heads = MemDevice::new(CAPACITY);
    assert_eq!(run(&bytes, 9, false), run(&heads, 9, true));
    // Heads live in a dense table (65 bytes per page slot), not in 1 MiB chunks.
    assert!(
        heads.resident_bytes() * 10 < bytes.resident_bytes(),
        "{} vs {}",
        heads.resident_bytes(),
        bytes.resident_bytes()
    );
}

#[test]
fn trait_defaults_move_whole_ranges() {
    // `CostDevice` overrides no head method: the defaults go through its byte methods.
    let model = LatencyModel {
        latency_read_us: 10.0,
        latency_write_us: 100.0,
        latency_sync_us: 5.0,
    };
    let bytes = CostDevice::new(MemDevice::new(CAPACITY), model);
    let heads = CostDevice::new(MemDevice::new(CAPACITY), model);
    let (b, h) = (run(&bytes, 4, false), run(&heads, 4, true));
    assert_eq!(b, h);
    assert!(h.device_time_us > 0.0);
}

#[test]
fn a_head_longer_than_its_request_is_refused() {
    let big = [1u8; 128];
    let mut out = [0u8; 128];
    let devices: Vec<Box<dyn Device>> = vec![
        Box::new(sim("mtron", 1)),
        Box::new(MemDevice::new(CAPACITY)),
        Box::new(CostDevice::new(
            MemDevice::new(CAPACITY),
            LatencyModel {
                latency_read_us: 1.0,
                latency_write_us: 1.0,
                latency_sync_us: 1.0,
            },
        )),
    ];
    for d in &devices {
        let e = d.write_head(0, 64, &big).expect_err("write_head");
        assert!(
            e.to_string().contains("keeps 128 bytes of a 64-byte range"),
            "{e}"
        );
        assert!(d.read_head(0, 64, &mut out).is_err());
        let op = HeadWrite {
            offset: 0,
            len: 64,
            head: &big,
        };
        assert!(d.write_heads(&[op]).is_err());
        assert_eq!(d.stats().writes, 0, "{}: nothing was written", d.describe());
    }
}
