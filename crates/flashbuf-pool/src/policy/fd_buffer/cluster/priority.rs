//! The victim cluster's choice (CFDC's priority, Formula 1): the live clusters' priority
//! inputs and the scan over them; see the module documentation of [`super`].
//!
//! The scan reads each block as arrays of four (`as_chunks`) where it took checked
//! four-element slices: the same lanes in the same order, loaded without shuffles;
//! FD-Buffer's first million TPC-C references at 1,241 frames: 78 M -> 70.5 M
//! instructions in the victim choice, 1,302 M -> 1,295 M in all (cachegrind).
//!
//! Each block keeps a bound from the scan that last computed it (`Blocks`): a block
//! whose clusters did not change since is computed again only if its bound reaches the
//! floor, so a choice computes about 3.5 of its 9 blocks (2.4 changed, 1.1 by their
//! bound; first 2 M TPC-C references, 1,241 frames), and the largest inverse priority
//! and the clusters compared exactly stay those of a full scan. Cachegrind, `flashbuf
//! bench --data none --limit 2000000 --policy fd-buffer`: 132.1 M -> 102.2 M
//! instructions in the choice (the scan and the victim's own). Computing a block's two
//! maxima (inverse priority and `n²/div`) in one pass paired them in a register, seven
//! instructions an entry; two passes take about five (45.1 M -> 39.8 M in the blocks).
//! Tried and dropped: bounds raised in place as clusters change (no block ever stale,
//! computed only by its bound): looser bounds, 3.2 blocks a choice but 3.5 M more
//! instructions in all.

use super::{Cluster, Clusters, NIL};

/// A live cluster's priority inputs, kept densely for the victim scan.
#[derive(Debug, Clone, Copy)]
pub(super) struct Live {
    pub(super) slot: u32,
    pub(super) n: u32,
    /// The dividend: 1 for one page, else the sum of page distances.
    pub(super) div: u64,
    pub(super) timestamp: u64,
}

impl Live {
    pub(super) fn of(slot: u32, c: &Cluster) -> Self {
        let div = if c.n == 1 { 1 } else { c.ipd };
        Self {
            slot,
            n: c.n,
            div,
            timestamp: c.timestamp,
        }
    }

    /// `n² / div`, the float the scan multiplies by the age.
    pub(super) fn inverse_density(&self) -> f64 {
        f64::from(self.n) * f64::from(self.n) / self.div as f64
    }
}

/// Entries per block of the scan: the exact pass looks only into the blocks whose
/// largest inverse priority reaches the floor.
const BLOCK: usize = 32;

/// `a` if larger than `b`, else `b` (no NaN here: it compiles to a float maximum).
#[inline(always)]
fn larger(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

/// The largest `(g − t) · r` over a block's entries (0 if none is positive) and its
/// largest `r` (0 if none is positive). Two passes of four lanes, no branches: each
/// vectorises (one pass for both paired each entry's two maxima in a register).
fn block_maxima(t: &[f64], r: &[f64], g: f64) -> (f64, f64) {
    let max4 = |m: [f64; 4]| larger(larger(m[0], m[1]), larger(m[2], m[3]));
    let ((tc, tr), (rc, rr)) = (t.as_chunks::<4>(), r.as_chunks::<4>());
    let mut m = [0.0f64; 4];
    for (t4, r4) in tc.iter().zip(rc) {
        for k in 0..4 {
            m[k] = larger((g - t4[k]) * r4[k], m[k]);
        }
    }
    for (&t, &r) in tr.iter().zip(rr) {
        m[0] = larger((g - t) * r, m[0]);
    }
    let mut rm = [0.0f64; 4];
    for r4 in rc {
        for k in 0..4 {
            rm[k] = larger(r4[k], rm[k]);
        }
    }
    for &r in rr {
        rm[0] = larger(r, rm[0]);
    }
    (max4(m), max4(rm))
}

/// A block as last computed: at globaltime `at` its largest `(g − t) · r` was `max` and
/// its largest `r` was `r_max`. `max = ∞`: the block changed since (stale).
#[derive(Debug, Clone, Copy)]
struct Bound {
    at: f64,
    max: f64,
    r_max: f64,
}

const STALE: Bound = Bound {
    at: 0.0,
    max: f64::INFINITY,
    r_max: 0.0,
};

impl Bound {
    /// A bound on every entry's `(g − t) · r` at `g ≥ at` (∞ if stale): each grew by
    /// `(g − at) · r ≤ (g − at) · r_max` since; the factor covers the roundings (a few
    /// parts in 2⁵³ of the products and sums, far below 10⁻¹²).
    #[inline]
    fn upper(&self, g: f64) -> f64 {
        (self.max + (g - self.at) * self.r_max) * (1.0 + 1e-12)
    }
}

/// The scan's blocks: each block's bound from the last scan that computed it, and this
/// scan's largest per block (`−∞` for a block its bound left out).
///
/// Between two choices only the blocks whose entries changed (a few clusters gained or
/// lost pages) are stale; an unchanged block's bound grows with the age only. A scan
/// computes the stale blocks, then the unchanged ones whose bound reaches the floor
/// (the largest bound first), and leaves out the rest: every entry of a left-out block is
/// below the floor, so the largest inverse priority (the floor) and the clusters compared
/// exactly are the same as with every block computed.
#[derive(Debug, Clone)]
pub(super) struct Blocks {
    bounds: Vec<Bound>,
    max: Vec<f64>,
}

impl Blocks {
    /// Blocks for at most `frames` live clusters (the vectors never grow during a run).
    pub(super) fn new(frames: usize) -> Self {
        let n = frames / BLOCK + 1;
        Self {
            bounds: Vec::with_capacity(n),
            max: Vec::with_capacity(n),
        }
    }

    /// The entry at `pos` changed (or `pos` is a new entry): its block is stale.
    #[inline]
    pub(super) fn touch(&mut self, pos: usize) {
        if let Some(b) = self.bounds.get_mut(pos / BLOCK) {
            b.max = f64::INFINITY;
        }
    }

    /// The largest `(g − t) · r` over the entries (0 if none is positive), the inverse
    /// of the lowest priority in floating point; `self.max` holds each block's largest,
    /// or `−∞` where its bound stayed below the floor (`top · (1 − 10⁻⁹)`).
    fn scan(&mut self, t: &[f64], r: &[f64], g: f64) -> f64 {
        let nb = t.len().div_ceil(BLOCK);
        self.bounds.truncate(nb);
        self.bounds.resize(nb, STALE);
        self.max.clear();
        let compute = |b: usize, bound: &mut Bound| {
            let range = b * BLOCK..(b * BLOCK + BLOCK).min(t.len());
            let (max, r_max) = block_maxima(&t[range.clone()], &r[range], g);
            *bound = Bound { at: g, max, r_max };
            max
        };
        let mut top = 0.0f64;
        // The unchanged block of the largest bound.
        let mut widest: Option<(usize, f64)> = None;
        for (b, bound) in self.bounds.iter_mut().enumerate() {
            if bound.max == f64::INFINITY {
                let m = compute(b, bound);
                self.max.push(m);
                top = larger(m, top);
            } else {
                let u = bound.upper(g);
                self.max.push(f64::NEG_INFINITY);
                if widest.is_none_or(|(_, w)| u > w) {
                    widest = Some((b, u));
                }
            }
        }
        let first = widest.map(|(b, _)| b);
        for b in first.into_iter().chain(0..nb) {
            if self.max[b] == f64::NEG_INFINITY && self.bounds[b].upper(g) >= top * (1.0 - 1e-9) {
                let m = compute(b, &mut self.bounds[b]);
                self.max[b] = m;
                top = larger(m, top);
            }
        }
        top
    }
}

/// Calls `visit` with the index of every entry whose `(g − t) · r ≥ floor`, in order,
/// looking only into the blocks whose largest (`block_max`) reaches `floor`.
#[inline]
fn for_each_at_least(
    (t, r, block_max): (&[f64], &[f64], &[f64]),
    g: f64,
    floor: f64,
    mut visit: impl FnMut(usize),
) {
    for (b, _) in block_max.iter().enumerate().filter(|e| *e.1 >= floor) {
        let end = (b * BLOCK + BLOCK).min(t.len());
        (b * BLOCK..end)
            .filter(|&k| (g - t[k]) * r[k] >= floor)
            .for_each(&mut visit);
    }
}

/// `a < b` in priority (exact): `div_a/(n_a² (g−t_a)) < div_b/(n_b² (g−t_b))`, ties by age.
#[inline]
pub(super) fn lower_priority(a: &Live, b: &Live, g: u64) -> bool {
    let den = |c: &Live| (c.n as u128) * (c.n as u128) * (g - c.timestamp) as u128;
    let lhs = a.div as u128 * den(b);
    let rhs = b.div as u128 * den(a);
    lhs < rhs || (lhs == rhs && a.timestamp < b.timestamp)
}

impl Clusters {
    /// Starts keeping the scan's float inputs: each live cluster's, as `put_live` would
    /// have stored them.
    #[cold]
    #[inline(never)]
    fn rank(&mut self) {
        self.live_t = self.active.iter().map(|l| l.timestamp as f64).collect();
        self.live_r = self.active.iter().map(Live::inverse_density).collect();
        self.blocks.bounds.clear();
        self.ranked = true;
    }

    /// The slot of the live cluster of lowest priority, leaving out the draining one and
    /// those in `skip`.
    pub(super) fn lowest_priority(&mut self, skip: &[u32]) -> Option<u32> {
        if !self.ranked {
            self.rank();
        }
        let draining = (self.draining != NIL).then_some(self.draining);
        let excluded = skip.iter().copied().chain(draining);
        for slot in excluded.clone() {
            let pos = self.slots[slot as usize].active_pos as usize;
            self.live_r[pos] = -1.0;
            self.blocks.touch(pos);
        }
        let g = self.globaltime;
        let (t, r) = (&self.live_t[..], &self.live_r[..]);
        let top = self.blocks.scan(t, r, g as f64);
        let mut best: Option<&Live> = None;
        if top > 0.0 {
            let floor = top * (1.0 - 1e-9);
            let active = &self.active;
            let scanned = (t, r, &self.blocks.max[..]);
            for_each_at_least(scanned, g as f64, floor, |i| {
                let l = &active[i];
                if best.is_none_or(|b| lower_priority(l, b, g)) {
                    best = Some(l);
                }
            });
        }
        let best = best.map(|b| b.slot);
        for slot in excluded {
            let pos = self.slots[slot as usize].active_pos as usize;
            self.live_r[pos] = self.active[pos].inverse_density();
            self.blocks.touch(pos);
        }
        best
    }
}
