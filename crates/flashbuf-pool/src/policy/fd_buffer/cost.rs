//! FD-Buffer's cost model (On et al., IEEE TC 2014, §4.2 Eq. (3), §4.3 Eqs. (5)–(7)) and
//! the policy advisor's minimisation over `M_c` (§4.4).
//!
//! `Cost'_io(M_c) = P_c(M_c) · P_d(M_d) · (1 + P_d^w(M_d) · R)`, `M_d = M − M_c`, with the
//! miss rates computed from one window's Two-Stack hit counters. The advisor evaluates
//! every `M_c` in `1..=M−1` with prefix sums (`O(M)` per window) and keeps the first
//! minimum (the smallest such `M_c`: ties are common because group-based counters make
//! the curves step functions).
//!
//! # Eq. (3) against the I/Os it stands for
//! Eq. (2) is exact: `Cost' = P_total · (1 + E_dirty · R)` with `P_total` the misses per
//! access and `E_dirty` the dirty evictions per miss (Table 3: Belady's `6/9 · (1 + 2/6 ·
//! R)` is 6 reads and 2 write-backs over 9 accesses). Eq. (3) substitutes `P_total = P_c ·
//! P_d` (§4.2: "the probability that the page is not found in the clean pool is
//! independent of the probability that the page is not found in the dirty pool") and
//! `E_dirty = P_d^w`. Neither holds for the counts: a page is in one pool at most, so
//! "hit in `C`" and "hit in `D`" are disjoint events and the misses are `1 − (1 − P_c) −
//! (1 − P_d) = P_c + P_d − 1` (≤ `P_c · P_d`, with equality only when one pool has no
//! hits); and each write that misses the dirty pool makes one page dirty that leaves by a
//! write-back, so the write-backs per access are `w · P_d^w` (`w` = writes / accesses),
//! whatever the misses. [`Curves::best_m_c_io_by`] minimises that count,
//! `(P_c + P_d − 1) + w · P_d^w · R` — Eq. (2) with the substitutions that hold (the
//! clustered-cost variant's default, `count=io`; the faithful policy keeps Eq. (3)). The
//! unit test `eq3_charges_write_backs_the_window_does_not_have` shows a window where
//! Eq. (3) charges 16 write-backs for 10 writes and picks the dearer split.
//!
//! Moving `M_c` has a price of its own, which neither count sees: raising it by `Δ` forces
//! `Δ` dirty pages out at once (write-backs a steady pool would have saved when they are
//! written again), lowering it drops `Δ` clean pages that may be read again.
//! [`Curves::best_m_c_io_from`] adds `Δ · R(M_d)` or `Δ` to the window's count, so a
//! move must pay for itself within one window (`moves=paid`; the variant's default,
//! `moves=cusum`, pays it out of the savings since the last move, `super::moves`).
//!
//! Conventions where the paper is silent: a window without writes has `P_d^w = 0` (no
//! dirty page would be evicted); an empty window leaves `M_c` unchanged (the caller does
//! not run the advisor); for `M = 1` the only choice is `M_c = 1`.
//!
//! `Curves::fill_and_clear` takes the counters' entries one by one, not through
//! `try_map`, inlined or not as unrelated code changed: 9.3 M or 21.1 M instructions per
//! million TPC-C references at 1,241 frames (FD-Buffer, cachegrind); now 9.3 M always.
//! Stop 32: the parts and curves cut to `0..=M` once (no bounds check in the loop) and
//! [`Curves::best_m_c_by`] over indexed slices instead of zipped, reversed, enumerated
//! iterators: over 2 M references (400 windows) `fill_and_clear` 29.8 M -> 18.9 M and
//! `best_m_c` 21.9 M -> 11.9 M instructions; the same sums in the same order, the same
//! `M_c` in every window (`bench --json` counts and the advisor's report unchanged).

use super::two_stack::HitCounters;

/// Estimated miss rates for one configuration.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MissRates {
    /// `P_c`: miss rate of the clean pool.
    pub p_c: f64,
    /// `P_d`: miss rate of the dirty pool.
    pub p_d: f64,
    /// `P_d^w`: miss rate of writes in the dirty pool.
    pub p_d_w: f64,
}

/// Eq. (3): normalised average I/O cost per access.
#[inline]
pub fn normalized_cost(rates: MissRates, r: f64) -> f64 {
    rates.p_c * rates.p_d * (1.0 + rates.p_d_w * r)
}

/// Running sums of [`Curves::fill`]: each counter's density and cumulative hits.
#[derive(Default)]
struct Sums {
    dens: [f64; 4],
    tot: [f64; 4],
}

impl Sums {
    /// Adds one index of the four counters (`(point, ramp)` of `Hit_c^r`, `Hit_c^w`,
    /// `Hit_d^r`, `Hit_d^w`) to the running sums; returns the curves at that index:
    /// `[hits_c, hits_d, hits_d_w]`.
    #[inline(always)]
    fn step(&mut self, at: [(f64, f64); 4]) -> [f64; 3] {
        let Self { dens, tot } = self;
        for (k, (point, ramp)) in at.into_iter().enumerate() {
            dens[k] += ramp;
            tot[k] += point + dens[k];
        }
        [tot[0] + tot[1], tot[2] + tot[3], tot[3]]
    }
}

/// A counter's `(point, ramp)` parts cut to indices `0..=m`.
#[inline]
fn upto<'a>((p, r): (&'a mut [f64], &'a mut [f64]), m: usize) -> (&'a mut [f64], &'a mut [f64]) {
    (&mut p[..=m], &mut r[..=m])
}

/// Cumulative sums of one window's counters: `hits_*[s]` = (expected) accesses that hit
/// for pool size `s`, for `s` in `0..=M`.
#[derive(Debug, Clone, Default)]
pub struct Curves {
    hits_c: Vec<f64>,
    hits_d: Vec<f64>,
    hits_d_w: Vec<f64>,
    total: u64,
    writes: u64,
}

impl Curves {
    /// Builds the cumulative curves (`O(M)`).
    pub fn new(c: &HitCounters) -> Self {
        let mut s = Self::default();
        s.fill(c);
        s
    }

    /// Rebuilds the curves in place from `c` (one pass, no allocation after the first
    /// window).
    pub fn fill(&mut self, c: &HitCounters) {
        self.begin(c);
        let parts = [
            c.c_read.parts(),
            c.c_write.parts(),
            c.d_read.parts(),
            c.d_write.parts(),
        ];
        let mut sums = Sums::default();
        for s in 1..=c.m() {
            let [h_c, h_d, h_d_w] = sums.step(parts.map(|(p, r)| (p[s], r[s])));
            self.hits_c[s] = h_c;
            self.hits_d[s] = h_d;
            self.hits_d_w[s] = h_d_w;
        }
    }

    /// [`Curves::fill`] zeroing `c` as it reads it (the start of the next window): one
    /// pass over the counters where filling then clearing them took two. The same sums
    /// in the same order, so the same curves to the bit.
    pub(crate) fn fill_and_clear(&mut self, c: &mut HitCounters) {
        self.begin(c);
        let m = c.m();
        // Every part and curve cut to `0..=M` once: the loop's indices need no bounds
        // checks (see the module documentation).
        let [mut a, mut b, mut d, mut e] = [
            upto(c.c_read.parts_mut(), m),
            upto(c.c_write.parts_mut(), m),
            upto(c.d_read.parts_mut(), m),
            upto(c.d_write.parts_mut(), m),
        ];
        let (hits_c, hits_d, hits_d_w) = (
            &mut self.hits_c[..=m],
            &mut self.hits_d[..=m],
            &mut self.hits_d_w[..=m],
        );
        // One by one: `each_mut().map(..)` goes through `try_map` (see the header).
        let take = |(p, r): &mut (&mut [f64], &mut [f64]), s: usize| {
            (std::mem::take(&mut p[s]), std::mem::take(&mut r[s]))
        };
        let mut sums = Sums::default();
        for s in 1..=m {
            let at = [
                take(&mut a, s),
                take(&mut b, s),
                take(&mut d, s),
                take(&mut e, s),
            ];
            [hits_c[s], hits_d[s], hits_d_w[s]] = sums.step(at);
        }
        for k in [&mut c.c_read, &mut c.c_write, &mut c.d_read, &mut c.d_write] {
            k.clear_ends();
        }
    }

    /// Sizes the curves for `c` (index 0, never written, stays 0) and takes its totals.
    fn begin(&mut self, c: &HitCounters) {
        let m = c.m();
        for v in [&mut self.hits_c, &mut self.hits_d, &mut self.hits_d_w] {
            if v.len() != m + 1 {
                v.clear();
                v.resize(m + 1, 0.0);
            }
        }
        self.total = c.accesses();
        self.writes = c.writes();
    }

    /// Buffer size `M` the curves cover.
    pub fn m(&self) -> usize {
        self.hits_c.len() - 1
    }

    /// Accesses in the window.
    pub fn accesses(&self) -> u64 {
        self.total
    }

    /// Eqs. (5)–(7) at `M_c` (and `M_d = M − M_c`).
    #[inline]
    pub fn rates(&self, m_c: usize) -> MissRates {
        let m = self.m();
        let m_c = m_c.min(m);
        let (inv_t, inv_w) = self.inverses();
        self.rates_with(m_c, m - m_c, inv_t, inv_w)
    }

    /// `1 / accesses` and `1 / writes` (0 where there are none).
    #[inline]
    fn inverses(&self) -> (f64, f64) {
        let inv = |n: u64| if n == 0 { 0.0 } else { 1.0 / n as f64 };
        (inv(self.total), inv(self.writes))
    }

    #[inline]
    fn rates_with(&self, m_c: usize, m_d: usize, inv_t: f64, inv_w: f64) -> MissRates {
        // With no access at all every rate is 1 (P_d^w: 0, no write to miss).
        let miss = |h: f64, inv: f64, empty: f64| if inv == 0.0 { empty } else { 1.0 - h * inv };
        MissRates {
            p_c: miss(self.hits_c[m_c], inv_t, 1.0),
            p_d: miss(self.hits_d[m_d], inv_t, 1.0),
            p_d_w: miss(self.hits_d_w[m_d], inv_w, 0.0),
        }
    }

    /// The advisor: the `M_c` in `1..=M−1` minimising Eq. (3) (first minimum), and its
    /// cost. Work: `M − 1` evaluations.
    pub fn best_m_c(&self, r: f64) -> (usize, f64) {
        self.best_m_c_by(|_| r)
    }

    /// The `M_c` in `1..=M−1` minimising the expected device cost per access counted from
    /// the window's I/Os rather than Eq. (3): `(misses + write-backs · r_at(M_d)) /
    /// accesses`, misses = accesses hitting neither pool (the pools hold disjoint pages:
    /// `P_c + P_d − 1`, at least 0), write-backs = writes missing the dirty pool (each
    /// makes a page dirty that leaves the pool by a write-back: `w · P_d^w`). First
    /// minimum, `M − 1` evaluations.
    pub fn best_m_c_io_by(&self, r_at: impl Fn(usize) -> f64) -> (usize, f64) {
        self.best_m_c_io_from(r_at, None)
    }

    /// [`Self::best_m_c_io_by`] with the price of moving from `M_c = from` added, spread
    /// over one window: raising `M_c` by `Δ` writes `Δ` dirty pages back before their
    /// time (`Δ · r_at(M_d)`), lowering it drops `Δ` clean pages (`Δ` reads). `None`:
    /// moves are free.
    pub fn best_m_c_io_from(
        &self,
        r_at: impl Fn(usize) -> f64,
        from: Option<usize>,
    ) -> (usize, f64) {
        let m = self.m();
        let (inv_t, _) = self.inverses();
        let cost = |m_c: usize| {
            let r = r_at(m - m_c);
            let moved = from.map_or(0.0, |f| move_price(f, m_c, r));
            (self.io_count_at(m_c, r) + moved) * inv_t
        };
        if m < 2 {
            return (m, cost(m));
        }
        let mut best = (1usize, f64::INFINITY);
        for m_c in 1..m {
            let c = cost(m_c);
            if c < best.1 {
                best = (m_c, c);
            }
        }
        best
    }

    /// The window's count at `M_c` (`M_d = M − M_c`) with a write-back priced at `r`:
    /// misses (accesses hitting neither pool, at least 0) plus write-backs (writes
    /// missing the dirty pool) times `r`, in reads. `M_c` must be in `0..=M`.
    #[inline]
    pub fn io_count_at(&self, m_c: usize, r: f64) -> f64 {
        let m_d = self.m() - m_c;
        let misses = (self.total as f64 - self.hits_c[m_c] - self.hits_d[m_d]).max(0.0);
        let write_backs = (self.writes as f64 - self.hits_d_w[m_d]).max(0.0);
        misses + write_backs * r
    }

    /// [`Self::best_m_c`] with an `R` that depends on the dirty pool's size: `r_at(M_d)`
    /// (the clustered-cost variant, [`super::clustered_cost`]).
    pub fn best_m_c_by(&self, r_at: impl Fn(usize) -> f64) -> (usize, f64) {
        let m = self.m();
        if m < 2 {
            return (m, normalized_cost(self.rates(m), r_at(0)));
        }
        if self.total == 0 {
            return (1, normalized_cost(self.rates(1), r_at(m - 1)));
        }
        let (inv_t, inv_w) = self.inverses();
        let has_w = if self.writes == 0 { 0.0 } else { 1.0 };
        // M_c runs up from 1 while M_d = M − M_c runs down from M − 1; the first minimum
        // wins (no allocation: the costs are not kept). Indexed slices of one length, no
        // iterator adapters (see the module documentation).
        let n = m - 1;
        let (c, d, w) = (&self.hits_c[1..m], &self.hits_d[1..m], &self.hits_d_w[1..m]);
        let mut best = (1usize, f64::INFINITY);
        for (i, &hc) in c.iter().enumerate() {
            let j = n - 1 - i;
            let p_c = 1.0 - hc * inv_t;
            let p_d = 1.0 - d[j] * inv_t;
            let p_d_w = (1.0 - w[j] * inv_w) * has_w;
            let cost = p_c * p_d * (1.0 + p_d_w * r_at(j + 1));
            if cost < best.1 {
                best = (i + 1, cost);
            }
        }
        best
    }
}

/// The one-time price, in reads, of moving the clean pool's target from `from` to `m_c`:
/// raising it by `Δ` writes `Δ` dirty pages back before their time (`Δ · r`, `r` the
/// write-back price at the new `M_d`), lowering it drops `Δ` clean pages (`Δ` reads).
#[inline]
pub fn move_price(from: usize, m_c: usize, r: f64) -> f64 {
    if m_c > from {
        (m_c - from) as f64 * r
    } else {
        (from - m_c) as f64
    }
}

#[cfg(test)]
mod tests;
