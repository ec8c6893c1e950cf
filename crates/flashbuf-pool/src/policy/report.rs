//! What a policy reports ([`super::Policy::report`]): named figures, and per-window
//! records for policies that estimate their workload window by window.
//!
//! The report is the only way a driver reads a policy's state during or after a run (the
//! pool forwards it under its lock: `BufferPool::policy_report` for the figures,
//! `BufferPool::policy_report_full` for everything).

use super::fd_buffer::WindowRecord;

/// A policy's report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PolicyReport {
    /// Named figures (`m_c`, `tau`, `priority_scans`, ...), in the policy's order.
    pub figures: Vec<(&'static str, f64)>,
    /// One record per closed estimation window, oldest first: estimated against measured
    /// miss rates (FD-Buffer with `track_accuracy`, the paper's Table 5). Empty for
    /// policies without windows.
    pub windows: Vec<WindowRecord>,
}

impl PolicyReport {
    /// A report of figures only.
    pub fn figures(figures: Vec<(&'static str, f64)>) -> Self {
        Self {
            figures,
            windows: Vec::new(),
        }
    }

    /// The figure named `key`, if reported.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.figures
            .iter()
            .find(|(k, _)| *k == key)
            .map(|&(_, v)| v)
    }

    /// Appends a figure.
    pub fn push(&mut self, key: &'static str, value: f64) {
        self.figures.push((key, value));
    }
}
