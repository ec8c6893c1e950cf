#![allow(clippy::unwrap_used)]
//! Golden counts of every store in the table (`flashbuf_store::STORES`): the bundled TPC-C
//! sample (200,000 references) through LRU with 256 frames, 4 KB pages, on the `memory` and
//! `sim:mtron` devices, with the integrity oracle on — for each store's defaults and each of
//! its crash variants. Page writes, device writes, erases and device time must equal the
//! rows of `testdata/golden/stores.csv`; a store without its rows fails naming them.
//!
//! Regenerate after an intended change (or for a new store) with
//! `FLASHBUF_REGEN_GOLDEN=1 cargo test -p flashbuf-lab --test stores_golden`
//! and review the diff of the file.

use flashbuf_lab::{run, BufferSize, RunConfig};
use flashbuf_store::STORES;
use std::collections::BTreeMap;
use std::path::PathBuf;

const TRACE: &str = "tpcc-sample.pagetrace.csv.zst";
const DEVICES: &[&str] = &["memory", "sim:mtron"];
const FRAMES: usize = 256;
const HEADER: &str =
    "store,device,policy,buffer_pages,references,hits,misses,page_writes,device_writes,erases,device_time_us";
const REGEN: &str = "FLASHBUF_REGEN_GOLDEN=1 cargo test -p flashbuf-lab --test stores_golden";

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn golden_path() -> PathBuf {
    root().join("testdata/golden/stores.csv")
}

/// Every store spec with golden rows: each entry's defaults and its crash variants.
fn specs() -> Vec<String> {
    let mut v = Vec::new();
    for e in STORES {
        v.push(e.name.to_string());
        v.extend(e.crash_variants.iter().map(|c| e.variant_spec(c)));
    }
    v
}

/// The row's key (store, device) and its CSV line.
fn measure(store: &str, device: &str) -> ((String, String), String) {
    let cfg = RunConfig {
        trace: root().join("testdata/traces").join(TRACE),
        format: None,
        policy: flashbuf_lab::spec::parse("lru").unwrap(),
        store: flashbuf_lab::spec::parse(store).unwrap(),
        device: flashbuf_lab::spec::parse(device).unwrap(),
        buffer: BufferSize::Pages(FRAMES),
        page_size: 4096,
        seed: 1,
        paranoid: false,
        progress: false,
        limit_refs: None,
        facts: None,
        ..RunConfig::default()
    };
    let r = run(&cfg, None).unwrap();
    assert_eq!(
        r.verify_errors, 0,
        "{store} on {device}: {:?}",
        r.first_verify_error
    );
    // Stores hold commas in their options: quote the field.
    let line = format!(
        "\"{store}\",{device},lru,{FRAMES},{},{},{},{},{},{},{}",
        r.references, r.hits, r.misses, r.page_writes, r.device_writes, r.erases, r.device_time_us
    );
    ((store.to_string(), device.to_string()), line)
}

/// The golden rows by (store, device).
fn read_golden() -> BTreeMap<(String, String), String> {
    let text = std::fs::read_to_string(golden_path())
        .unwrap_or_else(|e| panic!("{}: {e}; create it with `{REGEN}`", golden_path().display()));
    let mut rows = BTreeMap::new();
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let (store, rest) = line
            .strip_prefix('"')
            .and_then(|l| l.split_once("\","))
            .unwrap_or_else(|| panic!("malformed golden row '{line}'"));
        let device = rest.split(',').next().unwrap();
        rows.insert((store.to_string(), device.to_string()), line.to_string());
    }
    rows
}

#[test]
fn every_store_matches_its_golden_rows() {
    let mut got = Vec::new();
    for spec in specs() {
        for device in DEVICES {
            got.push(measure(&spec, device));
        }
    }
    if std::env::var_os("FLASHBUF_REGEN_GOLDEN").is_some() {
        let mut text = format!("{HEADER}\n");
        for (_, line) in &got {
            text.push_str(line);
            text.push('\n');
        }
        std::fs::create_dir_all(golden_path().parent().unwrap()).unwrap();
        std::fs::write(golden_path(), text).unwrap();
        return;
    }
    let mut golden = read_golden();
    for ((store, device), line) in &got {
        let Some(want) = golden.remove(&(store.clone(), device.clone())) else {
            panic!(
                "no golden row for store '{store}' on '{device}' in {}; add it with `{REGEN}`",
                golden_path().display()
            );
        };
        assert_eq!(
            line, &want,
            "golden mismatch for store '{store}' on '{device}' (got, want)"
        );
    }
    assert!(
        golden.is_empty(),
        "golden rows of stores no longer in the table: {:?}; regenerate with `{REGEN}`",
        golden.keys().collect::<Vec<_>>()
    );
}
