//! Recovery time of the log-structured store on a real file (issue 12): a store of
//! `--gib` GiB (default 1) with 8 KiB pages, every page written once and then `--rewrite`
//! of them again at random (seeded), synced; then (a) a clean reopen, from the newest
//! checkpoint; (b) a reopen after a crash: more pages written and synced (promised) after
//! the last checkpoint, the process's handle abandoned without closing, so recovery rolls
//! forward through them. `O_DIRECT` unless `--buffered`.
//!
//! ```sh
//! cargo run --release -p flashbuf-store --example log_store_recovery -- [--gib 1] [--dir /var/tmp]
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{page, AlignedBuf, DirtyRanges, PageId};
use flashbuf_device::{FileDevice, FileDeviceOptions};
use flashbuf_store::{LogStore, LogStoreConfig, PageStore};
use std::time::Instant;

const PS: usize = 8192;

fn arg(name: &str) -> Option<String> {
    let a: Vec<String> = std::env::args().collect();
    a.iter()
        .position(|x| x == name)
        .and_then(|i| a.get(i + 1).cloned())
}

fn open_dev(path: &std::path::Path, direct: bool) -> FileDevice {
    let opts = FileDeviceOptions {
        create: true,
        direct,
        lock: false,
    };
    FileDevice::open(path, opts).unwrap()
}

fn write(s: &LogStore<FileDevice>, pid: u64, v: u64, buf: &mut AlignedBuf) {
    buf.fill(v as u8);
    page::seal(buf, PageId(pid), v);
    s.write_page(PageId(pid), buf, &DirtyRanges::full(PS))
        .unwrap();
}

fn main() {
    let gib: u64 = arg("--gib").map_or(1, |v| v.parse().unwrap());
    let dir = arg("--dir").unwrap_or_else(|| std::env::temp_dir().display().to_string());
    let direct = !std::env::args().any(|a| a == "--buffered");
    let tmp = tempfile::tempdir_in(dir).unwrap();
    let path = tmp.path().join("log.flashbuf");
    let cfg = LogStoreConfig {
        capacity_bytes: Some(gib << 30),
        ..LogStoreConfig::with_page_size(PS)
    };
    let s = LogStore::create(open_dev(&path, direct), cfg.clone()).unwrap();
    let pages = s.layout().logical_pages;
    let rewrite: u64 = arg("--rewrite").map_or(pages / 2, |v| v.parse().unwrap());
    let mut buf = AlignedBuf::zeroed(PS, 4096);
    let t = Instant::now();
    for pid in 0..pages {
        write(&s, pid, 1, &mut buf);
    }
    let mut rng = SplitMix64::new(12);
    for _ in 0..rewrite {
        write(&s, rng.next_u64() % pages, 2, &mut buf);
    }
    s.sync().unwrap();
    let load_s = t.elapsed().as_secs_f64();
    drop(s);
    let t = Instant::now();
    let s = LogStore::open(open_dev(&path, direct), cfg.clone()).unwrap();
    let clean_s = t.elapsed().as_secs_f64();
    let clean = s.recovery_report().unwrap();
    // Promised blocks after the newest checkpoint, then a crash (the handle abandoned).
    for _ in 0..pages / 20 {
        write(&s, rng.next_u64() % pages, 3, &mut buf);
    }
    s.sync().unwrap();
    std::mem::forget(s);
    let t = Instant::now();
    let s = LogStore::open(open_dev(&path, direct), cfg).unwrap();
    let crash_s = t.elapsed().as_secs_f64();
    let crash = s.recovery_report().unwrap();
    let mem = s.memory();
    println!(
        "log store of {gib} GiB ({pages} pages of {PS} B; map {:.1} B/page, all in-memory state {:.1} B/page), O_DIRECT {direct}; load {load_s:.1} s",
        mem.map_bytes_per_page, mem.per_page_bytes
    );
    println!(
        "clean reopen: {:.3} s (segments walked {}, blocks rolled forward {})",
        clean_s, clean.segments_walked, clean.blocks_rolled_forward
    );
    println!(
        "after a crash: {:.3} s (segments walked {}, blocks rolled forward {}, summaries written {}, checkpoint written {})",
        crash_s, crash.segments_walked, crash.blocks_rolled_forward, crash.summaries_written, crash.wrote_checkpoint
    );
}
