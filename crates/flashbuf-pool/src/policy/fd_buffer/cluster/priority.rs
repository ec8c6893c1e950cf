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
use crate::policy::clustering::scan::{self, to_f64};

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

/// `a < b` in priority (exact): `div_a/(n_a² (g−t_a)) < div_b/(n_b² (g−t_b))`, ties by age.
#[inline]
pub(super) fn lower_priority(a: &Live, b: &Live, g: u64) -> bool {
    scan::lower_priority((a.div, a.n, a.timestamp), (b.div, b.n, b.timestamp), g)
}

impl Clusters {
    /// Starts keeping the scan's float inputs: each live cluster's, as `put_live` would
    /// have stored them.
    #[cold]
    #[inline(never)]
    fn rank(&mut self) {
        self.blocks.start(
            self.active
                .iter()
                .map(|l| (l.timestamp, l.inverse_density())),
        );
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
