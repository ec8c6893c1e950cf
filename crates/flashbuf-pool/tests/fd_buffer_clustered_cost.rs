#![allow(clippy::unwrap_used)]
//! FD-Buffer's clustered-cost variant (`fd-buffer:cost=clustered`, not the paper's; see
//! `policy::fd_buffer::clustered_cost`): its options and its defaults. What it changes on
//! a real trace: `flashbuf-lab/tests/fd_buffer_clustered_cost.rs`; the model's effect on
//! the advisor: `cost.rs`'s unit tests.

use flashbuf_core::config::{Options, Spec};
use flashbuf_core::DeviceFacts;
use flashbuf_core::PageId;
use flashbuf_device::MemDevice;
use flashbuf_pool::policy::fd_buffer::spec::{
    FdBufferSpec, GroupSpec, WindowSpec, OPTIONS, VARIANT_CALIBRATE, VARIANT_GROUPS,
};
use flashbuf_pool::policy::fd_buffer::{
    Calibrate, ClusterVictim, Clustering, FdBuffer, FdBufferOptions,
};
use flashbuf_pool::policy::registry::{self, PolicyContext};
use flashbuf_pool::policy::PolicyReport;
use flashbuf_pool::BufferPool;
use flashbuf_store::{DirectStore, DirectStoreConfig};

fn spec(s: &str) -> Result<FdBufferSpec, String> {
    let sp = Spec::parse(s, |_| false).map_err(|e| e.to_string())?;
    let o = Options::validate(&sp, OPTIONS).map_err(|e| e.to_string())?;
    FdBufferSpec::parse(&o).map_err(|e| e.to_string())
}

#[test]
fn the_variant_has_its_own_defaults_and_the_faithful_one_keeps_the_papers() {
    let v = spec("fd-buffer:cost=clustered").unwrap();
    // The paper's windows (§4.4: 5,000 references).
    assert_eq!(v.window, WindowSpec::Refs(5_000));
    assert_eq!(v.victim, ClusterVictim::OrderVictim);
    assert_eq!(v.clustered_cost, Some(None));
    assert_eq!(v.group, GroupSpec::PerStack(VARIANT_GROUPS));
    assert_eq!(VARIANT_GROUPS, 256);
    assert!(v.io_count, "the variant counts misses and write-backs");
    assert!(v.paid_moves, "the variant charges moves of M_c");
    assert!(v.cusum_moves, "out of the savings since the last move");
    assert!(v.recent_span, "the variant reads k off the recent writes");
    assert_eq!(v.calibrate, VARIANT_CALIBRATE);
    assert_eq!(
        VARIANT_CALIBRATE,
        Calibrate::Drained,
        "the variant calibrates k to the drained clusters"
    );
    for (word, mode) in [("none", Calibrate::None), ("drained", Calibrate::Drained)] {
        let s = spec(&format!("fd-buffer:cost=clustered,calibrate={word}")).unwrap();
        assert_eq!(s.calibrate, mode);
        assert_eq!(mode.word(), word, "the word the option is printed with");
    }
    assert!(
        !spec("fd-buffer:cost=clustered,span=window")
            .unwrap()
            .recent_span
    );
    let v = spec("fd-buffer:cost=clustered,window=5000,victim=priority,seq=0.25").unwrap();
    assert_eq!(v.window, WindowSpec::Refs(5_000));
    assert_eq!(v.victim, ClusterVictim::Priority);
    assert_eq!(v.clustered_cost, Some(Some(0.25)));
    let v = spec("fd-buffer:cost=clustered,group=64,count=eq3").unwrap();
    assert_eq!(v.group, GroupSpec::Pages(64));
    assert!(!v.io_count);
    assert!(!v.paid_moves, "moves are priced only in the counted cost");
    assert!(
        !spec("fd-buffer:cost=clustered,moves=free")
            .unwrap()
            .paid_moves
    );
    let v = spec("fd-buffer:cost=clustered,moves=paid").unwrap();
    assert!(
        v.paid_moves && !v.cusum_moves,
        "paid out of one window's saving"
    );
    let f = spec("fd-buffer:count=io,moves=cusum").unwrap();
    assert!(f.paid_moves && f.cusum_moves);
    let f = spec("fd-buffer").unwrap();
    assert_eq!(f.window, WindowSpec::Refs(5_000));
    assert_eq!(f.victim, ClusterVictim::Priority);
    assert_eq!(f.clustered_cost, None);
    assert_eq!(f.group, GroupSpec::Pages(64));
    assert!(!f.io_count, "the faithful policy keeps Eq. (3)");
    assert!(!f.paid_moves && !f.cusum_moves);
    assert!(!f.recent_span);
    assert_eq!(f.calibrate, Calibrate::None);
    // The counted cost and the groups rule are options of the faithful policy too.
    let f = spec("fd-buffer:count=io,groups=32").unwrap();
    assert!(f.io_count);
    assert_eq!(f.group, GroupSpec::PerStack(32));
}

#[test]
fn the_variants_group_size_follows_the_buffer() {
    // ceil(frames / 256): one page per group up to 256 frames (exact stacks), then the
    // stacks keep at most 256 groups.
    let rule = GroupSpec::PerStack(VARIANT_GROUPS);
    for (frames, pages) in [(1, 1), (182, 1), (256, 1), (257, 2), (829, 4), (3_800, 15)] {
        assert_eq!(rule.pages(frames), pages, "{frames} frames");
        assert!(frames.div_ceil(rule.pages(frames)) <= 256);
    }
    assert_eq!(
        GroupSpec::Pages(64).pages(182),
        64,
        "a fixed size ignores the buffer"
    );
    let facts = DeviceFacts {
        erase_block_bytes: Some(16 * 4096),
        read_us: 100.0,
        write_us: 10_000.0,
        seq_write_us: Some(500.0),
    };
    let at = |s: &str, frames: usize| {
        let c = PolicyContext {
            frames,
            ..ctx(&facts)
        };
        spec(s).unwrap().options(&c)
    };
    assert_eq!(at("fd-buffer:cost=clustered", 64).group_size, 1);
    assert_eq!(at("fd-buffer:cost=clustered", 3_800).group_size, 15);
    assert!(at("fd-buffer:cost=clustered", 64).io_count);
    assert_eq!(at("fd-buffer:cost=clustered,group=8", 3_800).group_size, 8);
    assert_eq!(at("fd-buffer", 3_800).group_size, 64);
    assert!(!at("fd-buffer", 64).io_count);
    assert!(at("fd-buffer:cost=clustered", 64).paid_moves);
    assert!(at("fd-buffer:cost=clustered", 64).recent_span);
    assert!(!at("fd-buffer", 64).recent_span);
    assert!(!at("fd-buffer", 64).paid_moves);
    assert_eq!(
        at("fd-buffer:cost=clustered", 64).calibrate,
        VARIANT_CALIBRATE
    );
    assert_eq!(
        at("fd-buffer:cost=clustered,calibrate=drained", 64).calibrate,
        Calibrate::Drained
    );
    assert_eq!(at("fd-buffer", 64).calibrate, Calibrate::None);
}

#[test]
fn contradictions_are_refused_with_a_reason() {
    for (s, why) in [
        (
            "fd-buffer:cost=clustered,clustering=off",
            "needs clustering",
        ),
        ("fd-buffer:seq=0.1", "seq needs cost=clustered"),
        ("fd-buffer:cost=clustered,seq=0", "must be positive"),
        ("fd-buffer:cost=fancy", "cost"),
        (
            "fd-buffer:cost=clustered,group=8,groups=4",
            "either group or groups",
        ),
        ("fd-buffer:count=exact", "count"),
        ("fd-buffer:moves=paid", "moves=paid needs count=io"),
        ("fd-buffer:moves=cusum", "moves=cusum needs count=io"),
        ("fd-buffer:span=recent", "span needs cost=clustered"),
        (
            "fd-buffer:calibrate=drained",
            "calibrate needs cost=clustered",
        ),
        ("fd-buffer:cost=clustered,calibrate=mean", "calibrate"),
        (
            "fd-buffer:cost=clustered,count=eq3,moves=paid",
            "needs count=io",
        ),
    ] {
        let e = spec(s).unwrap_err();
        assert!(e.contains(why), "{s}: {e}");
    }
    let e = FdBuffer::new(
        8,
        FdBufferOptions::default()
            .clustering(Clustering::Drain { cluster_pages: 4 })
            .clustered_cost(1.5),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("(0, 1]"), "{e}");
    let e = FdBuffer::new(
        8,
        FdBufferOptions::default()
            .clustering(Clustering::Drain { cluster_pages: 4 })
            .calibrate(Calibrate::Drained),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("clustered cost model"), "{e}");
}

/// The variant through the pool on a synthetic workload (writes in runs inside 16-page
/// clusters, reads scattered), with `calibrate` as given; its report.
fn calibrated_run(mode: Calibrate) -> PolicyReport {
    let frames = 128;
    let opts = FdBufferOptions::default()
        .window_refs(2_000)
        .group_size(1)
        .fixed_r(50.0)
        .clustering(Clustering::Drain { cluster_pages: 16 })
        .cluster_victim(ClusterVictim::OrderVictim)
        .clustered_cost(0.05)
        .io_count(true)
        .paid_moves(true)
        .recent_span(true)
        .calibrate(mode);
    let policy = FdBuffer::new(frames, opts).unwrap();
    let store =
        DirectStore::create(MemDevice::new(0), DirectStoreConfig::with_page_size(4096)).unwrap();
    let pool = BufferPool::new(store, frames, Box::new(policy)).unwrap();
    let mut x: u64 = 12_345;
    for _ in 0..40_000u64 {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let r = x >> 33;
        if r.is_multiple_of(3) {
            // A write: a random cluster of 64, a page among its first 4 + (r % 12).
            let cluster = (r / 3) % 64;
            let page = cluster * 16 + (r / 192) % (4 + r % 12);
            pool.write(PageId(page)).unwrap().write(0, b"w");
        } else {
            drop(pool.read(PageId(2_000 + r % 3_000)).unwrap());
        }
    }
    pool.policy_report_full()
}

#[test]
fn the_calibration_is_reported_and_applied_to_the_whole_curve() {
    let get = |r: &PolicyReport, k: &str| r.get(k).unwrap_or_else(|| panic!("{k}: {r:?}"));
    let cal = calibrated_run(Calibrate::Drained);
    let off = calibrated_run(Calibrate::None);
    for r in [&cal, &off] {
        let d = get(r, "mean_drained_pages");
        assert!((1.0..=16.0).contains(&d), "mean drained cluster {d}");
    }
    // Uncalibrated: factor 1, k as read off the writes.
    assert_eq!(get(&off, "k_calibration"), 1.0);
    assert_eq!(get(&off, "k_at_m_d"), get(&off, "k_model_at_m_d"));
    // Calibrated: the factor moved, and k at the M_d in force is the model's times it.
    let f = get(&cal, "k_calibration");
    assert!(f != 1.0 && (1.0 / 16.0..=16.0).contains(&f), "factor {f}");
    let expected = (get(&cal, "k_model_at_m_d") * f).clamp(1.0, 16.0);
    assert!((get(&cal, "k_at_m_d") - expected).abs() < 1e-9, "{cal:?}");
    let s = 0.05;
    let r_factor = s + (1.0 - s) / get(&cal, "k_at_m_d");
    assert!((get(&cal, "r_factor") - r_factor).abs() < 1e-9, "{cal:?}");
}

fn ctx(facts: &DeviceFacts) -> PolicyContext<'static> {
    PolicyContext {
        frames: 64,
        page_size: 4096,
        facts: *facts,
        seed: 1,
        trace: None,
    }
}

#[test]
fn the_ratio_comes_from_the_device_unless_given() {
    let facts = DeviceFacts {
        erase_block_bytes: Some(16 * 4096),
        read_us: 100.0,
        write_us: 10_000.0,
        seq_write_us: Some(500.0),
    };
    let o = spec("fd-buffer:cost=clustered")
        .unwrap()
        .options(&ctx(&facts));
    assert_eq!(o.clustered_cost, Some(0.05));
    assert_eq!(o.clustering, Clustering::Drain { cluster_pages: 16 });
    let o = spec("fd-buffer:cost=clustered,seq=0.5")
        .unwrap()
        .options(&ctx(&facts));
    assert_eq!(o.clustered_cost, Some(0.5));
    // Without a measured sequential cost the variant prices like Eq. (3) (s = 1).
    let flat = DeviceFacts {
        seq_write_us: None,
        ..facts
    };
    let o = spec("fd-buffer:cost=clustered")
        .unwrap()
        .options(&ctx(&flat));
    assert_eq!(o.clustered_cost, Some(1.0));
    assert!(registry::POLICIES.iter().any(|e| e.name == "fd-buffer"));
}
