//! The victim cluster's choice (CFDC's priority, Formula 1): the live clusters' priority
//! inputs and the scan over them; see the module documentation of [`super`].
//!
//! The scan read each block as arrays of four (`as_chunks`) where it took checked
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
//!
//! Fixed-size blocks (stop 31; cachegrind, `flashbuf bench --data none --limit 2000000
//! --buffer-pages 1241 --policy fd-buffer`, main `7c1a1e2` = 1,752.9 M instructions in
//! all, 102.2 M in the choice, 140.0 M in the clustering's own functions):
//! - The floats are kept by block (`[f64; 32]`, the tail of the last block zero: product
//!   0), so a block's length is a constant: no remainder loop, no bounds checks, no
//!   `min(len)`; the timestamp float is written once, when the cluster is created (it
//!   never changes); `u64 → f64` by the signed conversion (one instruction, same value);
//!   `div = ipd.max(1)` (one page has `ipd = 0`, more have `ipd ≥ 1`) without a branch.
//!   1,752.9 M -> 1,738.5 M in all.
//! - A block's maxima as the products stored elementwise, then halves folded onto halves
//!   (`32 → 16 → … → 1`): plain vector maxima. With a constant length the four-lane form
//!   was vectorised across iterations (strided loads, masks): 94.0 M in the choice; the
//!   folds: 81.4 M (1,722.6 M in all).
//! - The fold stops on the way at the largest per class (entries `j (mod 8)`), kept for
//!   the blocks computed this scan: the exact pass looks only into the classes that reach
//!   the floor (4 entries, not 32); the scan indexes slices cut to the block count (no
//!   four-way zip). 81.4 M -> 66.0 M in the choice (victim + scan), 1,712.7 M in all;
//!   mispredictions in the choice 0.94 M -> 0.67 M. Same hits, misses and page writes
//!   (full trace, `fd-buffer` and `cost=clustered`, 1,241 and 400 frames).
//! - Dropped: SSE2 intrinsics for the maxima (the toolchain asks for `unsafe` or
//!   `#[target_feature]` even with SSE2 in the build: the plain folds vectorise as well);
//!   the products by `std::array::from_fn` (not inlined: 15.3 M in `try_from_fn`).

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
        // One page: no distance, so `ipd = 0`; more pages: distinct pages, so `ipd ≥ 1`.
        Self {
            slot,
            n: c.n,
            div: c.ipd.max(1),
            timestamp: c.timestamp,
        }
    }

    /// `n² / div`, the float the scan multiplies by the age.
    pub(super) fn inverse_density(&self) -> f64 {
        f64::from(self.n) * f64::from(self.n) / to_f64(self.div)
    }
}

/// `x as f64` (the same value), by the signed conversion (one instruction) when it fits.
#[inline(always)]
pub(super) fn to_f64(x: u64) -> f64 {
    match i64::try_from(x) {
        Ok(i) => i as f64,
        Err(_) => x as f64,
    }
}

/// Entries per block of the scan: the exact pass looks only into the blocks whose
/// largest inverse priority reaches the floor.
const BLOCK: usize = 32;

/// A block's floats; entries past the live clusters are `0` (`t = r = 0`: product 0).
type Lane = [f64; BLOCK];

/// `a` if larger than `b`, else `b` (no NaN here: it compiles to a float maximum).
#[inline(always)]
fn larger(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

/// Entries per class of a block: entries `j, j + 8, j + 16, j + 24` form class `j`.
const CLASSES: usize = 8;

/// A block's largest product per class (the exact pass looks only into the classes
/// that reach the floor).
type Classes = [f64; CLASSES];

/// Bytes of the scan's state per live cluster: its two floats, and its share of its
/// block's bound, largest and per-class largest.
pub(super) const SCAN_BYTES_PER_ENTRY: usize =
    2 * 8 + (std::mem::size_of::<Bound>() + 8 + std::mem::size_of::<Classes>()).div_ceil(BLOCK);

/// Folds the upper half of `p[..2w]` onto the lower one: `p[k] = max(p[k], p[k + w])`.
#[inline(always)]
fn fold(p: &mut Lane, w: usize) {
    for k in 0..w {
        p[k] = larger(p[k], p[k + w]);
    }
}

/// The largest `(g − t) · r` over a block's entries (0 if none is positive), its
/// largest `r` (0 if none is positive), and each class's largest `(g − t) · r`.
/// Elementwise over the whole block (its length a constant: unrolled, no bounds checks,
/// no branches): the products, then halves folded onto halves (`32 → 16 → … → 1`), each
/// step a vector maximum; the order of the maxima does not change the largest.
#[inline(always)]
fn block_maxima(t: &Lane, r: &Lane, g: f64) -> (f64, f64, Classes) {
    let mut p: Lane = [0.0; BLOCK];
    for k in 0..BLOCK {
        p[k] = (g - t[k]) * r[k];
    }
    fold(&mut p, 16);
    fold(&mut p, 8);
    let mut classes = [0.0; CLASSES];
    classes.copy_from_slice(&p[..CLASSES]);
    fold(&mut p, 4);
    fold(&mut p, 2);
    fold(&mut p, 1);
    let mut q: Lane = *r;
    for w in [16, 8, 4, 2, 1] {
        fold(&mut q, w);
    }
    (larger(p[0], 0.0), larger(q[0], 0.0), classes)
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
    #[inline(always)]
    fn upper(&self, g: f64) -> f64 {
        (self.max + (g - self.at) * self.r_max) * (1.0 + 1e-12)
    }
}

/// The scan's state: the live clusters' float inputs by block (`t`: the timestamp, `r`:
/// `n² / div`, `−1` to exclude an entry during a scan), each block's bound from the last
/// scan that computed it, and this scan's value per block: its largest if computed, else
/// minus its bound (`≤ 0`, never reaching a positive floor).
///
/// Between two choices only the blocks whose entries changed (a few clusters gained or
/// lost pages) are stale; an unchanged block's bound grows with the age only. A scan
/// computes the stale blocks, then the unchanged ones whose bound reaches the floor
/// (the largest bound first), and leaves out the rest: every entry of a left-out block is
/// below the floor, so the largest inverse priority (the floor) and the clusters compared
/// exactly are the same as with every block computed.
#[derive(Debug, Clone)]
pub(super) struct Blocks {
    t: Vec<Lane>,
    r: Vec<Lane>,
    bounds: Vec<Bound>,
    max: Vec<f64>,
    /// Each block's largest per class, if computed this scan (`max ≥ 0`).
    classes: Vec<Classes>,
    /// Blocks for `frames` live clusters.
    capacity: usize,
}

/// Computes a block at `g`: its bound, largest and per-class largest (stored in `out`);
/// returns the largest.
#[inline(always)]
fn compute(t: &Lane, r: &Lane, g: f64, bound: &mut Bound, out: (&mut f64, &mut Classes)) -> f64 {
    let (m, r_max, c) = block_maxima(t, r, g);
    *bound = Bound {
        at: g,
        max: m,
        r_max,
    };
    (*out.0, *out.1) = (m, c);
    m
}

impl Blocks {
    /// Blocks for at most `frames` live clusters (the vectors never grow during a run);
    /// the floats are allocated at the first choice (`start`).
    pub(super) fn new(frames: usize) -> Self {
        let n = frames / BLOCK + 1;
        Self {
            t: Vec::new(),
            r: Vec::new(),
            bounds: Vec::with_capacity(n),
            max: Vec::with_capacity(n),
            classes: Vec::new(),
            capacity: n,
        }
    }

    /// Takes the float inputs of `active`, every block stale.
    fn start(&mut self, active: &[Live]) {
        self.t = vec![[0.0; BLOCK]; self.capacity];
        self.r = vec![[0.0; BLOCK]; self.capacity];
        self.classes = vec![[0.0; CLASSES]; self.capacity];
        for (pos, l) in active.iter().enumerate() {
            self.t[pos / BLOCK][pos % BLOCK] = to_f64(l.timestamp);
            self.r[pos / BLOCK][pos % BLOCK] = l.inverse_density();
        }
        self.bounds.clear();
    }

    /// The entry at `pos` changed (or `pos` is a new entry): its block is stale.
    #[inline(always)]
    fn touch(&mut self, pos: usize) {
        if let Some(b) = self.bounds.get_mut(pos / BLOCK) {
            b.max = f64::INFINITY;
        }
    }

    /// A new entry at `pos` (the end) created at `timestamp`, `r` still 0.
    #[inline]
    pub(super) fn push(&mut self, pos: usize, timestamp: u64) {
        self.t[pos / BLOCK][pos % BLOCK] = to_f64(timestamp);
        self.touch(pos);
    }

    /// The entry at `pos` has `r` now.
    #[inline]
    pub(super) fn set_r(&mut self, pos: usize, r: f64) {
        self.r[pos / BLOCK][pos % BLOCK] = r;
        self.touch(pos);
    }

    /// The entry at `pos` is removed, the last one (at `last`) taking its place; the
    /// last block only loses one (its bound still holds).
    #[inline]
    pub(super) fn swap_remove(&mut self, pos: usize, last: usize) {
        let (lb, lk) = (last / BLOCK, last % BLOCK);
        let (t, r) = (self.t[lb][lk], self.r[lb][lk]);
        self.t[lb][lk] = 0.0;
        self.r[lb][lk] = 0.0;
        if pos != last {
            self.t[pos / BLOCK][pos % BLOCK] = t;
            self.r[pos / BLOCK][pos % BLOCK] = r;
            self.touch(pos);
        }
    }

    /// The largest `(g − t) · r` over the first `len` entries (0 if none is positive), the
    /// inverse of the lowest priority in floating point; `self.max` holds each block's
    /// largest, or minus its bound where that stayed below the floor (`top · (1 − 10⁻⁹)`).
    fn scan(&mut self, len: usize, g: f64) -> f64 {
        let nb = len.div_ceil(BLOCK);
        self.bounds.truncate(nb);
        self.bounds.resize(nb, STALE);
        self.max.clear();
        self.max.resize(nb, 0.0);
        let (t, r) = (&self.t[..nb], &self.r[..nb]);
        let (bounds, max) = (&mut self.bounds[..nb], &mut self.max[..nb]);
        let classes = &mut self.classes[..nb];
        let mut top = 0.0f64;
        // The unchanged block of the largest bound.
        let (mut widest, mut wu) = (nb, f64::NEG_INFINITY);
        for b in 0..nb {
            let u = bounds[b].upper(g);
            if u == f64::INFINITY {
                let m = compute(
                    &t[b],
                    &r[b],
                    g,
                    &mut bounds[b],
                    (&mut max[b], &mut classes[b]),
                );
                top = larger(m, top);
            } else {
                max[b] = -u;
                let wider = u > wu;
                wu = if wider { u } else { wu };
                widest = if wider { b } else { widest };
            }
        }
        for b in (widest..nb).take(1).chain(0..nb) {
            if -max[b] >= top * (1.0 - 1e-9) {
                let m = compute(
                    &t[b],
                    &r[b],
                    g,
                    &mut bounds[b],
                    (&mut max[b], &mut classes[b]),
                );
                top = larger(m, top);
            }
        }
        top
    }

    /// Calls `visit` with the index of every entry whose `(g − t) · r ≥ floor` (`> 0`),
    /// looking only into the classes that reach `floor` of the blocks whose largest this
    /// scan reaches it (so computed this scan). Not in index order: the caller's exact
    /// comparison is a strict order (timestamps are unique), so the order does not matter.
    #[inline]
    fn for_each_at_least(&self, g: f64, floor: f64, mut visit: impl FnMut(usize)) {
        let nb = self.max.len();
        let (t, r, classes) = (&self.t[..nb], &self.r[..nb], &self.classes[..nb]);
        for (b, &v) in self.max.iter().enumerate() {
            if v >= floor {
                let (t, r) = (&t[b], &r[b]);
                for (j, &c) in classes[b].iter().enumerate() {
                    if c >= floor {
                        for k in (j..BLOCK).step_by(CLASSES) {
                            if (g - t[k]) * r[k] >= floor {
                                visit(b * BLOCK + k);
                            }
                        }
                    }
                }
            }
        }
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
        self.blocks.start(&self.active);
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
            self.blocks.set_r(pos, -1.0);
        }
        let g = self.globaltime;
        let top = self.blocks.scan(self.active.len(), to_f64(g));
        let mut best: Option<&Live> = None;
        if top > 0.0 {
            let floor = top * (1.0 - 1e-9);
            let active = &self.active;
            self.blocks.for_each_at_least(to_f64(g), floor, |i| {
                let l = &active[i];
                if best.is_none_or(|b| lower_priority(l, b, g)) {
                    best = Some(l);
                }
            });
        }
        let best = best.map(|b| b.slot);
        for slot in excluded {
            let pos = self.slots[slot as usize].active_pos as usize;
            let r = self.active[pos].inverse_density();
            self.blocks.set_r(pos, r);
        }
        best
    }
}
