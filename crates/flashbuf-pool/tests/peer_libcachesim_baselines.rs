#![allow(clippy::unwrap_used)]
//! The classic baselines against libCacheSim's own implementations (PyPI `libcachesim`
//! 0.3.5, run by `../shared/tools/peer_libcachesim.py TRACE 64,256,1024 --algo A`): miss
//! counts on the bundled TPC-C sample (`testdata/traces/tpcc-sample.pagetrace.csv.zst`,
//! 200,000 references) at 64, 256 and 1,024 frames. The libCacheSim numbers are recorded
//! here (the peer needs Python and the package; this test does not run it).
//!
//! flashbuf's side is replayed through the policy alone, with the pool's calling sequence
//! on a miss (`prepare_miss`, then `choose_victim`, `on_remove` of the victim when no frame
//! is free, then `on_insert`), every frame evictable (libCacheSim has no pins). The policy
//! is built from its spec through the policy table. Sanity anchor: libCacheSim's LRU gives
//! 54,092 / 39,031 / 32,011 misses, equal to flashbuf's `lru` golden rows in the lab.

use flashbuf_core::config::Spec;
use flashbuf_core::{DeviceFacts, FrameId, PageId};
use flashbuf_pool::policy::registry::{self, PolicyContext};
use flashbuf_pool::policy::Access;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};

const SIZES: [usize; 3] = [64, 256, 1024];

fn refs() -> Vec<(bool, u64)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces/tpcc-sample.pagetrace.csv.zst"
    );
    let file = std::fs::File::open(path).unwrap();
    let reader = BufReader::new(zstd::Decoder::new(file).unwrap());
    reader
        .lines()
        .skip(1)
        .map(|l| {
            let l = l.unwrap();
            let (op, page) = l.trim().split_once(',').unwrap();
            (op == "W", page.parse::<u64>().unwrap())
        })
        .collect()
}

/// Misses of `spec` over `refs` at `frames` frames.
fn misses(spec: &str, frames: usize, refs: &[(bool, u64)]) -> u64 {
    let ctx = PolicyContext::new(frames, 4096, DeviceFacts::default());
    let (_, factory) = registry::parse(&Spec::parse(spec, |_| false).unwrap()).unwrap();
    let mut policy = factory.build(&ctx).unwrap();
    let mut resident: HashMap<u64, FrameId> = HashMap::new();
    let mut page_of: Vec<Option<u64>> = vec![None; frames];
    let mut misses = 0;
    for &(w, page) in refs {
        let access = if w { Access::Write } else { Access::Read };
        if let Some(&f) = resident.get(&page) {
            policy.on_hit(f, access);
            continue;
        }
        misses += 1;
        policy.prepare_miss(PageId(page), access);
        let f = match page_of.iter().position(Option::is_none) {
            Some(i) => FrameId(i as u32),
            None => {
                let v = policy.choose_victim(&|_| true).unwrap().evicted();
                policy.on_remove(v);
                resident.remove(&page_of[v.index()].unwrap());
                v
            }
        };
        page_of[f.index()] = Some(page);
        resident.insert(page, f);
        policy.on_insert(f, PageId(page), access);
    }
    policy.check_invariants().unwrap();
    misses
}

/// (flashbuf spec, libCacheSim algorithm, libCacheSim misses at 64 / 256 / 1,024 frames,
/// allowed difference as a fraction of libCacheSim's misses, why).
type Peer = (&'static str, &'static str, [u64; 3], f64, &'static str);

const PEERS: &[Peer] = &[
    (
        "clock",
        "clock",
        [53_539, 38_956, 32_049],
        0.0,
        "same algorithm: FIFO ring, 1-bit reference set on hit, clear on load",
    ),
    // Exact since the pool names the missed page in `prepare_miss` (before: 52,168 /
    // 38,278 / 31,988, +0.067% / -0.010% / -0.056%, `p` adapting one miss late).
    (
        "arc",
        "arc",
        [52_133, 38_282, 32_006],
        0.0,
        "same algorithm: Fig. 4, p adapted on a ghost hit before REPLACE(x, p)",
    ),
    // flashbuf: 52,178 / 37,733 / 31,040 (-0.004%, +0.011%, -0.010%), equal to a Python
    // transcription of the paper's `reclaimfor` (OrderedDicts).
    (
        "2q",
        "twoq",
        [52_180, 37_729, 31_043],
        0.0005,
        "libCacheSim's TwoQ (TwoQ.c) removes an A1out hit's identifier before evicting \
         (the paper's reclaimfor trims A1out first) and runs Am as an LRU sub-cache of \
         c - Kin pages that evicts its own LRU page when a page enters it full",
    ),
    (
        "s3-fifo",
        "s3fifo",
        [57_584, 38_532, 31_268],
        0.0,
        "same algorithm and readings (libCacheSim's S3FIFO.c: one victim per miss, moved \
         pages start at frequency 0 in M, new pages fill M once S is full before the first \
         eviction, ghost of 0.9c)",
    ),
];

#[test]
fn baselines_match_libcachesim() {
    let refs = refs();
    assert_eq!(refs.len(), 200_000);
    let mut report = Vec::new();
    for &(spec, peer, peer_misses, tolerance, why) in PEERS {
        for (&frames, &theirs) in SIZES.iter().zip(&peer_misses) {
            let ours = misses(spec, frames, &refs);
            let diff = ours.abs_diff(theirs) as f64 / theirs as f64;
            report.push(format!(
                "{spec} vs libCacheSim {peer} at {frames}: {ours} vs {theirs} ({:+.3}%)",
                100.0 * (ours as f64 - theirs as f64) / theirs as f64
            ));
            assert!(
                diff <= tolerance,
                "{spec} at {frames} frames: {ours} misses, libCacheSim {peer} {theirs} \
                 (allowed {tolerance}: {why})"
            );
        }
    }
    eprintln!("{}", report.join("\n"));
}

/// The LRU anchor: the replay above gives libCacheSim's LRU numbers for `lru`.
#[test]
fn lru_anchor_matches_libcachesim_lru() {
    let refs = refs();
    let got: Vec<u64> = SIZES.iter().map(|&n| misses("lru", n, &refs)).collect();
    assert_eq!(got, vec![54_092, 39_031, 32_011]);
}
