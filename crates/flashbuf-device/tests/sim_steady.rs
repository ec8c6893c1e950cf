//! Preconditioning of simulated devices (issue 16, item 1): the steady state is steady, the
//! cached state equals the slow way on later workloads, `precondition=fresh` keeps the
//! fresh device, and every profile's FTL stays consistent.

use flashbuf_core::config::Spec;
use flashbuf_core::rng::SplitMix64;
use flashbuf_device::registry::{parse_sim, takes_arg, DeviceContext};
use flashbuf_device::sim::steady::{is_steady, window_pages, STEADY_EXCURSION};
use flashbuf_device::sim::{DeviceModel, Precondition, SimDevice, SimProfile};
use flashbuf_device::{sim_profile_names, Device};

/// Small enough for debug builds, large enough for several blocks per channel.
const CAPACITY_BYTES: u64 = 32 << 20;
const PAGE_BYTES: u64 = 4096;

fn flash_profiles() -> Vec<&'static str> {
    sim_profile_names()
        .iter()
        .copied()
        .filter(|n| SimProfile::by_name(n).is_ok_and(|p| matches!(p.model, DeviceModel::Flash(_))))
        .collect()
}

/// `writes` random whole-page writes (every third request a read) over the device.
fn random_workload(d: &SimDevice, requests: u64, seed: u64) {
    let pages = d.capacity() / PAGE_BYTES;
    let mut rng = SplitMix64::new(seed);
    let page = [5u8; PAGE_BYTES as usize];
    let mut buf = [0u8; PAGE_BYTES as usize];
    for i in 0..requests {
        let off = rng.below(pages) * PAGE_BYTES;
        if i % 3 == 2 {
            d.read_at(off, &mut buf).expect("read");
        } else {
            d.write_at(off, &page).expect("write");
        }
    }
}

#[test]
fn steady_state_is_steady_and_consistent_for_every_profile() {
    for name in flash_profiles() {
        let d = SimDevice::by_name(name, CAPACITY_BYTES, 3).expect("device");
        let report = d
            .precondition_uncached(Precondition::Steady)
            .expect("a flash device reports");
        assert!(report.steady, "{name}: {report:?}");
        assert!(is_steady(&report.round_wa), "{name}");
        assert_eq!(report.fill_pages, CAPACITY_BYTES / PAGE_BYTES, "{name}");
        assert!(report.random_pages > 0, "{name}");
        d.check_invariants()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let s = d.stats();
        assert_eq!((s.writes, s.flash_programs, s.device_time_us), (0, 0, 0.0));
        // A further round of random page writes amplifies as the last rounds did.
        let steady_wa = report.steady_wa().expect("rounds");
        let pages = d.capacity() / PAGE_BYTES;
        let mut rng = SplitMix64::new(99);
        let page = [1u8; PAGE_BYTES as usize];
        for _ in 0..window_pages(pages as u32) {
            d.write_at(rng.below(pages) * PAGE_BYTES, &page)
                .expect("write");
        }
        let wa = d.ftl_stats().expect("flash").write_amplification();
        assert!(
            (wa - steady_wa).abs() <= STEADY_EXCURSION * steady_wa,
            "{name}: WA {wa} after preconditioning, {steady_wa} at steady state"
        );
        d.check_invariants()
            .unwrap_or_else(|e| panic!("{name} after the window: {e}"));
    }
}

#[test]
fn the_cached_state_equals_the_slow_way() {
    for name in flash_profiles() {
        let slow = SimDevice::by_name(name, CAPACITY_BYTES, 4).expect("device");
        let first = SimDevice::by_name(name, CAPACITY_BYTES, 4).expect("device");
        let cloned = SimDevice::by_name(name, CAPACITY_BYTES, 4).expect("device");
        let r_slow = slow.precondition_uncached(Precondition::Steady);
        let r_first = first.precondition_as(Precondition::Steady);
        let r_cloned = cloned.precondition_as(Precondition::Steady);
        assert_eq!(r_slow, r_first, "{name}");
        assert_eq!(r_slow, r_cloned, "{name}");
        for d in [&slow, &first, &cloned] {
            d.check_invariants()
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            random_workload(d, 3000, 8);
        }
        for d in [&first, &cloned] {
            assert_eq!(slow.stats(), d.stats(), "{name}");
            assert_eq!(slow.ftl_stats(), d.ftl_stats(), "{name}");
            assert_eq!(slow.wear(), d.wear(), "{name}");
        }
        assert!(slow.stats().device_time_us > 0.0, "{name}");
    }
}

fn build(text: &str) -> SimDevice {
    let spec = Spec::parse(text, takes_arg).expect("spec");
    let ctx = DeviceContext {
        capacity_hint_bytes: 16 << 20,
        page_size: 4096,
        seed: 6,
    };
    parse_sim(&spec)
        .expect("config")
        .build_sim(&ctx)
        .expect("device")
}

#[test]
fn precondition_option_words_and_default() {
    let report = |t: &str| build(t).precondition_report().map(|r| r.mode);
    assert_eq!(report("sim:mtron"), Some(Precondition::Steady));
    assert_eq!(
        report("sim:mtron:precondition=steady"),
        Some(Precondition::Steady)
    );
    assert_eq!(
        report("sim:mtron:precondition=true"),
        Some(Precondition::Steady)
    );
    assert_eq!(
        report("sim:mtron:precondition=sequential"),
        Some(Precondition::Sequential)
    );
    assert_eq!(report("sim:mtron:precondition=fresh"), None);
    assert_eq!(report("sim:mtron:precondition=false"), None);
    assert_eq!(report("sim:hdd"), None, "the disk has nothing to age");
    let e = parse_sim(&Spec::parse("sim:mtron:precondition=aged", takes_arg).expect("spec"))
        .expect_err("unknown word");
    assert!(e.to_string().contains("steady"), "{e}");
}

#[test]
fn fresh_keeps_the_fresh_device() {
    for name in flash_profiles() {
        let fresh = build(&format!("sim:{name}:precondition=fresh"));
        let alias = build(&format!("sim:{name}:precondition=false"));
        let plain = SimDevice::by_name(name, fresh.capacity(), 6).expect("device");
        let steady = build(&format!("sim:{name}"));
        for d in [&fresh, &alias, &plain, &steady] {
            random_workload(d, 600, 2);
        }
        assert_eq!(fresh.stats(), plain.stats(), "{name}");
        assert_eq!(alias.stats(), plain.stats(), "{name}");
        assert_eq!(fresh.wear(), plain.wear(), "{name}");
        assert!(
            steady.stats().device_time_us > fresh.stats().device_time_us,
            "{name}: a steady device costs more than a fresh one"
        );
    }
}

#[test]
fn sequential_writes_every_page_once() {
    for name in flash_profiles() {
        let d = SimDevice::by_name(name, CAPACITY_BYTES, 1).expect("device");
        let r = d.precondition_as(Precondition::Sequential).expect("flash");
        assert_eq!((r.fill_pages, r.random_pages), (CAPACITY_BYTES / 4096, 0));
        assert!(!r.steady && r.round_wa.is_empty(), "{name}");
        d.check_invariants()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn is_steady_reads_the_snia_window() {
    assert!(!is_steady(&[2.0, 2.0, 2.0, 2.0]), "fewer than five rounds");
    assert!(is_steady(&[9.0, 2.0, 2.1, 1.9, 2.0, 2.05]));
    // Excursion 0.5 on an average of 2.0: 25% > 20%.
    assert!(!is_steady(&[1.8, 2.3, 1.9, 2.0, 2.0]));
    // A steady climb: excursion 16% but the fitted line rises 16% > 10%.
    assert!(!is_steady(&[1.84, 1.92, 2.0, 2.08, 2.16]));
}

/// The cost of preconditioning at 1 GiB, slow and cached, and the steady write
/// amplification, per profile (a measurement, not a check: run with
/// `cargo test -p flashbuf-device --test sim_steady -- --ignored --nocapture`).
#[test]
#[ignore = "measurement (a few seconds per profile)"]
fn measure_preconditioning_at_one_gib() {
    const GIB: u64 = 1 << 30;
    println!("profile | rounds | random pages | steady WA | slow s | first cached s | cached s");
    for name in flash_profiles() {
        let timed = |cached: bool| {
            let d = SimDevice::by_name(name, GIB, 1).expect("device");
            let t = std::time::Instant::now();
            let r = if cached {
                d.precondition_as(Precondition::Steady)
            } else {
                d.precondition_uncached(Precondition::Steady)
            };
            (t.elapsed().as_secs_f64(), r.expect("flash"))
        };
        let (slow_s, r) = timed(false);
        let (first_s, _) = timed(true);
        let (cached_s, rc) = timed(true);
        assert_eq!(r, rc, "{name}");
        // Two more capacities of random page writes: the WA they see.
        let d = SimDevice::by_name(name, GIB, 1).expect("device");
        d.precondition_as(Precondition::Steady);
        let pages = GIB / PAGE_BYTES;
        let mut rng = SplitMix64::new(5);
        let page = [2u8; PAGE_BYTES as usize];
        for _ in 0..2 * pages {
            d.write_at(rng.below(pages) * PAGE_BYTES, &page)
                .expect("write");
        }
        let later_wa = d.ftl_stats().expect("flash").write_amplification();
        println!(
            "{name} | {} | {} | {:.2} | {slow_s:.2} | {first_s:.2} | {cached_s:.4} | \
             steady={} | WA over 2 more capacities {later_wa:.2} | rounds {:.2?}",
            r.round_wa.len(),
            r.random_pages,
            r.steady_wa().unwrap_or(f64::NAN),
            r.steady,
            r.round_wa
        );
    }
}

#[test]
fn an_evicted_state_is_computed_again_equal() {
    use flashbuf_device::sim::steady::CACHE_ENTRIES;
    let make = |seed: u64| SimDevice::by_name("nvme", 8 << 20, 100 + seed).expect("device");
    let first = make(0);
    let r0 = first.precondition_as(Precondition::Steady);
    for seed in 1..=CACHE_ENTRIES as u64 + 1 {
        make(seed).precondition_as(Precondition::Steady);
    }
    let again = make(0);
    let slow = make(0);
    assert_eq!(again.precondition_as(Precondition::Steady), r0);
    assert_eq!(slow.precondition_uncached(Precondition::Steady), r0);
    for d in [&first, &again, &slow] {
        random_workload(d, 2000, 3);
    }
    assert_eq!(first.ftl_stats(), slow.ftl_stats());
    assert_eq!(again.ftl_stats(), slow.ftl_stats());
    assert_eq!(again.stats(), slow.stats());
}
