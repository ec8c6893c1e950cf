//! Tests of the crash-sequence runner.

use super::*;
use crate::CrashStore;

#[test]
fn a_short_scenario_passes_and_counts_crash_points() {
    let mut rng = SplitMix64::new(5);
    let ops = random_ops(&mut rng, 8, 60);
    let cfg = SimConfig {
        page_size: 512,
        pages: 8,
        fanout: 4,
        seed: 5,
    };
    let direct = &CrashStore::variants().unwrap()[0];
    let rep = run(direct, &store_front, &cfg, &ops).unwrap();
    let crashes = ops.iter().filter(|o| matches!(o, Op::Crash(_))).count() as u64;
    assert_eq!(rep.crash_points, (crashes + 1) * 4);
    assert_eq!(rep.pages_checked, rep.crash_points * 11);
}

#[test]
fn crash_choice_maps_onto_every_mode() {
    let c = |kind, tear| CrashChoice {
        kind,
        at: 7,
        seed: 1,
        tear,
    };
    assert_eq!(c(0, 0).mode(3), CrashMode::LoseUnsynced);
    assert_eq!(c(1, 0).mode(3), CrashMode::KeepAll);
    assert_eq!(
        c(2, 0).mode(3),
        CrashMode::Prefix {
            writes: 3,
            tear: None
        }
    );
    assert_eq!(mode_label(&c(3, 2).mode(3)), "subset/torn-512/garbage");
    assert_eq!(mode_label(&c(2, 3).mode(3)), "prefix/torn-4k");
}
