//! Every FTL of the table ([`FTLS`]) under seeded random write mixes (uniform, hot spot,
//! sequential runs): each logical page reads back its last write, and
//! `check_invariants()` holds along the way. A new FTL is covered by its table entry alone.

use flashbuf_device::sim::{FtlConfig, Nand, NandGeometry, NandTiming, FTLS};
use proptest::prelude::*;

const PPB: u32 = 8;
const LBNS: u32 = 12;

fn run(entry: &str, seed: u64, hot: u32, writes: usize) -> Result<(), TestCaseError> {
    let cfg = FtlConfig::by_name(entry).expect("table entry");
    let geo = NandGeometry {
        page_bytes: 4096,
        pages_per_block: PPB,
        blocks: LBNS + cfg.extra_blocks(0),
        channels: 2,
    };
    let n = LBNS * PPB;
    let mut f = cfg
        .build(
            Nand::new(geo, NandTiming::REFERENCE).expect("geometry"),
            n,
            seed,
        )
        .expect("ftl");
    let mut rng = flashbuf_core::rng::SplitMix64::new(seed);
    let mut last = vec![0u64; n as usize];
    let mut seq = 0u64;
    while (seq as usize) < writes {
        let start = rng.below(u64::from(n)) as u32;
        let run_len = match rng.below(3) {
            0 => 1 + rng.below(u64::from(2 * PPB)) as u32, // sequential run
            _ => 1,
        };
        for i in 0..run_len {
            let lpn = if rng.chance(0.5) {
                (start + i) % n
            } else {
                rng.below(u64::from(hot.min(n))) as u32
            };
            seq += 1;
            f.write(lpn, seq);
            last[lpn as usize] = seq;
        }
        if seq % 97 < u64::from(run_len) {
            f.check_invariants().map_err(TestCaseError::fail)?;
        }
    }
    f.check_invariants().map_err(TestCaseError::fail)?;
    for lpn in 0..n {
        let want = (last[lpn as usize] > 0).then_some(last[lpn as usize]);
        prop_assert_eq!(f.read(lpn).map(|s| s.seq), want, "{} lpn {}", entry, lpn);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_ftl_of_the_table_reads_back_its_last_writes(
        seed in any::<u64>(),
        hot in 1u32..64,
        writes in 50usize..2_000,
    ) {
        for e in FTLS {
            run(e.name, seed, hot, writes)?;
        }
    }
}
