//! Op sequences: the crash suites' torn-overwrite scenario and random soak sequences.

use super::{run, store_front, CrashChoice, Edit, Op, SimConfig, SimFailure, SimReport};
use crate::CrashStore;
use flashbuf_core::rng::SplitMix64;

/// [`torn_overwrite_ops`] through the store itself for every tear shape (1–4) and seeds
/// 0..16, on two pages of `page_size` bytes: the crash suites' torn-overwrite check, its
/// crash points summed.
pub fn torn_overwrites(
    factory: &CrashStore,
    page_size: usize,
) -> Result<SimReport, Box<SimFailure>> {
    let mut total = SimReport::default();
    for tear in 1u8..5 {
        for seed in 0..16u64 {
            let cfg = SimConfig {
                page_size,
                pages: 2,
                fanout: 1,
                seed,
            };
            total.add(&run(
                factory,
                &store_front,
                &cfg,
                &torn_overwrite_ops(seed, tear),
            )?);
        }
    }
    Ok(total)
}

/// Two pages written and synced, both rewritten, then a crash that keeps a seeded subset
/// of the pending writes torn with `tear` (1–4: 512 B / 4 KB, old bytes / garbage), then
/// both read: the torn-overwrite scenario of the crash suites.
pub fn torn_overwrite_ops(seed: u64, tear: u8) -> Vec<Op> {
    let w = |page, seed| Op::Write {
        page,
        edit: Edit { whole: true, seed },
    };
    vec![
        w(0, 1),
        w(1, 2),
        Op::Sync,
        w(0, 3),
        w(1, 4),
        Op::Crash(CrashChoice {
            kind: 3,
            at: 0,
            seed,
            tear,
        }),
        Op::Read { page: 0 },
        Op::Read { page: 1 },
    ]
}

/// A random op sequence of `n` ops over `pages` pages (for soak runs; tests draw theirs
/// with proptest so that failures shrink).
pub fn random_ops(rng: &mut SplitMix64, pages: u32, n: usize) -> Vec<Op> {
    let page = |rng: &mut SplitMix64| {
        // Half the writes go to a hot quarter of the pages.
        if rng.below(2) == 0 {
            rng.below(u64::from(pages.div_ceil(4))) as u32
        } else {
            rng.below(u64::from(pages)) as u32
        }
    };
    let edit = |rng: &mut SplitMix64| Edit {
        whole: rng.below(3) == 0,
        seed: rng.next_u64(),
    };
    (0..n)
        .map(|_| match rng.below(100) {
            0..=39 => Op::Write {
                page: page(rng),
                edit: edit(rng),
            },
            40..=49 => Op::Batch {
                writes: (0..2 + rng.below(6))
                    .map(|_| (page(rng), edit(rng)))
                    .collect(),
            },
            50..=64 => Op::Read { page: page(rng) },
            65..=72 => Op::Flush,
            73..=87 => Op::Sync,
            _ => Op::Crash(CrashChoice::random(rng)),
        })
        .collect()
}
