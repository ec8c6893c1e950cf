//! LRU miss *and write-back* curves for every buffer size in one pass (design.md §11).
//!
//! For a reference at time `t_k` to page `p` let `d_k` be its LRU stack distance (∞ on the
//! first reference); it hits in a buffer of `C` frames iff `d_k ≤ C`, so it adds a miss
//! for every `C` in `[1, d_k)`. Let `t_w` be `p`'s last write before `t_k` and
//! `m = max(d_{w+1}, …, d_{k−1})` (0 if none): the dirty copy written at `t_w` stayed
//! resident through `t_{k−1}` in a buffer of `C` frames iff `C ≥ m` (no miss since), and
//! it is gone at `t_k` iff `C < d_k`; so `p` was evicted dirty in between exactly for `m ≤
//! C < d_k`, and the reference adds one write-back on that interval. Per page we keep `m`:
//! at each reference of a page ever written add the interval, then `m = 0` on a write,
//! else `m = max(m, d_k)`. At the end of the trace, a page written since its last
//! eviction was evicted dirty for `m ≤ C < e` (`e`: one plus the distinct pages referenced
//! after its last reference), and is still resident and dirty — written by the final
//! flush — for `C ≥ max(m, e)`. Intervals go into difference arrays over `C`, so the whole
//! curve costs O(log n) per reference (the stack distance) plus O(sizes) at the end.
//!
//! With sampling (SHARDS, [`super::shards`]) each reference carries the inverse sampling
//! rate: distances are scaled by it and counts weighted by it.

use super::stack::StackDistance;

/// `m` of a page never written (no write-back interval).
const NEVER_WRITTEN: u32 = u32::MAX;

/// Accumulates the curves of one reference stream. The difference arrays grow with the
/// largest finite (scaled) distance seen; an interval open to infinity only adds at its
/// start.
#[derive(Debug, Clone, Default)]
pub struct CurveBuilder {
    stack: StackDistance,
    /// Per page: the largest (unscaled) distance since its last write, or `NEVER_WRITTEN`.
    since_write: Vec<u32>,
    /// Difference arrays over `C`.
    miss: Vec<f64>,
    wb: Vec<f64>,
    flush: Vec<f64>,
    references: f64,
    writes: f64,
    /// Distinct pages ever seen (weighted).
    distinct: f64,
}

/// Misses and write-backs of LRU at one buffer size.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CurvePoint {
    /// Buffer frames.
    pub buffer_pages: usize,
    /// Misses (page reads), cold misses included.
    pub misses: f64,
    /// Dirty pages evicted during the trace (no final flush), as `replay`'s `page_writes`.
    pub page_writes: f64,
    /// Dirty pages still resident at the end (what a final flush writes).
    pub flush_writes: f64,
    /// `misses / references`.
    pub miss_ratio: f64,
}

/// An interval end: a size, or infinity.
#[derive(Debug, Clone, Copy, PartialEq)]
enum End {
    At(usize),
    Infinite,
}

impl CurveBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// One reference with weight 1 (exact curves).
    #[inline]
    pub fn access(&mut self, is_write: bool, page: u32) {
        self.access_scaled(is_write, page, 1.0);
    }

    /// One (sampled) reference standing for `scale` references: its stack distance among
    /// sampled references is multiplied by `scale`, and it counts `scale` times.
    pub fn access_scaled(&mut self, is_write: bool, page: u32, scale: f64) {
        let p = page as usize;
        if p >= self.since_write.len() {
            self.since_write
                .resize((p + 1).next_power_of_two(), NEVER_WRITTEN);
        }
        let d = self.stack.access(page);
        self.references += scale;
        if is_write {
            self.writes += scale;
        }
        let hi = match d {
            Some(d) => End::At(size_of(d as f64 * scale)),
            None => {
                self.distinct += scale;
                End::Infinite
            }
        };
        interval(&mut self.miss, 1, hi, scale);
        let m = self.since_write[p];
        if m != NEVER_WRITTEN {
            interval(&mut self.wb, size_of(f64::from(m) * scale), hi, scale);
        }
        self.since_write[p] = match (is_write, m, d) {
            (true, _, _) => 0,
            (false, NEVER_WRITTEN, _) => NEVER_WRITTEN,
            (false, m, Some(d)) => m.max(d.min(u64::from(NEVER_WRITTEN - 1)) as u32),
            (false, _, None) => NEVER_WRITTEN - 1,
        };
    }

    /// Stops tracking `page` (fixed-size SHARDS drops pages from its sample).
    pub fn forget(&mut self, page: u32) {
        self.stack.forget(page);
        if let Some(m) = self.since_write.get_mut(page as usize) {
            *m = NEVER_WRITTEN;
        }
    }

    /// Multiplies everything counted so far by `factor` (fixed-size SHARDS lowers its
    /// rate and rescales the histogram).
    pub fn rescale(&mut self, factor: f64) {
        for a in [&mut self.miss, &mut self.wb, &mut self.flush] {
            a.iter_mut().for_each(|x| *x *= factor);
        }
        self.references *= factor;
        self.writes *= factor;
        self.distinct *= factor;
    }

    /// Closes the open intervals (the end of the trace) with `scale` the current inverse
    /// sampling rate, and returns the curve.
    pub fn finish(mut self, scale: f64) -> Curve {
        let pages: Vec<u32> = self.stack.pages().collect();
        for p in pages {
            let m = self
                .since_write
                .get(p as usize)
                .copied()
                .unwrap_or(NEVER_WRITTEN);
            if m == NEVER_WRITTEN {
                continue;
            }
            let lo = size_of(f64::from(m) * scale);
            let e = self
                .stack
                .distance_now(p)
                .map_or(lo, |e| size_of(e as f64 * scale));
            interval(&mut self.wb, lo, End::At(e), scale);
            interval(&mut self.flush, lo.max(e), End::Infinite, scale);
        }
        let len = self
            .miss
            .len()
            .max(self.wb.len())
            .max(self.flush.len())
            .max(2);
        let mut acc = (0.0, 0.0, 0.0);
        let mut misses = Vec::with_capacity(len);
        let mut page_writes = Vec::with_capacity(len);
        let mut flush_writes = Vec::with_capacity(len);
        for c in 0..len {
            acc.0 += self.miss.get(c).copied().unwrap_or(0.0);
            acc.1 += self.wb.get(c).copied().unwrap_or(0.0);
            acc.2 += self.flush.get(c).copied().unwrap_or(0.0);
            misses.push(acc.0);
            page_writes.push(acc.1);
            flush_writes.push(acc.2);
        }
        Curve {
            references: self.references,
            writes: self.writes,
            distinct_pages: self.distinct,
            misses,
            page_writes,
            flush_writes,
            memory_bytes: self.stack.memory_bytes()
                + 4 * self.since_write.capacity()
                + 8 * (self.miss.capacity() + self.wb.capacity() + self.flush.capacity()),
        }
    }
}

/// The smallest whole size `C` with `C ≥ x`.
#[inline]
fn size_of(x: f64) -> usize {
    let c = x.ceil();
    if c <= 0.0 {
        0
    } else if c >= usize::MAX as f64 {
        usize::MAX
    } else {
        c as usize
    }
}

/// The largest size the arrays hold (2^27 frames, 1 TiB of 8 KiB pages); a scaled
/// distance beyond it counts as infinite.
const SIZE_LIMIT: usize = 1 << 27;

/// Adds `w` for every `C` in `[lo, hi)` (`C ≥ 1`), growing `arr` as needed.
#[inline]
fn interval(arr: &mut Vec<f64>, lo: usize, hi: End, w: f64) {
    let lo = lo.max(1);
    if lo > SIZE_LIMIT {
        return;
    }
    let hi = match hi {
        End::At(h) if h > SIZE_LIMIT => End::Infinite,
        h => h,
    };
    let need = |i: usize, arr: &mut Vec<f64>| {
        if i >= arr.len() {
            arr.resize((i + 1).next_power_of_two(), 0.0);
        }
    };
    match hi {
        End::At(hi) if lo < hi => {
            need(hi, arr);
            arr[lo] += w;
            arr[hi] -= w;
        }
        End::At(_) => {}
        End::Infinite => {
            need(lo, arr);
            arr[lo] += w;
        }
    }
}

/// LRU's curves over sizes `0..len` (index = buffer frames; index 0 is unused); every
/// larger size has the last point.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// References (weighted).
    pub references: f64,
    /// Writes (weighted).
    pub writes: f64,
    /// Distinct pages (weighted).
    pub distinct_pages: f64,
    /// Misses per size.
    pub misses: Vec<f64>,
    /// Dirty evictions per size.
    pub page_writes: Vec<f64>,
    /// Dirty pages resident at the end per size.
    pub flush_writes: Vec<f64>,
    /// Bytes the computation held at its end.
    pub memory_bytes: usize,
}

impl Curve {
    /// The largest size covered.
    pub fn max_size(&self) -> usize {
        self.misses.len().saturating_sub(1)
    }

    /// The point at `buffer_pages` (sizes beyond the curve take its last point: a buffer
    /// larger than every stack distance behaves as the largest size computed).
    pub fn at(&self, buffer_pages: usize) -> CurvePoint {
        let c = buffer_pages.clamp(1, self.max_size().max(1));
        let get = |v: &Vec<f64>| v.get(c).copied().unwrap_or(0.0);
        let misses = get(&self.misses);
        CurvePoint {
            buffer_pages,
            misses,
            page_writes: get(&self.page_writes),
            flush_writes: get(&self.flush_writes),
            miss_ratio: if self.references > 0.0 {
                misses / self.references
            } else {
                0.0
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_core::rng::SplitMix64;
    use std::collections::VecDeque;

    /// A plain LRU with dirty bits: (misses, dirty evictions, dirty at end).
    fn naive(refs: &[(bool, u32)], size: usize) -> (u64, u64, u64) {
        let mut q: VecDeque<(u32, bool)> = VecDeque::new();
        let (mut miss, mut wb) = (0, 0);
        for &(w, p) in refs {
            match q.iter().position(|&(x, _)| x == p) {
                Some(i) => {
                    let (_, d) = q.remove(i).unwrap_or((p, false));
                    q.push_front((p, d || w));
                }
                None => {
                    miss += 1;
                    q.push_front((p, w));
                    if q.len() > size {
                        if let Some((_, true)) = q.pop_back() {
                            wb += 1;
                        }
                    }
                }
            }
        }
        (miss, wb, q.iter().filter(|x| x.1).count() as u64)
    }

    #[test]
    fn equals_naive_lru_at_every_size() {
        for seed in 0..6 {
            let mut rng = SplitMix64::new(seed);
            let refs: Vec<(bool, u32)> = (0..4_000)
                .map(|_| (rng.below(4) == 0, rng.below(120) as u32))
                .collect();
            let mut b = CurveBuilder::new();
            refs.iter().for_each(|&(w, p)| b.access(w, p));
            let c = b.finish(1.0);
            for size in 1..=130 {
                let (m, w, f) = naive(&refs, size);
                let pt = c.at(size);
                assert_eq!(
                    (
                        pt.misses as u64,
                        pt.page_writes as u64,
                        pt.flush_writes as u64
                    ),
                    (m, w, f),
                    "seed {seed} size {size}"
                );
            }
        }
    }
}
