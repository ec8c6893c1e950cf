//! The block scan that finds the cluster of lowest CFDC priority (Formula 1) among many:
//! FD-Buffer's dirty-pool clusters (`fd_buffer/cluster`) and CFDC's own
//! ([`super::ClusterSet`]) keep their live clusters' priority inputs here, densely by
//! position, and ask for the largest inverse priority `1/P(c) = (g − t_c) · n_c² / div_c`
//! in floating point; the caller then compares exactly the few clusters within a relative
//! `10⁻⁹` of it ([`Blocks::for_each_at_least`]), so the choice is the exact minimum.
//! Float error (a few parts in 2⁵³) is far below that margin.
//!
//! The measurements that shaped it (blocks of 32, folds, per-class maxima, bounds carried
//! between scans) are in the documentation of `fd_buffer/cluster/priority.rs`, where it
//! was first written for FD-Buffer.

/// Whether a cluster of dividend `div`, `n` pages and timestamp `t` (`a = (div, n, t)`)
/// comes before `b` at globaltime `g`: `div_a/(n_a² (g−t_a)) < div_b/(n_b² (g−t_b))`,
/// exactly (128-bit cross products), ties by the older timestamp. The exact pass after a
/// scan, and every exact comparison of CFDC's clusters.
#[inline]
pub(crate) fn lower_priority(a: (u64, u32, u64), b: (u64, u32, u64), g: u64) -> bool {
    let den = |(_, n, t): (u64, u32, u64)| u128::from(n) * u128::from(n) * u128::from(g - t);
    let lhs = u128::from(a.0) * den(b);
    let rhs = u128::from(b.0) * den(a);
    lhs < rhs || (lhs == rhs && a.2 < b.2)
}

/// `x as f64` (the same value), by the signed conversion (one instruction) when it fits.
#[inline(always)]
pub(crate) fn to_f64(x: u64) -> f64 {
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
pub(crate) const SCAN_BYTES_PER_ENTRY: usize =
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
pub(crate) struct Blocks {
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
    pub(crate) fn new(frames: usize) -> Self {
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

    /// Takes the float inputs `(timestamp, r)` of the entries at positions `0, 1, …`,
    /// every block stale.
    pub(crate) fn start(&mut self, entries: impl Iterator<Item = (u64, f64)>) {
        self.t = vec![[0.0; BLOCK]; self.capacity];
        self.r = vec![[0.0; BLOCK]; self.capacity];
        self.classes = vec![[0.0; CLASSES]; self.capacity];
        for (pos, (timestamp, r)) in entries.enumerate() {
            self.t[pos / BLOCK][pos % BLOCK] = to_f64(timestamp);
            self.r[pos / BLOCK][pos % BLOCK] = r;
        }
        self.bounds.clear();
    }

    /// The float inputs `(t, r)` at `pos` (for checks): `(0, 0)` past the entries.
    pub(crate) fn entry(&self, pos: usize) -> (f64, f64) {
        let (b, k) = (pos / BLOCK, pos % BLOCK);
        match (self.t.get(b), self.r.get(b)) {
            (Some(t), Some(r)) => (t[k], r[k]),
            _ => (0.0, 0.0),
        }
    }

    /// Positions the blocks hold (entries and the zeroes past them).
    pub(crate) fn positions(&self) -> usize {
        self.t.len() * BLOCK
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
    pub(crate) fn push(&mut self, pos: usize, timestamp: u64) {
        self.t[pos / BLOCK][pos % BLOCK] = to_f64(timestamp);
        self.touch(pos);
    }

    /// The entry at `pos` has `r` now.
    #[inline]
    pub(crate) fn set_r(&mut self, pos: usize, r: f64) {
        self.r[pos / BLOCK][pos % BLOCK] = r;
        self.touch(pos);
    }

    /// The entry at `pos` is removed, the last one (at `last`) taking its place; the
    /// last block only loses one (its bound still holds).
    #[inline]
    pub(crate) fn swap_remove(&mut self, pos: usize, last: usize) {
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
    pub(crate) fn scan(&mut self, len: usize, g: f64) -> f64 {
        let nb = len.div_ceil(BLOCK);
        self.bounds.truncate(nb);
        self.bounds.resize(nb, STALE);
        self.max.clear();
        self.max.resize(nb, 0.0);
        let (t, r) = (&self.t[..nb], &self.r[..nb]);
        let (bounds, max) = (&mut self.bounds[..nb], &mut self.max[..nb]);
        let classes = &mut self.classes[..nb];
        // Block `b` computed at `g` (its bound, largest and classes stored).
        let block = |b: usize, bounds: &mut [Bound], max: &mut [f64], classes: &mut [Classes]| {
            compute(
                &t[b],
                &r[b],
                g,
                &mut bounds[b],
                (&mut max[b], &mut classes[b]),
            )
        };
        let mut top = 0.0f64;
        // The unchanged block of the largest bound.
        let (mut widest, mut wu) = (nb, f64::NEG_INFINITY);
        for b in 0..nb {
            let u = bounds[b].upper(g);
            if u == f64::INFINITY {
                let m = block(b, bounds, max, classes);
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
                let m = block(b, bounds, max, classes);
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
    pub(crate) fn for_each_at_least(&self, g: f64, floor: f64, mut visit: impl FnMut(usize)) {
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
