//! FD-Buffer's report: the figures of [`Policy::report`], the per-window records of the
//! estimation accuracy (paper Table 5) and their relative errors, and the advisor's and
//! the estimator's counters.

use super::{FdBuffer, MissRates, PoolOrder};
#[cfg(doc)]
use crate::policy::Policy;
use crate::policy::PolicyReport;

/// One workload-estimation window's estimates and measurements (paper Table 5).
#[derive(Debug, Clone, PartialEq)]
pub struct WindowRecord {
    /// Window number (0-based).
    pub index: u64,
    /// References in the window.
    pub refs: u64,
    /// Writes in the window.
    pub writes: u64,
    /// `M_c` in force during the window.
    pub m_c: usize,
    /// `M_c` the advisor chose for the next window.
    pub next_m_c: usize,
    /// `R` used by the advisor.
    pub r: f64,
    /// Estimates at `m_c` with present conditions (or without, if they are off).
    pub estimated: MissRates,
    /// Estimates at `m_c` without present conditions (accuracy tracking only).
    pub estimated_without_pr: Option<MissRates>,
    /// Rates measured in the real pools during the window.
    pub measured: MissRates,
}

/// Relative errors `|v − v'| / v` of one estimate against a measurement; `None` where the
/// measured value is 0.
pub fn relative_errors(est: MissRates, measured: MissRates) -> [Option<f64>; 3] {
    let e = |v: f64, v2: f64| (v > 0.0).then(|| (v - v2).abs() / v);
    [
        e(measured.p_c, est.p_c),
        e(measured.p_d, est.p_d),
        e(measured.p_d_w, est.p_d_w),
    ]
}

/// Mean relative errors over windows, `[P_c, P_d, P_d^w]`, with present conditions and
/// (when tracked) without; windows where a measured rate is 0 are left out of that mean.
pub fn mean_errors(records: &[WindowRecord]) -> ([f64; 3], Option<[f64; 3]>) {
    let mean = |get: &dyn Fn(&WindowRecord) -> Option<MissRates>| {
        let mut sum = [0.0f64; 3];
        let mut n = [0u32; 3];
        let mut any = false;
        for r in records {
            if let Some(est) = get(r) {
                any = true;
                for (k, e) in relative_errors(est, r.measured).into_iter().enumerate() {
                    if let Some(e) = e {
                        sum[k] += e;
                        n[k] += 1;
                    }
                }
            }
        }
        any.then(|| {
            let mut out = [0.0; 3];
            for k in 0..3 {
                out[k] = if n[k] > 0 { sum[k] / n[k] as f64 } else { 0.0 };
            }
            out
        })
    };
    (
        mean(&|r| Some(r.estimated)).unwrap_or([0.0; 3]),
        mean(&|r| r.estimated_without_pr),
    )
}

/// Counters of the advisor and the estimator.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AdvisorStats {
    /// Windows closed (advisor runs).
    pub windows: u64,
    /// Advisor work units: counter entries summed plus `M_c` candidates evaluated.
    pub advisor_work: u64,
    /// Advisor CPU time measured with the injected clock (0 without one).
    pub advisor_ns: u64,
    /// Estimator work units (per-access cost, both stacks): group boundaries moved in list
    /// stacks, counters read and stamps updated in stamped ones (`two_stack::group_stack`).
    pub stack_work: u64,
    /// Clusters examined when choosing victim clusters.
    pub cluster_scans: u64,
    /// Misses without an announced access (taken as reads).
    pub unhinted_misses: u64,
}

impl<C: PoolOrder, D: PoolOrder> FdBuffer<C, D> {
    /// Advisor and estimator counters.
    pub fn advisor_stats(&self) -> AdvisorStats {
        AdvisorStats {
            stack_work: self
                .stream
                .as_ref()
                .map_or_else(|| self.est.work(), |s| s.stack_work)
                + self.shadow.as_ref().map_or(0, |s| s.work()),
            cluster_scans: self.clusters.as_ref().map_or(0, |c| c.scanned()),
            ..self.stats
        }
    }

    /// The window records so far (kept only with `track_accuracy`).
    pub fn window_records(&self) -> &[WindowRecord] {
        &self.records
    }

    /// The report of [`Policy::report`]: the figures listed in the module documentation
    /// and the window records.
    pub(super) fn make_report(&self) -> PolicyReport {
        let s = self.advisor_stats();
        let mut v = vec![
            ("m_c", self.m_c as f64),
            ("m_d", (self.m - self.m_c) as f64),
            ("clean_pages", self.clean.len() as f64),
            ("dirty_pages", self.d_len as f64),
            ("est_p_c", self.last_est.p_c),
            ("est_p_d", self.last_est.p_d),
            ("est_p_d_w", self.last_est.p_d_w),
            ("r", self.r()),
            ("windows", s.windows as f64),
            ("advisor_work", s.advisor_work as f64),
            ("advisor_ns", s.advisor_ns as f64),
            ("stack_work", s.stack_work as f64),
            ("cluster_scans", s.cluster_scans as f64),
            ("unhinted_misses", s.unhinted_misses as f64),
        ];
        // Only when the detached estimator's contract was broken (`stream_model.rs`).
        if let Some(n) = self.stream.as_ref().map(|s| s.underruns).filter(|&n| n > 0) {
            v.push(("stream_underruns", n as f64));
        }
        if let Some(cc) = &self.clustered_cost {
            let m_d = self.m - self.m_c;
            v.push(("k_at_m_d", cc.pages_per_cluster(m_d)));
            v.push(("r_factor", cc.r_factor(m_d)));
            v.push(("window_written_pages", cc.window_pages() as f64));
            v.push(("k_model_at_m_d", cc.model_pages_per_cluster(m_d)));
            let cal = cc.calibration();
            v.push(("k_calibration", cal.factor()));
            v.push((
                "mean_drained_pages",
                cal.mean_drained_pages().unwrap_or(0.0),
            ));
        }
        if self.opts.track_accuracy {
            let (with, without) = mean_errors(&self.records);
            v.push(("err_p_c", with[0]));
            v.push(("err_p_d", with[1]));
            v.push(("err_p_d_w", with[2]));
            if let Some(w) = without {
                v.push(("err_p_c_without_pr", w[0]));
                v.push(("err_p_d_without_pr", w[1]));
                v.push(("err_p_d_w_without_pr", w[2]));
            }
        }
        PolicyReport {
            figures: v,
            windows: self.records.clone(),
        }
    }
}
