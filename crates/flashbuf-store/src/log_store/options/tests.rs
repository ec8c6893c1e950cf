//! Tests of the log-structured store's options and their resolution.

use super::*;
use crate::registry::parse_text;
use flashbuf_device::MemDevice;

fn opts(text: &str) -> LogStoreOptions {
    let spec = flashbuf_core::config::Spec::parse(text, |_| false).unwrap();
    LogStoreOptions::from_options(&Options::validate(&spec, OPTIONS).unwrap()).unwrap()
}

#[test]
fn segments_give_exactly_that_many_segments_at_every_page_size() {
    for ps in [512usize, 4096, 8192] {
        let o = opts("log-structured:segment_pages=8,segments=40,align_pages=1,pages=256");
        let cfg = o
            .config(&MemDevice::new(0), &StoreContext::new(ps))
            .unwrap();
        let l = cfg.layout_for(cfg.capacity_bytes.unwrap()).unwrap();
        assert_eq!((l.segments, l.logical_pages), (40, 256), "{ps}");
        assert_eq!(cfg.time_base, TimeBase::Writes, "memory has no clock");
    }
}

#[test]
fn the_space_follows_the_data_and_fill_on_a_growable_device() {
    let o = opts("log-structured:segment=1MiB,fill=0.5");
    let ctx = StoreContext {
        data_pages: 10_000,
        ..StoreContext::new(4096)
    };
    let cfg = o.config(&MemDevice::new(0), &ctx).unwrap();
    let l = cfg.layout_for(cfg.capacity_bytes.unwrap()).unwrap();
    let data_blocks = u64::from(l.segments - 3) * u64::from(cfg.data_blocks_per_segment());
    assert_eq!(l.logical_pages, 10_000);
    assert!((data_blocks as f64 / 10_000.0 - 2.0).abs() < 0.02, "{l:?}");
    let e = o
        .config(&MemDevice::new(0), &StoreContext::new(4096))
        .unwrap_err();
    assert!(e.to_string().contains("size= or segments="), "{e}");
}

#[test]
fn contradictions_and_bad_values_are_refused() {
    let e = parse_text("log-structured:segment=1MiB,segment_pages=8")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not both"), "{e}");
    let e = parse_text("log-structured:cleaner=lfu")
        .unwrap_err()
        .to_string();
    assert!(e.contains("greedy, cost-benefit, oldest, sepbit"), "{e}");
    let p = parse_text("log-structured:segment=5000").unwrap();
    assert!(p.factory.check(4096).is_err());
    let p = parse_text("log-structured:segment_pages=8,segments=2").unwrap();
    let e = p.factory.check(4096).unwrap_err().to_string();
    assert!(e.contains("needs at least"), "{e}");
}

#[test]
fn cleaner_queue_defaults_to_background_and_main_is_taken() {
    let ctx = StoreContext::new(4096);
    let cfg = |text: &str| {
        opts(text)
            .config(&MemDevice::new(0), &ctx)
            .unwrap()
            .cleaner
            .queue
    };
    assert_eq!(
        cfg("log-structured:segments=40,pages=256"),
        CleanerQueue::Background
    );
    assert_eq!(
        cfg("log-structured:segments=40,pages=256,cleaner_queue=main"),
        CleanerQueue::Main
    );
    let e = parse_text("log-structured:cleaner_queue=idle")
        .unwrap_err()
        .to_string();
    assert!(e.contains("background, main"), "{e}");
}
