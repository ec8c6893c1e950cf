#![allow(clippy::unwrap_used)]
//! Crashes with background cleaning on a background queue. The fault device has no
//! background queue of its own (everything must pass through the one device it orders and
//! crashes), so the background passes of the other crash suites run on the main handle.
//! Here a wrapper gives it one whose handle forwards every request to the same fault
//! device: the requests keep their submission order and there is no clock (joins wait for
//! nothing), so what is tested is the store's bookkeeping on the background lane — the
//! durable horizon a background sync reaches held back until a join, the segments a
//! background checkpoint frees, the copies' stamps — against crash images taken after
//! every caller operation, in every crash mode, with and without torn writes: every page
//! comes back as its last synced version or a later write, never corrupt.

use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_device::fault::{CrashMode, FaultDevice, Tear};
use flashbuf_device::{forward_device, Device};
use flashbuf_store::log_store::{CleanerKind, LogStore, LogStoreConfig, TimeBase};
use flashbuf_store::{PageStore, ReadOutcome, Superblock};
use flashbuf_testkit::content::{filled_page, matches_fill};
use std::sync::Arc;

const PS: usize = 512;
const SEED: u64 = 0xbc;

/// A fault device with a background queue that is the device itself.
struct Queued {
    inner: Arc<FaultDevice>,
    handle: bool,
}

impl Device for Queued {
    fn background(&self) -> Option<Box<dyn Device>> {
        let h = Queued {
            inner: Arc::clone(&self.inner),
            handle: true,
        };
        (!self.handle).then(|| Box::new(h) as Box<dyn Device>)
    }
    forward_device!(inner => read_at, write_at, write_batch, read_head, write_head,
                    write_heads, sync, len, set_len, max_len, stats, alignment, describe);
}

/// 20 segments of 4 blocks (3 data blocks and the summary), 40 page ids; the daemon wakes
/// every 3 caller writes and runs below 4 clean segments, so passes checkpoint for room.
fn tiny(kind: CleanerKind) -> LogStoreConfig {
    let mut cfg = LogStoreConfig::with_page_size(PS);
    let blocks = 16 + 20 * 4;
    cfg.capacity_bytes = Some(Superblock::reserved_bytes(PS) + blocks * PS as u64);
    (cfg.segment_bytes, cfg.align_bytes) = (4 * PS as u64, PS as u64);
    (cfg.logical_pages, cfg.checkpoint_segments) = (Some(40), Some(3));
    (cfg.time_base, cfg.salt) = (TimeBase::Writes, Some(0xbacc));
    let c = &mut cfg.cleaner;
    (c.kind, c.segments_per_clean) = (kind, 1);
    (c.cleaning_interval_ticks, c.protection_period_ticks) = (3.0, 1.0);
    (c.min_free_segments, c.max_free_segments) = (Some(4), Some(6));
    cfg
}

/// Per page: the tag of its last synced write (0: none) and the tags written since.
#[derive(Default, Clone)]
struct Model {
    synced: u64,
    since: Vec<u64>,
}

fn modes(i: u64) -> [CrashMode; 4] {
    let tear = Some(Tear {
        sector_bytes: 128,
        garbage: i.is_multiple_of(2),
    });
    [
        CrashMode::LoseUnsynced,
        CrashMode::KeepAll,
        CrashMode::Random { seed: i, tear },
        CrashMode::Prefix {
            writes: (i % 5) as usize,
            tear,
        },
    ]
}

/// Recovers `image` and checks every page against `model`.
fn check(image: Vec<u8>, kind: CleanerKind, model: &[Model], at: &str) {
    let store = LogStore::open(FaultDevice::from_image(image), tiny(kind)).unwrap();
    store.check_invariants().unwrap();
    let mut buf = vec![0u8; PS];
    for (pid, m) in model.iter().enumerate() {
        let got = store.read_page(PageId(pid as u64), &mut buf);
        let ok = match got {
            Ok(ReadOutcome::Found) => std::iter::once(m.synced)
                .chain(m.since.iter().copied())
                .any(|t| t > 0 && matches_fill(&buf[32..], PageId(pid as u64), t, SEED)),
            Ok(ReadOutcome::Unwritten) => m.synced == 0,
            Err(_) => false,
        };
        assert!(ok, "{at}: page {pid} synced at {}: {got:?}", m.synced);
    }
}

#[test]
fn crash_images_of_background_passes_on_a_queue_keep_synced_pages() {
    for kind in [CleanerKind::Greedy, CleanerKind::SepBit] {
        let fault = Arc::new(FaultDevice::new(0));
        let dev = Queued {
            inner: Arc::clone(&fault),
            handle: false,
        };
        let store = LogStore::create(dev, tiny(kind)).unwrap();
        assert!(store.cleans_on_background_queue());
        let pages = 24u64;
        let mut model = vec![Model::default(); pages as usize];
        let mut rng = SplitMix64::new(7);
        for i in 0..1_000u64 {
            let pid = if i < pages { i } else { rng.below(pages) };
            let p = filled_page(PS, PageId(pid), i + 1, SEED);
            store
                .write_page(PageId(pid), &p, &DirtyRanges::full(PS))
                .unwrap();
            model[pid as usize].since.push(i + 1);
            if rng.below(9) == 0 {
                store.sync().unwrap();
                for m in &mut model {
                    if let Some(&t) = m.since.last() {
                        m.synced = t;
                    }
                    m.since.clear();
                }
            }
            for mode in modes(i) {
                let at = format!("{} op {i} {mode:?}", kind.name());
                check(fault.crash_image(mode), kind, &model, &at);
            }
        }
        let s = store.log_stats();
        assert!(
            s.background_segments > 50 && s.checkpoints > 20,
            "{}: {s:?}",
            kind.name()
        );
    }
}
