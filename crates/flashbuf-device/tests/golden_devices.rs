//! Golden rows of every device of the table ([`DEVICES`]), run on the examples each entry
//! names: its facts (erase block, random read and write latency) for a fixed context, and
//! its counters (requests, bytes, flash operations, and device time where the clock is
//! virtual) after a fixed, seeded pattern of writes, reads, a batch and a sync. A new entry
//! (or example) fails naming its missing row until generated with
//! `FLASHBUF_REGEN_GOLDEN=1 cargo test -p flashbuf-device --test golden_devices`.

use flashbuf_core::config::Spec;
use flashbuf_core::rng::SplitMix64;
use flashbuf_device::registry::{parse_device, takes_arg, DeviceClock, DeviceContext, DEVICES};
use flashbuf_device::{Device, WriteOp};
use std::collections::BTreeMap;

mod golden;

const REGEN: &str = "FLASHBUF_REGEN_GOLDEN=1 cargo test -p flashbuf-device --test golden_devices";
const CTX: DeviceContext = DeviceContext {
    capacity_hint_bytes: 8 << 20,
    page_size: 4096,
    seed: 5,
};
/// Bytes of the device the pattern uses.
const SPAN: u64 = 8 << 20;

fn pattern(d: &dyn Device) {
    if d.len() < SPAN {
        d.set_len(SPAN).expect("grow");
    }
    let mut rng = SplitMix64::new(11);
    let page = [7u8; 4096];
    let mut buf = [0u8; 4096];
    for i in 0..300u64 {
        let off = rng.below(SPAN / 4096) * 4096;
        if i % 3 == 2 {
            d.read_at(off, &mut buf).expect("read");
        } else {
            d.write_at(off, &page).expect("write");
        }
    }
    let ops: Vec<WriteOp<'_>> = (0..16u64)
        .map(|i| WriteOp {
            offset: (64 + i) * 4096,
            data: &page,
        })
        .collect();
    d.write_batch(&ops).expect("batch");
    d.sync().expect("sync");
}

fn row(example: &str, clock: DeviceClock) -> String {
    let spec = Spec::parse(example, takes_arg).expect("example parses");
    let cfg = parse_device(&spec).unwrap_or_else(|e| panic!("{example}: {e}"));
    let f = cfg.facts(&CTX).expect("facts");
    let built = cfg.build(&CTX).expect("build");
    pattern(built.device.as_ref());
    let s = built.device.stats();
    let time = match clock {
        DeviceClock::Virtual => format!(" device_time_us={}", s.device_time_us),
        DeviceClock::None => {
            assert_eq!(s.device_time_us, 0.0, "{example} has no clock");
            String::new()
        }
        DeviceClock::Wall => String::new(),
    };
    if let Some(p) = built.cleanup {
        std::fs::remove_file(p).expect("cleanup");
    }
    format!(
        "erase_block={:?} read_us={} write_us={} | reads={} writes={} read_bytes={} \
         written_bytes={} syncs={} erases={} flash_reads={} flash_programs={} \
         host_programs={}{time}",
        f.erase_block_bytes,
        f.read_us,
        f.write_us,
        s.reads,
        s.writes,
        s.read_bytes,
        s.written_bytes,
        s.syncs,
        s.erases,
        s.flash_reads,
        s.flash_programs,
        s.host_programs,
    )
}

#[test]
fn every_device_matches_its_golden_rows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut got = BTreeMap::new();
    for e in DEVICES {
        let examples = (e.examples)();
        assert!(!examples.is_empty(), "{} has no example", e.name);
        for ex in examples {
            let name = ex.replace("{dir}", &dir.path().display().to_string());
            got.insert(ex, row(&name, e.clock));
        }
    }
    golden::check_rows("devices.golden", REGEN, &got);
}
