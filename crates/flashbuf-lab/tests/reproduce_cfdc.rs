#![allow(clippy::unwrap_used)]
//! `reproduce cfdc`'s headline, as a test: on the simulated MTRON SSD with 4 KB pages,
//! CFDC's device write time per written page is below CFLRU's and LRU's (the paper's
//! Fig. 6: about half), on the first 1.5 M references of the shared TPC-C trace with
//! 4,096 frames. Skipped (with a message) when `../shared/traces` is absent.
//!
//! The whole reproduction runs with `flashbuf reproduce cfdc` (about 2 minutes) or
//! `cargo test --release -p flashbuf-lab --test reproduce_cfdc -- --ignored`.

use flashbuf_lab::reproduce::{cfdc, run as reproduce, ReproduceOptions};
use flashbuf_lab::{BufferSize, RunConfig, RunResult};
use std::path::PathBuf;

fn traces_dir() -> Option<PathBuf> {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces"
    ));
    if p.join(cfdc::TRACE).exists() {
        Some(p)
    } else {
        eprintln!("{} absent; skipping", p.display());
        None
    }
}

fn mtron(dir: &std::path::Path, policy: &str, limit: u64) -> RunResult {
    let cfg = RunConfig {
        trace: dir.join(cfdc::TRACE),
        format: None,
        policy: flashbuf_lab::spec::parse(policy).unwrap(),
        store: flashbuf_lab::spec::parse("direct").unwrap(),
        device: flashbuf_lab::spec::parse(cfdc::DEVICE).unwrap(),
        buffer: BufferSize::Pages(cfdc::BASE_BUFFER),
        page_size: cfdc::PAGE_SIZE,
        seed: 42,
        paranoid: false,
        progress: false,
        limit_refs: Some(limit),
        facts: None,
        ..RunConfig::default()
    };
    let r = flashbuf_lab::run(
        &RunConfig {
            presize: true,
            ..cfg
        },
        None,
    )
    .unwrap();
    assert_eq!(r.verify_errors, 0);
    r
}

#[test]
fn cfdc_writes_a_page_cheaper_than_cflru_and_lru_on_mtron() {
    let Some(dir) = traces_dir() else { return };
    let [lru, cflru, cfdc] = ["lru", "cflru", "cfdc"].map(|p| mtron(&dir, p, 1_500_000));
    eprintln!(
        "write us per written page: LRU {:.0}, CFLRU {:.0}, CFDC {:.0}; flushes {} / {} / {}",
        lru.write_time_per_page_us,
        cflru.write_time_per_page_us,
        cfdc.write_time_per_page_us,
        lru.page_writes,
        cflru.page_writes,
        cfdc.page_writes
    );
    assert!(cfdc.write_time_per_page_us < 0.75 * cflru.write_time_per_page_us);
    assert!(cfdc.write_time_per_page_us < 0.75 * lru.write_time_per_page_us);
    // CFLRU flushes fewer pages than LRU, CFDC more than CFLRU (Fig. 5).
    assert!(cflru.page_writes < lru.page_writes);
    assert!(cfdc.page_writes > cflru.page_writes);
    // And the device time follows (Fig. 4).
    assert!(cfdc.device_time_us < cflru.device_time_us);
    assert!(cflru.device_time_us < lru.device_time_us);
}

/// The whole `reproduce cfdc` on a prefix: every section filled, no error.
#[test]
#[ignore = "about 40 s: runs every experiment of the reproduction on a prefix"]
fn reproduce_cfdc_runs_on_a_prefix() {
    let Some(dir) = traces_dir() else { return };
    let opts = ReproduceOptions {
        traces_dir: dir,
        seed: 42,
        limit_refs: Some(100_000),
        progress: false,
        ..ReproduceOptions::default()
    };
    let reports = reproduce("cfdc", &opts).unwrap();
    // The planning pass behind the progress's total counts exactly the runs made.
    assert_eq!(
        flashbuf_lab::reproduce::plan("cfdc", &opts).unwrap(),
        reports[0].runs
    );
    assert!(reports[0].runs > 0);
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].sections.len(), 4);
    assert!(reports[0].sections.iter().all(|s| !s.rows.is_empty()));
    // One verdict per reproduced figure, summarized at the end of the text.
    let figures: Vec<&str> = reports[0]
        .verdicts
        .iter()
        .map(|v| v.figure.as_str())
        .collect();
    assert_eq!(figures.len(), 5, "{figures:?}");
    for v in &reports[0].verdicts {
        assert!(!v.paper.is_empty() && !v.measured.is_empty(), "{v:?}");
        let differs = !v.direction_holds
            || !matches!(
                v.magnitude,
                flashbuf_lab::reproduce::Magnitude::Inside
                    | flashbuf_lab::reproduce::Magnitude::NoFigure
            );
        assert_eq!(
            differs,
            !v.cause.is_empty(),
            "a differing figure needs its cause: {v:?}"
        );
    }
    let text = reports[0].render();
    assert!(text.contains("## Verdicts (cfdc)"), "{text}");
    println!("{text}");
}
