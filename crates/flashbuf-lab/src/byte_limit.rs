//! How fast full-bytes replay could go at best: every miss copies a page into a frame and
//! verifies its checksum, every write-back checksums (seals) a page and copies it out. This
//! measures those two primitives on this machine (memcpy and CRC32C of one page) so that
//! `flashbuf bench` can report each run's distance to that limit.

use flashbuf_core::page::crc32c;
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

impl PageCost {
    /// Measures copy and CRC32C over a working set that stays in the cache (512 KiB), the
    /// best case, so that the limit is one no replay can pass; the best of five passes.
    pub fn measure(page_size: usize) -> Self {
        let pages = ((512usize << 10) / page_size.max(1)).max(16);
        let src = vec![0x5Au8; pages * page_size];
        let mut dst = vec![0u8; pages * page_size];
        let (mut copy_ns, mut crc_ns) = (f64::MAX, f64::MAX);
        let mut sink = 0u32;
        for _ in 0..5 {
            let t = Instant::now();
            for (d, s) in dst
                .chunks_exact_mut(page_size)
                .zip(src.chunks_exact(page_size))
            {
                d.copy_from_slice(s);
            }
            copy_ns = copy_ns.min(t.elapsed().as_nanos() as f64 / pages as f64);
            let t = Instant::now();
            for p in dst.chunks_exact(page_size) {
                sink ^= crc32c(p);
            }
            crc_ns = crc_ns.min(t.elapsed().as_nanos() as f64 / pages as f64);
        }
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
        let per_page = self.copy_ns + self.crc_ns;
        let ns = (misses + write_backs) as f64 * per_page;
        if ns <= 0.0 {
            f64::INFINITY
        } else {
            references as f64 / (ns * 1e-9)
        }
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
}
