//! A named variant beside the faithful FD-Buffer (not in the paper): the advisor's cost
//! model with the price of a *clustered* write-back as a function of the dirty pool's size
//! (`fd-buffer:cost=clustered`; issue 16, item 7).
//!
//! # Why
//! Eq. (3) prices every dirty eviction at the device's random-write cost `R`. With write
//! clustering (§4.5) that is wrong, and wrong in a way that depends on `M_d`: the dirty
//! pool drains a cluster (the pages of one erase block) page after page, so `k` pages of a
//! block reach the device in a row, and a device that merges blocks (BAST, FAST) pays
//! about one merge for them instead of `k`. The larger the dirty pool, the more pages
//! each cluster holds when it drains, the cheaper each written page. Eq. (3) cannot see
//! this: on a sysbench OLTP trace on the steady SD card it shrinks the dirty pool to one
//! page (`M_c = M − 1`), every write-back is then a lone page of its block (112 ms per
//! page written), while CASA's split keeps 397 dirty pages and pays 40 ms per page
//! (measured, `flashbuf compare --trace traces/oltp-pg15-t8.pagetrace.csv.zst --policies
//! fd-buffer,casa:clustering=drain --device sim:sd-card --buffer-ratio 0.03 --limit
//! 1000000`).
//!
//! # The model
//! A page written in a run of `k` pages of one block costs
//! `w(k) = w_seq + (w_rand − w_seq) / k` (one random write's worth of merge shared by the
//! run, the rest at the sequential rate), so the advisor evaluates Eq. (3) with
//! `R(M_d) = R · (s + (1 − s) / k(M_d))`, `s = w_seq / w_rand` (the device's sequential
//! and random page-write latencies, [`DeviceFacts::seq_write_us`](flashbuf_core::DeviceFacts)
//! and `write_us`; the option `seq=` gives `s` by hand, and holds until a cost update that
//! carries a sequential latency replaces it, as an explicit `r=` does).
//!
//! `k(m)`, the mean pages per cluster when the dirty pool holds `m` pages, is read off the
//! window's own writes: the dirty pool holds about the `m` most recently written distinct
//! pages, so walking the window's write references from the newest back and counting
//! distinct pages `m` and distinct clusters `n(m)` gives `k(m) = m / n(m)` exactly for
//! `m` up to the window's distinct written pages `P_w`; beyond, `k(P_w)` (no
//! extrapolation: the window knows nothing of older writes). A window without writes
//! keeps the previous curve. Work: `O(writes)` hash operations per window plus `O(M)` for
//! the advisor, no allocation once the buffers have grown.

//!
//! # Why FD-Buffer loses to CASA here, measured (issue 16, item 7)
//! Five PostgreSQL page traces (TPC-C w4 and pgbench s20 of `../shared/traces`, pgbench
//! s50, sysbench OLTP and TPC-C w8 of `traces/`), first 1 M references, every policy with
//! drain clustering (§5.2: "all algorithms are with write clustering enabled"), steady
//! simulated devices, device seconds (`flashbuf compare --trace T --policies
//! lru:clustering=drain,cflru:clustering=drain,cfdc,casa:clustering=drain,fd-buffer,
//! fd-buffer:cost=clustered --devices sim:sd-card,sim:mtron,sim:usb-stick --limit 1000000`,
//! buffers of 1, 3 and 10% of the distinct pages):
//! - **The paper's victim cluster (CFDC's priority) costs writes.** At 3% on the SD card
//!   FD-Buffer writes 79,977 pages of TPC-C w4 (4,905 s) where CASA writes 71,238 (3,446 s);
//!   with `victim=order` (the dirty pool's LRU page's cluster) 72,435 (3,863 s). CASA given
//!   the same priority choice (`casa:clustering=drain,choice=metric`) loses as much (79,033
//!   pages, 4,424 s): the priority rule, not FD-Buffer's pools, is that part of the gap.
//! - **Eq. (3) is blind to clustering.** On the OLTP trace the advisor settles at
//!   `M_c = 545` of 546 frames: a dirty pool of one page, 112 ms per page written on the SD
//!   card against CASA's 40 ms (5,022 s vs 1,353 s). With only the cost model changed
//!   (`cost=clustered,victim=priority,window=5000`) it keeps 241 dirty pages on the first
//!   200,000 references (FD-Buffer: 2) and the device works less (regression test
//!   `flashbuf-lab/tests/fd_buffer_clustered_cost.rs`); over 1 M references 1,694 s.
//! - **One window of 5,000 references is too short for the dirty pool's depths.** With
//!   the clustered model and `victim=order` but the paper's window the variant still loses
//!   to CASA on four traces of five at 3% on the SD card (by 2–22%); with 20,000 it wins on
//!   all five (TPC-C w4 3,321 vs 3,446 s; pgbench s20 1,752.3 vs 1,752.9; pgbench s50 3,354
//!   vs 3,411; OLTP 1,240 vs 1,353; TPC-C w8 3,705 vs 3,740) and 50,000 gives the same
//!   within 2%: the variant's defaults are `victim=order,window=20000`.
//! - **What was left with those defaults.** Over the 45 cells (5 traces × 3 devices × 3
//!   sizes) the variant (`victim=order,window=20000`, Eq. (3), groups of 64) was the
//!   cheapest in 18 (CASA with drain clustering in 25, CFLRU with drain in 2); against
//!   the best other policy 0.92–1.21× (SD card 0.92–1.11, Mtron 0.92–1.21, USB stick
//!   0.99–1.21). It lost at every 1% buffer (182–380 frames: 0 wins of 15) and on the USB
//!   stick (1 of 15). At 1% the advisor's `M_c` mostly sat at 64–69, the first group
//!   boundary, where CASA keeps 19–37 clean pages: the curves are linear inside a group,
//!   so the minimum falls on its edge.
//! - **Toward the offline bound** (per-page costs, no clustering, `--bounds`, Mtron
//!   `R = 106`, 3%): share of LRU's distance to the lower bound captured — CASA 0.01–0.44,
//!   CFLRU 0.01–0.46, CFDC 0.02–0.12, FD-Buffer (`clustering=off`) −0.17–0.12, the offline
//!   heuristic `offline:rule=best` 0.84–0.97. No online policy reaches half.
//!
//! # Three more rules, the variant's defaults since (measured on all 45 cells)
//! - **Count the I/Os (`count=io`).** Eq. (3) multiplies the misses `P_c · P_d` (the
//!   pools' misses taken as independent) by `1 + P_d^w · R` (a write-back charged to a
//!   share `P_d^w` of the *misses*). Counted, the misses are `P_c + P_d − 1` (a page is
//!   in one pool at most) and the write-backs `w · P_d^w` (each write that misses the
//!   dirty pool makes one page dirty, which leaves by one write-back), so the advisor
//!   minimises `(P_c + P_d − 1) + w · P_d^w · R(M_d)` (`super::cost`, Eq. (2) with the
//!   substitutions that hold). Alone (groups of 64, free moves): 34 wins of 45,
//!   0.89–1.19×.
//! - **Groups from the buffer size (`groups=256`).** The Two-Stack has at most 256 groups
//!   per stack: `ceil(M / 256)` pages per group (1 for `M ≤ 256`, 4 at 829 frames, 15 at
//!   3,800), so the curves are exact at every multiple of `M/256` whatever the buffer,
//!   and the per-access stack work stays bounded by 256 group moves, the point of the
//!   groups (§4.3: "the stack-access complexity is reduced to O(D), where D is the number
//!   of groups"; since, the stacks find groups from stamped positions,
//!   `two_stack::group_stack`, and no longer pay per group). The paper's fixed 64 gives a
//!   buffer of 276 frames 5 groups. Alone
//!   (Eq. (3)): 22 wins, 0.90–1.25×; `group=1` (exact stacks) the same 22. With
//!   `count=io`: 39 wins, 0.89–1.21× (64, 256, 1,024 groups or exact stacks: 38, 39, 38,
//!   39 — not tuned to a number).
//! - **Moves of `M_c` are paid (`moves=paid`).** Raising `M_c` by `Δ` forces `Δ` dirty
//!   pages out at once, lowering it drops `Δ` clean pages; the window's count gets
//!   `Δ · R(M_d)` or `Δ` added (`super::cost`), so a move must pay for itself within one
//!   window. Why: on pgbench s20 at 1% on the Mtron (313 frames) every *fixed* `M_c`
//!   from 6 to 94 (`window=100000000,init=…`) writes 47.7–48.2 thousand pages and the
//!   best costs 287 s (CASA 292), while the advisor with free moves wrote 54.7 thousand
//!   (354 s), more than any fixed split: what a fixed split lacks is the moves' forced
//!   write-backs. With paid moves: 47.7 thousand pages, 288 s.
//! - **All three** (the defaults): **40 wins of 45**, CASA 5, CFLRU 0; 0.89–1.04× the
//!   best other policy (geometric mean 0.967, was 1.029); by device SD card 14/15
//!   (0.89–1.01), Mtron 14/15 (0.90–1.00), USB stick 12/15 (0.92–1.04); by size 1% 13/15,
//!   3% 15/15, 10% 12/15. Against the old defaults 0.78–1.00× (geometric mean 0.940: no
//!   cell got dearer), against faithful FD-Buffer 0.15–0.98× (0.62).
//! - **Still lost with those three** (to CASA with drain clustering): the USB stick at
//!   10% on OLTP and pgbench s20 (1.039×, 1.038×), pgbench s20 at 10% on the SD card
//!   (1.008×) and at 1% on the USB stick (1.005×), pgbench s50 at 1% on the Mtron (1.003×).
//! - **`k` from the recent writes, across windows (`span=recent`, stop 23).** In the USB
//!   10% cells the clean pool sat at its floor (`M_c` 16 and 26): the report's `k_at_m_d`
//!   was 6.5 (OLTP) and 7.1 (pgbench s20) pages per drained cluster where 30.0 and 41.5
//!   were written, because one window of 20,000 references writes only 531 / 954
//!   distinct pages of a 1,804 / 3,106-page dirty pool and `k` is flat beyond them; the
//!   model priced a write-back at ≈ 82 reads where the device charged ≈ 26. The curve is
//!   now read off the most recent writes back to `M` distinct pages, across windows (the
//!   dirty pool never holds more; older writes are dropped, and at most
//!   `SPAN_MAX_WRITES`, 2^20, are kept): `k_at_m_d` 17.3 / 23.1 there. **41 wins of 45**
//!   (CASA 4), 0.89–1.026× the best other policy (geometric mean 0.963); against the
//!   three rules alone 0.964–1.002× per cell (16 cells cheaper, 28 the same, one 0.2%
//!   dearer). The size-biased mean (`Σ k_c² / m`, the expected cluster of a random dirty
//!   page) instead of `m / n(m)` was worse: 39 wins with it, 37 with it on the window
//!   alone, worst 1.50×. Still lost: pgbench s20 USB 10% (1.026×) and 1% (1.005×),
//!   pgbench s50 Mtron 1% (1.003×), OLTP USB 10% (1.001×). So the goal, cheapest
//!   on every trace, is still not reached, by at most 2.6%; `k_at_m_d` still reads about
//!   half the realised run length (17.3 vs 30.1).
//! - **`k` calibrated to the drained clusters (`calibrate=drained`, an option, not the
//!   default; [`super::calibration`]).** Each window the curve is scaled so that
//!   `k(M_d)` is the mean size of the clusters the dirty pool chose to drain in it (the
//!   LRU dirty page's, not an average one): **42 wins of 45** (CASA 3), 0.885–1.023×
//!   (geometric mean 0.9624); per cell 0.993–1.006× `calibrate=none`; but 2–6% dearer
//!   in each cell of the paper's Figs. 2–3 as `flashbuf reproduce fd-buffer` runs them,
//!   with `r=online` (which already measures clustered writes; cheaper there with the
//!   device's `R`). Still lost
//!   with it: pgbench s20 USB 10% (1.023×), pgbench s50 Mtron 1% (1.003×), OLTP USB 10%
//!   (1.001×) — there the model now reads the run length (40.5 for 41.5 written); the
//!   variant writes no more pages than CASA there but reads more, and on pgbench s20 its
//!   writes cost more erases.
//! - **Other settings measured** (each with the command above,
//!   `fd-buffer:cost=clustered,…`). The window, with free moves: 5,000 references 26
//!   wins (0.89–1.67×), 10,000 33, 30,000 37, 50,000 33 (20,000: 39; 10,000 is better at
//!   1% and worse at 3%, so no rule in the buffer size fits); with paid moves: 10,000 41
//!   wins but 0.88–1.05× (geometric mean 0.967, as 20,000's 40 wins at 0.89–1.04×: one
//!   cell apart, so the default stays), 40,000 39 (0.90–1.05×). Paid moves with groups of
//!   64: 35 (0.89–1.06×). The counted cost without the clustered price
//!   (`count=io,groups=256,victim=order,window=20000`, no `cost=clustered`): 29 wins,
//!   0.89–1.14×; the faithful policy with only `count=io`: 1 win, 1.00–2.72×. With the
//!   count and groups rules and free moves, `victim=priority` (CFDC's, the paper's): 1
//!   win, 1.00–2.04×; `pr=false` (no present conditions): 27 wins, 0.90–1.73×.
//! - **The paper's windows again (stop 25, the default since).** The 20,000-reference
//!   window made up for `k` read off one window's writes; with `span=recent` and
//!   `calibrate=drained`, `k` no longer depends on the window, and the window sweep turned
//!   round (same 45 cells, everything else the defaults): 5,000 references (the paper's)
//!   **43 wins** (0.883–1.028×, geometric mean 0.9596), 10,000 44 (0.881–1.004×, 0.9587),
//!   15,000 43 (0.882–1.007×, 0.9605), 20,000 42 (0.885–1.023×, 0.9624), 50,000 37
//!   (0.900–1.298×, 0.9792). Every window from 5,000 to 15,000 beats 20,000; the variant
//!   takes the paper's 5,000 rather than the sweep's best (10,000: one cell more, a
//!   constant picked on the evaluated cells). Still lost with it, to CASA with drain
//!   clustering: OLTP USB 10% (1.028×) and pgbench s20 USB 10% (1.006×).
//! - **Moves paid out of the savings since the last move (`moves=cusum`, stop 26, the
//!   default since; [`super::moves`]).** `moves=paid` made a raise of `M_c` pay for
//!   itself within one window: on the USB stick (`R` = 515) a ratchet towards a small
//!   clean pool. Summed since the last move: **44 wins of 45** (0.882–1.002×, geometric
//!   mean 0.9580); the one cell left is OLTP USB 10% (606.4 s against CASA's 604.9).

use super::calibration::{Calibrate, Calibration};
use super::id_set::IdSet;

/// The window's write stream and the `k(m)` curve computed from it.
#[derive(Debug, Clone)]
pub struct ClusteredCost {
    /// `s = w_seq / w_rand`, in `(0, 1]`.
    seq_ratio: f64,
    /// Pages per cluster (erase block / page size).
    cluster_pages: u64,
    /// Pages written in the current window, in reference order.
    writes: Vec<u64>,
    /// `k[m]` for `m` in `0..=P_w` (`k[0]` unused).
    k: Vec<f64>,
    pages: IdSet,
    clusters: IdSet,
    /// `Some(M)` (`span=recent`): writes are kept across windows, back to `M` distinct
    /// pages; `None`: the window's only.
    span_pages: Option<usize>,
    /// `k(m)` scaled to the drained clusters (`calibrate=drained`) or not.
    cal: Calibration,
}

/// Most write references kept across windows with `span=recent` (8 MiB): a bound on
/// memory for a workload that writes fewer distinct pages than the buffer holds. On the
/// 45 cells, caps of 50,000 to 800,000 gave identical results.
const SPAN_MAX_WRITES: usize = 1 << 20;

impl ClusteredCost {
    /// A model for clusters of `cluster_pages` pages and sequential/random write ratio
    /// `seq_ratio` (clamped into `(0, 1]`); `span_pages`: `Some(M)` reads `k` off the
    /// recent writes back to `M` distinct pages across windows, `None` the window's.
    pub fn new(cluster_pages: u64, seq_ratio: f64, span_pages: Option<usize>) -> Self {
        Self {
            seq_ratio: clamp_ratio(seq_ratio),
            cluster_pages: cluster_pages.max(1),
            writes: Vec::new(),
            k: vec![1.0, 1.0],
            pages: IdSet::new(),
            clusters: IdSet::new(),
            span_pages,
            cal: Calibration::new(Calibrate::None, cluster_pages),
        }
    }

    /// The same model with `k(m)` calibrated in `mode` ([`super::calibration`]).
    pub fn with_calibration(mut self, mode: Calibrate) -> Self {
        self.cal = Calibration::new(mode, self.cluster_pages);
        self
    }

    /// After [`Self::close_window`]: sets the calibration from the dirty pool's running
    /// totals of victim clusters and their pages (`drained`) and the `M_d` in force
    /// during the window.
    pub fn calibrate(&mut self, drained: (u64, u64), m_d: usize) {
        let k_model = self.model_pages_per_cluster(m_d);
        self.cal.close_window(drained, k_model);
    }

    /// The calibration (factor, mean drained cluster size).
    pub fn calibration(&self) -> &Calibration {
        &self.cal
    }

    /// Records a write reference of the current window.
    #[inline]
    pub fn on_write(&mut self, page: u64) {
        self.writes.push(page);
    }

    /// Sets `s` (a cost update).
    pub fn set_seq_ratio(&mut self, seq_ratio: f64) {
        self.seq_ratio = clamp_ratio(seq_ratio);
    }

    /// `s = w_seq / w_rand`.
    pub fn seq_ratio(&self) -> f64 {
        self.seq_ratio
    }

    /// Closes the window: recomputes `k(m)` from the writes (kept if there are none) and
    /// forgets them — all of them (`span=window`), or those older than the `M`-th most
    /// recent distinct page (`span=recent`: `k` is never asked beyond `M`).
    pub fn close_window(&mut self) {
        if self.writes.is_empty() {
            return;
        }
        self.pages.clear();
        self.clusters.clear();
        self.k.clear();
        self.k.push(1.0);
        let limit = self.span_pages.unwrap_or(usize::MAX);
        let mut oldest_needed = 0;
        for (i, &p) in self.writes.iter().enumerate().rev() {
            if self.pages.len() >= limit {
                oldest_needed = i + 1;
                break;
            }
            if self.pages.insert(p) {
                self.clusters
                    .insert(super::cluster_of(p, self.cluster_pages));
                self.k
                    .push(self.pages.len() as f64 / self.clusters.len() as f64);
            }
        }
        if self.span_pages.is_some() {
            let cap = self.writes.len().saturating_sub(SPAN_MAX_WRITES);
            self.writes.drain(..oldest_needed.max(cap));
        } else {
            self.writes.clear();
        }
    }

    /// Mean pages per cluster with `m_d` dirty pages, calibrated (at least 1).
    #[inline]
    pub fn pages_per_cluster(&self, m_d: usize) -> f64 {
        self.cal.apply(self.model_pages_per_cluster(m_d))
    }

    /// Mean pages per cluster with `m_d` dirty pages as read off the writes, before the
    /// calibration (at least 1).
    #[inline]
    pub fn model_pages_per_cluster(&self, m_d: usize) -> f64 {
        // `k` holds at least `[1, 1]`: `last ≥ 1`.
        let last = self.k.len() - 1;
        self.k[m_d.clamp(1, last)].max(1.0)
    }

    /// The factor Eq. (3)'s `R` is multiplied by at `M_d = m_d`: `s + (1 − s) / k(m_d)`.
    #[inline]
    pub fn r_factor(&self, m_d: usize) -> f64 {
        let s = self.seq_ratio;
        s + (1.0 - s) / self.pages_per_cluster(m_d)
    }

    /// Bytes allocated: the kept writes, the curve and the walk's two sets.
    pub fn bytes(&self) -> usize {
        (self.writes.capacity() + self.k.capacity()) * 8
            + self.pages.bytes()
            + self.clusters.bytes()
    }

    /// Distinct pages the last window with writes wrote (`P_w`).
    pub fn window_pages(&self) -> usize {
        self.k.len() - 1
    }
}

fn clamp_ratio(r: f64) -> f64 {
    if r.is_finite() && r > 0.0 {
        r.min(1.0)
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_per_cluster_follows_the_newest_writes() {
        let mut c = ClusteredCost::new(4, 0.1, None);
        // Oldest to newest: 0, 1, 2 (cluster 0), 8 (cluster 2), 9 (cluster 2), 9 again.
        for p in [0, 1, 2, 8, 9, 9] {
            c.on_write(p);
        }
        c.close_window();
        // Newest first: 9 (n=1), 8 (n=1), 2 (n=2), 1, 0.
        assert_eq!(c.window_pages(), 5);
        assert_eq!(c.pages_per_cluster(1), 1.0);
        assert_eq!(c.pages_per_cluster(2), 2.0);
        assert_eq!(c.pages_per_cluster(3), 1.5);
        assert_eq!(c.pages_per_cluster(5), 2.5);
        assert_eq!(c.pages_per_cluster(50), 2.5, "no extrapolation beyond P_w");
        assert!((c.r_factor(2) - (0.1 + 0.9 / 2.0)).abs() < 1e-12);
        assert_eq!(c.r_factor(1), 1.0, "a lone page pays a whole random write");
    }

    /// `span=recent`: the writes of earlier windows count, back to `M` distinct pages,
    /// and older ones are dropped.
    #[test]
    fn the_recent_span_reaches_across_windows_to_m_distinct_pages() {
        let mut w = ClusteredCost::new(4, 0.1, None);
        let mut r = ClusteredCost::new(4, 0.1, Some(3));
        for c in [&mut w, &mut r] {
            // Window 1: 0, 1 (cluster 0); window 2: 8 (cluster 2).
            c.on_write(0);
            c.on_write(1);
            c.close_window();
            c.on_write(8);
            c.close_window();
        }
        assert_eq!(w.window_pages(), 1, "the window saw one page");
        assert_eq!(w.pages_per_cluster(3), 1.0);
        // Newest first across windows: 8 (n=1), 1 (n=2), 0 (n=2): k(3) = 3 / 2.
        assert_eq!(r.window_pages(), 3);
        assert_eq!(r.pages_per_cluster(3), 1.5);
        // Beyond M = 3 distinct pages nothing older is kept: after 9, 10, 11 (cluster 2)
        // the curve holds only them.
        for p in [9, 10, 11] {
            r.on_write(p);
        }
        r.close_window();
        assert_eq!(r.window_pages(), 3);
        assert_eq!(r.pages_per_cluster(3), 3.0);
        assert!(r.writes.len() <= 4, "older writes dropped: {:?}", r.writes);
    }

    #[test]
    fn a_window_without_writes_keeps_the_curve() {
        let mut c = ClusteredCost::new(2, 0.5, None);
        for p in [0, 1] {
            c.on_write(p);
        }
        c.close_window();
        c.close_window();
        assert_eq!(c.pages_per_cluster(2), 2.0);
        assert_eq!(c.r_factor(2), 0.75);
    }

    /// `calibrate=drained`: the curve is scaled so that `k(M_d)` is the window's mean
    /// drained cluster size, at every `m`; without a drained cluster the factor holds.
    #[test]
    fn the_calibration_scales_the_whole_curve_to_the_drained_clusters() {
        let mut c = ClusteredCost::new(4, 0.1, Some(8)).with_calibration(Calibrate::Drained);
        let mut off = ClusteredCost::new(4, 0.1, Some(8));
        for m in [&mut c, &mut off] {
            for p in [0, 1, 2, 8, 9, 9] {
                m.on_write(p);
            }
            m.close_window();
            // The model: k(2) = 2, k(3) = 1.5, k(5) = 2.5. Two clusters drained in the
            // window, of 4 and 2 pages (mean 3), with M_d = 3.
            m.calibrate((2, 6), 3);
        }
        assert_eq!(c.model_pages_per_cluster(3), 1.5);
        assert_eq!(c.calibration().factor(), 2.0);
        assert_eq!(c.pages_per_cluster(3), 3.0);
        assert_eq!(c.pages_per_cluster(2), 4.0);
        assert_eq!(c.pages_per_cluster(5), 4.0, "at most a whole cluster");
        assert_eq!(c.pages_per_cluster(1), 2.0);
        assert!((c.r_factor(3) - (0.1 + 0.9 / 3.0)).abs() < 1e-12);
        assert_eq!(c.calibration().mean_drained_pages(), Some(3.0));
        // Uncalibrated: the same mean measured, the curve untouched.
        assert_eq!(off.calibration().mean_drained_pages(), Some(3.0));
        assert_eq!(off.pages_per_cluster(3), 1.5);
        assert_eq!(off.calibration().factor(), 1.0);
        // A window without a drained cluster keeps the factor on the new curve.
        for p in [16, 17, 18, 19] {
            c.on_write(p);
        }
        c.close_window();
        c.calibrate((2, 6), 3);
        assert_eq!(c.calibration().factor(), 2.0);
        assert_eq!(c.model_pages_per_cluster(4), 4.0);
        assert_eq!(c.pages_per_cluster(1), 2.0);
    }

    #[test]
    fn ratios_out_of_range_are_clamped() {
        assert_eq!(ClusteredCost::new(4, f64::NAN, None).seq_ratio(), 1.0);
        assert_eq!(ClusteredCost::new(4, 3.0, None).seq_ratio(), 1.0);
        assert_eq!(ClusteredCost::new(0, 0.2, None).r_factor(7), 1.0);
    }
}
