//! Page contents that change exactly in the given byte ranges, without keeping pages.
//!
//! A pass-through replay with dirty ranges must hand the store pages whose bytes differ
//! from the page's previous version *exactly* in the write's ranges (a write path such as
//! ICL logs those bytes; the others write the page whole), and must check that reads return
//! what the writes left. Keeping every page's bytes would cost `page size × distinct pages`
//! (650 MB for the TPC-C range trace); [`PageContent`] keeps, per page, the written byte
//! runs as segments with a 7-bit tag instead, and generates the bytes from the tag:
//!
//! - a byte never written is 0;
//! - a byte of a segment with tag `t` (1..=127) at page offset `o` is `P[o] ^ t`, where
//!   `P[o]` has its high bit set (so it is never 0, and two tags never give the same byte);
//! - a write gives each of its ranges one tag that none of the segments it overwrites has
//!   (a 128-bit mask of the covered tags; a range covering all 127 takes a tag per piece,
//!   each the next after the piece's old one), so every byte in a range changes and no
//!   byte outside changes.
//!
//! Memory: 12 bytes per segment (pages touched by many small writes keep one segment per
//! live run), reported by [`PageContent::memory_bytes`].

use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::PageId;

/// One run of written bytes: page offsets `start..end`, with the tag of its last write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Segment {
    start: u32,
    end: u32,
    tag: u8,
}

/// Tags are 1..=127.
const TAGS: u8 = 127;

/// The contents of every page the replay wrote, as tagged segments (see the module doc).
#[derive(Debug)]
pub struct PageContent {
    page_size: usize,
    /// `P`: one byte per page offset, high bit set.
    pattern: Vec<u8>,
    pages: Vec<Vec<Segment>>,
    segments: usize,
    scratch: Vec<Segment>,
    union: Vec<(u32, u32)>,
}

impl PageContent {
    /// Contents for pages of `page_size` bytes, expecting about `pages_hint` pages.
    pub fn new(page_size: usize, pages_hint: usize) -> Self {
        let pattern = (0..page_size)
            .map(|o| {
                // A cheap mix of the offset: neighbouring bytes differ.
                let x = (o as u32).wrapping_mul(0x9E37_79B9).rotate_left(13) >> 24;
                0x80 | (x as u8 & 0x7F)
            })
            .collect();
        Self {
            page_size,
            pattern,
            pages: vec![Vec::new(); pages_hint.min(1 << 24)],
            segments: 0,
            scratch: Vec::new(),
            union: Vec::new(),
        }
    }

    /// Records a write of `pid` that changes the payload bytes of `ranges` (page offsets
    /// `(offset, length)`, already within `HEADER_BYTES..page_size`, sorted or not,
    /// possibly overlapping).
    pub fn apply(&mut self, pid: PageId, ranges: &[(u32, u32)]) {
        let i = pid.0 as usize;
        if i >= self.pages.len() {
            self.pages.resize((i + 1).next_power_of_two(), Vec::new());
        }
        // One write's ranges may overlap: their union changes once.
        let mut union = std::mem::take(&mut self.union);
        union.clear();
        union.extend(ranges.iter().filter(|r| r.1 > 0).map(|&(o, l)| (o, o + l)));
        union.sort_unstable();
        let mut k = 0;
        while k < union.len() {
            let (a, mut b) = union[k];
            k += 1;
            while k < union.len() && union[k].0 <= b {
                b = b.max(union[k].1);
                k += 1;
            }
            debug_assert!(a as usize >= HEADER_BYTES && b as usize <= self.page_size);
            let before = self.pages[i].len();
            overwrite(&mut self.pages[i], &mut self.scratch, a, b);
            self.segments = self.segments + self.pages[i].len() - before;
        }
        self.union = union;
    }

    /// Writes `pid`'s payload (`page[HEADER_BYTES..]`; the header is the caller's).
    pub fn fill(&self, pid: PageId, page: &mut [u8]) {
        page[HEADER_BYTES..].fill(0);
        for s in self.pages.get(pid.0 as usize).into_iter().flatten() {
            // A metadata-only page (`--data none`) is the head: the bytes that lie in it.
            let (a, b) = (s.start as usize, (s.end as usize).min(page.len()));
            if a >= b {
                continue;
            }
            for (dst, &p) in page[a..b].iter_mut().zip(&self.pattern[a..b]) {
                *dst = p ^ s.tag;
            }
        }
    }

    /// Whether `page`'s payload is what the writes of `pid` left; `None` if it is, else the
    /// first differing page offset.
    pub fn first_difference(&self, pid: PageId, page: &[u8], scratch: &mut [u8]) -> Option<usize> {
        self.fill(pid, scratch);
        let (got, want) = (&page[HEADER_BYTES..], &scratch[HEADER_BYTES..]);
        if got == want {
            return None;
        }
        got.iter()
            .zip(want)
            .position(|(a, b)| a != b)
            .map(|i| i + HEADER_BYTES)
    }

    /// Bytes held: the pattern, the page table and the segments.
    pub fn memory_bytes(&self) -> usize {
        self.pattern.len()
            + self.pages.len() * std::mem::size_of::<Vec<Segment>>()
            + self.segments * std::mem::size_of::<Segment>()
    }
}

/// Overwrites `a..b` of one page's sorted, disjoint segments with fresh tags.
fn overwrite(segs: &mut Vec<Segment>, out: &mut Vec<Segment>, a: u32, b: u32) {
    let first = segs.partition_point(|s| s.end <= a);
    let last = segs.partition_point(|s| s.start < b);
    let covered = &segs[first..last];
    let mut mask = 0u128;
    for s in covered {
        mask |= 1 << s.tag;
    }
    out.clear();
    // The parts of the first and last segments outside a..b keep their tags.
    if let Some(s) = covered.first().filter(|s| s.start < a) {
        out.push(Segment { end: a, ..*s });
    }
    // A neighbour's tag, if free, lets the new run join it (fewer segments).
    let left = first.checked_sub(1).map(|k| segs[k]).filter(|s| s.end == a);
    let right = segs.get(last).filter(|s| s.start == b).copied();
    let free = |t: u8| mask & (1 << t) == 0;
    let prefer = [left, right]
        .into_iter()
        .flatten()
        .map(|s| s.tag)
        .find(|&t| free(t));
    match prefer.or_else(|| (1..=TAGS).find(|&t| free(t))) {
        Some(tag) => out.push(Segment {
            start: a,
            end: b,
            tag,
        }),
        None => {
            // Every tag is taken by some covered piece: each piece takes its successor;
            // the gaps between pieces (never written, 0) take tag 1.
            let mut at = a;
            for s in covered {
                let (x, y) = (s.start.max(a), s.end.min(b));
                if at < x {
                    out.push(Segment {
                        start: at,
                        end: x,
                        tag: 1,
                    });
                }
                out.push(Segment {
                    start: x,
                    end: y,
                    tag: s.tag % TAGS + 1,
                });
                at = y;
            }
            if at < b {
                out.push(Segment {
                    start: at,
                    end: b,
                    tag: 1,
                });
            }
        }
    }
    if let Some(s) = covered.last().filter(|s| s.end > b) {
        out.push(Segment { start: b, ..*s });
    }
    let n = out.len();
    segs.splice(first..last, out.drain(..));
    // Join equal-tagged neighbours around the new runs (the bytes are the same).
    let hi = (first + n).min(segs.len() - 1);
    let mut k = hi;
    while k > first.saturating_sub(1) && k > 0 {
        let (p, q) = (segs[k - 1], segs[k]);
        if p.end == q.start && p.tag == q.tag {
            segs[k - 1].end = q.end;
            segs.remove(k);
        }
        k -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(15), ..ProptestConfig::default() })]
        /// Every write changes every byte of its ranges and nothing else; the segments stay
        /// sorted and disjoint.
        #[test]
        fn writes_change_exactly_their_ranges(
            writes in prop::collection::vec(prop::collection::vec((32u32..1024, 1u32..200), 1..6), 1..60)
        ) {
            let ps = 1024usize;
            let mut c = PageContent::new(ps, 4);
            let pid = PageId(2);
            let mut before = vec![0u8; ps];
            let mut after = vec![0u8; ps];
            c.fill(pid, &mut before);
            prop_assert!(before[HEADER_BYTES..].iter().all(|&b| b == 0));
            for w in &writes {
                let w: Vec<(u32, u32)> = w.iter().map(|&(o, l)| (o, l.min(ps as u32 - o))).collect();
                c.apply(pid, &w);
                c.fill(pid, &mut after);
                for o in HEADER_BYTES..ps {
                    let inside = w.iter().any(|&(a, l)| (a as usize..(a + l) as usize).contains(&o));
                    prop_assert_eq!(inside, before[o] != after[o], "offset {}", o);
                }
                let segs = &c.pages[2];
                prop_assert!(segs.windows(2).all(|p| p[0].end <= p[1].start));
                prop_assert!(segs.iter().all(|s| s.start < s.end && (1..=TAGS).contains(&s.tag)));
                before.copy_from_slice(&after);
            }
            // Another page is untouched.
            c.fill(PageId(1), &mut after);
            prop_assert!(after[HEADER_BYTES..].iter().all(|&b| b == 0));
            prop_assert_eq!(c.first_difference(pid, &before, &mut after), None);
        }
    }

    #[test]
    fn every_tag_covered_takes_successors() {
        // 127 one-byte segments with tags 1..=127 and a gap after each; one write over all.
        let mut c = PageContent::new(1024, 1);
        let pid = PageId(0);
        c.pages[0] = (0..127u32)
            .map(|t| Segment {
                start: 100 + 2 * t,
                end: 101 + 2 * t,
                tag: t as u8 + 1,
            })
            .collect();
        let mut before = vec![0u8; 1024];
        c.fill(pid, &mut before);
        c.apply(pid, &[(90, 300)]);
        let mut after = vec![0u8; 1024];
        c.fill(pid, &mut after);
        assert!((90..390).all(|o| before[o] != after[o]));
        assert!((32..90).chain(390..1024).all(|o| before[o] == after[o]));
        assert_eq!(after[100], before[100] ^ 1 ^ 2, "tag 1 became 2");
        assert_eq!(after[352], before[352] ^ 127 ^ 1, "tag 127 wrapped to 1");
    }
}
