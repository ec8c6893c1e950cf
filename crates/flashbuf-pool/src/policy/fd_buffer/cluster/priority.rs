//! The victim cluster's choice (CFDC's priority, Formula 1): the live clusters' priority
//! inputs and the scan over them; see the module documentation of [`super`].
//!
//! The scan reads each block as arrays of four (`as_chunks`) where it took checked
//! four-element slices: the same lanes in the same order, loaded without shuffles;
//! FD-Buffer's first million TPC-C references at 1,241 frames: 78 M -> 70.5 M
//! instructions in the victim choice, 1,302 M -> 1,295 M in all (cachegrind).

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

/// The largest `(g − t) · r` over the entries (0 if none is positive): the inverse of
/// the lowest priority, in floating point; each block's largest (0 if none is positive)
/// goes to `block_max`. Four lanes, no branches: it vectorises.
fn max_inverse_priority(t: &[f64], r: &[f64], g: f64, block_max: &mut Vec<f64>) -> f64 {
    let larger = |a: f64, b: f64| if a > b { a } else { b };
    block_max.clear();
    let mut top = 0.0f64;
    for (tb, rb) in t.chunks(BLOCK).zip(r.chunks(BLOCK)) {
        let mut m = [0.0f64; 4];
        let ((tc, tr), (rc, rr)) = (tb.as_chunks::<4>(), rb.as_chunks::<4>());
        for (t4, r4) in tc.iter().zip(rc) {
            for k in 0..4 {
                m[k] = larger((g - t4[k]) * r4[k], m[k]);
            }
        }
        for (&t, &r) in tr.iter().zip(rr) {
            m[0] = larger((g - t) * r, m[0]);
        }
        let block = larger(larger(m[0], m[1]), larger(m[2], m[3]));
        block_max.push(block);
        top = larger(block, top);
    }
    top
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
        }
        let g = self.globaltime;
        let (t, r) = (&self.live_t[..], &self.live_r[..]);
        let top = max_inverse_priority(t, r, g as f64, &mut self.block_max);
        let mut best: Option<&Live> = None;
        if top > 0.0 {
            let floor = top * (1.0 - 1e-9);
            let active = &self.active;
            let scanned = (t, r, &self.block_max[..]);
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
        }
        best
    }
}
