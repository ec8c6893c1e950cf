//! Recovery time of the ICL store with a full log space, on a real file (issue 15):
//! `--pages` data pages of 8 KiB (default 131072 = 1 GiB), `--log-mib` MiB of log space
//! (default 16, the store's default). Every page is written once whole and synced; then
//! small changes (100 bytes at a random offset of a random page, seeded) fill the log
//! space up to `--reserve` log pages (default 8) from the end, never starting a
//! log-space merge; then (a) a clean reopen; (b) small changes fill the last log pages,
//! synced, and the handle is abandoned without closing (a crash), and the store reopened.
//! Both reopens scan the whole log space and rebuild the mapping table; after each, a
//! sample of pages is read back and checked against the expected versions.
//! `O_DIRECT` unless `--buffered`.
//!
//! How "full" is reached without a merge: a log-space merge starts only inside a WOB
//! flush whose records need more log pages than are free. A flush writes at most one
//! record per WOB entry, and a write adds or replaces at most one entry, so the flushes
//! caused by `n` writes and the sync after them write at most `n` log pages. The fill
//! therefore writes `n = min(free - target, 4096)` changes, syncs, reads the free pages
//! again and repeats until exactly `target` log pages are free; the generation is
//! checked to be unchanged after every step.
//!
//! ```sh
//! cargo run --release -p flashbuf-store --example icl_recovery -- [--pages 131072] [--log-mib 16] [--dir /var/tmp]
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

use flashbuf_core::page::{self, PageState, HEADER_BYTES};
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{AlignedBuf, DirtyRanges, PageId};
use flashbuf_device::{FileDevice, FileDeviceOptions};
use flashbuf_store::icl::{IclConfig, IclStats, IclStore};
use flashbuf_store::{PageStore, PageWrite, ReadOutcome};
use std::path::Path;
use std::time::Instant;

const PS: usize = 8192;
/// Bytes of each small change.
const CHANGE_BYTES: usize = 100;
/// Most changes between two syncs of the fill.
const STEP_WRITES: u64 = 4096;
/// Pages per batch of the initial whole-page load.
const LOAD_BATCH_PAGES: usize = 64;
/// Random pages checked after each reopen (plus every page changed after the clean one).
const SAMPLE_PAGES: u64 = 1000;

/// What a run is given.
#[derive(Debug, Clone)]
struct Opts {
    pages: u64,
    log_mib: u64,
    reserve_pages: u32,
    dir: String,
    direct: bool,
    seed: u64,
}

/// What one reopen measured.
#[derive(Debug, Clone, Copy)]
struct Reopen {
    open_s: f64,
    stats: IclStats,
    pages_checked: usize,
}

/// What a run measured.
#[derive(Debug, Clone, Copy)]
struct Summary {
    log_pages: u32,
    load_s: f64,
    fill_s: f64,
    fill_changes: u64,
    fill_syncs: u64,
    crash_changes: u64,
    clean: Reopen,
    crash: Reopen,
}

/// The store, the expected version of every page, and the change generator.
struct Workload {
    store: IclStore<FileDevice>,
    expected: Vec<u64>,
    rng: SplitMix64,
    buf: AlignedBuf,
}

fn arg(name: &str) -> Option<String> {
    let a: Vec<String> = std::env::args().collect();
    a.iter()
        .position(|x| x == name)
        .and_then(|i| a.get(i + 1).cloned())
}

fn open_dev(path: &Path, direct: bool) -> FileDevice {
    let opts = FileDeviceOptions {
        create: true,
        direct,
        lock: false,
    };
    FileDevice::open(path, opts).unwrap()
}

fn config(o: &Opts) -> IclConfig {
    IclConfig {
        log_pages: ((o.log_mib << 20) / PS as u64) as u32,
        ..IclConfig::with_page_size(PS)
    }
}

/// Reads `pid` into `buf` and checks that it holds `version`, sealed.
fn read_checked(s: &IclStore<FileDevice>, pid: u64, version: u64, buf: &mut [u8]) {
    assert_eq!(s.read_page(PageId(pid), buf).unwrap(), ReadOutcome::Found);
    assert!(matches!(
        page::check(buf, PageId(pid)),
        Ok(PageState::Sealed(_))
    ));
    assert_eq!(page::version_of(buf), version, "page {pid}");
}

impl Workload {
    /// Writes every page once whole (version 1) and syncs.
    fn load(&mut self) {
        let n = self.expected.len() as u64;
        let mut batch = AlignedBuf::zeroed(PS * LOAD_BATCH_PAGES, 4096);
        let mut first = 0u64;
        while first < n {
            let count = (n - first).min(LOAD_BATCH_PAGES as u64) as usize;
            for (i, p) in batch.chunks_mut(PS).take(count).enumerate() {
                let pid = first + i as u64;
                p.fill(pid as u8);
                page::seal(p, PageId(pid), 1);
            }
            let writes: Vec<PageWrite<'_>> = batch
                .chunks(PS)
                .take(count)
                .enumerate()
                .map(|(i, p)| PageWrite {
                    pid: PageId(first + i as u64),
                    page: p,
                    dirty: DirtyRanges::full(PS),
                })
                .collect();
            self.store.write_pages(&writes).unwrap();
            first += count as u64;
        }
        self.expected.iter_mut().for_each(|v| *v = 1);
        self.store.sync().unwrap();
    }

    /// Changes `CHANGE_BYTES` at a random offset of a random page (read back first, its
    /// version checked) and writes it at the next version; returns the page.
    fn change(&mut self) -> u64 {
        let pid = self.rng.below(self.expected.len() as u64);
        let v = self.expected[pid as usize];
        read_checked(&self.store, pid, v, &mut self.buf);
        let span = (PS - HEADER_BYTES - CHANGE_BYTES) as u64;
        let off = HEADER_BYTES + self.rng.below(span + 1) as usize;
        let x = self.rng.next_u64().to_le_bytes();
        for (i, b) in self.buf[off..off + CHANGE_BYTES].iter_mut().enumerate() {
            *b ^= x[i % 8] | 1; // never zero: every byte really changes
        }
        page::seal(&mut self.buf, PageId(pid), v + 1);
        let mut d = DirtyRanges::new();
        d.add(off, CHANGE_BYTES);
        self.store.write_page(PageId(pid), &self.buf, &d).unwrap();
        self.expected[pid as usize] = v + 1;
        pid
    }

    /// Writes changes and syncs until exactly `target` log pages are free (see the module
    /// docs); returns (changes, syncs) and adds every changed page to `changed`.
    fn fill_to(&mut self, target: u32, changed: &mut Vec<u64>) -> (u64, u64) {
        let log_pages = self.store.config().log_pages;
        let gen = self.store.icl_stats().generation;
        let (mut changes, mut syncs) = (0u64, 0u64);
        loop {
            let st = self.store.icl_stats();
            assert_eq!(st.generation, gen, "a log-space merge started");
            let free = log_pages - st.log_pages_used as u32;
            assert!(free >= target, "{free} log pages free, below {target}");
            if free == target {
                return (changes, syncs);
            }
            let n = u64::from(free - target).min(STEP_WRITES);
            for _ in 0..n {
                changed.push(self.change());
            }
            self.store.sync().unwrap();
            changes += n;
            syncs += 1;
        }
    }

    /// Reads `SAMPLE_PAGES` random pages and every page of `also`; returns how many.
    fn verify(&mut self, also: &[u64]) -> usize {
        let n = self.expected.len() as u64;
        let sample: Vec<u64> = (0..SAMPLE_PAGES.min(n))
            .map(|_| self.rng.below(n))
            .collect();
        for &pid in sample.iter().chain(also) {
            read_checked(&self.store, pid, self.expected[pid as usize], &mut self.buf);
        }
        sample.len() + also.len()
    }
}

fn timed_open(path: &Path, o: &Opts) -> (IclStore<FileDevice>, f64) {
    let t = Instant::now();
    let s = IclStore::open(open_dev(path, o.direct), config(o)).unwrap();
    (s, t.elapsed().as_secs_f64())
}

/// The whole measurement (see the module docs).
fn run(o: &Opts) -> Summary {
    let tmp = tempfile::tempdir_in(&o.dir).unwrap();
    let path = tmp.path().join("icl.flashbuf");
    let cfg = config(o);
    assert!(
        o.reserve_pages < cfg.log_pages,
        "--reserve must be below the log pages"
    );
    let mut w = Workload {
        store: IclStore::create(open_dev(&path, o.direct), cfg).unwrap(),
        expected: vec![0; o.pages as usize],
        rng: SplitMix64::new(o.seed),
        buf: AlignedBuf::zeroed(PS, 4096),
    };
    let t = Instant::now();
    w.load();
    let load_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut filled = Vec::new();
    let (fill_changes, fill_syncs) = w.fill_to(o.reserve_pages, &mut filled);
    let fill_s = t.elapsed().as_secs_f64();
    // (a) A clean reopen: the store dropped after its last sync.
    drop(w.store);
    let (store, open_s) = timed_open(&path, o);
    w.store = store;
    let stats = w.store.icl_stats();
    let pages_checked = w.verify(&[]);
    let clean = Reopen {
        open_s,
        stats,
        pages_checked,
    };
    // (b) Changes into the last log pages, synced, then a crash (the handle abandoned).
    let mut crashed = Vec::new();
    let (crash_changes, _) = w.fill_to(0, &mut crashed);
    std::mem::forget(w.store);
    let (store, open_s) = timed_open(&path, o);
    w.store = store;
    let stats = w.store.icl_stats();
    let pages_checked = w.verify(&crashed);
    let crash = Reopen {
        open_s,
        stats,
        pages_checked,
    };
    Summary {
        log_pages: cfg.log_pages,
        load_s,
        fill_s,
        fill_changes,
        fill_syncs,
        crash_changes,
        clean,
        crash,
    }
}

fn print_reopen(what: &str, r: &Reopen, pages: u64) {
    let s = &r.stats;
    println!(
        "{what}: {:.3} s (log pages used {}, recovered log pages {}, recovered records {}, log pages read {}, device time {:.3} s); mapping table {} B = {:.1} B/page ({} entries), WOB {} B; {} pages checked",
        r.open_s,
        s.log_pages_used,
        s.recovered_log_pages,
        s.recovered_records,
        s.log_reads_recovery,
        s.recovery_device_us as f64 / 1e6,
        s.mapping_memory_bytes,
        s.mapping_memory_bytes as f64 / pages as f64,
        s.mapping_entries,
        s.wob_memory_bytes,
        r.pages_checked
    );
}

fn main() {
    let o = Opts {
        pages: arg("--pages").map_or(131072, |v| v.parse().unwrap()),
        log_mib: arg("--log-mib").map_or(16, |v| v.parse().unwrap()),
        reserve_pages: arg("--reserve").map_or(8, |v| v.parse().unwrap()),
        dir: arg("--dir").unwrap_or_else(|| std::env::temp_dir().display().to_string()),
        direct: !std::env::args().any(|a| a == "--buffered"),
        seed: arg("--seed").map_or(15, |v| v.parse().unwrap()),
    };
    let r = run(&o);
    println!(
        "ICL store of {} pages of {PS} B ({:.2} GiB), log space {} MiB = {} log pages, WOB {} B, O_DIRECT {}; load {:.1} s",
        o.pages,
        (o.pages * PS as u64) as f64 / f64::from(1u32 << 30),
        o.log_mib,
        r.log_pages,
        r.clean.stats.wob_capacity_bytes,
        o.direct,
        r.load_s
    );
    println!(
        "fill: {} changes of {CHANGE_BYTES} B in {} synced steps, {:.1} s, up to {} log pages free; then {} changes into the last ones",
        r.fill_changes, r.fill_syncs, r.fill_s, o.reserve_pages, r.crash_changes
    );
    print_reopen("clean reopen", &r.clean, o.pages);
    print_reopen("after a crash", &r.crash, o.pages);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_store_fills_its_log_space_and_recovers_it() {
        let o = Opts {
            pages: 256,
            log_mib: 1,
            reserve_pages: 4,
            dir: std::env::temp_dir().display().to_string(),
            direct: false,
            seed: 3,
        };
        let r = run(&o);
        assert_eq!(r.log_pages, 128);
        assert_eq!(r.clean.stats.log_pages_used, 124);
        assert_eq!(r.clean.stats.recovered_log_pages, 124);
        assert_eq!(r.crash.stats.log_pages_used, 128);
        assert_eq!(r.crash.stats.recovered_log_pages, 128);
        assert!(r.crash.stats.recovered_records > r.clean.stats.recovered_records);
        assert_eq!((r.clean.stats.generation, r.crash.stats.generation), (1, 1));
        assert!(r.crash_changes > 0 && r.crash.pages_checked >= 256);
    }
}
