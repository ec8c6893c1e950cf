//! The victim cluster's priority (CFDC's Formula 1): the clusters' priority inputs, the
//! exact comparison, and the exact one-pass scan the choice falls back to when the
//! tournament's winner has no evictable page (see the module documentation of [`super`]).

use super::{Cluster, Clusters};

/// A cluster's priority inputs, by slot: `P = div / (n2 · (g − stamp))`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Key {
    /// The dividend: 1 for one page, else the sum of page distances.
    pub(super) div: u64,
    /// `n²`.
    pub(super) n2: u64,
    /// globaltime at the cluster's creation (distinct among live clusters).
    pub(super) stamp: u64,
}

impl Key {
    pub(super) fn of(c: &Cluster) -> Self {
        let div = if c.n == 1 { 1 } else { c.ipd };
        Self {
            div,
            n2: u64::from(c.n) * u64::from(c.n),
            stamp: c.timestamp,
        }
    }
}

/// `a < b` in priority (exact): `div_a/(n_a² (g−t_a)) < div_b/(n_b² (g−t_b))`, ties by age.
#[inline]
pub(super) fn lower_priority(a: &Key, b: &Key, g: u64) -> bool {
    let den = |c: &Key| u128::from(c.n2) * u128::from(g - c.stamp);
    let lhs = u128::from(a.div) * den(b);
    let rhs = u128::from(b.div) * den(a);
    lhs < rhs || (lhs == rhs && a.stamp < b.stamp)
}

impl Clusters {
    /// The slot of the live cluster of lowest priority, leaving out the draining one and
    /// those in `skip`: one exact pass over the live clusters.
    pub(super) fn lowest_priority(&self, skip: &[u32]) -> Option<u32> {
        let g = self.globaltime;
        let mut best: Option<u32> = None;
        for &s in &self.active {
            if s == self.draining || skip.contains(&s) {
                continue;
            }
            let k = &self.keys[s as usize];
            if best.is_none_or(|b| lower_priority(k, &self.keys[b as usize], g)) {
                best = Some(s);
            }
        }
        best
    }
}

/// The scan the tournament replaced, kept as a reference for the tests: the largest
/// `1/P(c) = (g − t_c) · n_c² / div_c` in floating point, then the clusters within a
/// relative `10⁻⁹` of it compared exactly.
#[cfg(test)]
pub(super) fn float_scan(c: &Clusters, skip: &[u32]) -> Option<u32> {
    let g = c.globaltime;
    let excluded = |s: u32| s == c.draining || skip.contains(&s);
    let inv = |s: u32| {
        let k = &c.keys[s as usize];
        if excluded(s) {
            -1.0
        } else {
            (g as f64 - k.stamp as f64) * (k.n2 as f64 / k.div as f64)
        }
    };
    let top = c.active.iter().map(|&s| inv(s)).fold(0.0f64, f64::max);
    if top <= 0.0 {
        return None;
    }
    let floor = top * (1.0 - 1e-9);
    let mut best: Option<u32> = None;
    for &s in c.active.iter().filter(|&&s| inv(s) >= floor) {
        let k = &c.keys[s as usize];
        if best.is_none_or(|b| lower_priority(k, &c.keys[b as usize], g)) {
            best = Some(s);
        }
    }
    best
}
