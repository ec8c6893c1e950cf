#![allow(clippy::unwrap_used)]
//! Pool under load over a real store: 8 threads pin, modify, unpin, flush, evict and sync
//! pages of a `DirectStore<FileDevice>` in a temporary directory (real pwrite/pread/fsync),
//! through guards and the `with_read`/`with_write` fast path, some holding two pins at
//! once. Every read checks that the page is not torn; at the end the pool is synced and
//! dropped, the store reopened from the file, and every page compared with the number of
//! increments the threads made (no lost update). A watchdog fails the test instead of
//! hanging if the threads do not finish (deadlock).
//!
//! `FLASHBUF_STRESS_ROUNDS=N` repeats more rounds (soak).

use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::PageId;
use flashbuf_device::{FileDevice, FileDeviceOptions};
use flashbuf_pool::policy::Lru;
use flashbuf_pool::BufferPool;
use flashbuf_store::{DirectStore, DirectStoreConfig, PageStore, ReadOutcome};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

const THREADS: usize = 8;
const PAGES: u64 = 96;
const FRAMES: usize = 12;
const PS: usize = 4096;
const PATTERN: usize = 600;
const WATCHDOG: Duration = Duration::from_secs(120);

type Pool = BufferPool<DirectStore<FileDevice>>;

/// Payload: counter (8 bytes), writer thread (8 bytes), then `PATTERN` bytes equal to the
/// counter's low byte. A torn or mixed page breaks the pattern.
fn check_payload(pid: u64, d: &[u8]) -> u64 {
    let n = u64::from_le_bytes(d[0..8].try_into().unwrap());
    assert!(
        d[16..16 + PATTERN].iter().all(|&b| b == n as u8),
        "page {pid}: torn page (counter {n})"
    );
    n
}

fn bump(d: &mut [u8], thread: usize) -> u64 {
    let n = u64::from_le_bytes(d[0..8].try_into().unwrap()) + 1;
    d[0..8].copy_from_slice(&n.to_le_bytes());
    d[8..16].copy_from_slice(&(thread as u64).to_le_bytes());
    d[16..16 + PATTERN].fill(n as u8);
    n
}

fn worker(pool: &Pool, expected: &[AtomicU64], t: usize, seed: u64, ops: usize) {
    let mut rng = SplitMix64::new(seed.wrapping_mul(1000) + t as u64);
    for _ in 0..ops {
        // Half the traffic on a hot eighth of the pages: latch contention.
        let pid = if rng.below(2) == 0 {
            rng.below(PAGES / 8)
        } else {
            rng.below(PAGES)
        };
        match rng.below(100) {
            0..=29 => {
                let mut g = pool.write(PageId(pid)).unwrap();
                bump(g.data_mut_range(0, 16 + PATTERN), t);
                drop(g);
                expected[pid as usize].fetch_add(1, Ordering::SeqCst);
            }
            30..=44 => {
                pool.with_write(PageId(pid), |w| {
                    bump(w.data_mut_range(0, 16 + PATTERN), t);
                })
                .unwrap();
                expected[pid as usize].fetch_add(1, Ordering::SeqCst);
            }
            45..=69 => {
                let g = pool.read(PageId(pid)).unwrap();
                check_payload(pid, g.data());
            }
            70..=84 => {
                pool.with_read(PageId(pid), |d| check_payload(pid, d))
                    .unwrap();
            }
            85..=94 => {
                // Two pins at once, in page order.
                let other = rng.below(PAGES);
                let (a, b) = (pid.min(other), pid.max(other));
                if a != b {
                    let ga = pool.read(PageId(a)).unwrap();
                    let gb = pool.read(PageId(b)).unwrap();
                    check_payload(a, ga.data());
                    check_payload(b, gb.data());
                }
            }
            95..=98 => {
                pool.flush_all().unwrap();
            }
            _ => {
                pool.sync().unwrap();
            }
        }
    }
}

fn round(seed: u64, direct_io: bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let opts = FileDeviceOptions {
        direct: direct_io,
        ..FileDeviceOptions::default()
    };
    let dev = match FileDevice::open(&path, opts) {
        Ok(d) => d,
        Err(e) if direct_io => {
            eprintln!("O_DIRECT not available here ({e}); skipping the O_DIRECT round");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let cfg = DirectStoreConfig {
        page_size: PS,
        grow_bytes: 16 * PS as u64,
        ..Default::default()
    };
    let store = DirectStore::create(dev, cfg).unwrap();
    let pool = Arc::new(BufferPool::new(store, FRAMES, Box::new(Lru::new(FRAMES))).unwrap());
    let expected: Arc<Vec<AtomicU64>> = Arc::new((0..PAGES).map(|_| AtomicU64::new(0)).collect());
    let (done_tx, done_rx) = mpsc::channel();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let pool = pool.clone();
            let expected = expected.clone();
            let done = done_tx.clone();
            std::thread::spawn(move || {
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    worker(&pool, &expected, t, seed, 2500)
                }));
                let _ = done.send(r.is_ok());
                if let Err(p) = r {
                    std::panic::resume_unwind(p);
                }
            })
        })
        .collect();
    drop(done_tx);
    for i in 0..THREADS {
        match done_rx.recv_timeout(WATCHDOG) {
            Ok(true) => {}
            Ok(false) => break, // a worker panicked: join reports it below
            Err(_) => panic!(
                "watchdog: {} of {THREADS} threads still running after {WATCHDOG:?} (deadlock?); pool stats {:?}",
                THREADS - i,
                pool.stats()
            ),
        }
    }
    for h in handles {
        h.join().expect("worker panicked");
    }
    pool.check_invariants().unwrap();
    let stats = pool.stats();
    assert!(
        stats.evictions > 100 && stats.dirty_evictions > 0,
        "the test should evict: {stats:?}"
    );
    pool.sync().unwrap();
    let pool = Arc::into_inner(pool).expect("no other owner");
    drop(pool);

    // Reopen from the file and verify every page.
    let dev = FileDevice::open(&path, opts).unwrap();
    let store = DirectStore::open(dev, cfg).unwrap();
    let mut buf = vec![0u8; PS];
    let mut total = 0;
    for pid in 0..PAGES {
        let want = expected[pid as usize].load(Ordering::SeqCst);
        match store.read_page(PageId(pid), &mut buf).unwrap() {
            ReadOutcome::Found => {
                let n = check_payload(pid, &buf[HEADER_BYTES..]);
                assert_eq!(n, want, "page {pid}: lost update after reopen");
            }
            ReadOutcome::Unwritten => assert_eq!(want, 0, "page {pid} lost"),
        }
        total += want;
    }
    assert!(total > 1000, "{total} increments");
}

fn rounds() -> u64 {
    std::env::var("FLASHBUF_STRESS_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
}

#[test]
fn eight_threads_over_a_file_store_lose_no_update() {
    for seed in 0..rounds() {
        round(seed, false);
    }
}

#[test]
fn eight_threads_over_an_o_direct_file_store_lose_no_update() {
    round(1_000, true);
}
