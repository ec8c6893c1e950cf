//! How fast full-bytes replay could go at best: every miss copies a page into a frame and
//! verifies its checksum, every write-back checksums (seals) a page and copies it out. This
//! measures those two primitives on this machine (memcpy and CRC32C of one page) so that
//! `flashbuf bench` can report each run's distance to that limit.
//!
//! Two figures: [`PageCost`] with the pages in a core's cache (the limit: no replay can
//! copy faster), and [`WorkingSetCost`] with each page taken at random from a region the
//! size of the run's distinct pages into one the size of its buffer, as a replay's misses
//! take them (where the run's pages exceed the last-level cache, from main memory). The
//! second is what full-bytes replays approach; it is not a bound (a replay's misses are
//! not uniform over its pages: a page evicted a moment ago may still be cached).

use flashbuf_core::aligned::AlignedBuf;
use flashbuf_core::page::crc32c;
use flashbuf_core::rng::SplitMix64;
use std::time::Instant;

/// Nanoseconds one page of `page_size` bytes costs to copy and to checksum, measured.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct PageCost {
    /// Page size in bytes.
    pub page_size: usize,
    /// One memcpy of a page.
    pub copy_ns: f64,
    /// One CRC32C of a page.
    pub crc_ns: f64,
}

/// Bytes the measurement works on, source and destination together: small enough to stay
/// in one core's second-level cache (512 KiB per core here, 256 KiB or more on any current
/// server core), so that the limit is the best case.
const WORKING_SET_BYTES: usize = 256 << 10;

/// Gap between the source's end and the destination's start. With it a page's source and
/// destination differ by 1 KiB modulo 4 KiB (no 4 KiB aliasing between a load and its
/// store) and never by a multiple of 64 KiB (not the same second-level cache sets).
const GAP_BYTES: usize = 4096 + 1024;

/// Timed passes at least; the best pass counts.
const MIN_PASSES: usize = 20;
/// Nanoseconds of timed passes at least, in all.
const MIN_TOTAL_NS: u128 = 20_000_000;

/// Runs `pass` (which returns the nanoseconds it timed) until at least `MIN_PASSES`
/// passes and `MIN_TOTAL_NS` nanoseconds have been timed: both measurements' stop rule.
fn timed_passes(mut pass: impl FnMut() -> u128) {
    let (mut passes, mut spent_ns) = (0usize, 0u128);
    while passes < MIN_PASSES || spent_ns < MIN_TOTAL_NS {
        spent_ns += pass();
        passes += 1;
    }
}

/// Copies of the whole working set per timed pass.
const COPIES_PER_PASS: usize = 8;

/// Where the measurement's pages lie: `pages` source pages from offset 0, as many
/// destination pages from `dst_offset`, in one buffer of `total_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Pages on each side.
    pub pages: usize,
    /// Offset of the first destination page.
    pub dst_offset: usize,
    /// Bytes of the buffer (source, gap, destination).
    pub total_bytes: usize,
}

impl Layout {
    /// The layout for pages of `page_size` bytes (at least two pages a side).
    pub fn for_page_size(page_size: usize) -> Self {
        let page_size = page_size.max(1);
        let pages = (WORKING_SET_BYTES / 2 / page_size).max(2);
        let dst_offset = pages * page_size + GAP_BYTES;
        Self {
            pages,
            dst_offset,
            total_bytes: dst_offset + pages * page_size,
        }
    }
}

impl PageCost {
    /// Measures copy and CRC32C of one page in the best case: a working set that stays in
    /// a core's second-level cache ([`Layout`]), written once before timing, each timed
    /// pass copying (then checksumming) it 8 times; the best of at least 20 passes and
    /// 20 ms, so that the limit is one no replay can pass.
    ///
    /// Before (issue 17's first version): 512 KiB a side (1 MiB: more than the cache),
    /// the two sides in separate allocations, five passes of one copy. Wherever the
    /// allocator put the destination 512 KiB + 16 bytes after the source (the same cache
    /// sets), an 8 KiB copy measured 2.8–5.0 µs instead of 0.17–0.30 µs, and `bench` printed
    /// runs at 125 % of their "limit".
    pub fn measure(page_size: usize) -> Self {
        let page_size = page_size.max(1);
        let lay = Layout::for_page_size(page_size);
        let mut buf = vec![0x5Au8; lay.total_bytes];
        let (src, dst) = buf.split_at_mut(lay.dst_offset);
        let src = &src[..lay.pages * page_size];
        let per_pass = (lay.pages * COPIES_PER_PASS) as f64;
        let (mut copy_ns, mut crc_ns) = (f64::MAX, f64::MAX);
        let mut sink = 0u32;
        timed_passes(|| {
            let t = Instant::now();
            for _ in 0..COPIES_PER_PASS {
                for (d, s) in dst
                    .chunks_exact_mut(page_size)
                    .zip(src.chunks_exact(page_size))
                {
                    d.copy_from_slice(s);
                }
                std::hint::black_box(&mut *dst);
            }
            let copy = t.elapsed().as_nanos();
            let t = Instant::now();
            for _ in 0..COPIES_PER_PASS {
                for p in dst.chunks_exact(page_size) {
                    sink ^= crc32c(p);
                }
                sink = std::hint::black_box(sink);
            }
            let crc = t.elapsed().as_nanos();
            copy_ns = copy_ns.min(copy as f64 / per_pass);
            crc_ns = crc_ns.min(crc as f64 / per_pass);
            copy + crc
        });
        std::hint::black_box(sink);
        Self {
            page_size,
            copy_ns,
            crc_ns,
        }
    }

    /// The best references per second a full-bytes replay with `misses` and
    /// `write_backs` over `references` could reach if bytes were all it did: each miss a
    /// copy and a CRC, each write-back a CRC and a copy.
    pub fn limit_refs_per_s(&self, references: u64, misses: u64, write_backs: u64) -> f64 {
        refs_per_s(references, misses + write_backs, self.copy_ns + self.crc_ns)
    }
}

/// References per second when `pages` page transfers of `page_ns` each are all the time.
fn refs_per_s(references: u64, pages: u64, page_ns: f64) -> f64 {
    let ns = pages as f64 * page_ns;
    if ns <= 0.0 {
        f64::INFINITY
    } else {
        references as f64 / (ns * 1e-9)
    }
}

/// Bytes of the source region at most: far beyond any last-level cache, so a larger run
/// costs the same per page; the cap keeps a run on a file device (whose pages were not
/// in memory) from allocating its whole store.
const WORKING_SET_MAX_SOURCE_BYTES: usize = 1 << 30;

/// `pages` pages of `page_size` bytes (at least 1), at most 1 GiB of them (at least one).
fn capped_source_pages(page_size: usize, pages: usize) -> usize {
    pages.clamp(1, (WORKING_SET_MAX_SOURCE_BYTES / page_size.max(1)).max(1))
}

/// Random copies per timed chunk (their indices drawn before the chunk's clock starts).
const CHUNK_COPIES: usize = 1024;

/// One page copied from a random page of the run's working set into a random frame, then
/// checksummed: what a full-bytes replay's miss pays when its page may come from anywhere
/// in the run's pages (see the module docs).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct WorkingSetCost {
    /// Page size in bytes.
    pub page_size: usize,
    /// Bytes of the source region: the run's distinct pages, at most 1 GiB.
    pub source_bytes: usize,
    /// Bytes of the destination region: the run's buffer.
    pub frames_bytes: usize,
    /// One copy and one CRC32C of the copied page.
    pub page_ns: f64,
}

impl WorkingSetCost {
    /// Measures a copy of a random page of a `source_pages`-page region into a random page
    /// of a `frames`-page region, then the CRC32C of the copy, in chunks of 1,024 such
    /// pages (random by `seed`); the best chunk of at least 20 and 20 ms. Both regions are
    /// page-aligned and written before timing (an untouched page would read the kernel's
    /// shared zero page).
    pub fn measure(page_size: usize, source_pages: usize, frames: usize, seed: u64) -> Self {
        let page_size = page_size.max(1);
        let source_pages = capped_source_pages(page_size, source_pages);
        let frames = frames.max(1);
        // Page-aligned, as the memory device's chunks and the pool's frames are: a `Vec`
        // can start anywhere modulo 4 KiB, and a copy whose destination lies a few bytes
        // ahead of its source modulo 4 KiB costs several times more (4 KiB aliasing, see
        // the memory device's `Chunk`).
        let mut src = AlignedBuf::zeroed(source_pages * page_size, 4096);
        src.fill(0x5A);
        let mut dst = AlignedBuf::zeroed(frames * page_size, 4096);
        dst.fill(0xA5);
        let mut rng = SplitMix64::new(seed);
        let mut pairs = vec![(0usize, 0usize); CHUNK_COPIES];
        let (mut page_ns, mut sink) = (f64::MAX, 0u32);
        timed_passes(|| {
            for p in pairs.iter_mut() {
                *p = (
                    rng.below(source_pages as u64) as usize * page_size,
                    rng.below(frames as u64) as usize * page_size,
                );
            }
            let t = Instant::now();
            for &(s, d) in &pairs {
                let to = &mut dst[d..d + page_size];
                to.copy_from_slice(&src[s..s + page_size]);
                sink ^= crc32c(to);
            }
            sink = std::hint::black_box(sink);
            let ns = t.elapsed().as_nanos();
            page_ns = page_ns.min(ns as f64 / CHUNK_COPIES as f64);
            ns
        });
        std::hint::black_box(sink);
        Self {
            page_size,
            source_bytes: source_pages * page_size,
            frames_bytes: frames * page_size,
            page_ns,
        }
    }

    /// References per second if each miss and each write-back cost one such page (a
    /// write-back's copy goes the other way, to a random place of the store: the same
    /// traffic).
    pub fn refs_per_s(&self, references: u64, misses: u64, write_backs: u64) -> f64 {
        refs_per_s(references, misses + write_backs, self.page_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_are_measured_and_the_limit_follows_the_misses() {
        let c = PageCost::measure(4096);
        assert!(c.copy_ns > 0.0 && c.crc_ns > 0.0, "{c:?}");
        let few = c.limit_refs_per_s(1000, 10, 0);
        let many = c.limit_refs_per_s(1000, 100, 50);
        assert!(few > many && many > 0.0);
        assert!(c.limit_refs_per_s(1000, 0, 0).is_infinite());
    }

    #[test]
    fn the_working_set_has_the_run_s_sizes_and_the_limit_follows_the_misses() {
        // 64 MiB of 8 KiB pages into a 64-frame buffer. Timings are not compared (a test
        // is no benchmark; `flashbuf bench` prints them).
        let c = WorkingSetCost::measure(8192, 8192, 64, 7);
        assert_eq!((c.source_bytes, c.frames_bytes), (64 << 20, 512 << 10));
        assert!(c.page_ns > 0.0, "{c:?}");
        let (few, many) = (c.refs_per_s(1000, 10, 0), c.refs_per_s(1000, 100, 50));
        assert!(few > many && many > 0.0);
        assert!(c.refs_per_s(1000, 0, 0).is_infinite());
        // The source is capped at 1 GiB; degenerate sizes still measure one page.
        assert_eq!(capped_source_pages(1 << 20, 4096), 1024);
        assert_eq!(capped_source_pages(8192, 4096), 4096);
        assert_eq!(capped_source_pages(2 << 30, 5), 1);
        let tiny = WorkingSetCost::measure(0, 0, 0, 1);
        assert_eq!(
            (tiny.page_size, tiny.source_bytes, tiny.frames_bytes),
            (1, 1, 1)
        );
    }

    /// Regression: the first version copied between two 512 KiB allocations (1 MiB, more
    /// than a core's cache) that the allocator could place 512 KiB + 16 bytes apart (the
    /// same cache sets): 8 KiB copies measured 2.8–5.0 µs instead of 0.17–0.30 µs and `bench`
    /// reported runs at 125 % of their limit.
    #[test]
    fn regression_byte_limit_working_set_fits_the_cache_without_aliasing() {
        for page_size in [512, 4096, 8192, 16384, 65536, 1 << 20] {
            let l = Layout::for_page_size(page_size);
            assert!(l.pages >= 2, "{page_size}: {l:?}");
            let side = l.pages * page_size;
            assert!(
                page_size > WORKING_SET_BYTES / 4 || 2 * side <= WORKING_SET_BYTES,
                "{page_size}: {l:?} is more than the cache-sized working set"
            );
            assert!(l.dst_offset >= side && l.total_bytes == l.dst_offset + side);
            // Source and destination differ by 1 KiB modulo 4 KiB, never by a multiple of
            // 64 KiB.
            let d = l.dst_offset;
            assert_eq!(d % 4096, 1024, "{page_size}: {l:?}");
            assert_ne!(d % 65536, 0, "{page_size}: {l:?}");
        }
    }
}
