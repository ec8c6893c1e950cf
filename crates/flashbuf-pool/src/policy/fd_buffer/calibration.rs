//! The clustered-cost variant's calibration of `k(m)` against the clusters the dirty pool
//! really drains (`fd-buffer:cost=clustered,calibrate=drained`; not the paper's; issue 16,
//! item 7). The model it corrects: [`super::clustered_cost`].
//!
//! # What it measures
//! Every time the dirty pool picks a new victim cluster (`victim=order`: the cluster of
//! its LRU page; `victim=priority`: CFDC's lowest priority) it counts the cluster and its
//! pages at that moment, `n` ([`super::cluster::Clusters::drained`]: running totals). At
//! the end of each window the mean size of the clusters chosen during the window,
//! `d = Σ n / #clusters`, is set beside the model's own `k_model(M_d)` (the curve read
//! off the recent writes, at the `M_d` in force during the window), and the whole curve
//! is scaled by
//!
//! `f = d / k_model(M_d)`, clamped to `[1 / cluster_pages, cluster_pages]`,
//!
//! so that `k(m) = clamp(f · k_model(m), 1, cluster_pages)` for every `m`: at the
//! `M_d` the pool ran with, the model now prices what the pool drained; the shape of the
//! curve in `m` (how `k` grows with the dirty pool) stays the recent writes'. A window in
//! which no cluster was chosen keeps the previous `f` (1 before the first such window).
//! Work: a division per window; the counting is two additions per victim cluster.
//!
//! # Why
//! `k_model(m) = m / n(m)` is the mean size of the clusters of the `m` most recently
//! written distinct pages, each cluster counted once. The pool does not drain an average
//! cluster of its dirty pages: it drains the cluster of its LRU dirty page (with the
//! variant's `victim=order`), a cluster that has had that page's whole residence in the
//! dirty pool to gather pages. With `span=recent` the report's `k_at_m_d` still read
//! about half the realised pages per cluster write: 17.3 against 30.1 on sysbench OLTP
//! on the USB stick at 10 %, so the model overpriced a write-back there and leaned to
//! too small a dirty pool (three of the four cells the variant still lost were on the
//! USB stick, where a merge costs most). The drained clusters measure the run length directly, but only at
//! the `M_d` the pool ran with; the recent writes give the curve's shape in `m`, which
//! the advisor needs to weigh other sizes. (The size-biased mean `Σ k_c² / m`, the
//! cluster of a random dirty page, changes the shape too and was worse, 39 wins:
//! [`super::clustered_cost`].)
//!
//! # Measured
//! The 45 cells of [`super::clustered_cost`] (5 PostgreSQL page traces × SD card,
//! Mtron, USB stick × buffers of 1, 3 and 10 % of the distinct pages, first 1 M
//! references), each against the cheapest of LRU, CFLRU, CASA (all with drain
//! clustering), CFDC and faithful FD-Buffer:
//! - `calibrate=none` (`span=recent` alone): 41 wins, worst 1.026× the best other policy,
//!   geometric mean 0.9629; lost pgbench s20 USB 10 % (1.026×) and 1 % (1.005×), pgbench
//!   s50 Mtron 1 % (1.003×), OLTP USB 10 % (1.001×).
//! - `calibrate=drained`: **42 wins**, worst **1.023×**, geometric mean **0.9624**; lost
//!   pgbench s20 USB 10 % (1.023×), pgbench s50 Mtron 1 % (1.003×), OLTP USB 10 %
//!   (1.001×); pgbench s20 USB 1 % is now won (0.997×; 7,986 s, was 8,045, CASA 8,007).
//!   Per cell against `calibrate=none` 0.993–1.006× (24 cheaper, 21 dearer, geometric
//!   mean 0.9995): a small, mixed effect that tips one cell.
//! - The model now reads the run length: on pgbench s20 USB 10 % `k_at_m_d` 40.5 (factor
//!   1.78 on the recent writes' 22.8) where 41.5 pages are written per cluster write
//!   (`calibrate=none`: 23.1 for 42.1). What the three cells still lose is not the
//!   model's run length: there the variant writes as many pages as CASA or fewer, with
//!   the same pages per cluster write (pgbench s20 USB 10 % 40,640 vs 40,772 pages, 41.5
//!   vs 41.8; OLTP USB 10 % 16,426 vs 16,885, 29.9 vs 29.5), but reads more (91,166 vs
//!   89,688; 85,693 vs 72,996) and, on pgbench s20, its writes cost the device more
//!   merges (2,309 erases vs 2,257).
//! - **The paper's setup** (`flashbuf reproduce fd-buffer`: whole TPC-C and pgbench
//!   traces, 256-page clusters, fresh devices, online `R`, 3 %): `calibrate=drained` is
//!   dearer in all four cells of Figs. 2–3 — TPC-C 8,964 vs 8,736 s (SD card) and 15,276
//!   vs 14,976 s (USB stick), pgbench 4,044 vs 3,825 s and 6,748 vs 6,535 s (+2.0 to
//!   +5.7 %) — and the same on flash-25 (884 vs 883 s); still the cheapest policy in each
//!   (CASA 10,697, 18,107, 4,213, 7,131 and 1,006 s). There it keeps a larger clean pool
//!   (Fig. 5, TPC-C on the SD card: 175 clean pages vs 121), reads less and pays more per
//!   page written (24.4 vs 23.0 ms on pgbench, SD card).
//! - **Why there: `r=online` counts the clustering twice.** The reproduction runs the
//!   variant with `r=online`, whose `R` is measured from the writes the device actually
//!   served, already clustered (36 on the USB stick, where the device's random-write
//!   ratio is 515); the model then divides it by `k` again, and a larger `k` deepens the
//!   double discount. With the variant's own `R` (fixed, the device's `write_us /
//!   read_us`) on the same cells (`flashbuf compare --trace T --policy
//!   fd-buffer:clustering=drain,cost=clustered,cluster=256[,calibrate=drained] --devices
//!   sim:D:precondition=fresh --buffer-ratio 0.03 --warmup fill`) `calibrate=drained` is
//!   cheaper in all four: TPC-C 8,557 vs 8,576 s (SD card) and 14,794 vs 14,955 s (USB
//!   stick), pgbench 3,631 vs 3,659 s and 6,297 vs 6,312 s; and both are cheaper than
//!   `r=online` (TPC-C on the SD card 8,723 s, pgbench 3,816 and 6,522 s).
//!
//! So `calibrate=drained` is the variant's default ([`super::spec::VARIANT_CALIBRATE`]):
//! it helps wherever `R` is the device's (42 of 45 cells won instead of 41, and the four
//! cells above; measured with the windows of 20,000 the variant then had — with the
//! paper's 5,000, its default since stop 25, 43 of 45: `super::clustered_cost`); `flashbuf reproduce fd-buffer` now runs the variant with the device's `R`
//! too (no `r=online`), so the clustering is not counted twice there either.
//!
//! Command: `flashbuf compare --trace T --policy fd-buffer:cost=clustered,calibrate=drained
//! --policy fd-buffer:cost=clustered,calibrate=none --devices
//! sim:sd-card,sim:mtron,sim:usb-stick --buffer-ratio 0.01,0.03,0.1 --limit 1000000`
//! per trace, against the other policies' runs of the same command.

/// Whether `k(m)` is calibrated against the drained clusters (`calibrate=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Calibrate {
    /// `k(m)` as read off the recent writes (`calibrate=none`).
    #[default]
    None,
    /// `k(m)` scaled each window so that `k(M_d)` is the mean drained cluster size
    /// (`calibrate=drained`).
    Drained,
}

impl Calibrate {
    /// The option's word.
    pub fn word(self) -> &'static str {
        match self {
            Calibrate::None => "none",
            Calibrate::Drained => "drained",
        }
    }

    /// The mode named `word` (`none` or `drained`).
    pub fn from_word(word: &str) -> Option<Self> {
        match word {
            "none" => Some(Calibrate::None),
            "drained" => Some(Calibrate::Drained),
            _ => None,
        }
    }
}

/// The calibration factor and the drained-cluster counts it is computed from.
#[derive(Debug, Clone)]
pub struct Calibration {
    mode: Calibrate,
    /// `f`, in `[1 / cluster_pages, cluster_pages]`; 1 until a window drained a cluster.
    factor: f64,
    /// Bounds of `f` and of the calibrated `k`.
    cluster_pages: f64,
    /// Mean size (pages) of the clusters chosen in the last window that chose any.
    mean_drained_pages: Option<f64>,
    /// [`super::cluster::Clusters::drained`] at the last window's end.
    seen: (u64, u64),
}

impl Calibration {
    /// A calibration in `mode` for clusters of `cluster_pages` pages.
    pub fn new(mode: Calibrate, cluster_pages: u64) -> Self {
        Self {
            mode,
            factor: 1.0,
            cluster_pages: cluster_pages.max(1) as f64,
            mean_drained_pages: None,
            seen: (0, 0),
        }
    }

    /// Closes a window: `drained` is the running total (victim clusters, their pages),
    /// `k_model` the uncalibrated `k` at the `M_d` in force during the window. Without a
    /// victim cluster since the last call the factor and the mean are kept; with
    /// `calibrate=none` only the mean is updated (for the report).
    pub fn close_window(&mut self, drained: (u64, u64), k_model: f64) {
        let clusters = drained.0.saturating_sub(self.seen.0);
        let pages = drained.1.saturating_sub(self.seen.1);
        self.seen = drained;
        if clusters == 0 {
            return;
        }
        let mean = pages as f64 / clusters as f64;
        self.mean_drained_pages = Some(mean);
        if self.mode == Calibrate::Drained && k_model.is_finite() && k_model > 0.0 {
            let max = self.cluster_pages;
            self.factor = (mean / k_model).clamp(1.0 / max, max);
        }
    }

    /// `k(m)` from the model's `k_model(m)`: `clamp(f · k_model, 1, cluster_pages)`.
    #[inline]
    pub fn apply(&self, k_model: f64) -> f64 {
        (k_model * self.factor).clamp(1.0, self.cluster_pages)
    }

    /// `f` (1 with `calibrate=none`).
    pub fn factor(&self) -> f64 {
        self.factor
    }

    /// Mean pages of the clusters chosen in the last window that chose any.
    pub fn mean_drained_pages(&self) -> Option<f64> {
        self.mean_drained_pages
    }

    /// The mode.
    pub fn mode(&self) -> Calibrate {
        self.mode
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_factor_makes_k_at_m_d_the_mean_drained_size() {
        let mut c = Calibration::new(Calibrate::Drained, 64);
        // Window 1: 3 clusters of 10, 20 and 30 pages, mean 20; the model read 5.
        c.close_window((3, 60), 5.0);
        assert_eq!(c.mean_drained_pages(), Some(20.0));
        assert_eq!(c.factor(), 4.0);
        assert_eq!(c.apply(5.0), 20.0);
        assert_eq!(c.apply(2.0), 8.0, "every m is scaled");
        assert_eq!(c.apply(30.0), 64.0, "never beyond a cluster");
        // Window 2 counts only its own clusters: 2 more of 4 and 8 pages (mean 6).
        c.close_window((5, 72), 12.0);
        assert_eq!(c.mean_drained_pages(), Some(6.0));
        assert_eq!(c.factor(), 0.5);
        assert_eq!(c.apply(1.5), 1.0, "never below one page");
        assert_eq!(c.apply(12.0), 6.0);
    }

    #[test]
    fn a_window_without_a_drained_cluster_keeps_the_factor() {
        let mut c = Calibration::new(Calibrate::Drained, 64);
        c.close_window((0, 0), 3.0);
        assert_eq!((c.factor(), c.mean_drained_pages()), (1.0, None));
        c.close_window((2, 12), 3.0);
        assert_eq!(c.factor(), 2.0);
        c.close_window((2, 12), 9.0);
        assert_eq!(c.factor(), 2.0, "no cluster chosen: the previous factor");
        assert_eq!(c.mean_drained_pages(), Some(6.0));
    }

    #[test]
    fn the_factor_is_clamped_and_off_means_one() {
        let mut c = Calibration::new(Calibrate::Drained, 4);
        c.close_window((1, 4), 0.5);
        assert_eq!(c.factor(), 4.0, "at most cluster_pages");
        c.close_window((2, 5), 8.0);
        assert_eq!(c.factor(), 0.25, "at least 1 / cluster_pages");
        c.close_window((3, 9), f64::NAN);
        assert_eq!(c.factor(), 0.25, "a non-number model keeps the factor");
        let mut off = Calibration::new(Calibrate::None, 64);
        off.close_window((3, 60), 5.0);
        assert_eq!(off.factor(), 1.0);
        assert_eq!(
            off.mean_drained_pages(),
            Some(20.0),
            "measured, not applied"
        );
        assert_eq!(off.apply(5.0), 5.0);
        assert_eq!(off.mode(), Calibrate::None);
    }

    #[test]
    fn words_round_trip() {
        for m in [Calibrate::None, Calibrate::Drained] {
            assert_eq!(Calibrate::from_word(m.word()), Some(m));
        }
        assert_eq!(Calibrate::from_word("mean"), None);
    }
}
