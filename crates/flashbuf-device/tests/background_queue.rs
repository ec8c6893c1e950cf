//! The background queue (`Device::background`, `Device::join_background`): a simulated
//! device's handle shares bytes and counters, starts no earlier than the main clock,
//! overlaps foreground I/O on distinct channels, does not delay foreground requests
//! submitted earlier in virtual time, and is deterministic; wrappers wrap it (counting) or
//! have none (cost, fault, memory).

use flashbuf_device::fault::FaultDevice;
use flashbuf_device::sim::{DeviceModel, SimDevice, SimProfile, StreamId};
use flashbuf_device::{CostDevice, CountingDevice, Device, LatencyModel, MemDevice};
use std::sync::Arc;

const CAPACITY: u64 = 16 << 20;
const PAGE: u64 = 4096;

/// Page-mapped flash with `channels` channels and nothing but flash time (page `i` of a
/// fresh device lands on channel `i % channels`).
fn bare_flash(channels: u32) -> SimDevice {
    let mut p = SimProfile::by_name("nvme").expect("nvme");
    p.set_option("channels", &channels.to_string())
        .expect("channels");
    p.set_option("write-buffer", "0").expect("no write buffer");
    if let DeviceModel::Flash(f) = &mut p.model {
        (f.read_overhead_us, f.write_overhead_us, f.host_ns_per_byte) = (0.0, 0.0, 0.0);
    }
    SimDevice::new(p, CAPACITY, 1).expect("device")
}

fn clock(d: &SimDevice, s: StreamId) -> f64 {
    d.stream_clock_us(s).expect("clock")
}

#[test]
fn the_handle_shares_bytes_and_counters_and_one_stream() {
    let d = SimDevice::by_name("mtron", CAPACITY, 3).expect("mtron");
    let bg = d
        .background()
        .expect("a simulated device has a background queue");
    assert!(
        bg.background().is_none(),
        "the handle has no queue of its own"
    );
    let again = d.background().expect("second handle");
    bg.write_at(0, &[7u8; 8192]).expect("background write");
    let mut buf = [0u8; 8192];
    d.read_at(0, &mut buf).expect("main read");
    assert_eq!(buf, [7u8; 8192], "bytes are shared");
    again.sync().expect("background sync");
    let s = d.stats();
    assert_eq!((s.writes, s.reads, s.syncs), (1, 1, 1));
    assert_eq!(s.written_bytes, 8192);
    assert_eq!(bg.stats(), s, "same counters through either handle");
    let q = d.queue_info();
    assert_eq!(
        (q.streams, q.requests),
        (2, 3),
        "every handle shares one stream"
    );
    assert_eq!(d.background_stream(), d.background_stream());
    assert!(bg.describe().ends_with("(background)"));
    assert_eq!((bg.len(), bg.max_len()), (d.len(), d.max_len()));
}

#[test]
fn a_background_request_starts_no_earlier_than_the_main_clock() {
    let d = bare_flash(2);
    let bg = d.background().expect("queue");
    let b = d.background_stream();
    for i in 0..8 {
        d.write_at(i * PAGE, &[1u8; 4096]).expect("write");
    }
    let main = clock(&d, StreamId::MAIN);
    assert!(main > 0.0);
    // Opened at time zero and never used, it reads as the main clock: where its next
    // request starts.
    assert_eq!(clock(&d, b), main);
    bg.write_at(100 * PAGE, &[2u8; 4096])
        .expect("background write");
    let one_write = {
        let fresh = bare_flash(2);
        fresh.write_at(0, &[4u8; 4096]).expect("write");
        fresh.clock_us()
    };
    assert_eq!(
        clock(&d, b),
        main + one_write,
        "the background write started at the main clock {main} µs, not at its own 0"
    );
    assert_eq!(
        clock(&d, StreamId::MAIN),
        main,
        "the main clock did not move"
    );
}

/// `n` page writes alternating between the main queue (even pages) and the background
/// queue (odd pages); returns (makespan, main clock, background clock).
fn alternate(d: &SimDevice, n: u64) -> (f64, f64, f64) {
    let bg = d.background().expect("queue");
    for i in 0..n {
        let page = [(i % 200) as u8; 4096];
        if i % 2 == 0 {
            d.write_at(i * PAGE, &page).expect("write");
        } else {
            bg.write_at(i * PAGE, &page).expect("background write");
        }
    }
    let b = d.background_stream();
    (d.clock_us(), clock(d, StreamId::MAIN), clock(d, b))
}

#[test]
fn background_work_overlaps_on_distinct_channels_and_a_join_waits_for_it() {
    let serial = bare_flash(2);
    for i in 0..64u64 {
        serial
            .write_at(i * PAGE, &[(i % 200) as u8; 4096])
            .expect("write");
    }
    let serial_us = serial.clock_us();
    let d = bare_flash(2);
    let (makespan, main, bg) = alternate(&d, 64);
    assert_eq!(d.stats().host_programs, serial.stats().host_programs);
    assert!(
        makespan < 0.6 * serial_us,
        "two channels: overlapped {makespan} µs vs serial {serial_us} µs"
    );
    assert_eq!(
        makespan,
        d.stats().device_time_us,
        "device time is the makespan"
    );
    assert_eq!(makespan, main.max(bg));
    d.join_background().expect("join");
    assert_eq!(
        clock(&d, StreamId::MAIN),
        main.max(bg),
        "the main clock waits"
    );
    // One channel: nothing to overlap.
    let one = bare_flash(1);
    for i in 0..64u64 {
        one.write_at(i * PAGE, &[(i % 200) as u8; 4096])
            .expect("write");
    }
    let (makespan, _, _) = alternate(&bare_flash(1), 64);
    assert_eq!(makespan, one.clock_us(), "one channel serializes");
}

#[test]
fn a_background_burst_does_not_delay_earlier_foreground_requests() {
    let d = bare_flash(2);
    let bg = d.background().expect("queue");
    // The background queue books 32 pages on both channels, far ahead of the main clock.
    for i in 0..32u64 {
        bg.write_at(i * PAGE, &[3u8; 4096])
            .expect("background write");
    }
    let b = d.background_stream();
    let burst_end = clock(&d, b);
    // One foreground write submitted at time zero takes the first idle gap of its channel.
    d.write_at(1000 * PAGE, &[4u8; 4096]).expect("write");
    let one_write = {
        let fresh = bare_flash(2);
        fresh.write_at(0, &[4u8; 4096]).expect("write");
        fresh.clock_us()
    };
    let main = clock(&d, StreamId::MAIN);
    assert!(
        main <= 2.0 * one_write && main < burst_end / 4.0,
        "foreground write ended at {main} µs (one write alone {one_write} µs, burst ends \
         {burst_end} µs)"
    );
    // A foreground sync waits for what was submitted by its start, not for the burst.
    d.sync().expect("sync");
    assert!(clock(&d, StreamId::MAIN) < burst_end);
    // A background sync waits for everything its queue submitted.
    bg.sync().expect("background sync");
    assert!(clock(&d, b) >= burst_end);
}

#[test]
fn the_background_queue_is_deterministic() {
    let run = |seed: u64| {
        let d = SimDevice::by_name("mtron", CAPACITY, seed).expect("mtron");
        d.precondition();
        let bg = d.background().expect("queue");
        let mut x = seed;
        for i in 0..300u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let off = (x >> 33) % (CAPACITY / 8192) * 8192;
            if i % 3 == 0 {
                bg.write_at(off, &[1u8; 8192]).expect("background write");
            } else {
                d.write_at(off, &[2u8; 8192]).expect("write");
            }
            if i % 50 == 49 {
                bg.sync().expect("sync");
            }
        }
        d.check_invariants().expect("invariants");
        let b = d.background_stream();
        (
            d.stats(),
            clock(&d, StreamId::MAIN).to_bits(),
            clock(&d, b).to_bits(),
        )
    };
    assert_eq!(run(5), run(5));
    assert_ne!(run(5).0, run(6).0, "another seed, other numbers");
}

#[test]
fn counting_wraps_the_handle_and_cost_fault_memory_have_none() {
    let c = CountingDevice::new(SimDevice::by_name("mtron", CAPACITY, 1).expect("mtron"));
    let bg = c.background().expect("counting forwards a wrapped handle");
    c.write_at(0, &[1u8; 8192]).expect("write");
    bg.write_at(8192, &[1u8; 8192]).expect("background write");
    bg.sync().expect("sync");
    let n = c.counts();
    assert_eq!((n.writes, n.syncs, n.sequential_writes), (2, 1, 1));
    assert!(n.write_time_us > 0.0);
    assert_eq!(c.inner().stats().writes, 2);
    c.join_background().expect("join forwards");
    let arc = Arc::new(SimDevice::by_name("mtron", CAPACITY, 1).expect("mtron"));
    assert!(arc.background().is_some(), "Arc forwards");
    let boxed: Box<dyn Device> = Box::new(SimDevice::by_name("mtron", CAPACITY, 1).expect("m"));
    assert!(boxed.background().is_some(), "Box forwards");
    let model = LatencyModel {
        latency_read_us: 10.0,
        latency_write_us: 100.0,
        latency_sync_us: 0.0,
    };
    let cost = CostDevice::new(SimDevice::by_name("mtron", CAPACITY, 1).expect("m"), model);
    assert!(
        cost.background().is_none(),
        "a cost model's one clock has no second queue"
    );
    assert!(FaultDevice::new(4096).background().is_none());
    assert!(MemDevice::new(4096).background().is_none());
    MemDevice::new(4096).join_background().expect("a no-op");
}
