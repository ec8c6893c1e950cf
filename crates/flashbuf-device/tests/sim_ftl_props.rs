//! Property tests of the three FTLs: under random and adversarial write sequences (hot
//! spots, sequential runs, full-device rewrites, interleaved streams, reverse runs) every
//! logical page stays readable with its last write, and `check_invariants()` holds (map
//! consistency, newest copies, valid-page counts, exact free-block accounting).

use flashbuf_device::sim::{build_ftl, Ftl, FtlKind, Nand, NandGeometry, NandTiming};
use proptest::prelude::*;

const PPB: u32 = 8;
const LOGICAL: u32 = 8 * 12; // 12 logical blocks

fn ftl(kind: FtlKind, seed: u64) -> Box<dyn Ftl> {
    let data_blocks = LOGICAL.div_ceil(PPB);
    let extra = match kind {
        FtlKind::PageMapped => 3,
        FtlKind::Bast { log_blocks } => log_blocks + 1,
        FtlKind::Fast { random_log_blocks } => random_log_blocks + 2,
    };
    let geo = NandGeometry {
        page_bytes: 4096,
        pages_per_block: PPB,
        blocks: data_blocks + extra,
        channels: 2,
    };
    let nand = Nand::new(geo, NandTiming::REFERENCE).expect("geometry");
    build_ftl(kind, nand, LOGICAL, seed).expect("ftl")
}

/// A burst of writes following one pattern.
#[derive(Debug, Clone)]
enum Burst {
    /// Uniform random pages.
    Random(Vec<u32>),
    /// Pages from a small hot set.
    Hot(u32, Vec<u32>),
    /// A sequential run from a page.
    Seq(u32, u32),
    /// A reverse run ending at a page.
    Reverse(u32, u32),
    /// Every page, in order.
    Rewrite,
    /// Interleaved sequential runs from several starts (partitioned).
    Partitioned(Vec<u32>, u32),
    /// A whole logical block written in order from offset 0 (switch-merge pattern).
    Block(u32),
}

fn burst() -> impl Strategy<Value = Burst> {
    prop_oneof![
        prop::collection::vec(0..LOGICAL, 1..40).prop_map(Burst::Random),
        (0..LOGICAL - 4, prop::collection::vec(0..4u32, 1..40)).prop_map(|(b, v)| Burst::Hot(b, v)),
        (0..LOGICAL, 1..30u32).prop_map(|(s, n)| Burst::Seq(s, n)),
        (0..LOGICAL, 1..30u32).prop_map(|(s, n)| Burst::Reverse(s, n)),
        Just(Burst::Rewrite),
        (prop::collection::vec(0..LOGICAL, 2..5), 1..12u32)
            .prop_map(|(s, n)| Burst::Partitioned(s, n)),
        (0..LOGICAL / PPB).prop_map(Burst::Block),
    ]
}

fn pages(b: &Burst) -> Vec<u32> {
    match b {
        Burst::Random(v) => v.clone(),
        Burst::Hot(base, v) => v.iter().map(|o| base + o).collect(),
        Burst::Seq(s, n) => (0..*n).map(|i| (s + i) % LOGICAL).collect(),
        Burst::Reverse(s, n) => (0..*n).map(|i| (s + LOGICAL - i) % LOGICAL).collect(),
        Burst::Rewrite => (0..LOGICAL).collect(),
        Burst::Partitioned(starts, n) => (0..*n)
            .flat_map(|i| starts.iter().map(move |s| (s + i) % LOGICAL))
            .collect(),
        Burst::Block(b) => (0..PPB).map(|o| b * PPB + o).collect(),
    }
}

fn run(kind: FtlKind, bursts: &[Burst], seed: u64) -> Result<(), TestCaseError> {
    let mut f = ftl(kind, seed);
    let mut last = vec![0u64; LOGICAL as usize];
    let mut seq = 0u64;
    for b in bursts {
        for lpn in pages(b) {
            seq += 1;
            f.write(lpn, seq);
            last[lpn as usize] = seq;
        }
        if let Err(e) = f.check_invariants() {
            return Err(TestCaseError::fail(format!("{kind:?} after {b:?}: {e}")));
        }
    }
    for lpn in 0..LOGICAL {
        let got = f.read(lpn).map(|s| (s.lpn, s.seq));
        let want = (last[lpn as usize] > 0).then_some((lpn, last[lpn as usize]));
        prop_assert_eq!(got, want, "{:?}: lpn {}", kind, lpn);
    }
    let s = f.stats();
    prop_assert_eq!(s.host_programs, seq);
    prop_assert_eq!(s.flash_programs, s.host_programs + s.copied_pages);
    prop_assert!(s.write_amplification() >= 1.0);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn page_mapped_keeps_newest_copies(bursts in prop::collection::vec(burst(), 1..12), seed in 0..4u64) {
        run(FtlKind::PageMapped, &bursts, seed)?;
    }

    #[test]
    fn bast_keeps_newest_copies(bursts in prop::collection::vec(burst(), 1..12), logs in 1..4u32, seed in 0..4u64) {
        run(FtlKind::Bast { log_blocks: logs }, &bursts, seed)?;
    }

    #[test]
    fn fast_keeps_newest_copies(bursts in prop::collection::vec(burst(), 1..12), logs in 1..4u32, seed in 0..4u64) {
        run(FtlKind::Fast { random_log_blocks: logs }, &bursts, seed)?;
    }
}

/// Long random runs with a check after every write (a soak in miniature).
#[test]
fn every_ftl_survives_long_random_runs_checked_every_write() {
    for kind in [
        FtlKind::PageMapped,
        FtlKind::Bast { log_blocks: 2 },
        FtlKind::Fast {
            random_log_blocks: 2,
        },
    ] {
        let mut f = ftl(kind, 3);
        let mut x = 12345u64;
        for seq in 1..=3000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Half hot (one block), half uniform.
            let lpn = if x.is_multiple_of(2) {
                (x >> 8) as u32 % PPB
            } else {
                (x >> 8) as u32 % LOGICAL
            };
            f.write(lpn, seq);
            if let Err(e) = f.check_invariants() {
                panic!("{kind:?} after write {seq} of lpn {lpn}: {e}");
            }
        }
    }
}

/// Soak: a million mixed writes per FTL on a larger array, invariants checked every 50,000.
/// Ignored by default (about a second in release, half a minute unoptimized); run with
/// `cargo test --release -p flashbuf-device --test sim_ftl_props -- --ignored soak`.
#[test]
#[ignore = "soak test: run explicitly"]
fn soak_million_writes_per_ftl() {
    const L: u32 = 64 * 256;
    for kind in [
        FtlKind::PageMapped,
        FtlKind::Bast { log_blocks: 16 },
        FtlKind::Fast {
            random_log_blocks: 16,
        },
    ] {
        let geo = NandGeometry {
            page_bytes: 4096,
            pages_per_block: 64,
            blocks: 256 + 20,
            channels: 4,
        };
        let mut f = build_ftl(
            kind,
            Nand::new(geo, NandTiming::REFERENCE).expect("geometry"),
            L,
            9,
        )
        .expect("ftl");
        let mut last = vec![0u64; L as usize];
        let mut x = 0x1234_5678u64;
        for seq in 1..=1_000_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let lpn = match x % 4 {
                0 => (seq as u32) % L,      // sequential stream
                1 => (x >> 8) as u32 % 512, // hot spot
                _ => (x >> 8) as u32 % L,   // uniform
            };
            f.write(lpn, seq);
            last[lpn as usize] = seq;
            if seq % 50_000 == 0 {
                f.check_invariants()
                    .unwrap_or_else(|e| panic!("{kind:?} at {seq}: {e}"));
            }
        }
        for lpn in 0..L {
            assert_eq!(
                f.read(lpn).map(|s| s.seq),
                (last[lpn as usize] > 0).then_some(last[lpn as usize])
            );
        }
    }
}
