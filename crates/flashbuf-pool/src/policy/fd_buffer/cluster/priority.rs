//! The victim cluster's choice (CFDC's priority, Formula 1): the live clusters' priority
//! inputs and the scan over them; see the module documentation of [`super`].

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

/// The largest `(g − t) · r` over the entries (0 if none is positive): the inverse of
/// the lowest priority, in floating point. Four lanes, no branches: it vectorises.
fn max_inverse_priority(t: &[f64], r: &[f64], g: f64) -> f64 {
    let mut m = [0.0f64; 4];
    let (tc, rc) = (t.chunks_exact(4), r.chunks_exact(4));
    let (tr, rr) = (tc.remainder(), rc.remainder());
    for (t4, r4) in tc.zip(rc) {
        for k in 0..4 {
            let q = (g - t4[k]) * r4[k];
            m[k] = if q > m[k] { q } else { m[k] };
        }
    }
    for (&t, &r) in tr.iter().zip(rr) {
        let q = (g - t) * r;
        m[0] = if q > m[0] { q } else { m[0] };
    }
    m[0].max(m[1]).max(m[2].max(m[3]))
}

/// Calls `visit` with the index of every entry whose `(g − t) · r ≥ floor`, in order.
/// Eight lanes at a time, branch-free within a chunk: chunks without one are skipped.
#[inline]
fn for_each_at_least(t: &[f64], r: &[f64], g: f64, floor: f64, mut visit: impl FnMut(usize)) {
    const LANES: usize = 8;
    let (tc, rc) = (t.chunks_exact(LANES), r.chunks_exact(LANES));
    let (tr, rr) = (tc.remainder(), rc.remainder());
    let at_least = |t: f64, r: f64| (g - t) * r >= floor;
    for (i, (t8, r8)) in tc.zip(rc).enumerate() {
        let mut any = false;
        for k in 0..LANES {
            any |= at_least(t8[k], r8[k]);
        }
        if any {
            (0..LANES)
                .filter(|&k| at_least(t8[k], r8[k]))
                .for_each(|k| visit(i * LANES + k));
        }
    }
    let base = t.len() - tr.len();
    for (k, (&t, &r)) in tr.iter().zip(rr).enumerate() {
        if at_least(t, r) {
            visit(base + k);
        }
    }
}

/// `a < b` in priority (exact): `div_a/(n_a² (g−t_a)) < div_b/(n_b² (g−t_b))`, ties by age.
#[inline]
fn lower_priority(a: &Live, b: &Live, g: u64) -> bool {
    let den = |c: &Live| (c.n as u128) * (c.n as u128) * (g - c.timestamp) as u128;
    let lhs = a.div as u128 * den(b);
    let rhs = b.div as u128 * den(a);
    lhs < rhs || (lhs == rhs && a.timestamp < b.timestamp)
}

impl Clusters {
    /// The slot of the live cluster of lowest priority, leaving out the draining one and
    /// those in `skip`.
    pub(super) fn lowest_priority(&mut self, skip: &[u32]) -> Option<u32> {
        let draining = (self.draining != NIL).then_some(self.draining);
        let excluded = skip.iter().copied().chain(draining);
        for slot in excluded.clone() {
            let pos = self.slots[slot as usize].active_pos as usize;
            self.live_r[pos] = -1.0;
        }
        let g = self.globaltime;
        let top = max_inverse_priority(&self.live_t, &self.live_r, g as f64);
        let mut best: Option<&Live> = None;
        if top > 0.0 {
            let floor = top * (1.0 - 1e-9);
            let active = &self.active;
            for_each_at_least(&self.live_t, &self.live_r, g as f64, floor, |i| {
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
