//! The window's hit counters of the Two-Stack: [`Counter`] (one array, with group-based
//! spreads) and [`HitCounters`] (the four of Algorithms 3 and 4).

/// Group widths whose reciprocal [`RECIPROCALS`] holds (the paper's 64 pages per group
/// and the variant's `⌈M / 256⌉` up to 65,536 frames).
const RECIPROCALS_UP_TO: usize = 256;

/// `1 / w` for `w` in `1..=256` (index 0 unused), computed at compile time with the same
/// IEEE division as at run time: a spread's density costs a load instead of a division.
static RECIPROCALS: [f64; RECIPROCALS_UP_TO + 1] = {
    let mut a = [0.0; RECIPROCALS_UP_TO + 1];
    let mut w = 1;
    while w <= RECIPROCALS_UP_TO {
        a[w] = 1.0 / w as f64;
        w += 1;
    }
    a
};

/// `1 / w`, exactly as the division gives it.
#[inline]
fn reciprocal(w: u32) -> f64 {
    match RECIPROCALS.get(w as usize) {
        Some(&r) => r,
        None => 1.0 / f64::from(w),
    }
}

/// One hit-counter array (`Hit[1..=M]`, `Hit[∞]`) of one window.
///
/// An access whose effective distance `i = max(d, θ)` is known exactly adds 1 at `i`. A
/// group-based access only knows `d ∈ [lo, hi]` (its group's positions); its unit of
/// count is spread uniformly over the possible values of `max(d, θ)`: a mass of
/// `(θ − lo + 1)/w` at `θ` if `θ` falls inside the group, and `1/w` at each index of the
/// rest of the group (`w = hi − lo + 1`). Spreads are kept as a difference array of
/// densities, so adding is `O(1)` and the cumulative curve costs `O(M)` per window.
#[derive(Debug, Clone, PartialEq)]
pub struct Counter {
    /// Point masses; index `M + 1` is `∞`.
    point: Vec<f64>,
    /// Difference array of uniform densities over index ranges.
    ramp: Vec<f64>,
    /// Accesses counted.
    n: u64,
}

impl Counter {
    fn new(m: usize) -> Self {
        Self {
            point: vec![0.0; m + 2],
            ramp: vec![0.0; m + 3],
            n: 0,
        }
    }

    fn clear(&mut self) {
        self.point.fill(0.0);
        self.ramp.fill(0.0);
        self.n = 0;
    }

    /// The `∞` index (`M + 1`).
    #[inline]
    pub fn inf(&self) -> usize {
        self.point.len() - 1
    }

    /// Accesses counted.
    pub fn accesses(&self) -> u64 {
        self.n
    }

    /// An access absent from the stack (`Hit[∞]`).
    #[inline]
    pub fn add_miss(&mut self) {
        let inf = self.inf();
        self.point[inf] += 1.0;
        self.n += 1;
    }

    /// An access at a distance in `lo..=hi` (exact when `lo == hi`) to an entry with
    /// present-condition threshold `theta`.
    #[inline(always)]
    pub fn add(&mut self, lo: u32, hi: u32, theta: u32) {
        self.n += 1;
        if lo >= hi || theta >= hi {
            self.point[lo.max(theta) as usize] += 1.0;
            return;
        }
        let width = hi - lo + 1;
        let start = if theta >= lo {
            self.point[theta as usize] += f64::from(theta - lo + 1) / f64::from(width);
            theta + 1
        } else {
            lo
        };
        let density = reciprocal(width);
        self.ramp[start as usize] += density;
        self.ramp[hi as usize + 1] -= density;
    }

    /// Cumulative hits for pool sizes `0..=M` (`out[s]` = expected accesses that hit with
    /// `s` frames).
    pub fn cumulative(&self, out: &mut Vec<f64>) {
        let m = self.inf() - 1;
        out.clear();
        out.resize(m + 1, 0.0);
        let (mut density, mut total) = (0.0f64, 0.0f64);
        for (s, o) in out.iter_mut().enumerate().skip(1) {
            density += self.ramp[s];
            total += self.point[s] + density;
            *o = total;
        }
    }

    /// The point masses and the density difference array.
    #[inline]
    pub(crate) fn parts(&self) -> (&[f64], &[f64]) {
        (&self.point, &self.ramp)
    }

    /// The point masses and the density difference array, to be zeroed by the caller
    /// (with [`Counter::clear_ends`] and a zero access count: a cleared counter).
    #[inline]
    pub(crate) fn parts_mut(&mut self) -> (&mut [f64], &mut [f64]) {
        (&mut self.point, &mut self.ramp)
    }

    /// Zeroes the access count and the masses outside `1..=M` (`Hit[0]`, `Hit[∞]` and
    /// the difference array's ends): with `1..=M` zeroed by the caller, a cleared counter.
    pub(crate) fn clear_ends(&mut self) {
        let m = self.inf() - 1;
        self.n = 0;
        self.point[0] = 0.0;
        self.point[m + 1] = 0.0;
        self.ramp[0] = 0.0;
        self.ramp[m + 1..].fill(0.0);
    }

    /// Nonzero point masses `(index, count)` (the whole counter when every access had an
    /// exact distance, as with group size 1).
    pub fn points(&self) -> Vec<(usize, f64)> {
        self.point
            .iter()
            .enumerate()
            .filter(|e| *e.1 != 0.0)
            .map(|(i, &v)| (i, v))
            .collect()
    }
}

/// Hit counters of one window: `Hit_c^r`, `Hit_c^w`, `Hit_d^r`, `Hit_d^w` for a buffer of
/// `M` frames (distances `1..=M`, and `∞`).
#[derive(Debug, Clone, PartialEq)]
pub struct HitCounters {
    /// `Hit_c^r`.
    pub c_read: Counter,
    /// `Hit_c^w`.
    pub c_write: Counter,
    /// `Hit_d^r`.
    pub d_read: Counter,
    /// `Hit_d^w`.
    pub d_write: Counter,
}

impl HitCounters {
    /// Zeroed counters for a buffer of `m` frames.
    pub fn new(m: usize) -> Self {
        Self {
            c_read: Counter::new(m),
            c_write: Counter::new(m),
            d_read: Counter::new(m),
            d_write: Counter::new(m),
        }
    }

    /// Bytes of the four counters' arrays.
    pub fn bytes(&self) -> u64 {
        [&self.c_read, &self.c_write, &self.d_read, &self.d_write]
            .iter()
            .map(|c| std::mem::size_of_val(&c.point[..]) + std::mem::size_of_val(&c.ramp[..]))
            .sum::<usize>() as u64
    }

    /// The buffer size `M`.
    pub fn m(&self) -> usize {
        self.c_read.inf() - 1
    }

    /// Zeroes every counter.
    pub fn clear(&mut self) {
        self.c_read.clear();
        self.c_write.clear();
        self.d_read.clear();
        self.d_write.clear();
    }

    /// Accesses counted (each access counts once in each stack's counters).
    pub fn accesses(&self) -> u64 {
        self.c_read.n + self.c_write.n
    }

    /// Writes counted.
    pub fn writes(&self) -> u64 {
        self.d_write.n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reciprocals_are_the_divisions() {
        for w in 1..=2 * RECIPROCALS_UP_TO as u32 {
            assert_eq!(
                reciprocal(w).to_bits(),
                (1.0 / f64::from(w)).to_bits(),
                "w = {w}"
            );
        }
    }
}
