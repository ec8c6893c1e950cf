//! Golden counts of every FTL of the table ([`FTLS`]) on one fixed, seeded pattern: a full
//! sequential fill, uniform random updates, a hot spot (80% of writes to 10% of the pages),
//! whole and partial sequential block rewrites (switch and partial merges), then random
//! reads; the counts (flash reads, programs, erases, copies, GC runs, merges by kind, write
//! amplification) must equal the FTL's row in `tests/golden/ftls.golden`.
//!
//! Adding an FTL to the table adds a row: the test fails naming the missing row until it is
//! generated with
//! `FLASHBUF_REGEN_GOLDEN=1 cargo test -p flashbuf-device --test golden_ftls`
//! (which rewrites the golden file with the rows of every FTL; review the diff).

use flashbuf_core::rng::SplitMix64;
use flashbuf_device::sim::{Ftl, FtlConfig, FtlStats, Nand, NandGeometry, NandTiming, FTLS};
use std::collections::BTreeMap;

mod golden;

const PPB: u32 = 32;
const LBNS: u32 = 64;
/// Over-provisioning of every FTL's array, as a fraction of the data blocks.
const OP: f64 = 0.1;
const REGEN: &str = "FLASHBUF_REGEN_GOLDEN=1 cargo test -p flashbuf-device --test golden_ftls";

/// The fixed pattern; returns the counters at the end (invariants checked).
fn drive(f: &mut dyn Ftl, seed: u64) -> FtlStats {
    let n = f.logical_pages();
    let mut seq = 0u64;
    let mut w = |f: &mut dyn Ftl, lpn: u32| {
        seq += 1;
        f.write(lpn, seq);
    };
    let mut rng = SplitMix64::new(seed);
    for lpn in 0..n {
        w(f, lpn);
    }
    for _ in 0..20_000 {
        w(f, rng.below(u64::from(n)) as u32);
    }
    let hot = n / 10;
    for _ in 0..20_000 {
        let lpn = if rng.chance(0.8) {
            rng.below(u64::from(hot))
        } else {
            rng.below(u64::from(n))
        };
        w(f, lpn as u32);
    }
    for _ in 0..200 {
        let b = rng.below(u64::from(n / PPB)) as u32;
        let len = if rng.chance(0.5) {
            PPB
        } else {
            1 + rng.below(u64::from(PPB - 1)) as u32
        };
        for off in 0..len {
            w(f, b * PPB + off);
        }
    }
    for _ in 0..5_000 {
        let _ = f.read(rng.below(u64::from(n)) as u32);
    }
    f.check_invariants().expect("invariants");
    f.stats()
}

fn row(s: &FtlStats) -> String {
    format!(
        "host_reads={} host_programs={} flash_reads={} flash_programs={} erases={} copied={} \
         gc={} switch={} partial={} full={} wa={:.6}",
        s.host_reads,
        s.host_programs,
        s.flash_reads,
        s.flash_programs,
        s.erases,
        s.copied_pages,
        s.gc_runs,
        s.switch_merges,
        s.partial_merges,
        s.full_merges,
        s.write_amplification()
    )
}

/// Every FTL of the table with its default options, plus the hybrids at their paper
/// profiles' log-block counts (the rows key on the FTL's full name).
fn configs() -> Vec<FtlConfig> {
    let mut out: Vec<FtlConfig> = FTLS
        .iter()
        .map(|e| FtlConfig::by_name(e.name).expect(e.name))
        .collect();
    for extra in [
        "bast:log-blocks=4",
        "bast:log-blocks=32",
        "fast:log-blocks=4",
    ] {
        out.push(FtlConfig::parse(extra).expect(extra));
    }
    out
}

fn measure(c: &FtlConfig) -> String {
    let op_blocks = (f64::from(LBNS) * OP).ceil() as u32;
    let geo = NandGeometry {
        page_bytes: 4096,
        pages_per_block: PPB,
        blocks: LBNS + c.extra_blocks(op_blocks),
        channels: 4,
    };
    let nand = Nand::new(geo, NandTiming::REFERENCE).expect("geometry");
    let mut f = c.build(nand, LBNS * PPB, 7).expect("ftl");
    assert_eq!(f.name(), c.name());
    row(&drive(f.as_mut(), 42))
}

fn key(c: &FtlConfig) -> String {
    // Defaults spelled out, so a changed default is a changed row.
    let opts: Vec<String> = c
        .entry()
        .options
        .iter()
        .filter_map(|o| c.options().u64(o.key).map(|v| format!("{}={v}", o.key)))
        .collect();
    if opts.is_empty() {
        c.name().to_string()
    } else {
        format!("{}:{}", c.name(), opts.join(","))
    }
}

#[test]
fn every_ftl_matches_its_golden_row() {
    let got: BTreeMap<String, String> = configs().iter().map(|c| (key(c), measure(c))).collect();
    golden::check_rows("ftls.golden", REGEN, &got);
}
