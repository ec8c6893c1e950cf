//! The simulated device as a `Device`: bytes, errors, sizes, batches, threads, determinism.

use flashbuf_device::sim::{sim_profile_names, SimDevice, SimProfile};
use flashbuf_device::{Device, DeviceError, WriteOp};
use std::sync::Arc;

#[test]
fn every_profile_returns_what_was_written_and_keeps_invariants() {
    for name in sim_profile_names() {
        let d = SimDevice::by_name(name, 8 << 20, 3).expect(name);
        assert_eq!(d.len(), 8 << 20);
        assert_eq!(d.describe(), format!("sim:{name}"));
        let mut x = 99u64;
        let mut model = vec![0u8; 8 << 20];
        for i in 0..600u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = 1 + (x >> 40) as usize % 20000;
            let off = (x >> 20) % ((8 << 20) - len as u64);
            let byte = (i % 251) as u8;
            let buf = vec![byte; len];
            d.write_at(off, &buf).expect("write");
            model[off as usize..off as usize + len].fill(byte);
        }
        let mut got = vec![0u8; 8 << 20];
        d.read_at(0, &mut got).expect("read");
        assert!(got == model, "{name}: bytes differ");
        d.check_invariants().expect(name);
        let s = d.stats();
        assert_eq!(s.writes, 600);
        assert!(s.device_time_us > 0.0, "{name}");
        if *name != "hdd" {
            assert!(
                s.host_programs >= 600 && s.flash_programs >= s.host_programs,
                "{name} {s:?}"
            );
            assert!(s.write_amplification() >= 1.0);
        } else {
            assert_eq!((s.erases, s.flash_programs), (0, 0));
        }
    }
}

#[test]
fn unknown_profile_lists_valid_names() {
    let e = SimProfile::by_name("floppy").expect_err("unknown");
    let msg = e.to_string();
    for n in sim_profile_names() {
        assert!(msg.contains(n), "{msg}");
    }
    let mut p = SimProfile::by_name("mtron").expect("mtron");
    let e = p.set_option("colour", "red").expect_err("unknown key");
    assert!(e.to_string().contains("channels"), "{e}");
    p.set_option("channels", "4").expect("channels");
    p.set_option("log-blocks", "8").expect("log blocks");
    let d = SimDevice::new(p, 4 << 20, 1).expect("device");
    assert_eq!(d.info().geometry.map(|g| g.channels), Some(4));
}

#[test]
fn ranges_and_set_len_within_capacity() {
    let d = SimDevice::by_name("nipu-ssd", 1 << 20, 1).expect("device");
    let mut b = [0u8; 16];
    assert!(matches!(
        d.read_at((1 << 20) - 8, &mut b),
        Err(DeviceError::OutOfRange { .. })
    ));
    assert!(d.write_at(1 << 20, &b).is_err());
    assert!(d.set_len(2 << 20).is_err());
    d.write_at(4096, &[5u8; 4096]).expect("write");
    d.set_len(4096).expect("shrink");
    assert!(d.read_at(4096, &mut b).is_err());
    d.set_len(1 << 20).expect("regrow");
    d.read_at(4096, &mut b).expect("read");
    assert_eq!(b, [0u8; 16], "bytes beyond a shrink read as zero");
    assert!(SimDevice::by_name("nvme", 0, 1).is_err());
}

#[test]
fn partial_page_writes_read_modify_write() {
    let d = SimDevice::by_name("nipu-ssd", 1 << 20, 1).expect("device");
    d.write_at(0, &[1u8; 4096]).expect("full page");
    let before = d.stats();
    d.write_at(100, &[2u8; 10]).expect("partial");
    let s = d.stats() - before;
    assert_eq!(
        (s.flash_reads, s.host_programs),
        (1, 1),
        "old page read, then programmed"
    );
    let mut b = [0u8; 4096];
    d.read_at(0, &mut b).expect("read");
    assert_eq!((b[99], b[100], b[109], b[110]), (1, 2, 2, 1));
}

#[test]
fn batches_are_atomic_on_range_errors_and_count_per_op() {
    let d = SimDevice::by_name("flash-25", 1 << 20, 1).expect("device");
    let r = d.write_batch(&[
        WriteOp {
            offset: 0,
            data: &[1; 4096],
        },
        WriteOp {
            offset: 1 << 20,
            data: &[1; 4096],
        },
    ]);
    assert!(r.is_err());
    assert_eq!(d.stats().writes, 0);
    d.write_batch(&[
        WriteOp {
            offset: 0,
            data: &[1; 4096],
        },
        WriteOp {
            offset: 8192,
            data: &[2; 4096],
        },
    ])
    .expect("batch");
    assert_eq!(d.stats().writes, 2);
}

#[test]
fn sync_drains_the_write_buffer() {
    let d = SimDevice::by_name("nipu-ssd", 4 << 20, 1).expect("device");
    for i in 0..16u64 {
        d.write_at(i * 4096, &[1; 4096]).expect("write");
    }
    let t = d.clock_us();
    d.sync().expect("sync");
    assert!(d.clock_us() > t, "buffered programs finish at sync");
    assert_eq!(d.stats().syncs, 1);
}

#[test]
fn threads_share_one_device() {
    let d = Arc::new(SimDevice::by_name("nvme", 16 << 20, 1).expect("device"));
    let hs: Vec<_> = (0..4u64)
        .map(|t| {
            let d = Arc::clone(&d);
            std::thread::spawn(move || {
                for i in 0..200u64 {
                    let off = ((t * 1000 + i) % 4000) * 4096;
                    d.write_at(off, &[t as u8 + 1; 4096]).expect("write");
                }
            })
        })
        .collect();
    for h in hs {
        h.join().expect("thread");
    }
    assert_eq!(d.stats().writes, 800);
    d.check_invariants().expect("invariants");
}

/// A fixed workload's full set of numbers.
fn fingerprint(name: &str, seed: u64) -> String {
    let d = SimDevice::by_name(name, 16 << 20, seed).expect("device");
    let mut x = seed ^ 0x5eed;
    let mut b = vec![0u8; 32768];
    for i in 0..1500u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let len = 4096 * (1 + (x >> 60) as usize % 8);
        let off = ((x >> 24) % ((16 << 20) / 4096 - 8)) * 4096;
        if i.is_multiple_of(3) {
            d.read_at(off, &mut b[..len]).expect("read");
        } else {
            d.write_at(off, &b[..len]).expect("write");
        }
        if i.is_multiple_of(500) {
            d.sync().expect("sync");
        }
    }
    format!("{:?} {:?} {:?}", d.stats(), d.ftl_stats(), d.wear())
}

#[test]
fn same_seed_same_numbers_for_every_profile() {
    for name in sim_profile_names() {
        let a = fingerprint(name, 7);
        assert_eq!(a, fingerprint(name, 7), "{name}");
        assert!(a.contains("device_time_us"), "{a}");
    }
}

#[test]
fn precondition_maps_everything_without_cost() {
    // nipu-ssd: 16 log blocks, 32 logical blocks of 256 KB in 8 MB.
    let d = SimDevice::by_name("nipu-ssd", 8 << 20, 1).expect("device");
    d.precondition();
    let s = d.stats();
    assert_eq!((s.writes, s.flash_programs, s.device_time_us), (0, 0, 0.0));
    d.check_invariants().expect("invariants");
    // Every page is now mapped: a random overwrite goes to a log block and later merges.
    for i in 0..64u64 {
        d.write_at((i * 37 % 2048) * 4096, &[3; 4096])
            .expect("write");
    }
    assert!(d.ftl_stats().map_or(0, |f| f.full_merges) > 0);
}

/// Shrinking zeroes only what was ever written (so an untouched image stays unbacked);
/// checked against a plain byte model over seeded write/shrink/grow sequences.
#[test]
fn shrink_and_regrow_match_a_byte_model() {
    let cap = 256 * 1024usize;
    let d = SimDevice::by_name("nipu-ssd", cap as u64, 1).expect("device");
    let mut model = vec![0u8; cap];
    let mut len = cap;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |m: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m as u64) as usize
    };
    for step in 0..400 {
        match next(3) {
            0 if len >= 4096 => {
                let at = next(len / 4096) * 4096;
                let fill = (step % 250) as u8 + 1;
                d.write_at(at as u64, &[fill; 4096]).expect("write");
                model[at..at + 4096].fill(fill);
            }
            1 => {
                let new = next(cap / 4096 + 1) * 4096;
                d.set_len(new as u64).expect("set_len");
                if new < len {
                    model[new..len].fill(0);
                }
                len = new;
            }
            _ => {
                d.set_len(cap as u64).expect("regrow");
                len = cap;
                let mut all = vec![0u8; cap];
                d.read_at(0, &mut all).expect("read");
                assert!(all == model, "device and model differ after step {step}");
            }
        }
    }
}
