//! StableBuffer's proactive flushes on the device's background queue (`flusher=queue`):
//! inline and deterministic, counted by the device, overlapping the foreground on the
//! simulated clock, and never letting a foreground write into a slot (or a read of a
//! home copy) overtake the background flush that freed it.

use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{page, DirtyRanges, PageId};
use flashbuf_device::fault::FaultDevice;
use flashbuf_device::sim::{SimDevice, StreamId};
use flashbuf_device::{Device, DeviceStats};
use flashbuf_store::stable_buffer::{
    FlushMode, Flusher, Recognition, StableBufferConfig, StableBufferStats, StableBufferStore,
};
use flashbuf_store::{PageStore, ReadOutcome};
use std::collections::HashMap;
use std::sync::Arc;

const PS: usize = 4096;
const CAPACITY: u64 = 64 << 20;
const PAGES: u64 = 4096;

fn cfg(flush: FlushMode, flusher: Flusher) -> StableBufferConfig {
    StableBufferConfig {
        staging_bytes: 256 * PS as u64,
        recognition: Recognition::Incremental,
        flush,
        flusher,
        salt: Some(11),
        ..StableBufferConfig::with_page_size(PS)
    }
}

fn sim(seed: u64) -> Arc<SimDevice> {
    let d = SimDevice::by_name("mtron", CAPACITY, seed).expect("mtron");
    d.precondition();
    Arc::new(d)
}

/// Runs of consecutive pages in random areas, each run shuffled a little, with rereads;
/// checks every read against the last version written.
fn workload(store: &dyn PageStore, seed: u64, writes: u64) {
    let mut rng = SplitMix64::new(seed);
    let mut versions: HashMap<u64, u64> = HashMap::new();
    let mut p = vec![0u8; PS];
    let mut n = 0;
    while n < writes {
        let base = rng.below(PAGES / 64) * 64;
        let run = 16 + rng.below(48);
        for k in 0..run {
            let pid = base + (k ^ rng.below(2));
            let v = versions.entry(pid).or_insert(0);
            *v += 1;
            p[100] = (pid % 251) as u8;
            p[101] = (*v % 251) as u8;
            page::seal(&mut p, PageId(pid), *v);
            store
                .write_page(PageId(pid), &p, &DirtyRanges::full(PS))
                .expect("write");
            n += 1;
        }
        if rng.below(4) == 0 {
            let pid = base + rng.below(run);
            let mut q = vec![0u8; PS];
            let found = store.read_page(PageId(pid), &mut q).expect("read");
            if let Some(&v) = versions.get(&pid) {
                assert_eq!(found, ReadOutcome::Found);
                assert_eq!((q[100], q[101]), ((pid % 251) as u8, (v % 251) as u8));
            }
        }
    }
    store.sync().expect("sync");
}

/// One proactive run on a fresh simulated device: the store's counters, the device's,
/// and the two clocks.
fn run(dev: Arc<SimDevice>, seed: u64) -> (StableBufferStats, DeviceStats, u64, f64, f64) {
    let store =
        StableBufferStore::create(Arc::clone(&dev), cfg(FlushMode::Proactive, Flusher::Queue))
            .expect("create");
    assert!(store.flushes_on_background_queue());
    workload(&store, seed, 3000);
    store.check_invariants().expect("invariants");
    dev.check_invariants().expect("device invariants");
    let joins = store.background_joins();
    let sb = store.sb_stats();
    let bg = dev.background_stream();
    let clocks = (
        dev.stream_clock_us(StreamId::MAIN).expect("main"),
        dev.stream_clock_us(bg).expect("background"),
    );
    (sb, dev.stats(), joins, clocks.0, clocks.1)
}

#[test]
fn proactive_flushes_run_inline_on_the_background_queue_deterministically() {
    let (sb, stats, joins, main, bg) = run(sim(3), 7);
    assert!(sb.proactive_flushes > 0, "{sb:?}");
    assert!(joins > 0, "slots freed by background flushes were reused");
    assert!(bg > 0.0 && main > 0.0);
    let again = run(sim(3), 7);
    assert_eq!(
        (sb, stats, joins),
        (again.0, again.1, again.2),
        "same seed, same figures"
    );
    assert_eq!(
        (main.to_bits(), bg.to_bits()),
        (again.3.to_bits(), again.4.to_bits())
    );
    assert_ne!(run(sim(3), 8).1, stats, "another workload, other figures");
}

/// A device whose "background queue" is itself: the same requests in the same order,
/// served serially on the main clock.
struct SerialBackground {
    inner: Arc<SimDevice>,
}

impl Device for SerialBackground {
    fn background(&self) -> Option<Box<dyn Device>> {
        Some(Box::new(Arc::clone(&self.inner)))
    }
    flashbuf_device::forward_device!(inner => read_at, write_at, write_batch, read_head,
        write_head, write_heads, sync, len, set_len, max_len, stats, alignment, describe);
}

#[test]
fn the_background_queue_overlaps_flushes_with_the_foreground() {
    let dev = sim(3);
    let (sb, stats, _, _, _) = run(Arc::clone(&dev), 7);
    let serial_dev = sim(3);
    let store = StableBufferStore::create(
        SerialBackground {
            inner: Arc::clone(&serial_dev),
        },
        cfg(FlushMode::Proactive, Flusher::Queue),
    )
    .expect("create");
    workload(&store, 7, 3000);
    let serial = serial_dev.stats();
    assert_eq!(store.sb_stats(), sb, "the same decisions");
    assert_eq!(
        (
            serial.reads,
            serial.writes,
            serial.syncs,
            serial.host_programs
        ),
        (stats.reads, stats.writes, stats.syncs, stats.host_programs),
        "the same requests"
    );
    assert!(
        stats.device_time_us < 0.95 * serial.device_time_us,
        "overlapped {} µs vs serial {} µs",
        stats.device_time_us,
        serial.device_time_us
    );
}

#[test]
fn passive_stores_and_devices_without_a_queue_keep_the_old_path() {
    let dev = sim(3);
    let store =
        StableBufferStore::create(Arc::clone(&dev), cfg(FlushMode::Passive, Flusher::Queue))
            .expect("create");
    workload(&store, 7, 1500);
    assert!(!store.flushes_on_background_queue());
    assert_eq!(
        dev.queue_info().streams,
        1,
        "a passive store opens no stream"
    );
    let thread = StableBufferStore::create(sim(3), cfg(FlushMode::Proactive, Flusher::Thread))
        .expect("create");
    assert!(!thread.flushes_on_background_queue());
    let fault = StableBufferStore::create(
        FaultDevice::new(0),
        cfg(FlushMode::Proactive, Flusher::Queue),
    )
    .expect("create");
    assert!(!fault.flushes_on_background_queue(), "no queue: the thread");
    workload(&fault, 7, 600);
    assert_eq!(fault.background_joins(), 0);
}
