//! Simulator speed: host page writes per second under uniform random writes, for each FTL
//! alone (the targets: ≥ 2 M/s page-mapped, ≥ 0.5 M/s FAST) and through `SimDevice`
//! (bytes copied, clock, lock). Every FTL starts full (each logical page written once).
//!
//! `cargo bench -p flashbuf-device --bench sim_speed`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use flashbuf_device::sim::{build_ftl, Ftl, FtlKind, Nand, NandGeometry, NandTiming, SimDevice};
use flashbuf_device::Device;
use std::hint::black_box;

/// 1 GiB of 4 KB logical pages.
const LOGICAL: u32 = 1 << 18;
const BATCH: u64 = 100_000;

fn full_ftl(kind: FtlKind, ppb: u32, spare_blocks: u32) -> Box<dyn Ftl> {
    let geo = NandGeometry {
        page_bytes: 4096,
        pages_per_block: ppb,
        blocks: LOGICAL / ppb + spare_blocks,
        channels: 8,
    };
    let nand = Nand::new(geo, NandTiming::REFERENCE).expect("geometry");
    let mut f = build_ftl(kind, nand, LOGICAL, 1).expect("ftl");
    for lpn in 0..LOGICAL {
        f.write(lpn, u64::from(lpn) + 1);
    }
    f
}

struct Rng(u64);
impl Rng {
    #[inline]
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn ftl_random_writes(c: &mut Criterion) {
    flashbuf_core::buildinfo::BuildInfo::record_bench(
        "sim_speed",
        serde_json::json!({
            "logical_pages": LOGICAL, "page_bytes": 4096, "batch_writes": BATCH,
            "channels": 8, "pattern": "uniform random 4 KiB writes, FTL full",
        }),
    );
    let mut g = c.benchmark_group("ftl_random_4k_writes");
    g.throughput(Throughput::Elements(BATCH));
    g.sample_size(10);
    let cases: [(&str, FtlKind, u32, u32); 3] = [
        // 7% over-provisioning.
        (
            "page_mapped",
            FtlKind::PageMapped,
            256,
            LOGICAL / 256 * 7 / 100,
        ),
        (
            "fast_16_logs",
            FtlKind::Fast {
                random_log_blocks: 16,
            },
            64,
            18,
        ),
        ("bast_16_logs", FtlKind::Bast { log_blocks: 16 }, 64, 17),
    ];
    for (name, kind, ppb, spare) in cases {
        let mut f = full_ftl(kind, ppb, spare);
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut seq = u64::from(LOGICAL);
        g.bench_function(name, |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    seq += 1;
                    f.write((rng.next() % u64::from(LOGICAL)) as u32, seq);
                }
                f.nand_mut().discard_cost();
            })
        });
        black_box(f.stats());
    }
    g.finish();
}

fn device_random_writes(c: &mut Criterion) {
    let mut g = c.benchmark_group("simdevice_random_4k_writes");
    g.throughput(Throughput::Elements(BATCH));
    g.sample_size(10);
    for name in ["nvme", "flash-25"] {
        let dev = SimDevice::by_name(name, u64::from(LOGICAL) * 4096, 1).expect("device");
        dev.precondition();
        let buf = vec![7u8; 4096];
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        g.bench_function(name, |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    let off = (rng.next() % u64::from(LOGICAL)) * 4096;
                    dev.write_at(off, &buf).expect("write");
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, ftl_random_writes, device_random_writes);
criterion_main!(benches);
